"""Source wrappers that apply a benchmark case's hiding rules: one anchor's citation edges, or whole papers.

``anchor_outgoing`` models an unpublished draft: the anchor cites nothing, it is missing from the
citing lists of the papers it cited, and their ``in_corpus_citations`` drop by one.
``anchor_incoming`` is the mirror image: nothing cites the anchor, the anchor leaves the reference
lists of its citers, and its own ``in_corpus_citations`` drops by the number of hidden edges.
Every Paper that comes out of the wrapper is patched, whichever call returned it.

``HiddenPapersSource`` makes papers not exist for a case (a topic case's answer key, ``hidden_paper_ids``):
they are never returned and not searchable, every citation edge to or from them is gone (citers' reference
lists lose them, the papers they cite lose one ``in_corpus_citations`` per hiding paper), and asking for
their references or citations is ``NotFound``, as for an id the source never had.

    source = HiddenEdgesSource.for_case(local, case)   # case: one line of bench/dev/cases.jsonl
    source = HiddenPapersSource.for_case(local, case)  # case: one line of bench/dev/topic_cases.jsonl
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

from pilot.models import Author, Org, Paper, SearchFilters, SearchHit, Venue
from pilot.sources.base import GraphDirection, GraphProgress, Neighbours, NotFound, SearchMode, Source

HiddenMode = Literal["anchor_outgoing", "anchor_incoming"]
_ALL = 100_000


def _fewer_citations(paper: Paper, n: int) -> dict[str, int]:
    """The paper's in-degree less ``n`` hidden edges: the in-corpus count, or for a remote source (which has
    only its own citation count, e.g. Semantic Scholar's ``citationCount``) that count."""
    if paper.in_corpus_citations is not None:
        return {"in_corpus_citations": max(0, paper.in_corpus_citations - n)}
    if paper.citation_count is not None and paper.source != "local":
        return {"citation_count": max(0, paper.citation_count - n)}
    return {}


class _CaseSource(Source):
    """What both wrappers share: entity calls pass through (they carry no citation edges), source-specific
    extras (e.g. the local source's ``stats``) stay reachable, and the inner source is not theirs to close."""

    def __init__(self, inner: Source):
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    @staticmethod
    def _by_citations(papers: list[Paper]) -> list[Paper]:
        """Graph lists are ranked by in-corpus citations; the patched counts may reorder ties."""
        if any(p.in_corpus_citations is None for p in papers):
            return papers
        return sorted(papers, key=lambda p: -(p.in_corpus_citations or 0))

    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        return await self.inner.search_authors(query, limit)

    async def get_author(self, author_id: str) -> Author:
        return await self.inner.get_author(author_id)

    async def search_venues(self, query: str, limit: int = 10) -> list[Venue]:
        return await self.inner.search_venues(query, limit)

    async def get_venue(self, venue_id: str) -> Venue:
        return await self.inner.get_venue(venue_id)

    async def search_orgs(self, query: str, limit: int = 10) -> list[Org]:
        return await self.inner.search_orgs(query, limit)

    async def get_org(self, org_id: str) -> Org:
        return await self.inner.get_org(org_id)

    async def org_authors(self, org_id: str, limit: int = 50) -> list[Author]:
        return await self.inner.org_authors(org_id, limit)

    async def paper_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        return await self.inner.paper_embeddings(ids)

    def searches_by_meaning(self) -> bool:
        return self.inner.searches_by_meaning()

    def free_graph(self) -> bool:
        return self.inner.free_graph()

    def word_frequency(self, word: str) -> int | None:
        return self.inner.word_frequency(word)

    def lexical_scores(self, query: str, ids: list[str], phrases: Sequence[str] = ()) -> dict[str, float] | None:
        return self.inner.lexical_scores(query, ids, phrases)

    async def aclose(self) -> None:
        """The wrapper does not own the inner source (one source serves many benchmark cases)."""


class HiddenEdgesSource(_CaseSource):
    def __init__(self, inner: Source, anchor_id: str, mode: HiddenMode | None):
        if mode not in ("anchor_outgoing", "anchor_incoming", None):
            raise ValueError(f"hidden-edges mode must be anchor_outgoing, anchor_incoming or None, not {mode!r}")
        super().__init__(inner)
        self.anchor_id = anchor_id
        self.mode = mode
        # the hidden edges change every answer about the anchor's neighbourhood: a node cache must tell cases apart
        self.cache_key = f"{inner.cache_key}|hidden:{anchor_id}:{mode}"
        self._neighbours: frozenset[str] | None = None  # papers at the other end of the hidden edges

    @classmethod
    def for_case(cls, inner: Source, case: dict) -> HiddenEdgesSource:
        return cls(inner, case["anchor_paper_id"], case.get("hidden_edges"))

    async def neighbours(self) -> frozenset[str]:
        """Ids across the hidden edges: the anchor's references (outgoing) or citers (incoming)."""
        if self._neighbours is None:
            found: set[str] = set()
            try:
                if self.mode == "anchor_outgoing":
                    for anchor in await self.inner.get_papers([self.anchor_id]):
                        found.update(anchor.references or [])
                    found.update(p.id for p in await self.inner.references(self.anchor_id, limit=_ALL))
                elif self.mode == "anchor_incoming":
                    found.update(p.id for p in await self.inner.citations(self.anchor_id, limit=_ALL))
            except NotFound:
                pass  # an anchor the source does not know has no edges to hide
            found.discard(self.anchor_id)
            self._neighbours = frozenset(found)
        return self._neighbours

    # --- patching -----------------------------------------------------------------------------
    async def _patch(self, papers: list[Paper]) -> list[Paper]:
        if self.mode is None:
            return papers
        near = await self.neighbours()
        return [self._patch_one(p, near) for p in papers]

    def _patch_one(self, paper: Paper, near: frozenset[str]) -> Paper:
        update: dict[str, Any] = {}
        if self.mode == "anchor_outgoing":
            if paper.id == self.anchor_id:
                update["references"] = []
            elif paper.id in near:
                update.update(_fewer_citations(paper, 1))
        else:
            if paper.id == self.anchor_id:
                update.update(_fewer_citations(paper, len(near)))
            elif paper.id in near and paper.references:
                update["references"] = [r for r in paper.references if r != self.anchor_id]
        return paper.model_copy(update=update) if update else paper

    def _hides(self, paper_id: str, direction: HiddenMode) -> bool:
        """Does the whole list of ``paper_id`` in this direction vanish (the anchor's own list)?"""
        return self.mode == direction and paper_id.strip() == self.anchor_id

    async def _graph_list(self, paper_id: str, limit: int, fetch, direction: HiddenMode) -> list[Paper]:
        """``direction`` names the mode that empties the anchor's own list of this kind; in the other
        mode the anchor itself drops out of other papers' lists of this kind."""
        if self._hides(paper_id, direction):
            await fetch(paper_id, 1)  # still raise NotFound for an unknown id, like the inner source
            return []
        papers = await fetch(paper_id, limit + 1)
        if self.mode is not None and self.mode != direction:
            papers = [p for p in papers if p.id != self.anchor_id]
        return self._by_citations(await self._patch(papers))[:limit]

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        hits = await self.inner.search_papers(query, filters, limit, mode)
        patched = await self._patch([h.paper for h in hits])
        return [h.model_copy(update={"paper": p}) for h, p in zip(hits, patched, strict=True)]

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        return await self._patch(await self.inner.get_papers(ids))

    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        return await self._patch(await self.inner.match_paper(text, limit))

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._graph_list(paper_id, limit, self.inner.references, "anchor_outgoing")

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._graph_list(paper_id, limit, self.inner.citations, "anchor_incoming")

    async def linked(
        self, paper_ids: list[str], direction: GraphDirection, limit: int = 100, progress: GraphProgress | None = None
    ) -> Neighbours:
        hiding: HiddenMode = "anchor_outgoing" if direction == "references" else "anchor_incoming"
        own = [pid for pid in paper_ids if self._hides(pid, hiding)]
        # the anchor's own hidden list is not even asked for: the inner source would spend a request on it
        got = await self.inner.linked([p for p in paper_ids if p not in own], direction, limit + 1, progress)
        out = Neighbours(found=dict.fromkeys(own, []), failed=dict(got.failed))
        for pid, papers in got.found.items():
            if self.mode is not None and self.mode != hiding:
                papers = [p for p in papers if p.id != self.anchor_id]
            out.found[pid] = self._by_citations(await self._patch(papers))[:limit]
        return out

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        return await self._patch(await self.inner.recommend(positive_ids, negative_ids, limit))

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        return await self._patch(await self.inner.author_papers(author_id, limit))

    async def authors_papers(self, author_ids: list[str], limit: int = 100) -> dict[str, list[Paper]]:
        got = await self.inner.authors_papers(author_ids, limit)
        return {aid: await self._patch(papers) for aid, papers in got.items()}


class HiddenPapersSource(_CaseSource):
    def __init__(self, inner: Source, paper_ids: Iterable[str]):
        super().__init__(inner)
        self.hidden = frozenset(pid.strip() for pid in paper_ids if pid and pid.strip())
        # two cases hiding different papers must never read each other's node values
        self.cache_key = f"{inner.cache_key}|hidden:{','.join(sorted(self.hidden))}"
        self._cited: Counter[str] | None = None  # paper id -> how many hidden papers cite it

    @classmethod
    def for_case(cls, inner: Source, case: dict) -> HiddenPapersSource:
        return cls(inner, case.get("hidden_paper_ids") or [])

    async def cited_by_hidden(self) -> Counter[str]:
        """How many hidden papers cite each paper: the in-degree each paper loses."""
        if self._cited is None:
            cited: Counter[str] = Counter()
            for pid in sorted(self.hidden):
                found: set[str] = set()
                try:
                    for paper in await self.inner.get_papers([pid]):
                        found.update(paper.references or [])
                    found.update(p.id for p in await self.inner.references(pid, limit=_ALL))
                except NotFound:
                    pass  # a hidden id the source does not know has no edges to remove
                cited.update(found - self.hidden)
            self._cited = cited
        return self._cited

    async def _visible(self, papers: list[Paper], limit: int | None = None) -> list[Paper]:
        """The papers that exist for this case, patched, at most ``limit`` of them."""
        cited = await self.cited_by_hidden()
        out = [self._patch_one(p, cited) for p in papers if p.id not in self.hidden]
        return out if limit is None else out[:limit]

    def _patch_one(self, paper: Paper, cited: Counter[str]) -> Paper:
        update: dict[str, Any] = {}
        if paper.references and self.hidden.intersection(paper.references):
            update["references"] = [r for r in paper.references if r not in self.hidden]
        if cited.get(paper.id) and paper.in_corpus_citations is not None:
            update["in_corpus_citations"] = max(0, paper.in_corpus_citations - cited[paper.id])
        return paper.model_copy(update=update) if update else paper

    def _exists(self, paper_id: str) -> None:
        if paper_id.strip() in self.hidden:
            raise NotFound(self.name, f"no paper with id {paper_id!r}")

    @property
    def _spare(self) -> int:
        """Ask the inner source for this many more, so hidden papers dropped from a list do not shorten it."""
        return len(self.hidden)

    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        hits = await self.inner.search_papers(query, filters, limit + self._spare, mode)
        hits = [h for h in hits if h.paper.id not in self.hidden][:limit]
        patched = await self._visible([h.paper for h in hits])
        return [h.model_copy(update={"paper": p}) for h, p in zip(hits, patched, strict=True)]

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        return await self._visible(await self.inner.get_papers([i for i in ids if i.strip() not in self.hidden]))

    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        return await self._visible(await self.inner.match_paper(text, limit + self._spare), limit)

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        self._exists(paper_id)
        found = await self.inner.references(paper_id, limit + self._spare)
        return self._by_citations(await self._visible(found))[:limit]

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        self._exists(paper_id)
        found = await self.inner.citations(paper_id, limit + self._spare)
        return self._by_citations(await self._visible(found))[:limit]

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        pos = [i for i in positive_ids if i not in self.hidden]
        neg = [i for i in negative_ids or [] if i not in self.hidden]
        if not pos:
            raise NotFound(self.name, "none of the seed papers exists", "pick seeds from the results")
        return await self._visible(await self.inner.recommend(pos, neg or None, limit + self._spare), limit)

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        return await self._visible(await self.inner.author_papers(author_id, limit + self._spare), limit)

    async def authors_papers(self, author_ids: list[str], limit: int = 100) -> dict[str, list[Paper]]:
        got = await self.inner.authors_papers(author_ids, limit + self._spare)
        return {aid: await self._visible(papers, limit) for aid, papers in got.items()}

    async def linked(
        self, paper_ids: list[str], direction: GraphDirection, limit: int = 100, progress: GraphProgress | None = None
    ) -> Neighbours:
        # one batch call to the inner source for the visible papers (a remote source spends one request)
        asked = [pid for pid in paper_ids if pid.strip() not in self.hidden]
        got = await self.inner.linked(asked, direction, limit + self._spare, progress)
        out = Neighbours(failed=dict(got.failed))
        for pid in paper_ids:
            if pid.strip() in self.hidden:
                out.failed[pid] = NotFound(self.name, f"no paper with id {pid!r}")
        for pid, papers in got.found.items():
            out.found[pid] = self._by_citations(await self._visible(papers))[:limit]
        return out

    def paper_vectors(self, ids: list[str]):
        """The inner source's stored vectors, none (NaN rows) for hidden papers."""
        out = np.asarray(self.inner.paper_vectors(ids), dtype=np.float32)  # type: ignore[attr-defined]
        for i, pid in enumerate(ids):
            if pid in self.hidden:
                out[i] = np.nan
        return out
