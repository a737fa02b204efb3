"""How far a corpus store build has got, for whoever waits for it (the app's start-up status and terminal).

A build runs once, at the first start on a new corpus file (about a minute for the 78k-paper corpus). It
reports each step as it starts, and how far the longest one has read, to the listeners open at the time:

    with listening(lambda p: print(p.line())):
        LocalCorpusSource.open(...)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

STEPS = ("reading the corpus", "building the keyword index", "writing the paper records", "loading the vectors")


@dataclass(frozen=True)
class BuildProgress:
    step: str
    fraction: float | None = None  # of this step, when known
    started: float = 0.0  # when the build started (time.monotonic)

    def line(self) -> str:
        """ "building the search index, step 1 of 4: reading the corpus (40%, 12 s so far)"."""
        number = STEPS.index(self.step) + 1 if self.step in STEPS else None
        where = f"step {number} of {len(STEPS)}: " if number else ""
        said = [f"{self.fraction:.0%}"] if self.fraction is not None else []
        said.append(f"{time.monotonic() - self.started:.0f} s so far")
        return f"building the search index, {where}{self.step} ({', '.join(said)})"


_listeners: list[Callable[[BuildProgress], None]] = []
_lock = threading.Lock()
_started = [0.0]


@contextlib.contextmanager
def listening(listener: Callable[[BuildProgress], None]) -> Iterator[None]:
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def report(step: str, fraction: float | None = None, *, start: bool = False) -> None:
    """Tell the listeners (if any) that the build is at ``step``; ``start`` marks the beginning of a build."""
    if start:
        _started[0] = time.monotonic()
    with _lock:
        listeners = list(_listeners)
    update = BuildProgress(step, None if fraction is None else max(0.0, min(1.0, fraction)), _started[0])
    for listener in listeners:
        listener(update)
