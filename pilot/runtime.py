"""The services one process (or one evaluation case) shares: source, embedder, LLM, node cache, settings.

    runtime = Runtime.from_settings()                # opens the sources the settings ask for
    case_rt = runtime.with_source(HiddenEdgesSource(runtime.source, anchor_id, mode))

Opening never raises for a missing backend or model: what was left out is in ``runtime.notes``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from cache import Cache, open_cache
from pilot.embed import Embedder
from pilot.llm import LLM, get_llm
from pilot.settings import Settings, get_settings
from pilot.sources.base import Source
from pilot.sources.factory import open_source
from workflows.executor import MemoCache, NodeCache
from workflows.operator import RunContext

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    source: Source
    embedder: Embedder | None = None
    llm: LLM | None = None
    node_cache: NodeCache | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, llm_model: str | None = None, do_probe: bool = True
    ) -> Runtime:
        """Open sources, the shared embedder, the node cache and (when configured) the LLM."""
        s = settings or get_settings()
        source, notes = open_source(s, do_probe=do_probe)
        embedder = getattr(source, "_embedder", None)
        if not isinstance(embedder, Embedder):
            # the embedder loads its model lazily: creating it costs nothing until a dense step runs
            embedder = Embedder(
                cache=Cache(s.cache_dir, "embeddings", size_mb=256), device=s.device if s.device != "auto" else "cpu"
            )
        # with PILOT_REDIS_URL the replicas share node outputs too (an identical search is a cache hit anywhere)
        disk = open_cache(s.cache_dir, "nodes", size_mb=max(64, s.cache_size_mb // 4), redis_url=s.redis())
        node_cache: NodeCache = disk if disk.enabled else MemoCache()
        if not disk.enabled:
            notes.append("Node cache directory unusable — re-runs keep results in memory only.")
        llm = get_llm(s, model=llm_model)
        if llm is None:
            notes.append(
                "No LLM configured (PILOT_LLM_MODEL) — questions and workflows come from the deterministic rules."
            )
        return cls(settings=s, source=source, embedder=embedder, llm=llm, node_cache=node_cache, notes=notes)

    @classmethod
    def for_source(
        cls,
        source: Source,
        settings: Settings | None = None,
        *,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
    ) -> Runtime:
        """A runtime around an already-open source (tests, evaluation) with an in-memory node cache."""
        return cls(settings=settings or Settings(), source=source, embedder=embedder, llm=llm, node_cache=MemoCache())

    def with_source(self, source: Source) -> Runtime:
        """Same services, another source (the evaluation wraps the source in a ``HiddenEdgesSource``).

        The node cache is shared: its keys include the source fingerprint, so a wrapped source does not
        read another case's values."""
        return replace(self, source=source, notes=list(self.notes))

    def with_llm(self, llm: LLM | None) -> Runtime:
        return replace(self, llm=llm, notes=list(self.notes))

    def context(self) -> RunContext:
        return RunContext(source=self.source, embedder=self.embedder, llm=self.llm, settings=self.settings)
