"""Serving the app on a free loopback port for tests that talk to it over HTTP."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served_app(settings: Any, controller: Any) -> Iterator[Any]:
    """The app as ``pilot.ui.app.launch`` serves it (same start-up checks), in this process; yields the
    running demo (``demo.local_url`` is its address) and closes it afterwards."""
    from pilot.ui.app import launch

    demo = launch(settings, "127.0.0.1", free_port(), controller, prevent_thread_lock=True, quiet=True)
    try:
        yield demo
    finally:
        demo.close()


def chat_messages(outputs: Any) -> list[tuple[str, str]]:
    """(role, text) of the chat panel among the outputs of an action (``gradio_client``)."""
    chat = next(o for o in outputs if isinstance(o, list) and o and isinstance(o[0], dict) and "role" in o[0])
    out = []
    for m in chat:
        content = m.get("content")
        parts = content if isinstance(content, list) else [content]
        out.append((m["role"], " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in parts)))
    return out


def chat_text(outputs: Any) -> str:
    return "\n".join(text for _, text in chat_messages(outputs))
