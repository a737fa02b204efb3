"""diskcache-backed caches for source responses, embeddings and workflow node outputs.

A cache must never be the reason a search fails: any error opening, reading or writing it is logged
once as a warning and the caller simply computes the value again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


class Cache:
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

    def _warn(self, what: str, exc: Exception) -> None:
        if not self._warned:
            log.warning("cache %s: %s failed (%s); continuing without the cache", self.namespace, what, exc)
            self._warned = True

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

    def get_or_compute(self, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """Returns (value, was_cached)."""
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value, True
        value = compute()
        self.set(key, value)
        return value, False

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
