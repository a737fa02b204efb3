"""Helpers for tests of the Semantic Scholar source against the emulator (``emulators.s2``) on loopback."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from pydantic import SecretStr

from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.sources.s2 import SemanticScholarSource

ANCHOR = "acl:D08-1048"  # "Automatic induction of FrameNet lexical units": references and citers in the slice
CITED = "acl:J93-2004"  # the Penn Treebank: many citers in the slice


def s2_settings(url: str, cache_dir: Path, key: str | None = "", **kw) -> Settings:
    """Settings for a source on the emulator; every test gets its own key, so its own rate limiter."""
    key = f"k-{uuid.uuid4().hex[:8]}" if key == "" else key
    kw.setdefault("http_timeout_s", 120)  # the first search loads the embedding model inside the emulator
    return Settings(
        _env_file=None,
        sources="s2",
        s2_base_url=f"{url}/graph/v1",
        s2_recommendations_url=f"{url}/recommendations/v1",
        s2_api_key=SecretStr(key) if key else None,
        cache_dir=cache_dir,
        **kw,
    )


def stats(url: str) -> dict:
    return httpx.get(f"{url}/_stats", timeout=10).json()


def slice_ids(local_source, n: int) -> list[str]:
    """Corpus ids (ACL papers: S2 resolves them as ACL:…) that have in-corpus references."""
    store = local_source.store
    out = [pid for row, pid in enumerate(store.ids) if pid.startswith("acl:") and len(store.references(row))]
    return out[:n]


def s2_runtime(url: str, cache_dir: Path, **kw) -> Runtime:
    settings = s2_settings(url, cache_dir, max_turns=0, **kw)
    return Runtime.for_source(SemanticScholarSource(settings), settings)
