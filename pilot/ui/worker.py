"""Where the app's actions run: worker threads with an event loop each, never Gradio's own loop.

Gradio serves every visitor from one event loop. An action that ran there (a search's scoring, the DAG
drawing, reading a message, writing an export) held up every other visitor's clicks for as long as it
took, and a node's timeout could not stop it. Here each action runs, start to finish — the session call
and the redraw of the panels — on a worker thread, with a long-lived event loop per thread (so the HTTP
clients that belong to a loop are reused). Gradio's loop only waits for the result.

    workers = Workers(threads=4)
    view = await workers.run(do_action, ui, text)             # a coroutine function or a plain function
    async for view in workers.iterate(stream_action, ui):     # an async generator, items as they come
        ...

``threads`` bounds how many actions compute at once; the rest wait in arrival order. Waiting for a
thread costs the caller nothing, so callers keep their own ordering (a visitor's session lock) outside.
Pure-Python work in a thread still shares the interpreter lock with the loop, which gets its turn every
few milliseconds; the size limits (``pilot.limits``) keep any single call that holds the lock short.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import inspect
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# The interpreter hands the lock between threads every SWITCH_S instead of the default 5 ms: a request
# of another visitor is served in many short steps (each needs the lock), and each step waits for at most
# one interval per busy thread.
SWITCH_S = 0.001
# Threads one action may keep busy besides its own (``asyncio.to_thread`` inside operators, e.g. a corpus
# search): a hundred parallel searches of one workflow queue here instead of each taking a thread.
HELPERS_PER_ACTION = 1


FULL_GC_IDLE_S = 5.0  # a full collection when no action has run for this long since the last one
FULL_GC_MAX_S = 300.0  # and one at the latest after this long, busy or not (cyclic garbage is freed)


class _Serving:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0  # actions running on any worker thread
        self.collector: threading.Thread | None = None


_STATE = _Serving()


class Workers:
    def __init__(self, threads: int = 4, name: str = "pilot-action"):
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix=name)
        self._local = threading.local()

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            loop.set_default_executor(
                ThreadPoolExecutor(max_workers=HELPERS_PER_ACTION, thread_name_prefix="pilot-action-helper")
            )
            self._local.loop = loop
        return loop

    def _call(self, fn: Callable[..., Any], args: tuple) -> Any:
        with _STATE.lock:
            _STATE.active += 1
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = self._loop().run_until_complete(_awaited(result))
            return result
        finally:
            with _STATE.lock:
                _STATE.active -= 1

    async def _wait(self, fut: Future) -> Any:
        """The thread's result. If the caller is cancelled (the visitor went away), it still waits for the
        thread to finish before passing the cancellation on: the caller's lock must not be released while
        the action is still changing the state it guards."""
        wrapped = asyncio.wrap_future(fut)
        try:
            return await asyncio.shield(wrapped)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                await asyncio.wait({wrapped})
            raise

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on a worker thread (awaited on that thread's loop when it is a coroutine function)."""
        return await self._wait(self._pool.submit(self._call, fn, args))

    async def iterate(self, agen_fn: Callable[..., AsyncIterator[Any]], *args: Any) -> AsyncIterator[Any]:
        """The items of the async generator ``agen_fn(*args)``, which runs on a worker thread, handed to
        the caller's loop as they are produced (a streaming action's intermediate views)."""
        caller = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def push(kind: str, item: Any) -> None:
            caller.call_soon_threadsafe(queue.put_nowait, (kind, item))

        async def drive() -> None:
            try:
                async for item in agen_fn(*args):
                    push("item", item)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
                push("error", exc)
            else:
                push("done", None)

        fut = self._pool.submit(self._call, drive, ())
        try:
            while True:
                kind, item = await queue.get()
                if kind == "item":
                    yield item
                elif kind == "error":
                    raise item
                else:
                    break
        finally:
            await self._wait(fut)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def tune_for_serving() -> None:
    """Interpreter settings for a server shared by several visitors; call once the app is built (again is
    harmless).

    A full garbage collection holds the interpreter lock for as long as it scans every live object. With
    a corpus store, a model and Gradio loaded it took 0.3–0.6 s, and while one visitor's heavy workflow
    kept tens of thousands of papers alive, 1–4 s, growing with every collection: each stopped every other
    visitor's clicks. So everything alive after start-up is frozen (never scanned again: it lives as long
    as the process), and full collections no longer start on their own in the middle of someone's action:
    a collector thread runs them while no action is running, or after ``FULL_GC_MAX_S`` at the latest.
    Young-generation collections (milliseconds) run as usual."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_S))
    limit_arenas()
    with _STATE.lock:
        if _STATE.collector is not None:
            return
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, 1 << 30)  # full collections only by the collector below
        _STATE.collector = threading.Thread(target=_collect_when_idle, name="pilot-gc", daemon=True)
        _STATE.collector.start()


def _collect_when_idle() -> None:
    last = time.monotonic()
    while True:
        time.sleep(1.0)
        now = time.monotonic()
        with _STATE.lock:
            idle = _STATE.active == 0
        promoted = gc.get_count()[2] > 0  # objects reached the old generation since the last full collection
        if promoted and ((idle and now - last >= FULL_GC_IDLE_S) or now - last >= FULL_GC_MAX_S):
            gc.collect()
            if idle:
                release_memory()
            last = time.monotonic()


def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl, macOS): its allocator returns memory its own way
        return None


_LIBC = _libc()


M_ARENA_MAX = -8  # glibc's mallopt parameters
M_MMAP_THRESHOLD = -3
ARENAS = 2
MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, kept fixed


def limit_arenas() -> None:
    """At most ``ARENAS`` glibc heaps for the threads made from now on (the worker threads). By default each of
    the ~50 threads that ever ran an action may get a heap of its own (up to 8 per core), and memory freed in one
    is not used by another: the server's resident memory followed the number of busy threads it ever had. Python
    code holds the interpreter lock anyway, so threads gain little from heaps of their own."""
    if _LIBC is not None:
        with contextlib.suppress(Exception):
            _LIBC.mallopt(M_ARENA_MAX, ARENAS)
            # Blocks of 128 KB and more (numpy score arrays, a search's candidate matrices) are mapped and unmapped
            # on their own. glibc raises this threshold after each such block is freed (up to 32 MB), after which
            # they come from the heap, where a long-lived small object left between them pins the freed space:
            # the 30-visitor soak levelled ~100 MB lower with the threshold fixed.
            _LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_memory() -> None:
    """Give the heap's free pages back to the system. glibc keeps what a burst of searches freed (each worker
    thread allocates from an arena of its own) and the process's resident memory stayed at its peak for good;
    trimming when idle returns it, so the memory a server holds follows its load."""
    if _LIBC is not None:
        with contextlib.suppress(Exception):
            _LIBC.malloc_trim(0)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
