"""diskcache-backed caches for source responses, embeddings and workflow node outputs.

A cache must never be the reason a search fails: any error opening, reading or writing it is logged
once as a warning and the caller simply computes the value again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

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

            self._cache = diskcache.Cache(str(Path(directory) / namespace), size_limit=size_mb * 1024 * 1024)
        except Exception as exc:  # corrupt db, read-only dir, …
            self._warn("open", exc)

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def get(self, key: str, default: Any = None) -> Any:
        if self._cache is None:
            return default
        try:
            return self._cache.get(key, default=default)
        except Exception as exc:
            self._warn("read", exc)
            return default

    def set(self, key: str, value: Any) -> None:
        if self._cache is None:
            return
        try:
            self._cache.set(key, value, expire=self.ttl_s)
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

    Values are pickled (they are pilot's own JSON answers and models, never data from a stranger);
    keys live under ``pilot:<namespace>:``. Expiry is Redis's; the size cap is Redis's ``maxmemory``."""

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
            return pickle.loads(cast(bytes, raw))
        except Exception as exc:  # written by an incompatible version: a miss
            self._warn("decode", exc)
            return default

    def set(self, key: str, value: Any) -> None:
        if self._client is None:
            return
        try:
            ttl = int(self.ttl_s) if self.ttl_s else None
            self._client.set(self._key(key), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), ex=ttl)
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
