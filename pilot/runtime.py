"""The services one process (or one evaluation case) shares: source, embedder, LLM, node cache, settings.

    runtime = Runtime.from_settings()                # opens the sources the settings ask for
    case_rt = runtime.with_source(HiddenEdgesSource(runtime.source, anchor_id, mode))

Opening never raises for a missing backend or model: what was left out is in ``runtime.notes``.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field, replace

from cache import Cache, open_cache
from pilot.embed import Embedder
from pilot.gate import SearchGate
from pilot.llm import LLM, get_llm
from pilot.settings import Settings, get_settings
from pilot.sources.base import Source
from pilot.sources.factory import RECHECK_S, Pending, combine, open_sources, probe_now
from workflows.executor import MemoCache, NodeCache
from workflows.operator import RunContext

log = logging.getLogger(__name__)

# Recent runs whose step values stay in memory (for "run this step", "step", "is X on the list?"), and the items
# (papers, 2–3 KB each) they may hold together: ~30 MB. An older run's values are made again from the node cache
# when asked for.
RECENT_RUNS = 8
RECENT_RUN_ITEMS = 8_000  # papers (~9 KB each in memory: see workflows.executor.FRONT_PAPERS)


@dataclass
class Runtime:
    settings: Settings
    source: Source
    embedder: Embedder | None = None
    llm: LLM | None = None
    node_cache: NodeCache | None = None
    notes: list[str] = field(default_factory=list)
    # remote services that did not answer at start: re-probed (``recheck``), taken in when they answer
    pending: list[Pending] = field(default_factory=list)
    members: list[Source] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)
    # how many searches (workflow runs) compute at once in this process; the rest queue, told their place
    searches: SearchGate = field(default_factory=lambda: SearchGate(4))
    # the step values of the most recent runs of all sessions (a session keeps its run's trace and output only)
    recent_runs: MemoCache = field(default_factory=lambda: MemoCache(RECENT_RUNS, RECENT_RUN_ITEMS))
    _recovery: threading.Thread | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, *, llm_model: str | None = None, do_probe: bool = True
    ) -> Runtime:
        """Open sources, the shared embedder, the node cache and (when configured) the LLM."""
        s = settings or get_settings()
        opened = open_sources(s, do_probe=do_probe)
        source, notes = opened.source, opened.notes
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
        return cls(
            settings=s, source=source, embedder=embedder, llm=llm, node_cache=node_cache, notes=notes,
            pending=opened.pending, members=opened.members, wanted=opened.wanted,
            searches=SearchGate(s.ui_concurrency),
        )  # fmt: skip

    def recheck(self) -> list[str]:
        """Probe the services left out at start once more; take in those that answer (new turns use them: the
        source is swapped whole). Returns what came back, in words (also put in ``notes`` for the status line)."""
        back: list[str] = []
        for p in list(self.pending):
            verdict = probe_now(p.url, self.settings)
            if not verdict.reachable:
                continue
            try:
                member = p.opener()
            except Exception as exc:  # noqa: BLE001 - it answered the probe but cannot be opened: still left out
                log.warning("%s answers again but could not be opened: %s", p.label, exc)
                continue
            self.pending.remove(p)
            self.members.append(member)
            self.source = combine(self.members, self.wanted)
            was = time.strftime("%H:%M:%S", time.localtime(p.since))
            said = f"{p.label} is back since {time.strftime('%H:%M:%S')} (unreachable at {was}: {p.detail})."
            self.notes = [said if n == p.note else n for n in self.notes]
            self.notes = [n for n in self.notes if not n.startswith("No paper source is usable")]
            log.warning("%s", said)
            back.append(said)
        return back

    def start_recovery(self, every_s: float = RECHECK_S) -> None:
        """Re-probe the services left out at start every ``every_s`` seconds, in a daemon thread, until each
        answers (a server's start-up; the CLI's short runs rely on the short memory of a bad verdict instead)."""
        if not self.pending or self._recovery is not None:
            return

        def loop() -> None:
            while self.pending:
                time.sleep(every_s)
                try:
                    self.recheck()
                except Exception:  # noqa: BLE001 - a failing probe must not end the re-checks
                    log.exception("re-probing the paper sources failed")

        self._recovery = threading.Thread(target=loop, name="pilot-recheck", daemon=True)
        self._recovery.start()

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
        settings = settings or Settings()
        return cls(
            settings=settings, source=source, embedder=embedder, llm=llm, node_cache=MemoCache(),
            searches=SearchGate(settings.ui_concurrency),
        )  # fmt: skip

    def with_source(self, source: Source) -> Runtime:
        """Same services, another source (the evaluation wraps the source in a ``HiddenEdgesSource``).

        The node cache is shared: its keys include the source fingerprint, so a wrapped source does not
        read another case's values."""
        return replace(self, source=source, notes=list(self.notes))

    def with_llm(self, llm: LLM | None) -> Runtime:
        return replace(self, llm=llm, notes=list(self.notes))

    def context(self) -> RunContext:
        return RunContext(source=self.source, embedder=self.embedder, llm=self.llm, settings=self.settings)
