"""Semantic Scholar behind the source protocol, through the ``semanticscholar`` package's async client.

The package builds the endpoint URLs, pages through results and wraps records. Its HTTP layer
(``ApiRequester``) is replaced by :class:`_Requester` because the stock one logs request headers at
debug level (which would print the API key), ignores ``Retry-After``, retries 429 for minutes,
opens a new connection per request and drops the key on paginated calls. Ours goes through
``pilot.sources.http.Remote``: the response cache, sharing of an identical request in flight, the turn's
request budget, the key's rate limiter (by default 1 request/s with a key, 100 per 5 minutes without),
bounded retries that honour ``Retry-After``, and typed errors.

Requests are the scarce resource (at 1 request/s a turn waits for every one of them), so:

- the reference / citation lists of many papers come from ``POST /paper/batch`` with nested
  ``references.*`` / ``citations.*`` fields: up to 500 papers per request, chunked (most valuable papers
  first) so that an answer stays under the documented caps (9,999 citations, 10 MB); only a paper known
  to be cited thousands of times is paged through ``/citations`` on its own;
- each paper's list and record is cached on its own, so a later, overlapping batch asks only for the
  papers not seen yet;
- only the first page of a search is sure to be fetched; deeper pages are optional and give way when the
  turn's budget runs low (``pilot.sources.budget``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit

import httpx
import numpy as np
from semanticscholar.ApiRequester import ApiRequester
from semanticscholar.AsyncSemanticScholar import AsyncSemanticScholar
from semanticscholar.SemanticScholarException import NoMorePagesException, SemanticScholarException

from cache import fingerprint, open_cache
from pilot.models import S2_AUTHOR_URL, S2_PAPER_URL, Author, Paper, SearchFilters, SearchHit
from pilot.query import key_phrases
from pilot.settings import Settings, get_settings
from pilot.sources.base import (
    BadRequest,
    BudgetExhausted,
    GraphDirection,
    GraphProgress,
    Neighbours,
    NotFound,
    SearchMode,
    Source,
    SourceError,
    SourceUnavailable,
    clean_query,
)
from pilot.sources.budget import current_budget, optional_requests
from pilot.sources.http import Remote, RetryPolicy
from pilot.sources.ratelimit import Rate, rate_limiter
from pilot.sources.shapes import checked, s2_endpoint
from pilot.text import FUNCTION_WORDS

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
    "referenceCount",
    "authors",
    "fieldsOfStudy",
]
# Fields of the papers nested in a batch answer's references / citations (``paperId`` always comes).
NESTED_FIELDS = [f for f in PAPER_FIELDS if f != "paperId"]
AUTHOR_FIELDS = ["authorId", "name", "url", "affiliations", "paperCount", "citationCount", "hIndex"]

T = TypeVar("T")

BATCH_IDS = 500  # documented: ids per POST /paper/batch
BATCH_AUTHORS = 100  # authors per POST /author/batch (1,000 allowed): their nested paper lists stay small enough
BATCH_CITATIONS = 9999  # documented: citations per batch answer
BATCH_NESTED = 4000  # nested papers per answer: well under the documented 10 MB, abstracts included
RECS_LIMIT = 500  # documented: recommendations per request
GRAPH_PAGE = 1000  # documented: references / citations per page
SEARCH_PAGE = 100  # documented: relevance-search results per page
HEAVY_CITATIONS = 2000  # a paper cited more often than this is paged on its own, not nested in a batch
EMBEDDING = "specter_v2"  # the paper embedding S2 serves (fields=embedding.specter_v2): paper-to-paper closeness
GUESS_LINKS = 40  # list length assumed for a paper whose counts no answer has shown yet
DEFAULT_RATE_WITH_KEY = "1/1"
DEFAULT_RATE_WITHOUT_KEY = "100/300"

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


_ALIAS_PREFIX = {"ACL": "ACL:", "ArXiv": "ARXIV:", "CorpusId": "CorpusId:", "DOI": "", "MAG": "MAG:", "PubMed": "PMID:"}


def _aliases(record: dict[str, Any]) -> list[str]:
    """The id forms ``parse_s2_id`` gives for this paper: its paperId and its external ids."""
    out = [str(record["paperId"]).lower()]
    for name, value in (record.get("externalIds") or {}).items():
        if name in _ALIAS_PREFIX and value not in (None, ""):
            out.append(_ALIAS_PREFIX[name] + str(value))
    return out


def _unit(vector: Sequence[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _papers(records: Sequence[dict[str, Any] | None]) -> list[Paper]:
    return [p for p in (paper_from_s2(r) for r in records) if p]


# --- HTTP --------------------------------------------------------------------------------------
def _describe(url: str, params: str, payload: dict | None) -> str:
    """What a request would have fetched, in words, for the turn's list of skipped work."""
    path = urlsplit(url).path
    query = dict(parse_qsl(params))
    if path.endswith("/paper/search/bulk"):
        return f"bulk search “{query.get('query', '')[:60]}” (up to 1,000 matches)"
    if path.endswith(("/paper/search", "/author/search")):
        page = int(query.get("offset") or 0) // max(1, int(query.get("limit") or SEARCH_PAGE)) + 1
        what = "paper" if "/paper/" in path else "author"
        return f"{what} search “{query.get('query', '')[:60]}” (page {page})"
    if path.endswith("/paper/batch"):
        return f"details of {len((payload or {}).get('ids') or [])} papers"
    if path.endswith(("/references", "/citations")):
        return f"{path.rsplit('/', 1)[-1]} of one paper"
    return path.split("/v1/", 1)[-1]


# Semantic Scholar's relevance search matches words, and a hyphenated term ("Broad-Coverage") matches nothing; it is
# made for short queries: a long one (a pasted question, ten loose keywords) is cut to its key phrases.
RELEVANCE_WORDS = 8
_HYPHEN = re.compile(r"(?<=\w)[-‐‑–](?=\w)")


def relevance_query(text: str) -> str:
    """The query as the relevance search reads it best: hyphens as spaces, at most ``RELEVANCE_WORDS`` words — the
    key phrases of a longer text first (``pilot.query.key_phrases``), then its other words in their order."""
    words = _HYPHEN.sub(" ", text).split()
    if len(words) <= RELEVANCE_WORDS:
        return " ".join(words)
    kept: list[str] = []
    for phrase in [*key_phrases(" ".join(words)), *words]:
        for word in phrase.split():
            if word.lower() not in (k.lower() for k in kept) and word.lower() not in FUNCTION_WORDS:
                kept.append(word)
    return " ".join(kept[:RELEVANCE_WORDS])


class _Requester(ApiRequester):
    """The package's requester interface over ``Remote`` (cache, sharing, budget, rate limit, retries)."""

    def __init__(self, settings: Settings, remote: Remote):
        super().__init__(timeout=settings.http_timeout_s, retry=False)
        self._key = settings.s2_api_key
        self.remote = remote

    @property
    def has_key(self) -> bool:
        return self._key is not None and bool(self._key.get_secret_value())

    async def aclose(self) -> None:
        await self.remote.aclose()

    async def get_data_async(
        self, url: str, parameters: str, headers: dict, payload: dict | None = None, what: str | None = None
    ) -> Any:
        params = (parameters or "").lstrip("&")
        method = "POST" if payload is not None else "GET"
        send_headers = {k: v for k, v in (headers or {}).items() if k.lower() != "x-api-key"}
        api_key = self._key.get_secret_value() if self._key is not None else ""
        if api_key:
            send_headers["x-api-key"] = api_key
        endpoint = s2_endpoint(urlsplit(url).path)
        check = None
        if endpoint is not None:
            name, model = endpoint
            label = self.remote.label

            def check(data: Any) -> Any:
                return checked(NAME, label, name, model, data)

        return await self.remote.fetch(
            method,
            url,
            key=fingerprint(NAME, method, url, params, payload),
            what=what or _describe(url, params, payload),
            check=check,
            params=params,
            json=payload,
            headers=send_headers,
            auth_hint="check PILOT_S2_API_KEY" if self.has_key else "set PILOT_S2_API_KEY or try again later",
            rate_hint=None if self.has_key else "set PILOT_S2_API_KEY for a higher rate limit",
        )


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
    asks for the same page again forever. A page that adds nothing ends the walk here. Pages after
    the first are optional requests: when the turn's budget runs low they are skipped (and said so).
    """
    items = results.items
    out = [item.raw_data for item in items[:limit]]
    seen = len(items)
    while len(out) < limit and seen:
        try:
            with optional_requests():
                await results.async_next_page()
        except (NoMorePagesException, BudgetExhausted):
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
        cache: Any = None,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        max_wait_s: float = 30.0,
        page_size: int = SEARCH_PAGE,
        graph_page: int = GRAPH_PAGE,
        rec_pool: str = "all-cs",
    ):
        settings = settings or get_settings()
        if cache is None:
            cache = open_cache(
                settings.cache_dir, "api", ttl_s=settings.api_ttl_s, size_mb=settings.cache_size_mb,
                redis_url=settings.redis(),
            )  # fmt: skip
        self.cache = cache
        key = settings.s2_api_key.get_secret_value() if settings.s2_api_key is not None else ""
        rate = Rate.parse(settings.s2_rate or (DEFAULT_RATE_WITH_KEY if key else DEFAULT_RATE_WITHOUT_KEY))
        hint = "" if key else "set PILOT_S2_API_KEY for a higher rate limit"
        # one limiter per key (per process, or shared by every replica through Redis)
        self.limiter = rate_limiter(f"s2|{settings.s2_base_url}", key, rate, settings.redis(), max_wait_s, hint)
        remote = Remote(
            NAME,
            f"Semantic Scholar ({urlsplit(settings.s2_base_url).netloc or settings.s2_base_url})",
            httpx.Timeout(settings.http_timeout_s, connect=settings.connect_timeout_s),
            RetryPolicy(max_retries, backoff_s, max_wait_s, deadline_s=settings.http_timeout_s),
            cache,
            self.limiter,
        )
        self._requester = _Requester(settings, remote)
        self._client = _Client(
            self._requester, settings.s2_base_url, settings.s2_recommendations_url, settings.http_timeout_s
        )
        self._graph_url = settings.s2_base_url.rstrip("/")
        self.page_size = max(1, min(page_size, SEARCH_PAGE))
        self.graph_page = max(1, min(graph_page, GRAPH_PAGE))
        # Tells node caches which service answered (never the key itself).
        self.cache_key = f"s2|{settings.s2_base_url}|{settings.s2_recommendations_url}|{rec_pool}"
        self.rec_pool = rec_pool
        # (references, citations) counts of papers seen in any answer: they size the batch requests
        self._counts: dict[str, tuple[int | None, int | None]] = {}

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

    def _papers(self, records: Sequence[dict[str, Any] | None]) -> list[Paper]:
        """Papers from raw records, remembering each one's reference / citation counts."""
        for r in records:
            if r and r.get("paperId") and ("citationCount" in r or "referenceCount" in r):
                if len(self._counts) > 200_000:
                    self._counts.clear()
                counts = (r.get("referenceCount"), r.get("citationCount"))
                for alias in _aliases(r):  # a caller may name the paper by any of its ids
                    self._counts[alias] = counts
        return _papers(records)

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        text = relevance_query(clean_query(NAME, query))
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
        # The package pastes the query into the URL unescaped; escape it so '&' or '#' stay text. Every mode is
        # a relevance search: the bulk endpoint returns its matches unranked, and S2 has no dense search.
        deep = limit > self._page(limit) and bool(f.deep_match)
        results = await self._call(
            self._client.search_paper(quote_plus(text), fields=PAPER_FIELDS, limit=self._page(limit), **kwargs)
        )
        papers = self._papers(await self._call(_take(results, self._page(limit) if deep else limit)))
        if deep and len(papers) == self._page(limit):  # a short first page: the relevance search has no more
            papers += await self._bulk(f, limit - len(papers), {p.id for p in papers})
        # S2 returns no scores; a rank-derived score keeps the order meaningful to downstream fusion.
        return [SearchHit(paper=p, score=1.0 / (1 + i)) for i, p in enumerate(papers)]

    async def _bulk(self, f: SearchFilters, limit: int, seen: set[str]) -> list[Paper]:
        """Past the relevance search's first page: the papers matching ``f.deep_match``, most cited first, from
        one ``GET /paper/search/bulk`` (up to 1,000 per request) instead of up to nine more pages of 100. It is
        an optional request: when the turn's budget runs low the first page is what the search returns."""
        params = [("query", f.deep_match or ""), ("fields", ",".join(PAPER_FIELDS)), ("sort", "citationCount:desc")]
        if year := _year_param(f):
            params.append(("year", year))
        if f.venue:
            params.append(("venue", f.venue))
        if f.min_citations:
            params.append(("minCitationCount", str(f.min_citations)))
        if f.fields_of_study:
            params.append(("fieldsOfStudy", ",".join(f.fields_of_study)))
        url = f"{self._graph_url}/paper/search/bulk"
        try:
            with optional_requests():
                data = await self._call(self._requester.get_data_async(url, urlencode(params), {}))
        except BudgetExhausted:
            return []
        except (NotFound, BadRequest, SourceUnavailable) as exc:  # deep results are a bonus, the first page stands
            log.warning("s2: bulk search failed, keeping the first page: %s", exc)
            return []
        if not isinstance(data, dict) or not isinstance(data.get("data") or [], list):
            raise SourceUnavailable(NAME, "unexpected answer shape from Semantic Scholar's bulk search")
        papers = [p for p in self._papers(data.get("data") or []) if p.id not in seen]
        return papers[: max(0, limit)]

    def searches_by_meaning(self) -> bool:
        return False  # relevance search only; a paper's neighbours come from the recommendations endpoint

    def free_graph(self) -> bool:
        return False  # every reference / citation list is a rate-limited request

    def _s2_ids(self, ids: list[str]) -> dict[str, str]:
        """Given id -> S2 id, in order, for the ids S2 understands (the rest are logged and left out)."""
        out: dict[str, str] = {}
        for raw in ids:
            sid = parse_s2_id(raw)
            if sid is None:
                log.info("s2: skipping %r, not a Semantic Scholar paper id", raw)
            elif raw not in out:
                out[raw] = sid
        return out

    async def _batch(self, sids: list[str], fields: str, what: str) -> list[dict[str, Any] | None]:
        """One ``POST /paper/batch``: a record (None for an unknown id) per id, in order."""
        data = await self._call(
            self._requester.get_data_async(
                f"{self._graph_url}/paper/batch", f"fields={fields}", {}, {"ids": sids}, what=what
            )
        )
        if not isinstance(data, list):
            raise SourceUnavailable(NAME, "unexpected answer shape from Semantic Scholar's batch endpoint")
        if len(data) == len(sids):
            return data
        # One record per id, in order, is the contract; an answer that breaks it is matched by paperId.
        log.warning("s2: batch answer has %d records for %d ids; matching them by paperId", len(data), len(sids))
        by_id = {r["paperId"]: r for r in data if isinstance(r, dict) and r.get("paperId")}
        return [by_id.get(sid.lower()) for sid in sids]

    async def _per_paper(
        self, sids: list[str], fields: str, what: str, key: Callable[[str], str], keep: Callable[[Any], Any]
    ) -> dict[str, Any]:
        """Per-paper values cached one by one under ``key(sid)``: cached ones free, the rest 500 per
        ``POST /paper/batch``; ``keep(record)`` is the value (falsy = known to have none). A spent budget ends
        the look-ups: what was found so far is the answer."""
        out: dict[str, Any] = {}
        todo: list[str] = []
        unique = list(dict.fromkeys(sids))
        for sid, hit in zip(unique, await self._requester.remote.cached_many([key(s) for s in unique]), strict=True):
            if hit is not None:
                out[sid] = hit
            else:
                todo.append(sid)
        for start in range(0, len(todo), BATCH_IDS):
            chunk = todo[start : start + BATCH_IDS]
            try:
                found = await self._batch(chunk, fields, f"{what} of {len(chunk)} papers")
            except BadRequest as exc:
                # S2 answers 400 when none of the ids is valid; for a batch that means "none found".
                log.info("s2: batch lookup of %d ids found nothing (%s)", len(chunk), exc.message)
                continue
            except BudgetExhausted:
                break  # the budget noted what was skipped
            for sid, rec in zip(chunk, found, strict=True):
                out[sid] = keep(rec)
            await self._requester.remote.store([(key(sid), out[sid]) for sid in chunk if sid in out])
        return out

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        """Records of many papers: cached ones free, the rest 500 per request (unknown ids are left out)."""
        wanted = self._s2_ids(ids)
        fields = ",".join(PAPER_FIELDS)
        records = await self._per_paper(
            list(wanted.values()), fields, "details", lambda sid: fingerprint(NAME, "paper", sid, fields),
            lambda rec: rec or {},  # {} = known not to exist
        )  # fmt: skip
        return self._papers([records.get(sid) or None for sid in dict.fromkeys(wanted.values())])

    # --- the service's own paper embeddings ---------------------------------------------------------
    def _embedding_key(self, sid: str) -> str:
        return fingerprint(NAME, "embedding", EMBEDDING, sid)

    def cached_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The embeddings of the papers already fetched (no request): id -> unit vector, in S2's own space."""
        out: dict[str, np.ndarray] = {}
        for raw, sid in self._s2_ids(ids).items():
            hit = self._requester.remote.cached(self._embedding_key(sid))
            if hit:
                out[raw] = _unit(hit)
        return out

    async def paper_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """S2's embeddings of the papers (``embedding.specter_v2``), cached per paper. A paper S2 has no embedding
        for is left out. Closeness between papers costs one request per 500 papers instead of embedding their
        abstracts on this machine."""
        wanted = self._s2_ids(ids)
        vectors = await self._per_paper(
            list(wanted.values()), f"embedding.{EMBEDDING}", "embeddings", self._embedding_key,
            lambda rec: ((rec or {}).get("embedding") or {}).get("vector") or [],
        )  # fmt: skip
        return {raw: _unit(v) for raw, sid in wanted.items() if (v := vectors.get(sid))}

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
        if limit == 1:  # one paper by its title: the title-match endpoint answers in one small request
            try:
                data = await self._call(
                    self._requester.get_data_async(
                        f"{self._graph_url}/paper/search/match",
                        f"query={quote_plus(clean_query(NAME, text))}&fields={','.join(PAPER_FIELDS)}",
                        {},
                        what=f"title match “{text[:60]}”",
                    )
                )
                found = self._papers((data or {}).get("data") or [])
                if found:
                    return found[:1]
            except NotFound:
                pass  # no title close enough: a relevance search may still find it
        hits = await self.search_papers(text, limit=limit)
        return [h.paper for h in hits]

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._graph_page(paper_id, "references", limit)

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        return await self._graph_page(paper_id, "citations", limit)

    async def _graph_page(self, paper_id: str, direction: GraphDirection, limit: int) -> list[Paper]:
        sid = quote(to_s2_id(paper_id), safe="/:")
        call = self._client.get_paper_references if direction == "references" else self._client.get_paper_citations
        results = await self._call(call(sid, fields=PAPER_FIELDS, limit=max(1, min(limit, self.graph_page))))
        rows = await self._call(_take(results, limit))
        return self._papers([r.get("citedPaper" if direction == "references" else "citingPaper") for r in rows])

    # --- many papers' references / citations in batch requests --------------------------------------
    def _expected(self, sid: str, direction: GraphDirection) -> int:
        refs, cites = self._counts.get(sid, (None, None))
        n = refs if direction == "references" else cites
        return GUESS_LINKS if n is None else int(n)

    def _chunks(self, sids: list[str], direction: GraphDirection) -> list[list[str]]:
        """Consecutive chunks (most valuable papers first) whose answers stay under the documented caps."""
        cap = min(BATCH_NESTED, BATCH_CITATIONS)
        chunks: list[list[str]] = []
        size = 0
        for sid in sids:
            n = self._expected(sid, direction)
            if not chunks or len(chunks[-1]) >= BATCH_IDS or (chunks[-1] and size + n > cap):
                chunks.append([])
                size = 0
            chunks[-1].append(sid)
            size += n
        return chunks

    async def linked(
        self, paper_ids: list[str], direction: GraphDirection, limit: int = 100, progress: GraphProgress | None = None
    ) -> Neighbours:
        """Reference / citation lists of many papers from ``POST /paper/batch`` with nested fields, cached per
        paper. When the budget runs out, the papers not fetched yet fail with ``BudgetExhausted``."""
        out = Neighbours()
        wanted = self._s2_ids(paper_ids)
        for raw in paper_ids:
            if raw not in wanted:
                out.failed[raw] = BadRequest(NAME, f"{raw!r} is not a Semantic Scholar paper id")
        fields = ",".join(f"{direction}.{f}" for f in NESTED_FIELDS)
        lists: dict[str, list[Paper]] = {}
        errors: dict[str, SourceError] = {}
        todo: list[str] = []
        heavy: list[str] = []
        unique = list(dict.fromkeys(wanted.values()))
        hits = await self._requester.remote.cached_many([fingerprint(NAME, direction, sid, fields) for sid in unique])
        for sid, hit in zip(unique, hits, strict=True):
            if hit is not None:
                lists[sid] = self._papers(hit)
            elif direction == "citations" and self._expected(sid, direction) > HEAVY_CITATIONS:
                heavy.append(sid)  # nested in a batch, a list this long would crowd the others out
            else:
                todo.append(sid)
        total = len(lists) + len(todo) + len(heavy)

        def report() -> None:
            if progress is not None:
                progress(len(lists) + len(errors), total)

        queue = self._chunks(todo, direction)
        while queue:
            chunk = queue.pop(0)
            try:
                records = await self._batch(chunk, fields, f"{direction} of {len(chunk)} papers")
            except BudgetExhausted as exc:
                rest = chunk + [sid for c in queue for sid in c] + heavy
                errors.update(dict.fromkeys(rest, exc))
                if (budget := current_budget()) is not None:
                    budget.skip(f"{direction} of {len(rest)} papers")
                heavy = []
                break
            except BadRequest as exc:
                if "exceed" in exc.message.lower() and len(chunk) > 1:
                    half = len(chunk) // 2  # the answer would be too big after all: ask for each half
                    queue[:0] = [chunk[:half], chunk[half:]]
                    continue
                errors.update(dict.fromkeys(chunk, exc))
                continue
            except SourceError as exc:
                errors.update(dict.fromkeys(chunk, exc))
                continue
            answered: list[tuple[str, Any]] = []
            for sid, rec in zip(chunk, records, strict=True):
                if rec is None:
                    errors[sid] = NotFound(NAME, f"no paper with id {sid!r}")
                    continue
                linked = [r for r in rec.get(direction) or [] if r]
                lists[sid] = self._papers(linked)
                answered.append((fingerprint(NAME, direction, sid, fields), linked))
            await self._requester.remote.store(answered)
            report()
        for sid in heavy:
            try:
                lists[sid] = await self.citations(sid, limit)
            except SourceError as exc:
                errors[sid] = exc
            report()
        for raw_id, sid in wanted.items():
            if sid in lists:
                out.found[raw_id] = lists[sid][:limit]
            elif sid in errors:
                out.failed[raw_id] = errors[sid]
        return out

    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        pos = [to_s2_id(i) for i in positive_ids]
        neg = [to_s2_id(i) for i in negative_ids or []]
        if not pos:
            raise BadRequest(NAME, "recommendations need at least one paper to start from", "like a paper first")
        limit = max(1, min(limit, RECS_LIMIT))
        if len(pos) == 1 and not neg:
            # Always the most the endpoint gives, cut here: every later ask for this paper's neighbours (the
            # clarifier's options, a search step's, another direction's) is then the same, cached request.
            found = await self._call(
                self._client.get_recommended_papers(
                    quote(pos[0], safe="/:"), fields=PAPER_FIELDS, limit=RECS_LIMIT, pool_from=self.rec_pool
                )
            )
        else:
            found = await self._call(
                self._client.get_recommended_papers_from_lists(pos, neg or None, fields=PAPER_FIELDS, limit=limit)
            )
        return self._papers([p.raw_data for p in found])[:limit]

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
        return self._papers(await self._call(_take(results, limit)))

    async def authors_papers(self, author_ids: list[str], limit: int = 100) -> dict[str, list[Paper]]:
        """Papers of many authors from ``POST /author/batch`` with nested ``papers.*`` fields (one request for up
        to ``BATCH_AUTHORS``), cached per author; unknown authors are left out."""
        keys = {raw: _author_key(raw) for raw in dict.fromkeys(author_ids)}
        fields = ",".join(["name", *(f"papers.{f}" for f in NESTED_FIELDS)])
        records: dict[str, list[dict[str, Any]] | None] = {}
        todo: list[str] = []
        unique = list(dict.fromkeys(keys.values()))
        hits = await self._requester.remote.cached_many([fingerprint(NAME, "author_papers", a, fields) for a in unique])
        for aid, hit in zip(unique, hits, strict=True):
            if hit is not None:
                records[aid] = hit or None
            else:
                todo.append(aid)
        for start in range(0, len(todo), BATCH_AUTHORS):
            chunk = todo[start : start + BATCH_AUTHORS]
            data = await self._call(
                self._requester.get_data_async(
                    f"{self._graph_url}/author/batch", f"fields={fields}", {}, {"ids": chunk},
                    what=f"papers of {len(chunk)} authors",
                )
            )  # fmt: skip
            if not isinstance(data, list) or len(data) != len(chunk):
                raise SourceUnavailable(NAME, "unexpected answer shape from Semantic Scholar's author batch endpoint")
            for aid, rec in zip(chunk, data, strict=True):
                records[aid] = [r for r in (rec or {}).get("papers") or [] if r] if rec else None
            await self._requester.remote.store(
                [(fingerprint(NAME, "author_papers", aid, fields), records[aid] or []) for aid in chunk]
            )
        return {raw: self._papers(found)[:limit] for raw, aid in keys.items() if (found := records.get(aid))}

    async def aclose(self) -> None:
        await self._requester.aclose()
