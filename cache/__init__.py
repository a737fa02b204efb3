"""diskcache-backed caches for source responses, embeddings and workflow node outputs.

A cache must never be the reason a search fails: any error opening, reading or writing it is logged
once as a warning and the caller simply computes the value again. Nor may it be the reason a search is slow
or stays broken: Redis is asked with a short deadline behind a circuit breaker (``cache.breaker``: a frozen
server is bypassed after one timeout, and tried again later), and a diskcache whose database is damaged is
moved aside and rebuilt empty at once (the status line says so, ``cache.health``), not switched off.

A cache never runs what it reads: values are stored as data only (``cache.codec``: JSON, registered
pydantic models, numeric arrays), the diskcache ``Disk`` used here refuses pickled entries and file names
outside the cache directory, and cache directories are created private to the user (0700). An entry
that does not decode — damaged, written by an older pilot, or planted — is a miss and is deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from cache import codec, health
from cache.breaker import breaker_for

log = logging.getLogger(__name__)

_MISSING = object()


def fingerprint(*parts: Any) -> str:
    """A stable key for JSON-able parts (pydantic models are dumped first)."""

    def default(o: Any) -> Any:
        if hasattr(o, "model_dump"):
            return o.model_dump(mode="json")
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        return repr(o)

    blob = json.dumps(parts, sort_keys=True, default=default, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def private_dir(path: Path | str) -> Path:
    """``path`` as a directory only its owner can read or write (0700), created with its parents.

    An existing directory we own is tightened to 0700; write access to a cache directory must not be
    anyone else's. ``OSError`` when it cannot be made."""
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
        path.chmod(0o700)
    return path


def _data_disk():
    """A diskcache ``Disk`` that stores and returns bytes only: no pickle in either direction, and no file
    name read from the database may point outside the cache directory (a planted row must not make us
    read or delete someone else's file)."""
    import diskcache
    from diskcache.core import MODE_BINARY, MODE_RAW

    class DataDisk(diskcache.Disk):
        def _inside(self, filename: Any) -> None:
            root = os.path.realpath(self._directory)
            full = os.path.realpath(os.path.join(root, str(filename)))
            if not full.startswith(root + os.sep):
                raise codec.DecodeError("cache entry points outside the cache directory")

        def put(self, key: Any) -> tuple[Any, bool]:
            if not isinstance(key, str):
                raise TypeError("cache keys are strings")
            return super().put(key)

        def get(self, key: Any, raw: bool) -> Any:
            if not raw:
                raise codec.DecodeError("pickled cache key")
            return super().get(key, raw)

        def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
            if read or not isinstance(value, bytes):
                raise TypeError("cache values are bytes (see cache.codec)")
            return super().store(value, read, key)

        def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> Any:
            if read or mode not in (MODE_RAW, MODE_BINARY):
                raise codec.DecodeError(f"cache entry of mode {mode} (only data entries are read)")
            if filename is not None:
                self._inside(filename)
            return super().fetch(mode, filename, value, read)

        def remove(self, file_path: Any) -> None:
            self._inside(file_path)
            super().remove(file_path)

    return DataDisk


class _NeverFails:
    """What every cache backend shares: one warning per failing kind of access, and get-or-compute."""

    namespace: str
    _warned: bool = False
    _backend = "diskcache"

    def _warn(self, what: str, exc: Exception) -> None:
        if not self._warned:
            log.warning(
                "cache %s (%s): %s failed (%s); continuing without the cache", self.namespace, self._backend, what, exc
            )
            self._warned = True

    def get(self, key: str, default: Any = None) -> Any:  # pragma: no cover - implemented by the backends
        raise NotImplementedError

    def set(self, key: str, value: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def set_many(self, items: list[tuple[str, Any]]) -> None:
        for key, value in items:
            self.set(key, value)

    def get_or_compute(self, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """Returns (value, was_cached)."""
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value, True
        value = compute()
        self.set(key, value)
        return value, False


# What each SQLite connection of a diskcache may keep in memory. diskcache opens one connection per thread, and
# the app's actions run on ~50 threads and their helpers: with diskcache's defaults (an 8,192-page cache and a
# 64 MB memory map per connection) every thread that ever touched a cache grew the server by up to ~100 MB, for
# good. The values are in files or small rows; the system's page cache serves the reads as well.
SQLITE_MEMORY = {"sqlite_cache_size": 256, "sqlite_mmap_size": 0}


def damaged(exc: BaseException) -> bool:
    """Whether a diskcache error means its database file is damaged (not a full disk, a lock or a permission:
    those pass, and moving the cache aside would not help them)."""
    return type(exc) is sqlite3.DatabaseError  # "database disk image is malformed", "file is not a database"


class Cache(_NeverFails):
    """A namespaced view of one diskcache directory, with TTL and a size cap, that never raises.

    A damaged database (at open, or found by any read or write) is moved aside to ``<namespace>.damaged-<time>``
    and an empty cache is built in its place: one lost cache, not a process without one."""

    def __init__(self, directory: Path | str | None, namespace: str, ttl_s: float | None = None, size_mb: int = 1024):
        self.namespace = namespace
        self.ttl_s = ttl_s
        self.size_mb = size_mb
        self._cache = None
        self._warned = False
        self._where: Path | None = None
        self._repair_lock = threading.Lock()
        if directory is None:
            return
        try:
            private_dir(directory)
            self._where = private_dir(Path(directory) / namespace)
            self._open()
        except Exception as exc:  # corrupt db, read-only dir, …
            if not self._repair(exc):
                self._warn("open", exc)

    def _open(self) -> None:
        import diskcache

        assert self._where is not None
        self._cache = diskcache.Cache(
            str(self._where), size_limit=self.size_mb * 1024 * 1024, disk=_data_disk(), **SQLITE_MEMORY
        )

    def _repair(self, exc: BaseException) -> bool:
        """Move a damaged cache aside and open an empty one; whether that was the trouble and it worked."""
        if not damaged(exc) or self._where is None:
            return False
        with self._repair_lock:
            old, self._cache = self._cache, None
            if old is not None:
                with contextlib.suppress(Exception):
                    old.close()
            aside = self._where.with_name(f"{self.namespace}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
            try:
                if self._where.exists():
                    self._where.rename(aside)
                private_dir(self._where)
                self._open()
            except Exception as again:  # noqa: BLE001 - then it is switched off, as any unusable cache is
                self._warn("repair", again)
                return False
        when = time.strftime("%H:%M:%S")
        log.warning("cache %s: damaged (%s); moved aside to %s and rebuilt empty", self.namespace, exc, aside)
        health.note(
            f"disk:{self.namespace}",
            f"the {self.namespace} cache was damaged ({exc}); it was moved aside to {aside.name} and rebuilt "
            f"empty at {when} (searches fetch again what it held)",
        )
        return True

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def get(self, key: str, default: Any = None) -> Any:
        cache = self._cache
        if cache is None:
            return default
        try:
            blob = cache.get(key, default=_MISSING)
            return default if blob is _MISSING else codec.loads(blob)
        except codec.DecodeError as exc:  # damaged, from an older pilot, or planted: a miss, and gone
            log.info("cache %s: dropping an unreadable entry (%s)", self.namespace, exc)
            self._drop(key)
            return default
        except Exception as exc:
            if not self._repair(exc):
                self._warn("read", exc)
            return default

    def _drop(self, key: str) -> None:
        try:
            assert self._cache is not None
            self._cache.delete(key)
        except Exception as exc:  # noqa: BLE001 - a cache that cannot delete still must not fail a search
            self._warn("delete", exc)

    def set(self, key: str, value: Any) -> None:
        cache = self._cache
        if cache is None:
            return
        try:
            cache.set(key, codec.dumps(value), expire=self.ttl_s)
        except Exception as exc:
            if not self._repair(exc):
                self._warn("write", exc)

    def set_many(self, items: list[tuple[str, Any]]) -> None:
        """Store several values in one SQLite transaction: a search's ~hundreds of sentence vectors stored one
        commit each cost a quarter of its CPU under load (scripts/profile_search.py)."""
        cache = self._cache
        if cache is None or not items:
            return
        try:
            blobs = [(key, codec.dumps(value)) for key, value in items]
            with cache.transact():
                for key, blob in blobs:
                    cache.set(key, blob, expire=self.ttl_s)
        except Exception as exc:
            if not self._repair(exc):
                self._warn("write", exc)

    def clear(self) -> None:
        if self._cache is not None:
            try:
                self._cache.clear()
            except Exception as exc:
                self._warn("clear", exc)

    def close(self) -> None:
        if self._cache is not None:
            with contextlib.suppress(Exception):
                self._cache.close()


# Redis is a shared convenience, never a dependency: a call that takes longer than this is a failure (and
# opens the breaker), so a frozen server costs a turn about one timeout, not one per look-up.
REDIS_TIMEOUT_S = 0.5
REDIS_CONNECT_TIMEOUT_S = 0.5


class RedisCache(_NeverFails):
    """The same never-failing cache interface over Redis, so that several app replicas share answers.

    Values are data only, as on disk (``cache.codec``): whoever can write to the Redis server must not be
    able to run code in pilot by planting a value. Keys live under ``pilot:<namespace>:``. Expiry is
    Redis's; the size cap is Redis's ``maxmemory``."""

    def __init__(self, url: str, namespace: str, ttl_s: float | None = None):
        self.namespace = namespace
        self.ttl_s = ttl_s
        self._warned = False
        self._client = None
        try:
            import redis

            self._client = redis.Redis.from_url(
                url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_CONNECT_TIMEOUT_S
            )
        except Exception as exc:  # bad URL, missing package
            self._warn("open", exc)
        self._breaker = breaker_for(url)

    _backend = "redis"

    @property
    def enabled(self) -> bool:
        return self._client is not None

    def _key(self, key: str) -> str:
        return f"pilot:{self.namespace}:{key}"

    def get(self, key: str, default: Any = None) -> Any:
        if self._client is None or not self._breaker.allow():
            return default
        try:
            raw = self._client.get(self._key(key))
        except Exception as exc:
            self._breaker.failure(exc)
            return default
        self._breaker.success()
        if raw is None:
            return default
        try:
            return codec.loads(cast(bytes, raw))
        except Exception as exc:  # damaged, from an incompatible version, or planted: a miss
            self._warn("decode", exc)
            return default

    def set(self, key: str, value: Any) -> None:
        if self._client is None or not self._breaker.allow():
            return
        try:
            ttl = int(self.ttl_s) if self.ttl_s else None
            blob = codec.dumps(value)
        except Exception as exc:
            self._warn("encode", exc)
            return
        try:
            self._client.set(self._key(key), blob, ex=ttl)
        except Exception as exc:
            self._breaker.failure(exc)
            return
        self._breaker.success()

    def set_many(self, items: list[tuple[str, Any]]) -> None:
        """One round trip for several values (a pipeline), under the same breaker as one."""
        if self._client is None or not items or not self._breaker.allow():
            return
        try:
            ttl = int(self.ttl_s) if self.ttl_s else None
            blobs = [(self._key(key), codec.dumps(value)) for key, value in items]
        except Exception as exc:
            self._warn("encode", exc)
            return
        try:
            pipe = self._client.pipeline(transaction=False)
            for key, blob in blobs:
                pipe.set(key, blob, ex=ttl)
            pipe.execute()
        except Exception as exc:
            self._breaker.failure(exc)
            return
        self._breaker.success()

    def clear(self) -> None:
        if self._client is None:
            return
        try:
            for key in self._client.scan_iter(match=self._key("*"), count=500):
                self._client.delete(key)
        except Exception as exc:
            self._warn("clear", exc)

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()


def open_cache(
    directory: Path | str | None,
    namespace: str,
    ttl_s: float | None = None,
    size_mb: int = 1024,
    redis_url: str | None = None,
) -> Cache | RedisCache:
    """Redis when a URL is given (replicas share it), else a diskcache directory (the default)."""
    if redis_url:
        return RedisCache(redis_url, namespace, ttl_s)
    return Cache(directory, namespace, ttl_s=ttl_s, size_mb=size_mb)
