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
