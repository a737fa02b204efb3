"""Several sources behind one: searches fan out concurrently and are merged, id lookups are routed.

Merging: the same paper found by two sources (same DOI, same external id such as arXiv / ACL /
CorpusId, or the same normalised title with compatible years) becomes one Paper. It keeps the
best rank any source gave it, its fields come from the best-ranked copy with gaps filled from the
others, and the other copies' ids are kept in ``external_ids`` (``S2``, ``AMiner``, ``Corpus``).

Failures: one source failing does not sink a fan-out; the call fails only when every source
failed, with the most useful of their errors (bad input, then rate limit, then unreachable, then
not found, then not supported). ``last_failures`` lists what failed in the latest fan-out so the
UI can say "AMiner was unreachable, results are from Semantic Scholar only".

Routing: ``aminer:`` ids go to AMiner; ``s2:<paperId>`` to Semantic Scholar; everything else (the
corpus's own ``acl:``/``pc:``/``s2:<corpus id>`` ids, entity slugs) to the local corpus first, then
to Semantic Scholar for the id forms it understands (DOI, arXiv, ACL, CorpusId).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pilot.models import Author, Org, Paper, SearchFilters, SearchHit, Venue
from pilot.sources.base import (
    BadRequest,
    GraphDirection,
    GraphProgress,
    Neighbours,
    NotFound,
    NotSupported,
    RateLimited,
    SearchMode,
    Source,
    SourceError,
    SourceUnavailable,
)
from pilot.sources.s2 import parse_s2_id
from pilot.text import normalize_title

log = logging.getLogger(__name__)

T = TypeVar("T")

# Most useful first: what the user can fix, then what waiting fixes, then the rest.
_ERROR_ORDER = (BadRequest, RateLimited, SourceUnavailable, NotFound, NotSupported)
# Titles shorter than this ("Introduction", "Preface") are too generic to merge papers on.
MIN_TITLE_KEY = 15
_HEX40 = re.compile(r"^[0-9a-f]{40}$", re.I)
# Which external-id key records a merged-in copy from each source.
_ALT_KEY = {"s2": "S2", "aminer": "AMiner", "local": "Corpus"}


def most_informative(errors: Sequence[BaseException]) -> BaseException:
    def rank(e: BaseException) -> int:
        for i, cls in enumerate(_ERROR_ORDER):
            if isinstance(e, cls):
                return i
        return len(_ERROR_ORDER)

    return min(errors, key=rank)


# --- de-duplication ----------------------------------------------------------------------------
def paper_keys(p: Paper) -> list[str]:
    """Identity keys of a paper; two papers sharing one are the same paper (title keys are checked
    against the years separately)."""
    keys = [f"id:{p.id.lower()}"]
    for name, value in p.external_ids.items():
        value = str(value).strip().lower()
        if not value:
            continue
        name = name.lower()
        if name == "doi":
            keys.append(f"doi:{value.removeprefix('https://doi.org/')}")
        elif name in ("arxiv", "acl", "corpusid", "pubmed", "mag", "s2", "aminer", "corpus"):
            keys.append(f"{name}:{value}")
    # A corpus paper's own id can be an ACL or S2 corpus id; expose it in the external-id key space.
    prefix, _, rest = p.id.partition(":")
    if prefix == "acl" and rest:
        keys.append(f"acl:{rest.lower()}")
    elif prefix == "s2" and rest.isdigit():
        keys.append(f"corpusid:{rest}")
    elif prefix == "s2" and _HEX40.match(rest):
        keys.append(f"s2:{rest.lower()}")
    elif prefix == "aminer" and rest:
        keys.append(f"aminer:{rest.lower()}")
    return keys


def title_key(p: Paper) -> str | None:
    t = normalize_title(p.title)
    return f"title:{t}" if len(t) >= MIN_TITLE_KEY else None


def merge_papers(base: Paper, other: Paper) -> Paper:
    """``base`` with the gaps filled from ``other`` (same paper, another source)."""
    update: dict[str, Any] = {}
    for name in ("abstract", "year", "venue", "references", "in_corpus_citations"):
        if getattr(base, name) in (None, "", []) and getattr(other, name) not in (None, "", []):
            update[name] = getattr(other, name)
    if not base.title and other.title:
        update["title"] = other.title
    if not base.authors and other.authors:
        update["authors"] = other.authors
    counts = [c for c in (base.citation_count, other.citation_count) if c is not None]
    if counts:
        update["citation_count"] = max(counts)
    ext = dict(other.external_ids)
    ext.update(base.external_ids)
    if other.source and other.source != base.source and other.source in _ALT_KEY:
        ext.setdefault(_ALT_KEY[other.source], other.id.split(":", 1)[-1] if other.source != "local" else other.id)
    update["external_ids"] = ext
    fos = list(base.fields_of_study) + [f for f in other.fields_of_study if f not in base.fields_of_study]
    update["fields_of_study"] = fos
    return base.model_copy(update=update)


@dataclass
class _Group:
    paper: Paper
    best_rank: int
    order: int
    sources: set[str] = field(default_factory=set)


def _years_compatible(a: Paper, b: Paper) -> bool:
    return a.year is None or b.year is None or abs(a.year - b.year) <= 1


def fuse(ranked: list[tuple[str, list[Paper]]], limit: int | None = None) -> list[tuple[Paper, int, int]]:
    """Merge ranked paper lists from several sources into (paper, best rank, number of sources).

    Lists are walked rank by rank (every source's first, then every source's second…), so a paper's
    group is created at its best rank. Order: best rank, then found by more sources, then source order.
    """
    groups: list[_Group] = []
    index: dict[str, _Group] = {}
    depth = max((len(papers) for _, papers in ranked), default=0)
    for rank in range(depth):
        for src, papers in ranked:
            if rank >= len(papers):
                continue
            p = papers[rank]
            keys = paper_keys(p)
            group = next((index[k] for k in keys if k in index), None)
            tkey = title_key(p)
            if group is None and tkey and tkey in index and _years_compatible(index[tkey].paper, p):
                group = index[tkey]
            if group is None:
                group = _Group(p, rank, len(groups))
                groups.append(group)
            elif src in group.sources and p.id == group.paper.id:
                continue  # the same source listing the same paper twice
            else:
                group.paper = merge_papers(group.paper, p)
            group.sources.add(src)
            for k in keys + ([tkey] if tkey else []):
                index.setdefault(k, group)
    groups.sort(key=lambda g: (g.best_rank, -len(g.sources), g.order))
    out = [(g.paper, g.best_rank, len(g.sources)) for g in groups]
    return out[:limit] if limit is not None else out


def _satisfies(paper: Paper, wanted: str) -> bool:
    """Does ``paper`` answer a request for id ``wanted`` (its own id, or an external id S2 resolved)?"""
    if paper.id.lower() == wanted.strip().lower():
        return True
    sid = parse_s2_id(wanted)
    if sid is None:
        return False
    keys = set(paper_keys(paper))
    prefix, sep, rest = sid.partition(":")
    if not sep:  # a bare 40-hex paperId or a DOI
        return f"s2:{sid.lower()}" in keys or f"doi:{sid.lower()}" in keys
    name = {"ARXIV": "arxiv", "CorpusId": "corpusid", "ACL": "acl", "MAG": "mag", "PMID": "pubmed"}.get(prefix)
    return bool(name) and f"{name}:{rest.lower()}" in keys


# --- the source --------------------------------------------------------------------------------
class MultiSource(Source):
    name = "multi"

    def __init__(self, sources: list[Source]):
        if not sources:
            raise ValueError("MultiSource needs at least one source")
        self.sources = list(sources)
        self.by_name = {s.name: s for s in self.sources}
        self.last_failures: list[SourceError] = []
        # Node caches key on this: the same workflow over other sources is another result.
        self.cache_key = "+".join(f"{s.name}[{getattr(s, 'cache_key', '')}]" for s in self.sources)

    def free_graph(self) -> bool:
        return all(s.free_graph() for s in self.sources)

    # --- plumbing -----------------------------------------------------------------------------
    async def _fan_out(self, call: Callable[[Source], Awaitable[T]]) -> list[tuple[str, T]]:
        """Run ``call`` on every source at once; the successes, or the best error if all failed."""
        results = await asyncio.gather(*(call(s) for s in self.sources), return_exceptions=True)
        ok: list[tuple[str, T]] = []
        failures: list[SourceError] = []
        for src, res in zip(self.sources, results, strict=True):
            if isinstance(res, BaseException):
                if not isinstance(res, Exception):
                    raise res  # cancellation and interrupts are not source failures
                failures.append(self._as_source_error(src, res))
            else:
                ok.append((src.name, res))
        self.last_failures = [f for f in failures if not isinstance(f, NotSupported)]
        if not ok:
            raise most_informative(failures)
        return ok

    @staticmethod
    def _as_source_error(src: Source, exc: Exception) -> SourceError:
        if isinstance(exc, SourceError):
            return exc
        log.exception("source %s failed unexpectedly", src.name, exc_info=exc)
        return SourceUnavailable(src.name, f"internal error: {type(exc).__name__}: {exc}")

    def route(self, entity_id: str) -> list[Source]:
        """Sources to ask about an id, in order."""
        text = (entity_id or "").strip()
        prefix, _, rest = text.partition(":")
        prefix = prefix.lower()
        names: list[str]
        if prefix == "aminer":
            names = ["aminer"]
        elif prefix == "s2" and _HEX40.match(rest):
            names = ["s2"]
        elif parse_s2_id(text) is not None:
            names = ["local", "s2"]
        else:
            names = ["local"]
        chain = [self.by_name[n] for n in names if n in self.by_name]
        if not chain:
            raise NotSupported(self.name, f"no configured source can look up {entity_id!r}", self._hint_for(names))
        return chain

    @staticmethod
    def _hint_for(names: list[str]) -> str:
        if "aminer" in names:
            return "set PILOT_AMINER_TOKEN to use AMiner ids"
        if "local" in names and "s2" not in names:
            return "set PILOT_CORPUS to the corpus these ids come from"
        return "check PILOT_SOURCES"

    async def _routed(self, entity_id: str, call: Callable[[Source], Awaitable[T]]) -> T:
        """Ask the routed sources in turn; the first answer wins."""
        errors: list[BaseException] = []
        for src in self.route(entity_id):
            try:
                return await call(src)
            except SourceError as exc:
                errors.append(exc)
        raise most_informative(errors)

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        ok = await self._fan_out(lambda s: s.search_papers(query, filters, limit, mode))
        if len(ok) == 1:
            return ok[0][1]  # one source answered: keep its own scores
        fused = fuse([(name, [h.paper for h in hits]) for name, hits in ok], limit)
        # Scores from different backends are not comparable; the fused score follows the merged order.
        return [SearchHit(paper=p, score=1.0 / (1 + best)) for p, best, _ in fused]

    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        ok = await self._fan_out(lambda s: s.match_paper(text, limit))
        return [p for p, _, _ in fuse(ok, limit)]

    async def named_papers(self, name: str, limit: int = 10) -> list[Paper]:
        ok = await self._fan_out(lambda s: s.named_papers(name, limit))
        return [p for p, _, _ in fuse(ok, limit)]

    def coverage(self) -> str:
        return "; ".join(s.coverage() for s in self.sources)

    def word_frequency(self, word: str) -> int | None:
        counts = [n for s in self.sources if (n := s.word_frequency(word)) is not None]
        return max(counts) if counts else None

    def lexical_scores(self, query: str, ids: list[str], phrases: Sequence[str] = ()) -> dict[str, float] | None:
        """The index-keeping sources' scores for the papers they hold (none keeps one: None)."""
        found = [got for s in self.sources if (got := s.lexical_scores(query, ids, phrases)) is not None]
        return {pid: value for got in found for pid, value in got.items()} if found else None

    async def _along_routes(
        self,
        pending: dict[str, list[Source]],
        ask: Callable[[Source, list[str]], Awaitable[Any]],
        settle: Callable[[str, list[str], Any], set[str]],
    ) -> None:
        """Ask each id's first source, one batch call per source; ``settle(source name, ids, answer or
        exception)`` keeps what was found and returns the ids to try at the next source of their route."""
        while pending:
            batches: dict[str, list[str]] = {}
            for pid, chain in pending.items():
                batches.setdefault(chain[0].name, []).append(pid)
            names = list(batches)
            results = await asyncio.gather(*(ask(self.by_name[n], batches[n]) for n in names), return_exceptions=True)
            for name, res in zip(names, results, strict=True):
                if isinstance(res, BaseException) and not isinstance(res, Exception):
                    raise res
                retry = settle(name, batches[name], res)
                for pid in batches[name]:
                    if pid in retry and len(pending[pid]) > 1:
                        pending[pid] = pending[pid][1:]
                    else:
                        pending.pop(pid)

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        found: dict[str, Paper] = {}
        failures: list[SourceError] = []
        pending: dict[str, list[Source]] = {}
        for pid in ids:
            try:
                pending[pid] = self.route(pid)
            except NotSupported:
                log.info("multi: no source for id %r", pid)

        def settle(name: str, batch: list[str], res: Any) -> set[str]:
            if isinstance(res, Exception):
                # Missing ids are left out (the protocol), but the UI can still say why.
                failures.append(self._as_source_error(self.by_name[name], res))
            papers = [] if isinstance(res, Exception) else res
            for pid in batch:
                hit = next((p for p in papers if _satisfies(p, pid)), None)
                if hit is not None:
                    found[pid] = hit
            return {pid for pid in batch if pid not in found}

        await self._along_routes(pending, lambda src, batch: src.get_papers(batch), settle)
        self.last_failures = [f for f in failures if not isinstance(f, NotSupported)]
        out: list[Paper] = []
        for pid in ids:
            p = found.get(pid)
            if p is not None and all(p.id != q.id for q in out):
                out.append(p)
        return out

    async def get_paper(self, paper_id: str) -> Paper:
        return await self._routed(paper_id, lambda s: s.get_paper(paper_id))

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._routed(paper_id, lambda s: s.references(paper_id, limit))

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._routed(paper_id, lambda s: s.citations(paper_id, limit))

    async def linked(
        self, paper_ids: list[str], direction: GraphDirection, limit: int = 100, progress: GraphProgress | None = None
    ) -> Neighbours:
        """Each id goes to the sources its route names, in turn; each source gets its ids in one batch call."""
        out = Neighbours()
        pending: dict[str, list[Source]] = {}
        for pid in dict.fromkeys(paper_ids):
            try:
                pending[pid] = self.route(pid)
            except NotSupported as exc:
                out.failed[pid] = exc
        total = len(pending)

        def settle(name: str, batch: list[str], res: Any) -> set[str]:
            got = res if isinstance(res, Neighbours) else Neighbours()
            retry: set[str] = set()
            for pid in batch:
                if pid in got.found:
                    out.found[pid] = got.found[pid]
                    out.failed.pop(pid, None)
                    continue
                exc = got.failed.get(pid) or (
                    self._as_source_error(self.by_name[name], res)
                    if isinstance(res, Exception)
                    else NotFound(name, f"no {direction} known for {pid!r}")
                )
                out.failed[pid] = exc
                if isinstance(exc, NotFound):
                    retry.add(pid)  # the next source in the route may know it
            if progress is not None:
                progress(len(out.found) + len(out.failed), total)
            return retry

        await self._along_routes(pending, lambda src, batch: src.linked(batch, direction, limit), settle)
        return out

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        if not positive_ids:
            raise BadRequest(self.name, "recommendations need at least one paper to start from", "like a paper first")
        by_source: dict[str, tuple[list[str], list[str]]] = {}
        for pid in positive_ids:
            by_source.setdefault(self.route(pid)[0].name, ([], []))[0].append(pid)
        for nid in negative_ids or []:
            name = self.route(nid)[0].name
            if name in by_source:
                by_source[name][1].append(nid)
        names = list(by_source)
        results = await asyncio.gather(
            *(self.by_name[n].recommend(by_source[n][0], by_source[n][1], limit) for n in names), return_exceptions=True
        )
        ok: list[tuple[str, list[Paper]]] = []
        errors: list[BaseException] = []
        for name, res in zip(names, results, strict=True):
            if isinstance(res, Exception):
                errors.append(self._as_source_error(self.by_name[name], res))
            elif isinstance(res, BaseException):
                raise res
            else:
                ok.append((name, res))
        if not ok:
            raise most_informative(errors)
        return [p for p, _, _ in fuse(ok, limit)]

    # --- entities -----------------------------------------------------------------------------
    async def _search_entities(self, call: Callable[[Source], Awaitable[list[T]]], limit: int) -> list[T]:
        ok = await self._fan_out(call)
        # Entities from different sources are different records; interleave them rank by rank.
        out: list[T] = []
        for rank in range(max(len(items) for _, items in ok)):
            out.extend(items[rank] for _, items in ok if rank < len(items))
        return out[:limit]

    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        return await self._search_entities(lambda s: s.search_authors(query, limit), limit)

    async def search_venues(self, query: str, limit: int = 10) -> list[Venue]:
        return await self._search_entities(lambda s: s.search_venues(query, limit), limit)

    async def search_orgs(self, query: str, limit: int = 10) -> list[Org]:
        return await self._search_entities(lambda s: s.search_orgs(query, limit), limit)

    async def get_author(self, author_id: str) -> Author:
        return await self._entity(author_id, lambda s: s.get_author(author_id))

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        return await self._entity(author_id, lambda s: s.author_papers(author_id, limit))

    async def get_venue(self, venue_id: str) -> Venue:
        return await self._entity(venue_id, lambda s: s.get_venue(venue_id))

    async def get_org(self, org_id: str) -> Org:
        return await self._entity(org_id, lambda s: s.get_org(org_id))

    async def org_authors(self, org_id: str, limit: int = 50) -> list[Author]:
        return await self._entity(org_id, lambda s: s.org_authors(org_id, limit))

    async def _entity(self, entity_id: str, call: Callable[[Source], Awaitable[T]]) -> T:
        """Entity ids are per source: ``s2:<digits>`` authors live in S2, ``aminer:`` in AMiner, the rest locally."""
        prefix = (entity_id or "").split(":", 1)[0].lower()
        name = {"s2": "s2", "aminer": "aminer"}.get(prefix, "local")
        src = self.by_name.get(name)
        if src is None:
            raise NotSupported(self.name, f"no configured source holds {entity_id!r}", self._hint_for([name]))
        return await call(src)

    async def aclose(self) -> None:
        for src in self.sources:
            try:
                await src.aclose()
            except Exception:  # closing must not fail the shutdown of the others
                log.warning("closing source %s failed", src.name, exc_info=True)
