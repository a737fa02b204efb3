"""diskcache-backed caches for source responses, embeddings and workflow node outputs.

A cache must never be the reason a search fails: any error opening, reading or writing it is logged
once as a warning and the caller simply computes the value again.

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
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from cache import codec

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

    def get_or_compute(self, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """Returns (value, was_cached)."""
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value, True
        value = compute()
        self.set(key, value)
        return value, False


class Cache(_NeverFails):
    """A namespaced view of one diskcache directory, with TTL and a size cap, that never raises."""

    def __init__(self, directory: Path | str | None, namespace: str, ttl_s: float | None = None, size_mb: int = 1024):
        self.namespace = namespace
        self.ttl_s = ttl_s
        self._cache = None
        self._warned = False
        if directory is None:
            return
        try:
            import diskcache

            private_dir(directory)
            where = private_dir(Path(directory) / namespace)
            self._cache = diskcache.Cache(str(where), size_limit=size_mb * 1024 * 1024, disk=_data_disk())
        except Exception as exc:  # corrupt db, read-only dir, …
            self._warn("open", exc)

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def get(self, key: str, default: Any = None) -> Any:
        if self._cache is None:
            return default
        try:
            blob = self._cache.get(key, default=_MISSING)
            return default if blob is _MISSING else codec.loads(blob)
        except codec.DecodeError as exc:  # damaged, from an older pilot, or planted: a miss, and gone
            log.info("cache %s: dropping an unreadable entry (%s)", self.namespace, exc)
            self._drop(key)
            return default
        except Exception as exc:
            self._warn("read", exc)
            return default

    def _drop(self, key: str) -> None:
        try:
            assert self._cache is not None
            self._cache.delete(key)
        except Exception as exc:  # noqa: BLE001 - a cache that cannot delete still must not fail a search
            self._warn("delete", exc)

    def set(self, key: str, value: Any) -> None:
        if self._cache is None:
            return
        try:
            self._cache.set(key, codec.dumps(value), expire=self.ttl_s)
        except Exception as exc:
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

            self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        except Exception as exc:  # bad URL, missing package
            self._warn("open", exc)

    _backend = "redis"

    @property
    def enabled(self) -> bool:
        return self._client is not None

    def _key(self, key: str) -> str:
        return f"pilot:{self.namespace}:{key}"

    def get(self, key: str, default: Any = None) -> Any:
        if self._client is None:
            return default
        try:
            raw = self._client.get(self._key(key))
        except Exception as exc:
            self._warn("read", exc)
            return default
        if raw is None:
            return default
        try:
            return codec.loads(cast(bytes, raw))
        except Exception as exc:  # damaged, from an incompatible version, or planted: a miss
            self._warn("decode", exc)
            return default

    def set(self, key: str, value: Any) -> None:
        if self._client is None:
            return
        try:
            ttl = int(self.ttl_s) if self.ttl_s else None
            self._client.set(self._key(key), codec.dumps(value), ex=ttl)
        except Exception as exc:
            self._warn("write", exc)

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
