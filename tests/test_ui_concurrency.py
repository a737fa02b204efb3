"""The served app under two visitors: one visitor's slow search holds up nobody else, and one visitor's
own quick clicks still apply in the order they were made.

Real Gradio server on 127.0.0.1, driven through ``gradio_client`` (each client is its own session); the
only fake is latency at the source edge, so "slow" is deterministic.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.ui.controller import Controller
from tests.serving import chat_messages, chat_text, served_app

BLEU = "Bleu: A Method For Automatic Evaluation Of Machine Translation"
DELAY_S = 3.0


class SlowLookups:
    """The local source, with anchor look-ups that take ``DELAY_S`` (a remote API on a bad day)."""

    def __init__(self, inner: Any):
        self._inner = inner

    async def match_paper(self, text: str, limit: int = 5):
        await asyncio.sleep(DELAY_S)
        return await self._inner.match_paper(text, limit)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


@pytest.fixture(scope="module")
def served(local_source):
    controller = Controller(Runtime.for_source(SlowLookups(local_source)))
    with served_app(Settings(ui_concurrency=4), controller) as demo:
        yield demo.local_url


def test_a_slow_search_does_not_hold_up_another_visitor(served):
    from gradio_client import Client

    slow, quick = Client(served, verbose=False), Client(served, verbose=False)
    started = time.monotonic()
    slow_job = slow.submit(f'papers citing "{BLEU}"', api_name="/send")
    time.sleep(0.5)
    quick_out = quick.submit(api_name="/search_now").result(timeout=60)  # needs no look-up: answers at once
    quick_s = time.monotonic() - started
    assert not slow_job.done(), "the second visitor waited for the first one's search"
    assert quick_s < DELAY_S
    assert "Tell me first" in chat_text(quick_out)  # the quick visitor got pilot's own answer...
    assert "Bleu" not in chat_text(quick_out)  # ...and nothing of the other visitor's conversation
    assert "Bleu" in chat_text(slow_job.result(timeout=120))


def test_one_visitors_clicks_apply_in_the_order_they_were_made(served):
    from gradio_client import Client

    me = Client(served, verbose=False)
    first = me.submit(f'papers citing "{BLEU}"', api_name="/send")
    time.sleep(0.5)  # "Search now" while the first message is still being read (its look-up takes 3 s)
    second = me.submit(api_name="/search_now")
    first.result(timeout=120)
    messages = chat_messages(second.result(timeout=120))
    assert [text for role, text in messages if role == "user"] == [f'papers citing "{BLEU}"', "Search now"]
    assert messages[-1][0] == "assistant" and messages[-1][1].startswith("Found "), messages[-1]
