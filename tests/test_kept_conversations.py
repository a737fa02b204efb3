"""Conversations kept across a reload and the recent-search list (``pilot.ui.conversations``), over a real
diskcache directory and real sessions on the corpus slice: what comes back after a reload, what never crosses
between visitors or tabs, what an old or damaged record does, the size and count caps, expiry, and that a restored
workflow re-runs from the cache without asking the source anything."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from cache import Cache
from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.ui import render
from pilot.ui.controller import Controller
from pilot.ui.conversations import (
    MAX_RECENT,
    MAX_RECORD_BYTES,
    ChatLine,
    ConversationRecord,
    ConversationStore,
    StoreProblem,
    new_id,
    new_token,
)

BLEU = "BLEU: a Method for Automatic Evaluation of Machine Translation"
TOPIC = "what should I read on discriminative word alignment?"


class Counting:
    """The source, counting the calls that reach it (a restored workflow must not make any)."""

    def __init__(self, inner):
        self._inner, self.calls = inner, 0

    def __getattr__(self, attr: str):
        target = getattr(self._inner, attr)
        if attr.startswith("_") or not asyncio.iscoroutinefunction(target):
            return target

        async def call(*args, **kwargs):
            self.calls += 1
            return await target(*args, **kwargs)

        return call


@pytest.fixture()
def store(tmp_path) -> ConversationStore:
    return ConversationStore(Cache(tmp_path / "kept", "conversations"))


@pytest.fixture()
def source(local_source) -> Counting:
    return Counting(local_source)


@pytest.fixture()
def controller(source, store, tmp_path) -> Controller:
    # one answer before the results, so the next question is still open when they arrive
    settings = Settings(cache_dir=tmp_path, questions_before_results=1)
    return Controller(Runtime.for_source(source, settings), store=store)


def _tab(tab: str, fork: str = "") -> str:
    return json.dumps({"tab": tab, "fork": fork})


async def _topic_search(controller: Controller, token: str, tab: str):
    ui = await controller.open_page(controller.new_state(), None, token, _tab(tab))
    await controller.send(ui, TOPIC)
    while ui.question is not None and not ui.results:
        await controller.choose(ui, 0)
    assert ui.results and ui.question is not None, ui.chat[-1]  # results, and the next question offered with them
    controller.save(ui)
    return ui


async def test_a_reload_brings_back_three_versions_the_open_question_and_the_filters(controller, source):
    token, tab = new_token(), new_id()
    ui = await _topic_search(controller, token, tab)
    await controller.apply_filters(ui, 2003, None, [], [], None)
    await controller.apply_filters(ui, 2003, None, [], [], 2)
    controller.save(ui)
    assert len(ui.session.versions) == 3 and ui.question is not None
    shown = [(r.paper.id, r.evidence.nodes, r.evidence.snippet) for r in ui.results]

    calls = source.calls
    back = await controller.open_page(controller.new_state(), None, token, _tab(tab))  # the same tab, reloaded
    assert back.chat == ui.chat
    assert [(r.paper.id, r.evidence.nodes, r.evidence.snippet) for r in back.results] == shown
    assert back.question is not None and back.question.text == ui.question.text
    assert [o.label for o in back.question.options] == [o.label for o in ui.question.options]
    assert [v.version for v in back.session.versions] == [1, 2, 3] and back.session.current_version == 2
    assert controller.filter_choices(back)["active"].year_min == 2003
    assert controller.filter_choices(back)["active"].min_citations == 2
    assert back.trace is not None and "back as you left it" in back.notice
    # the restored workflow runs again, every step from the cache: nothing is asked of the source
    await controller.rewarm(back)
    assert source.calls == calls
    assert back.trace is not None and {t.status for t in back.trace.nodes} == {"cached"}
    assert [r.paper.id for r in back.results] == [i for i, _, _ in shown] and not back.new_ids
    assert "ran again from the cache" in back.notice
    # and the restored conversation goes on: an answer to the open question
    await controller.choose(back, 0)
    assert back.question is None or back.question.text != ui.question.text


async def test_visitors_and_tabs_never_see_each_others_conversations(controller):
    token, tab = new_token(), new_id()
    ui = await _topic_search(controller, token, tab)
    other_tab = await controller.open_page(controller.new_state(), None, token, _tab(new_id()))
    assert not other_tab.results and len(other_tab.chat) == 1  # a new tab starts afresh...
    assert [e.label for e in other_tab.recent] == [TOPIC]  # ...with this browser's recent searches
    # someone else, with the same tab id
    stranger = await controller.open_page(controller.new_state(), None, new_token(), _tab(tab))
    assert not stranger.results and not stranger.recent and stranger.token != token
    # a duplicated tab asks for a copy under an id of its own: the two go on separately
    twin = await controller.open_page(controller.new_state(), None, token, _tab("", fork=tab))
    assert twin.tab != tab and [r.paper.id for r in twin.results] == [r.paper.id for r in ui.results]
    await controller.send(twin, "only after 2005")
    controller.save(twin)
    again = await controller.open_page(controller.new_state(), None, token, _tab(tab))
    assert len(again.session.versions) == len(ui.session.versions)  # the original did not get the twin's edit


@pytest.mark.parametrize("junk", [None, 42, "", "short", "x" * 500, "../../etc/passwd", "<script>"])
async def test_whatever_the_browser_sends_is_checked(controller, junk):
    ui = await controller.open_page(controller.new_state(), junk, junk, junk)
    assert ui.token and ui.token != junk and ui.tab and ui.tab != junk and not ui.results
    ui = await controller.open_page(controller.new_state(), None, new_token(), json.dumps({"tab": junk, "fork": junk}))
    assert ui.tab != junk


async def test_an_old_or_damaged_record_is_dropped_with_a_sentence(controller, store):
    token, tab = new_token(), new_id()
    good = ConversationRecord(chat=[ChatLine(role="user", content="hello")])
    visitor = store._visitor(token)
    for blob, said in [
        ({"v": 0, "z": ""}, "another version of pilot"),
        ({"v": 1, "z": "not base64!"}, "damaged"),
        ({"v": 1, "z": "aGVsbG8="}, "damaged"),  # base64 of "hello": not compressed
        ("a string", "not a conversation record"),
    ]:
        store._cache.set(f"{visitor}:tab:{tab}", blob)
        ui = await controller.open_page(controller.new_state(), None, token, _tab(tab))
        assert said in ui.chat[-1]["content"] and "starts afresh" in ui.chat[-1]["content"], blob
        assert store.load(token, tab) == (None, None)  # dropped: the next reload is quiet
    # a record whose session no longer validates (a field of another version) is dropped the same way
    store.save(token, tab, good.model_copy(update={"session": {"phase": "no such phase"}}))
    ui = await controller.open_page(controller.new_state(), None, token, _tab(tab))
    assert "another version of pilot" in ui.chat[-1]["content"]


def test_the_recent_list_keeps_the_last_twenty_and_forgets_their_records(store):
    token = new_token()
    record = ConversationRecord(chat=[ChatLine(role="user", content="a search")])
    keys = [new_id() for _ in range(MAX_RECENT + 5)]
    for i, key in enumerate(keys):
        store.remember(token, key, record, label=f"search {i}", results=i, answer=False)
    recent = store.recent(token)
    assert [e.key for e in recent] == keys[::-1][:MAX_RECENT]  # newest first
    assert store.search(token, keys[0]) == (None, None)  # pushed off the list: its record went with it
    assert store.search(token, keys[-1])[0] is not None
    store.remember(token, keys[10], record, label="search 10 again", results=3, answer=False)
    assert store.recent(token)[0].label == "search 10 again" and len(store.recent(token)) == MAX_RECENT
    assert store.recent(new_token()) == []  # another visitor's list is empty


def test_a_conversation_too_large_to_keep_sheds_its_oldest_searches_first(store):
    import os

    token, tab = new_token(), new_id()

    def search(n: int) -> dict:
        # incompressible text: each earlier search weighs ~0.5 MB once compressed
        return {"search_no": n, "request": os.urandom(380_000).hex()}

    record = ConversationRecord(session={"phase": "start", "earlier": [search(i) for i in range(1, 6)]})
    store.save(token, tab, record)
    kept, problem = store.load(token, tab)
    assert problem is None and kept is not None
    earlier = kept.session["earlier"]
    assert 0 < len(earlier) < 5 and earlier[-1]["search_no"] == 5  # the newest earlier searches stay
    too_big = ConversationRecord(chat=[ChatLine(role="user", content=os.urandom(9_000).hex()) for _ in range(200)])
    with pytest.raises(StoreProblem, match="larger than"):
        store.save(token, tab, too_big)
    assert MAX_RECORD_BYTES >= 1_000_000


def test_conversations_expire(tmp_path):
    store = ConversationStore.open(Settings(cache_dir=tmp_path, conversation_days=1.5 / 86400))  # 1.5 seconds
    token, tab = new_token(), new_id()
    store.save(token, tab, ConversationRecord(chat=[ChatLine(role="user", content="hello")]))
    assert store.load(token, tab)[0] is not None
    time.sleep(2.0)
    assert store.load(token, tab) == (None, None)


async def test_a_recent_search_reopens_as_it_was_left(controller):
    token, tab = new_token(), new_id()
    ui = await _topic_search(controller, token, tab)
    first = [r.paper.id for r in ui.results]
    await controller.send(ui, f'later work that builds on "{BLEU}"')
    await controller.search_now(ui)
    controller.save(ui)
    assert ui.results and [r.paper.id for r in ui.results] != first
    labels = [e.label for e in ui.recent]
    assert labels[0].startswith("later work") and labels[1] == TOPIC
    html = render.recent_html(ui.recent, controller.current_search_key(ui))
    assert html.count("data-recent=") == 1 and "(on screen)" not in html  # the one on screen is marked, not a button
    await controller.reopen(ui, ui.recent[1].key)
    assert [r.paper.id for r in ui.results] == first and ui.session.request == TOPIC
    assert ui.question is not None  # its open question is back too
    controller.save(ui)
    assert ui.recent[0].label == TOPIC  # reopened: at the top of the list again
    await controller.reopen(ui, "no-such-search-key-00")
    assert "could not be reopened" in ui.chat[-1]["content"]
