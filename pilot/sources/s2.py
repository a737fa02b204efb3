"""Semantic Scholar behind the source protocol, through the ``semanticscholar`` package's async client.

The package builds the endpoint URLs, pages through results and wraps records. Its HTTP layer
(``ApiRequester``) is replaced by :class:`_Requester` because the stock one logs request headers at
debug level (which would print the API key), ignores ``Retry-After``, retries 429 for minutes,
opens a new connection per request and drops the key on paginated calls. Ours keeps one pooled
httpx client, a short connect timeout, bounded backoff, the response cache, and typed errors.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote, quote_plus, urlsplit

import httpx
from semanticscholar.ApiRequester import ApiRequester
from semanticscholar.AsyncSemanticScholar import AsyncSemanticScholar
from semanticscholar.SemanticScholarException import NoMorePagesException, SemanticScholarException

from cache import Cache, fingerprint
from pilot.models import S2_AUTHOR_URL, S2_PAPER_URL, Author, Paper, SearchFilters, SearchHit
from pilot.settings import Settings, get_settings
from pilot.sources.base import BadRequest, NotFound, SearchMode, Source, SourceError, SourceUnavailable, clean_query
from pilot.sources.http import LoopClient, RetryPolicy, json_body, send

log = logging.getLogger(__name__)

NAME = "s2"
# Fields every paper endpoint (search, batch, references, recommendations) accepts.
PAPER_FIELDS = [
    "paperId",
    "externalIds",
    "url",
    "title",
    "abstract",
    "venue",
    "year",
    "citationCount",
    "authors",
    "fieldsOfStudy",
]
AUTHOR_FIELDS = ["authorId", "name", "url", "affiliations", "paperCount", "citationCount", "hIndex"]

T = TypeVar("T")

# --- ids ---------------------------------------------------------------------------------------
_HEX40 = re.compile(r"^[0-9a-f]{40}$", re.I)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$", re.I)
_S2_URL = re.compile(r"semanticscholar\.org/paper/(?:[^/]+/)?([0-9a-f]{40})", re.I)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\..+)$", re.I)
_ARXIV_URL = re.compile(r"^https?://arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?$", re.I)
# Prefix the user may type -> the prefix the S2 API expects.
_PREFIXES = {
    "doi": "",  # S2 takes bare DOIs (the recorded responses show it)
    "arxiv": "ARXIV:",
    "corpusid": "CorpusId:",
    "acl": "ACL:",
    "mag": "MAG:",
    "pmid": "PMID:",
    "pmcid": "PMCID:",
}


def parse_s2_id(text: str) -> str | None:
    """The S2 API form of a paper id the user or another source gave, or None if it is not one.

    Accepts ``s2:<paperId>``, a bare 40-hex paperId, DOIs (``DOI:…``, ``10.…``, doi.org URLs), arXiv
    ids (``arXiv:…``, ``2106.15928``, arxiv.org URLs), ``CorpusId:…``, ``ACL:…``/``acl:…`` (the
    corpus's ACL Anthology ids), ``MAG:``, ``PMID:``, ``PMCID:`` and semanticscholar.org paper URLs.
    """
    t = (text or "").strip()
    if not t:
        return None
    if m := _S2_URL.search(t):
        return m.group(1).lower()
    if m := _DOI_URL.match(t):
        return m.group(1)
    if m := _ARXIV_URL.match(t):
        return "ARXIV:" + m.group(1)
    if t.lower().startswith("s2:"):
        rest = t[3:].strip()
        # The corpus's csfcube papers are ``s2:<corpus id>``: a number is a CorpusId, not a paperId.
        return f"CorpusId:{rest}" if rest.isdigit() else parse_s2_id(rest)
    if _HEX40.match(t):
        return t.lower()
    if _DOI.match(t):
        return t
    if _ARXIV.match(t):
        return "ARXIV:" + t
    prefix, sep, rest = t.partition(":")
    if sep and prefix.lower() in _PREFIXES and rest.strip():
        rest = rest.strip()
        if prefix.lower() == "doi":
            return rest if _DOI.match(rest) else None
        if prefix.lower() == "corpusid" and not rest.isdigit():
            return None
        return _PREFIXES[prefix.lower()] + rest
    return None


def to_s2_id(text: str) -> str:
    sid = parse_s2_id(text)
    if sid is None:
        raise BadRequest(
            NAME,
            f"{text!r} is not a Semantic Scholar paper id",
            "use s2:<paperId>, a DOI, arXiv:<id>, CorpusId:<n> or ACL:<id>",
        )
    return sid


def _author_key(author_id: str) -> str:
    aid = (author_id or "").strip()
    aid = aid[3:] if aid.lower().startswith("s2:") else aid
    if not aid.isdigit():
        raise BadRequest(NAME, f"{author_id!r} is not a Semantic Scholar author id", "author ids look like s2:1741101")
    return aid


# --- mapping -----------------------------------------------------------------------------------
def author_from_s2(d: dict[str, Any] | None) -> Author | None:
    if not d or not d.get("name"):
        return None
    aid = d.get("authorId")
    affs = [a for a in (d.get("affiliations") or []) if a]
    return Author(
        id=f"s2:{aid}" if aid else None,
        name=d["name"],
        affiliation=affs[0] if affs else None,
        url=d.get("url") or (S2_AUTHOR_URL.format(id=aid) if aid else None),
        source=NAME,
        paper_count=d.get("paperCount"),
        citation_count=d.get("citationCount"),
        h_index=d.get("hIndex"),
        orgs=affs,
    )


def paper_from_s2(d: dict[str, Any] | None) -> Paper | None:
    """A pilot Paper from one S2 paper record; None for the unresolved stubs S2 puts in reference lists."""
    if not d or not d.get("paperId"):
        return None
    pid = d["paperId"]
    ext = {k: str(v) for k, v in (d.get("externalIds") or {}).items() if v not in (None, "")}
    if d.get("corpusId") and "CorpusId" not in ext:
        ext["CorpusId"] = str(d["corpusId"])
    fos = list(d.get("fieldsOfStudy") or [])
    for item in d.get("s2FieldsOfStudy") or []:
        cat = (item or {}).get("category")
        if cat and cat not in fos:
            fos.append(cat)
    venue = d.get("venue") or ((d.get("publicationVenue") or {}).get("name")) or ((d.get("journal") or {}).get("name"))
    return Paper(
        id=f"s2:{pid}",
        title=d.get("title") or "",
        abstract=d.get("abstract") or None,
        year=d.get("year"),
        venue=venue or None,
        authors=[a for a in (author_from_s2(x) for x in d.get("authors") or []) if a],
        citation_count=d.get("citationCount"),
        external_ids=ext,
        fields_of_study=fos,
        url=d.get("url") or S2_PAPER_URL.format(id=pid),
        source=NAME,
    )


def _papers(records: Sequence[dict[str, Any] | None]) -> list[Paper]:
    return [p for p in (paper_from_s2(r) for r in records) if p]


# --- HTTP --------------------------------------------------------------------------------------
class _Requester(ApiRequester):
    """The package's requester interface over a pooled httpx client, with cache, backoff and typed errors."""

    def __init__(self, settings: Settings, cache: Cache | None, policy: RetryPolicy):
        super().__init__(timeout=settings.http_timeout_s, retry=False)
        self._key = settings.s2_api_key
        self._http = LoopClient(httpx.Timeout(settings.http_timeout_s, connect=settings.connect_timeout_s))
        self._label = f"Semantic Scholar ({urlsplit(settings.s2_base_url).netloc or settings.s2_base_url})"
        self.cache = cache
        self.policy = policy

    async def aclose(self) -> None:
        await self._http.aclose()

    async def get_data_async(self, url: str, parameters: str, headers: dict, payload: dict | None = None) -> Any:
        params = (parameters or "").lstrip("&")
        method = "POST" if payload is not None else "GET"
        key = fingerprint(NAME, method, url, params, payload)
        if self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                return cached
        send_headers = {k: v for k, v in (headers or {}).items() if k.lower() != "x-api-key"}
        api_key = self._key.get_secret_value() if self._key is not None else ""
        has_key = bool(api_key)
        if has_key:
            send_headers["x-api-key"] = api_key
        r = await send(
            self._http.get(),
            method,
            url,
            source=NAME,
            label=self._label,
            policy=self.policy,
            params=params,
            json=payload,
            headers=send_headers,
            auth_hint="check PILOT_S2_API_KEY" if has_key else "set PILOT_S2_API_KEY or try again later",
            rate_hint="wait a minute" if has_key else "set PILOT_S2_API_KEY for a higher rate limit, or wait a minute",
        )
        data = json_body(r, NAME, self._label)
        if self.cache is not None:
            self.cache.set(key, data)
        return data


class _Client(AsyncSemanticScholar):
    """The package's client on our requester and base URLs."""

    def __init__(self, requester: _Requester, graph_url: str, recommendations_url: str, timeout: float):
        super().__init__(timeout=timeout, retry=False)
        self._requester = requester
        self.api_url = ""
        self.BASE_PATH_GRAPH = graph_url.rstrip("/")
        self.BASE_PATH_RECOMMENDATIONS = recommendations_url.rstrip("/")

    # The package's debug setter calls logging.basicConfig, which would configure the app's root logger.
    @property
    def debug(self) -> bool:
        return False

    @debug.setter
    def debug(self, value: bool) -> None:
        pass


async def _take(results: Any, limit: int) -> list[dict[str, Any]]:
    """Raw records from a PaginatedResults, fetching further pages until ``limit``.

    Not ``async for``: on an answer without ``data`` (S2's empty result) the package's iterator
    asks for the same page again forever. A page that adds nothing ends the walk here.
    """
    items = results.items
    out = [item.raw_data for item in items[:limit]]
    seen = len(items)
    while len(out) < limit and seen:
        try:
            await results.async_next_page()
        except NoMorePagesException:
            break
        items = results.items
        if len(items) == seen:
            break
        out.extend(item.raw_data for item in items[seen:])
        seen = len(items)
    return out[:limit]


def _year_param(filters: SearchFilters) -> str | None:
    if filters.year_min is None and filters.year_max is None:
        return None
    lo = "" if filters.year_min is None else str(filters.year_min)
    hi = "" if filters.year_max is None else str(filters.year_max)
    return lo if lo == hi else f"{lo}-{hi}"


class SemanticScholarSource(Source):
    name = NAME

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        cache: Cache | None = None,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        max_wait_s: float = 30.0,
        page_size: int = 100,
        rec_pool: str = "all-cs",
    ):
        settings = settings or get_settings()
        if cache is None:
            cache = Cache(settings.cache_dir, "api", ttl_s=settings.api_ttl_s, size_mb=settings.cache_size_mb)
        self.cache = cache
        self._requester = _Requester(settings, cache, RetryPolicy(max_retries, backoff_s, max_wait_s))
        self._client = _Client(
            self._requester, settings.s2_base_url, settings.s2_recommendations_url, settings.http_timeout_s
        )
        self.page_size = max(1, min(page_size, 100))
        # Tells node caches which service answered (never the key itself).
        self.cache_key = f"s2|{settings.s2_base_url}|{settings.s2_recommendations_url}|{rec_pool}"
        self.rec_pool = rec_pool

    async def _call(self, coro: Awaitable[T]) -> T:
        """Run a package call, turning its own exceptions into the protocol's typed errors."""
        try:
            return await coro
        except SourceError:
            raise
        except ValueError as exc:  # the package validates limits and id counts with ValueError
            raise BadRequest(NAME, str(exc)) from None
        except SemanticScholarException as exc:
            raise SourceUnavailable(NAME, f"Semantic Scholar client error: {exc}") from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise SourceUnavailable(NAME, f"unexpected response shape from Semantic Scholar ({exc!r})") from None

    def _page(self, limit: int) -> int:
        return max(1, min(limit, self.page_size))

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        text = clean_query(NAME, query)
        limit = max(1, min(limit, 1000))
        f = filters or SearchFilters()
        kwargs: dict[str, Any] = {}
        if year := _year_param(f):
            kwargs["year"] = year
        if f.venue:
            kwargs["venue"] = [quote_plus(f.venue)]
        if f.min_citations:
            kwargs["min_citation_count"] = f.min_citations
        if f.fields_of_study:
            kwargs["fields_of_study"] = [quote_plus(x) for x in f.fields_of_study]
        # The package pastes the query into the URL unescaped; escape it so '&' or '#' stay text.
        results = await self._call(
            self._client.search_paper(
                quote_plus(text), fields=PAPER_FIELDS, limit=self._page(limit), bulk=(mode == "lexical"), **kwargs
            )
        )
        papers = _papers(await self._call(_take(results, limit)))
        # S2 returns no scores; a rank-derived score keeps the order meaningful to downstream fusion.
        return [SearchHit(paper=p, score=1.0 / (1 + i)) for i, p in enumerate(papers)]

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        wanted: list[str] = []
        for raw in ids:
            sid = parse_s2_id(raw)
            if sid is None:
                log.info("s2: skipping %r, not a Semantic Scholar paper id", raw)
            elif sid not in wanted:
                wanted.append(sid)
        out: list[Paper] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            try:
                found = await self._call(self._client.get_papers(chunk, fields=PAPER_FIELDS))
            except BadRequest as exc:
                # S2 answers 400 when none of the ids is valid; for a batch that means "none found".
                log.info("s2: batch lookup of %d ids found nothing (%s)", len(chunk), exc.message)
                continue
            out.extend(_papers([p.raw_data for p in found]))
        return out

    async def get_paper(self, paper_id: str) -> Paper:
        sid = to_s2_id(paper_id)
        data = await self._call(self._client.get_paper(quote(sid, safe="/:"), fields=PAPER_FIELDS))
        paper = paper_from_s2(data.raw_data)
        if paper is None:
            raise NotFound(NAME, f"no paper with id {paper_id!r}")
        return paper

    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        if parse_s2_id(text) is not None:
            try:
                return [await self.get_paper(text)]
            except NotFound:
                return []
        hits = await self.search_papers(text, limit=limit)
        return [h.paper for h in hits]

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        sid = quote(to_s2_id(paper_id), safe="/:")
        results = await self._call(self._client.get_paper_references(sid, fields=PAPER_FIELDS, limit=self._page(limit)))
        rows = await self._call(_take(results, limit))
        return _papers([r.get("citedPaper") for r in rows])

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        sid = quote(to_s2_id(paper_id), safe="/:")
        results = await self._call(self._client.get_paper_citations(sid, fields=PAPER_FIELDS, limit=self._page(limit)))
        rows = await self._call(_take(results, limit))
        return _papers([r.get("citingPaper") for r in rows])

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        pos = [to_s2_id(i) for i in positive_ids]
        neg = [to_s2_id(i) for i in negative_ids or []]
        if not pos:
            raise BadRequest(NAME, "recommendations need at least one paper to start from", "like a paper first")
        limit = max(1, min(limit, 500))
        if len(pos) == 1 and not neg:
            found = await self._call(
                self._client.get_recommended_papers(
                    quote(pos[0], safe="/:"), fields=PAPER_FIELDS, limit=limit, pool_from=self.rec_pool
                )
            )
        else:
            found = await self._call(
                self._client.get_recommended_papers_from_lists(pos, neg or None, fields=PAPER_FIELDS, limit=limit)
            )
        return _papers([p.raw_data for p in found])[:limit]

    # --- authors ------------------------------------------------------------------------------
    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        text = clean_query(NAME, query)
        limit = max(1, min(limit, 1000))
        results = await self._call(
            self._client.search_author(quote_plus(text), fields=AUTHOR_FIELDS, limit=self._page(limit))
        )
        rows = await self._call(_take(results, limit))
        return [a for a in (author_from_s2(r) for r in rows) if a]

    async def get_author(self, author_id: str) -> Author:
        data = await self._call(self._client.get_author(_author_key(author_id), fields=AUTHOR_FIELDS))
        author = author_from_s2(data.raw_data)
        if author is None:
            raise NotFound(NAME, f"no author with id {author_id!r}")
        return author

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        aid = _author_key(author_id)
        results = await self._call(self._client.get_author_papers(aid, fields=PAPER_FIELDS, limit=self._page(limit)))
        return _papers(await self._call(_take(results, limit)))

    async def aclose(self) -> None:
        await self._requester.aclose()
