"""The app's first start (``pilot.ui.startup``): the page serves while the sources open and the corpus's search
index is built, says how far the build is, and a request sent meanwhile waits for it and then runs."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pilot.settings import Settings
from pilot.store.progress import STEPS, BuildProgress
from pilot.ui.controller import Controller


async def test_a_request_sent_while_the_index_builds_waits_for_it_and_runs(corpus_slice, slice_vectors, tmp_path):
    settings = Settings(sources="local", corpus=corpus_slice, corpus_vectors=slice_vectors, cache_dir=tmp_path)
    controller = Controller.start(settings)
    assert controller.is_starting and controller.about().startswith("Status: starting")
    assert "PILOT_CORPUS" not in controller.welcome()  # starting is not "no source"
    seen: list[str] = []
    ui = controller.new_state()
    ui.updates = asyncio.Queue()
    # a busy server: every worker thread is taken while the build runs (the page must still hear each step)
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    release = threading.Event()
    busy = loop.run_in_executor(None, release.wait, 60)
    task = asyncio.ensure_future(controller.send(ui, 'later work that builds on "BLEU"'))
    while not task.done():
        while not ui.updates.empty():
            update = ui.updates.get_nowait()
            if isinstance(update, str):
                seen.append(update)
        seen.append(controller.about())
        await asyncio.sleep(0.2)
        if not controller.is_starting:
            release.set()  # the request's own steps may use the pool
    release.set()
    await asyncio.gather(task, busy)
    assert not controller.is_starting and controller.runtime is not None
    steps = [s for s in STEPS if any(s in line for line in seen)]
    # the page was told which step the build was on, in order (a step of the small slice can pass between two looks)
    assert len(steps) >= 2 and steps == [s for s in STEPS if s in steps], seen
    assert any(line.startswith("Starting: building the search index") for line in seen)
    assert ui.chat[-1]["role"] == "assistant" and ui.session is not None  # the request then ran
    assert controller.about().startswith("Status: Sources: local")


def test_progress_lines_say_the_step_and_how_far():
    p = BuildProgress(STEPS[0], 0.4, time.monotonic() - 12)
    assert p.line() == "building the search index, step 1 of 4: reading the corpus (40%, 12 s so far)"
    assert "step 2 of 4: building the keyword index (" in BuildProgress(STEPS[1], None, time.monotonic()).line()
