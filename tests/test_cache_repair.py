"""Caches are never why a turn is slow, empty or broken for good: a frozen Redis is bypassed after one short
timeout (``cache.breaker``) and tried again later; a damaged diskcache is moved aside and rebuilt, and the app's
status line says so (``cache.health``). Real parts: Debian's redis-server (frozen with SIGSTOP), diskcache on
disk, the S2 emulator in its own process."""

from __future__ import annotations

import threading
import time

import pytest

from cache import Cache, RedisCache, breaker, health
from cache.breaker import breaker_for
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.sources.ratelimit import Rate, RedisRateLimiter
from pilot.sources.s2 import SemanticScholarSource
from pilot.ui.controller import Controller
from tests.emulator_process import EmulatorProcess
from tests.redis_server import RedisServer
from tests.s2_helpers import CITED, s2_settings


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    breaker.reset()
    health.reset()
    monkeypatch.setattr(breaker, "COOLDOWN_S", 0.5)  # tried again after half a second here (10 s in the app)
    yield
    breaker.reset()
    health.reset()


@pytest.fixture
def redis(tmp_path):
    with RedisServer(tmp_path) as server:
        yield server


def test_a_searchs_vectors_stored_at_once_are_read_by_another_replica_and_bypass_a_frozen_redis(redis):
    import numpy as np

    vectors = [(f"v{i}", np.full(4, i, dtype=np.float32)) for i in range(300)]
    RedisCache(redis.url, "embeddings", ttl_s=60).set_many(vectors)
    other = RedisCache(redis.url, "embeddings", ttl_s=60)  # another replica
    assert [float(other.get(k)[0]) for k, _ in vectors] == [float(i) for i in range(300)]
    redis.freeze()
    started = time.monotonic()
    other.set_many([("late", np.zeros(4, dtype=np.float32))] * 50)
    other.set_many([("later", np.zeros(4, dtype=np.float32))])
    assert time.monotonic() - started < 3  # one timeout opened the breaker; the second batch was not tried
    redis.thaw()


def test_a_frozen_redis_costs_one_timeout_then_is_bypassed_and_tried_again(redis):
    cache = RedisCache(redis.url, "api", ttl_s=60)
    cache.set("k", {"v": 1})
    assert cache.get("k") == {"v": 1}
    redis.freeze()
    started = time.monotonic()
    got = [cache.get("k") for _ in range(50)]
    for i in range(50):
        cache.set(f"x{i}", i)
    took = time.monotonic() - started
    assert got == [None] * 50  # misses: the caller computes the value again
    # one socket timeout (1 s) opened the breaker; a hundred look-ups did not wait a hundred timeouts (was 2 s
    # each); at most a few half-open trials, each one timeout, fit in the time it took
    assert took < 5, took
    assert breaker_for(redis.url).is_open
    assert any("Redis at 127.0.0.1" in n and "bypassed" in n for n in health.notes())
    redis.thaw()
    time.sleep(0.6)
    assert cache.get("k") == {"v": 1}  # tried again, answered: closed
    assert not breaker_for(redis.url).is_open and health.notes() == []


async def test_the_shared_rate_limit_falls_back_at_once_to_this_process_while_redis_is_frozen(redis):
    limiter = RedisRateLimiter("s2", Rate(50, 1.0), redis.url, "s2:test-freeze")
    await limiter.acquire()
    redis.freeze()
    started = time.monotonic()
    for _ in range(10):
        await limiter.acquire()
    # two timeouts (3 s each: the breaker opens at the second failure in a row), then this process's own window
    assert time.monotonic() - started < 8
    redis.thaw()


async def test_a_turn_over_a_frozen_redis_still_has_its_results(redis, local_source, tmp_path):
    with EmulatorProcess(local_source.store.dir, warm=True) as url:
        settings = s2_settings(url, tmp_path, max_turns=0, redis_url=redis.url, s2_rate="20/1", http_timeout_s=30)
        rt = Runtime.from_settings(settings, do_probe=False)
        s = Session(rt)
        first = await s.user_says(f"Which papers came after [{CITED}]?")
        assert first.error is None and first.results
        redis.freeze()
        try:
            started = time.monotonic()
            frozen = await Session(rt).user_says(f"Papers similar to [{CITED}]")
            took = time.monotonic() - started
        finally:
            redis.thaw()
        # the issue: 58 s and 0 results. Now the caches miss after one timeout and the turn goes on upstream
        assert frozen.error is None and frozen.results, frozen.message
        assert took < 30, took
        await rt.source.aclose()


def test_a_cache_damaged_while_the_app_runs_is_moved_aside_rebuilt_and_said(tmp_path, caplog):
    cache = Cache(tmp_path, "api", ttl_s=60)
    cache.set("a", [1, 2])
    (tmp_path / "api" / "cache.db").write_bytes(b"not sqlite " * 500)  # a disk error, a stray write
    found: list = []
    reader = threading.Thread(target=lambda: found.append(cache.get("a")))  # a worker thread's connection
    reader.start()
    reader.join()
    assert found == [None]  # a miss, not an error
    cache.set("b", {"c": 3})
    assert cache.get("b") == {"c": 3} and cache.enabled  # rebuilt and in use: not switched off for good
    assert len(list(tmp_path.glob("api.damaged-*"))) == 1
    assert "moved aside" in caplog.text
    status = Controller(Runtime.for_source(unavailable())).about()
    assert "the api cache was damaged" in status and "rebuilt" in status


def test_a_full_disk_is_not_taken_for_damage(tmp_path):
    import sqlite3

    from cache import damaged

    assert damaged(sqlite3.DatabaseError("database disk image is malformed"))
    assert not damaged(sqlite3.OperationalError("database or disk is full"))
    assert not damaged(sqlite3.OperationalError("database is locked"))
    assert not damaged(OSError(28, "No space left on device"))


def unavailable():
    from pilot.sources.factory import UnavailableSource

    return UnavailableSource("no source here", "none needed: this test reads the status line")


async def test_a_step_made_while_a_request_failed_is_not_cached(local_source, tmp_path):
    # the node cache must not keep what a failing source gave: asked again when the source is back, the step runs
    from emulators.faultproxy import FaultProxy, Rule
    from emulators.server import Running

    with EmulatorProcess(local_source.store.dir, warm=True) as url:
        fp = FaultProxy(url)
        with Running(fp) as proxy:
            settings = s2_settings(proxy.url, tmp_path, max_turns=0, http_timeout_s=10)
            rt = Runtime.for_source(SemanticScholarSource(settings, max_retries=0), settings)
            fp.set(Rule("/recommendations/", "body", status=503, body={"error": "down"}))
            hurt = await Session(rt).user_says(f"Papers similar to [{CITED}]")
            assert any("not cached" in (t.note or "") for t in (hurt.trace.nodes if hurt.trace else []))
            fp.clear()
            healed = await Session(rt).user_says(f"Papers similar to [{CITED}]")
            assert fp.seen("/recommendations/", "pass") >= 1  # asked again: the degraded step was not reused
            assert healed.results
            await rt.source.aclose()
