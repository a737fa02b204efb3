"""The one source protocol every backend implements, and the typed errors it raises.

Operators talk only to this interface; they never know whether Semantic Scholar, AMiner or the
offline corpus answers. A backend that cannot do something raises ``NotSupported`` (the default of
every method here), which the executor and the UI show as a plain sentence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pilot.limits import MAX_QUERY_CHARS
from pilot.models import Author, Org, Paper, SearchFilters, SearchHit, Venue
from pilot.names import impact, introduces
from pilot.redact import redact

SearchMode = Literal["lexical", "dense", "hybrid"]
GraphDirection = Literal["references", "citations"]
# (papers done, papers asked for): how a many-paper call reports its progress
GraphProgress = Callable[[int, int], None]


class SourceError(Exception):
    """Base of every error a source raises. ``hint`` says what the user can do about it.

    Its words are what the UI and the CLI show, and they may quote an upstream answer that echoes a key: they
    are redacted here, once, for every path they take (``pilot.redact``)."""

    def __init__(self, source: str, message: str, hint: str | None = None):
        self.source = source
        self.message = redact(message)
        self.hint = redact(hint) if hint else hint
        super().__init__(f"[{source}] {self.message}" + (f" — {self.hint}" if self.hint else ""))


class NotSupported(SourceError):
    """The backend has no such operation (e.g. citations of a paper the corpus has no graph for)."""


class NotFound(SourceError):
    """The id does not exist in this source."""


class BadRequest(SourceError):
    """The source rejected the parameters (empty query, malformed id, …)."""


class RateLimited(SourceError):
    """Still rate-limited after the retries; ``retry_after`` in seconds when the server said."""

    def __init__(self, source: str, message: str, hint: str | None = None, retry_after: float | None = None):
        super().__init__(source, message, hint)
        self.retry_after = retry_after


class SourceUnavailable(SourceError):
    """Network down, timeout, 5xx after retries, or a missing token/file."""


# the name of the stand-in source the app gets when none is usable (pilot.sources.factory)
NO_SOURCE = "none"


class BudgetExhausted(SourceError):
    """This turn's request budget is spent: the request was not sent (what it would have fetched is skipped)."""


@dataclass
class Neighbours:
    """The reference (or citation) lists of several papers: what was found, and why the rest was not."""

    found: dict[str, list[Paper]] = field(default_factory=dict)
    failed: dict[str, SourceError] = field(default_factory=dict)

    def merge(self, other: Neighbours) -> None:
        self.found.update(other.found)
        for pid, exc in other.failed.items():
            if pid not in self.found:
                self.failed[pid] = exc


# How many single-paper calls the default many-paper implementation keeps in flight.
PER_PAPER_CONCURRENCY = 8


def clean_query(source: str, query: str | None) -> str:
    """Validate a free-text query: empty is a ``BadRequest``; very long text is cut, not refused."""
    text = " ".join((query or "").split())
    if not text:
        raise BadRequest(source, "the search query is empty", "type a few words or a paper title")
    return text[:MAX_QUERY_CHARS]


class Source:
    """Base class: every operation defaults to ``NotSupported``. All methods are async.

    Paper lists are ranked (best first). ``limit`` is an upper bound. Missing ids in batch calls are
    left out of the result rather than raising.
    """

    name: str = "source"
    # What, beyond the name, changes this source's answers (another corpus file, another API base, a
    # wrapper hiding edges): part of every node-cache key, so two sources never read each other's values.
    cache_key: str = ""

    def searches_by_meaning(self) -> bool:
        """Whether ``search_papers(mode="dense")`` searches by meaning. A service whose every search is a relevance
        (keyword) search says no: a dense search from a paper asks for its recommendations (the paper's neighbours
        by the service's own embeddings) instead of searching with the paper's abstract as the query."""
        return True

    def free_graph(self) -> bool:
        """Whether citation look-ups cost nothing (an in-process graph, as the offline corpus has). Steps that
        only refine an order from extra look-ups (``only_free_graph``) run only then: over a rate-limited service
        each look-up is a request and seconds of the researcher's wait."""
        return True

    def _unsupported(self, what: str) -> NotSupported:
        return NotSupported(self.name, f"{what} is not available from this source")

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        raise self._unsupported("paper search")

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        raise self._unsupported("paper lookup")

    async def get_paper(self, paper_id: str) -> Paper:
        found = await self.get_papers([paper_id])
        if not found:
            raise NotFound(self.name, f"no paper with id {paper_id!r}")
        return found[0]

    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        """Resolve what a user typed (title, DOI, arXiv id, S2 id, corpus id) to candidate papers."""
        hits = await self.search_papers(text, limit=limit)
        return [h.paper for h in hits]

    async def named_papers(self, name: str, limit: int = 10) -> list[Paper]:
        """Papers that introduce ``name`` — a system, model, metric or resource ("GloVe", "the Penn Treebank"):
        its title is built around the name or its abstract defines it (``pilot.names``), best known first."""
        hits = await self.search_papers(name, limit=max(4 * limit, 40))
        found = [h.paper for h in hits if introduces(h.paper, name)]
        return sorted(found, key=lambda p: (-introduces(p, name), -impact(p)))[:limit]

    def coverage(self) -> str:
        """What the source holds, as a noun phrase ("… is not in the source, which holds <coverage>")."""
        return f"what {self.name} indexes"

    def word_frequency(self, word: str) -> int | None:
        """In how many of the source's papers ``word`` (or a word of the same stem) occurs; None when the source
        keeps no vocabulary (a remote service), so a typo in a topic can only be put right where one is kept."""
        return None

    def lexical_scores(self, query: str, ids: list[str], phrases: Sequence[str] = ()) -> dict[str, float] | None:
        """BM25 of ``query`` for these papers with the source's own index statistics (document frequencies over
        everything it holds, not over the papers at hand), the words of ``phrases`` weighing more; None when the
        source keeps no index (a remote service), so a score step falls back to the candidates' statistics."""
        return None

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        raise self._unsupported("references")

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        raise self._unsupported("citations")

    async def linked(
        self, paper_ids: list[str], direction: GraphDirection, limit: int = 100, progress: GraphProgress | None = None
    ) -> Neighbours:
        """References or citations of many papers at once, most valuable (first) papers first.

        Remote sources override this with batch requests (Semantic Scholar: one ``POST /paper/batch`` for
        up to 500 papers); the default asks per paper, a few at a time. Failures are per paper, in
        ``Neighbours.failed``; nothing raises for one bad id."""
        single = self.references if direction == "references" else self.citations
        return await each_paper(paper_ids, lambda pid: single(pid, limit), progress)

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        raise self._unsupported("recommendations")

    async def paper_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The source's own embeddings of papers (id -> unit vector), for closeness between papers only: they live
        in the source's space (Semantic Scholar: SPECTER), not the local embedder's, so no text query compares
        with them. Papers without one are left out."""
        raise self._unsupported("paper embeddings")

    # --- entities -----------------------------------------------------------------------------
    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        raise self._unsupported("author search")

    async def get_author(self, author_id: str) -> Author:
        raise self._unsupported("author details")

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        raise self._unsupported("an author's papers")

    async def authors_papers(self, author_ids: list[str], limit: int = 100) -> dict[str, list[Paper]]:
        """Papers of several authors at once, by author id (an author the source does not know is left out).

        Remote sources override this with a batch request (Semantic Scholar: one ``POST /author/batch`` with
        nested ``papers.*`` fields); the default asks per author, all at once."""
        ids = list(dict.fromkeys(author_ids))
        lists = await asyncio.gather(*(self.author_papers(a, limit) for a in ids))
        return dict(zip(ids, lists, strict=True))

    async def search_venues(self, query: str, limit: int = 10) -> list[Venue]:
        raise self._unsupported("venue search")

    async def get_venue(self, venue_id: str) -> Venue:
        raise self._unsupported("venue details")

    async def search_orgs(self, query: str, limit: int = 10) -> list[Org]:
        raise self._unsupported("organisation search")

    async def get_org(self, org_id: str) -> Org:
        raise self._unsupported("organisation details")

    async def org_authors(self, org_id: str, limit: int = 50) -> list[Author]:
        raise self._unsupported("an organisation's researchers")

    async def aclose(self) -> None:
        """Release connections / files. Safe to call twice."""


async def each_paper(
    paper_ids: list[str], call: Callable[[str], Awaitable[list[Paper]]], progress: GraphProgress | None = None
) -> Neighbours:
    """``call`` for each id (a few in flight, in the given order), collected into a ``Neighbours``."""
    ids = list(dict.fromkeys(paper_ids))
    out = Neighbours()
    gate = asyncio.Semaphore(PER_PAPER_CONCURRENCY)
    done = 0

    async def one(pid: str) -> None:
        nonlocal done
        async with gate:
            try:
                out.found[pid] = await call(pid)
            except SourceError as exc:
                out.failed[pid] = exc
        done += 1
        if progress is not None:
            progress(done, len(ids))

    await asyncio.gather(*(one(pid) for pid in ids))
    return out
