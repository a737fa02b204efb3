"""What the caches went through, in words, for the app's status line: a Redis being bypassed, a damaged
disk cache moved aside and rebuilt. Kept in memory for the process; the newest few of each kind.

    note("disk:api", "the response cache was damaged …")   # a standing fact, replaced by the next of its kind
    clear("redis:127.0.0.1:6379")                           # the fact no longer holds (Redis answers again)
    notes()                                                 # what the status line shows now
"""

from __future__ import annotations

import threading
import time

_NOTES: dict[str, tuple[float, str]] = {}
_LOCK = threading.Lock()
KEEP_S = 24 * 3600.0  # a repair is news for a day; a bypass is news until it ends


def note(kind: str, text: str) -> None:
    with _LOCK:
        _NOTES[kind] = (time.time(), text)


def clear(kind: str) -> None:
    with _LOCK:
        _NOTES.pop(kind, None)


def notes() -> list[str]:
    """Current notes, oldest first (those older than ``KEEP_S`` are dropped)."""
    now = time.time()
    with _LOCK:
        for kind in [k for k, (at, _) in _NOTES.items() if now - at > KEEP_S]:
            del _NOTES[kind]
        return [text for _, text in sorted(_NOTES.values())]


def reset() -> None:
    """Forget everything (tests)."""
    with _LOCK:
        _NOTES.clear()
