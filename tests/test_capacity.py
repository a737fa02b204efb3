"""Capacity: searches beyond the server's slots queue and are told their place (``pilot.gate``); a visitor's
simple actions never wait behind other visitors' searches, even when every slot is stuck on a dripping upstream;
idle sessions and their folders go (``pilot.ui.sessions``); temporary folders go at start and stop
(``pilot.ui.tempdirs``); the status line says when a source comes back.

Real parts: the Gradio server on loopback driven by ``gradio_client`` (each client a visitor), the S2 emulator
in its own process behind the fault fault_proxy.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

from emulators.faultproxy import Rule
from pilot.gate import SearchGate
from pilot.runtime import Runtime
from pilot.sources.factory import clear_probe_cache, open_sources
from pilot.sources.s2 import SemanticScholarSource
from pilot.ui import tempdirs
from pilot.ui.controller import Controller
from pilot.ui.sessions import held
from tests.s2_helpers import CITED, s2_settings
from tests.serving import chat_messages, chat_text, served_app


# --- the search gate ------------------------------------------------------------------------------------------
def _on_own_loop(fn, *args):
    """Run ``fn(*args)`` (a coroutine function) on a thread with its own event loop, as the app's workers do."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(asyncio.run(fn(*args))))
    t.start()
    return t, out


def test_searches_beyond_the_slots_wait_in_order_and_are_told_their_place():
    gate = SearchGate(1)
    order: list[str] = []
    told: dict[str, list[int]] = {"b": [], "c": []}
    release = threading.Event()

    async def search(name: str) -> None:
        async with gate.slot(lambda ahead: told.setdefault(name, []).append(ahead)):
            order.append(name)
            if name == "a":
                await asyncio.to_thread(release.wait, 10)
            if name == "b":
                await asyncio.sleep(1.0)  # long enough for "c" to look at its place again

    a, _ = _on_own_loop(search, "a")
    while gate.running == 0:
        time.sleep(0.01)
    b, _ = _on_own_loop(search, "b")
    while gate.waiting < 1:
        time.sleep(0.01)
    c, _ = _on_own_loop(search, "c")
    while gate.waiting < 2:
        time.sleep(0.01)
    time.sleep(0.2)
    assert told["b"] == [1] and told["c"] == [2]  # "1 search ahead of yours", "2 searches ahead of yours"
    release.set()
    for t in (a, b, c):
        t.join(10)
    assert order == ["a", "b", "c"]  # first come, first served, across threads and event loops
    assert told["c"][-1] == 1  # told again when its place changed
    assert gate.running == 0 and gate.waiting == 0


def test_a_visitor_who_leaves_the_queue_does_not_hold_a_slot():
    gate = SearchGate(1)

    async def scenario() -> list[str]:
        ran: list[str] = []
        hold = asyncio.Event()

        async def search(name: str, wait: bool) -> None:
            async with gate.slot():
                ran.append(name)
                if wait:
                    await hold.wait()

        first = asyncio.create_task(search("first", True))
        await asyncio.sleep(0.05)
        gone = asyncio.create_task(search("gone", False))
        await asyncio.sleep(0.05)
        gone.cancel()  # the visitor closed the tab while queued
        await asyncio.gather(gone, return_exceptions=True)
        later = asyncio.create_task(search("later", False))
        hold.set()
        await asyncio.wait_for(asyncio.gather(first, later), 5)
        return ran

    assert asyncio.run(scenario()) == ["first", "later"]
    assert gate.running == 0 and gate.waiting == 0


def test_a_turn_holding_a_slot_does_not_queue_behind_itself():
    gate = SearchGate(1)

    async def nested() -> bool:
        async with gate.slot(), gate.slot():  # a turn that runs a second workflow
            return True

    assert asyncio.run(asyncio.wait_for(nested(), 5))


# --- the served app under a dripping upstream -----------------------------------------------------------------------
def test_a_visitor_is_answered_while_every_search_slot_is_stuck_on_a_dripping_upstream(fault_proxy, tmp_path):
    from gradio_client import Client

    fault_proxy.set(Rule("/recommendations/", "drip", interval_s=1.0))
    settings = s2_settings(
        fault_proxy.url, tmp_path, max_turns=0, http_timeout_s=60, turn_budget_s=12, ui_concurrency=2, s2_rate="50/1"
    )
    rt = Runtime.for_source(SemanticScholarSource(settings), settings)
    with served_app(settings, Controller(rt)) as demo:
        url = demo.local_url
        searchers = [Client(url, verbose=False) for _ in range(3)]
        jobs = [c.submit(f"Papers similar to [{CITED}]", api_name="/send") for c in searchers]
        deadline = time.monotonic() + 60
        while fault_proxy.seen("/recommendations/", "drip") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)  # both slots are now stuck on the drip; the third search queues
        assert fault_proxy.seen("/recommendations/", "drip") >= 2
        visitor = Client(url, verbose=False)
        hello = visitor.submit("hello", api_name="/send").result(timeout=60)
        cleared = visitor.submit(api_name="/clear_chat").result(timeout=60)
        stuck = sum(not j.done() for j in jobs)
        assert stuck >= 2, "the greeting waited for the searches"  # answered while they were still running
        said = chat_messages(hello)
        assert said[-2] == ("user", "hello") and said[-1][0] == "assistant" and said[-1][1]
        assert "Hi!" in chat_text(cleared)
        replies = [j.result(timeout=120) for j in jobs]
        # every search ended (the turn's budget, 12 s, not the drip, which would take hours) and said something
        for out in replies:
            assert chat_text(out).strip()
        streamed = [str(o) for j in jobs for outs in j.outputs() for o in outs if isinstance(o, str)]
        assert any("ahead of yours" in s for s in streamed), "the queued search was not told its place"
    fault_proxy.clear()


def test_the_status_line_says_when_a_source_comes_back(fault_proxy, tmp_path):
    from gradio_client import Client

    clear_probe_cache()
    fault_proxy.set(Rule("", "reset"))  # unreachable while the app starts
    settings = s2_settings(fault_proxy.url, tmp_path, max_turns=0, connect_timeout_s=1, http_timeout_s=10)
    opened = open_sources(settings)
    rt = Runtime(settings=settings, source=opened.source, notes=opened.notes, pending=opened.pending,
                 members=opened.members, wanted=opened.wanted)  # fmt: skip
    with served_app(settings, Controller(rt)) as demo:
        client = Client(demo.local_url, verbose=False)
        before = client.predict("hello", api_name="/send")
        assert "Semantic Scholar unreachable" in str(before[-1])  # the status line, the last panel
        fault_proxy.clear()
        deadline = time.monotonic() + 30
        while rt.pending and time.monotonic() < deadline:
            rt.recheck()  # what the app's re-probing thread does every 15 s
            time.sleep(0.2)
        after = client.predict(f"Papers similar to [{CITED}]", api_name="/send")
        assert "Semantic Scholar is back" in str(after[-1])
        assert "Found" in chat_text(after)  # and searches work again, without a restart
    clear_probe_cache()


# --- sessions and folders ------------------------------------------------------------------------------------------
def test_idle_sessions_and_their_folders_go(local_source, tmp_path):
    from gradio_client import Client

    from pilot.settings import Settings
    from pilot.ui.sessions import SessionReaper

    settings = Settings(_env_file=None, cache_dir=tmp_path)
    controller = Controller(Runtime.for_source(local_source))
    with served_app(settings, controller) as demo:
        before = set(tempdirs.process_root().glob("session-*"))
        for _ in range(3):
            Client(demo.local_url, verbose=False).predict("hello", api_name="/send")
        assert held(demo) >= 3
        folders = set(tempdirs.process_root().glob("session-*")) - before
        assert len(folders) == 3
        time.sleep(1.2)
        reaper = SessionReaper(demo, idle_s=1.0)  # what the app's own (PILOT_SESSION_IDLE_S) does after 30 minutes
        assert reaper.sweep() >= 3 and held(demo) == 0
        assert not any(f.exists() for f in folders)  # each visitor's folder of downloads went with them
        again = Client(demo.local_url, verbose=False).predict("hello", api_name="/send")  # a new visitor is fine
        assert "hello" in chat_text(again).lower()


def test_a_closed_page_lets_its_session_go_sooner_than_an_open_idle_one(local_source, tmp_path):
    from gradio_client import Client

    from pilot.settings import Settings
    from pilot.ui.sessions import SessionReaper

    settings = Settings(_env_file=None, cache_dir=tmp_path)
    with served_app(settings, Controller(Runtime.for_source(local_source))) as demo:
        stays, leaves = Client(demo.local_url, verbose=False), Client(demo.local_url, verbose=False)
        for c in (stays, leaves):
            c.predict("hello", api_name="/send")
        leaves.close()  # the tab is closed: Gradio sees its heartbeat end
        reaper = SessionReaper(demo, idle_s=600, closed_idle_s=0.5)
        deadline = time.monotonic() + 30
        while held(demo) > 1 and time.monotonic() < deadline:
            time.sleep(0.5)
            reaper.sweep()
        assert held(demo) == 1 and stays.session_hash in demo.state_holder.session_data
        assert "hello" in chat_text(stays.predict("hello again", api_name="/send"))  # the open one goes on


def test_temporary_folders_of_processes_that_are_gone_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{tempdirs.PREFIX}{dead.pid}-abc123"
    alive = tmp_path / f"{tempdirs.PREFIX}{os.getppid()}-def456"
    other = tmp_path / f"{tempdirs.PREFIX}notours"
    for d in (gone, alive, other):
        (d / "session-x").mkdir(parents=True)
    assert tempdirs.clean_stale(tmp_path) == 1
    assert not gone.exists() and alive.exists() and other.exists()


def test_a_stopped_server_leaves_no_temporary_folder(local_source, corpus_slice, slice_vectors, tmp_path):
    # ``pilot app`` in a process of its own (the slice's store already built), stopped with SIGTERM as a service
    # manager stops it: the visitors' folders and Gradio's copies of the files it served go with it
    from gradio_client import Client

    from tests.emulator_process import ROOT, free_port

    port = free_port()
    env = {
        **os.environ, "TMPDIR": str(tmp_path), "PILOT_SOURCES": "local", "PILOT_CORPUS": str(corpus_slice),
        "PILOT_CORPUS_VECTORS": str(slice_vectors), "PILOT_CACHE_DIR": str(local_source.store.dir.parent),
        "HF_HUB_OFFLINE": "1",
    }  # fmt: skip
    env.pop("GRADIO_TEMP_DIR", None)
    cmd = [sys.executable, "-c", "from pilot.cli import main; main()", "app", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(1)
        client.predict("papers like BLEU", api_name="/send")
        client.predict(api_name="/search_now")
        client.predict(api_name="/keep_all")  # writes the library's exports: files Gradio serves
        (root,) = tmp_path.glob(f"{tempdirs.PREFIX}*")
        assert list(root.glob("session-*/*")) and list((root / "gradio").rglob("*.bib"))
    finally:
        proc.terminate()
        proc.wait(60)
    assert list(tmp_path.glob(f"{tempdirs.PREFIX}*")) == []


def _held_sends(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Messages with "slow" in them wait (up to 30 s) for the second event; the first says one has started."""
    started, release = threading.Event(), threading.Event()
    real_send = Controller.send

    async def slow_send(self, ui, text):
        if "slow" in text:
            started.set()
            await asyncio.to_thread(release.wait, 30)
        return await real_send(self, ui, text)

    monkeypatch.setattr(Controller, "send", slow_send)
    return started, release


def test_a_session_whose_action_is_still_running_is_never_idle(local_source, tmp_path, monkeypatch):
    # a search can outlast the closed-page grace (a page whose heartbeat dropped on a loaded server): its session
    # must still be there when the search ends, or the visitor's next action finds no results to work on
    from gradio_client import Client

    from pilot.settings import Settings
    from pilot.ui.sessions import SessionReaper

    started, release = _held_sends(monkeypatch)
    settings = Settings(_env_file=None, cache_dir=tmp_path)
    with served_app(settings, Controller(Runtime.for_source(local_source))) as demo:
        busy = Client(demo.local_url, verbose=False)
        job = busy.submit("slow", api_name="/send")
        assert started.wait(30)
        time.sleep(1.2)
        reaper = SessionReaper(demo, idle_s=1.0, closed_idle_s=0.5)
        reaper.sweep()
        assert busy.session_hash in demo.state_holder.session_data  # idle for longer than allowed, but busy
        release.set()
        job.result(timeout=60)
        time.sleep(1.2)
        assert reaper.sweep() >= 1 and busy.session_hash not in demo.state_holder.session_data  # then it may go


def test_a_long_action_keeps_its_session_for_the_next_one(local_source, tmp_path, monkeypatch):
    # a search that outlasts the closed-page grace, on a page whose heartbeat is gone: a sweep between its end and
    # the visitor's next action must not take the results away
    from gradio_client import Client

    from pilot.settings import Settings
    from pilot.ui.sessions import SessionReaper

    started, release = _held_sends(monkeypatch)
    settings = Settings(_env_file=None, cache_dir=tmp_path)
    with served_app(settings, Controller(Runtime.for_source(local_source))) as demo:
        visitor = Client(demo.local_url, verbose=False)
        visitor.predict("papers like BLEU", api_name="/send")
        job = visitor.submit("slow: papers like BLEU", api_name="/send")
        assert started.wait(30)
        time.sleep(1.2)
        demo.state_holder.session_data[visitor.session_hash].is_closed = True  # its heartbeat dropped once
        visitor.close()  # and is gone now: only the grace for a closed page protects the session
        reaper = SessionReaper(demo, idle_s=600, closed_idle_s=1.0)
        reaper.sweep()  # sees the action running
        release.set()
        job.result(timeout=60)
        assert reaper.sweep() == 0  # the action just ended: not idle, whenever it started
        assert visitor.session_hash in demo.state_holder.session_data


def test_a_page_whose_heartbeat_came_back_is_open(local_source, tmp_path):
    # Gradio marks a session closed when its heartbeat drops and never unmarks it when the page reconnects
    from gradio_client import Client

    from pilot.settings import Settings
    from pilot.ui.sessions import SessionReaper, page_open

    settings = Settings(_env_file=None, cache_dir=tmp_path)
    with served_app(settings, Controller(Runtime.for_source(local_source))) as demo:
        visitor = Client(demo.local_url, verbose=False)
        visitor.predict("hello", api_name="/send")
        sid = visitor.session_hash
        deadline = time.monotonic() + 30
        while not page_open(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert page_open(sid)
        visitor._refresh_heartbeat.set()  # the client drops its heartbeat stream and opens a new one
        while not demo.state_holder.session_data[sid].is_closed and time.monotonic() < deadline:
            time.sleep(0.1)
        assert demo.state_holder.session_data[sid].is_closed  # Gradio saw the drop
        while not page_open(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.2)
        reaper = SessionReaper(demo, idle_s=600, closed_idle_s=0.5)
        assert reaper.sweep() == 0 and sid in demo.state_holder.session_data  # a reader on an open page keeps it
        assert "hello" in chat_text(visitor.predict("hello again", api_name="/send"))
        visitor.close()  # the tab closed for good: the grace applies
        while sid in demo.state_holder.session_data and time.monotonic() < deadline + 30:
            time.sleep(0.5)
            reaper.sweep()
        assert sid not in demo.state_holder.session_data and not page_open(sid)


# --- the shared sentence model ------------------------------------------------------------------------------------
def test_a_visitors_message_goes_before_the_next_batch_of_another_search():
    """Two searches wait for the model with their next batches while a message's two texts arrive: the message is
    encoded next (it waited for the batch being encoded, not for the searches' queue)."""
    from pilot.embed import Turns

    turns = Turns()
    order: list[str] = []
    holding = threading.Event()
    release = threading.Event()

    def batch(name: str, first: bool = False) -> None:
        with turns.turn(urgent=False):
            if first:
                holding.set()
                release.wait(5)
            order.append(name)

    def message() -> None:
        with turns.turn(urgent=True):
            order.append("message")

    first = threading.Thread(target=batch, args=("search 1, batch 1", True))
    first.start()
    holding.wait(5)
    waiting = [threading.Thread(target=batch, args=(f"search {i}, batch 2",)) for i in (1, 2)]
    for t in waiting:
        t.start()
    time.sleep(0.2)  # both searches are waiting for the model now
    late = threading.Thread(target=message)
    late.start()
    time.sleep(0.2)
    release.set()
    for t in (first, *waiting, late):
        t.join(5)
    assert order[0] == "search 1, batch 1"
    assert order[1] == "message", order
    assert sorted(order[2:]) == ["search 1, batch 2", "search 2, batch 2"]
