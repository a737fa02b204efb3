"""Opening the sources while the page already serves: the first start on a new corpus builds its search index
(about a minute for the shared 78k-paper corpus), and a researcher who opens the page meanwhile sees how far it
is instead of a browser spinning on a port nobody answers.

    starting = StartUp(settings, controller.started).begin()
    starting.line()        # "building the search index, step 2 of 4: building the keyword index (31 s so far)"
    starting.ready.wait()  # set once the runtime is open (or failed to open: the controller says what to set)

The terminal gets the same lines, one per step and one every ``TERMINAL_EVERY_S`` within a long step.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

from pilot.reading import warm as warm_reader
from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.store.progress import BuildProgress, listening

log = logging.getLogger(__name__)

TERMINAL_EVERY_S = 10.0


class StartUp:
    def __init__(self, settings: Settings, done: Callable[[Runtime | None, str | None], None]):
        self.settings = settings
        self._done = done
        self.ready = threading.Event()
        self.started = time.monotonic()
        self._progress: BuildProgress | None = None
        self._said: tuple[str, float] = ("", 0.0)

    def begin(self) -> StartUp:
        threading.Thread(target=self._open, name="pilot-startup", daemon=True).start()
        return self

    def line(self) -> str:
        """Where the start is, in words."""
        if self.ready.is_set():
            return "ready"
        if self._progress is not None:
            return self._progress.line()
        return f"opening the paper sources ({time.monotonic() - self.started:.0f} s so far)"

    def _heard(self, progress: BuildProgress) -> None:
        self._progress = progress
        step, last = self._said
        now = time.monotonic()
        if progress.step != step or now - last >= TERMINAL_EVERY_S:
            self._said = (progress.step, now)
            print(f"pilot: {progress.line()}", file=sys.stderr, flush=True)

    def _open(self) -> None:
        runtime, problem = None, None
        try:
            with listening(self._heard):
                runtime = Runtime.from_settings(self.settings)
        except Exception as exc:  # noqa: BLE001 - a missing corpus or dead network must not stop the app
            log.warning("no runtime: %s", exc)
            problem = f"Could not open a paper source: {exc}"
        took = time.monotonic() - self.started
        if self._progress is not None:
            said = f"pilot: the search index is built ({took:.0f} s); later starts reuse it"
            print(said, file=sys.stderr, flush=True)
        self._done(runtime, problem)
        self.ready.set()
        # then the sentence model, so that the first message need not wait for it (the page is served meanwhile)
        warm_reader()
