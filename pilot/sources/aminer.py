"""AMiner open platform behind the source protocol, over httpx.

Endpoints (``settings.aminer_base_url`` + path, header ``Authorization: <token>``), as documented for
the open platform; every answer is wrapped as ``{"code", "success", "msg", "data", "total"}``:

    papers   GET  /api/paper/list/by/search/venue  keyword search with abstracts, years, citations
             GET  /api/paper/detail?id=             one paper in full
             GET  /api/paper/relation?id=           the papers it cites
    persons  POST /api/person/search                {"name", "size"}
             GET  /api/person/detail?id=
             GET  /api/person/paper/relation?id=    an author's papers (id + title)
    orgs     POST /api/organization/search          {"orgs": [name]}
             POST /api/organization/detail          {"ids": [id]}
             GET  /api/organization/person/relation?org_id=&offset=   10 researchers per call
    venues   POST /api/venue/search                 {"name"}
             POST /api/venue/detail                 {"id"}

The platform documents no "cited by" or recommendation endpoint, so ``citations`` and ``recommend``
raise ``NotSupported``. Field names vary between endpoints (``id``/``_id``, ``name``/``name_en``,
venue as a string or an object), so the mappers accept each documented variant.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import httpx

from cache import fingerprint, open_cache
from pilot.models import (
    AMINER_AUTHOR_URL,
    AMINER_ORG_URL,
    AMINER_PAPER_URL,
    AMINER_VENUE_URL,
    Author,
    Org,
    Paper,
    SearchFilters,
    SearchHit,
    Venue,
)
from pilot.settings import Settings, get_settings
from pilot.sources.base import BadRequest, NotFound, SearchMode, Source, SourceUnavailable, clean_query
from pilot.sources.http import Remote, RetryPolicy, rate_limited
from pilot.sources.ratelimit import Rate, rate_limiter
from pilot.sources.shapes import AMinerEnvelope, checked

log = logging.getLogger(__name__)

NAME = "aminer"
TOKEN_HINT = "set PILOT_AMINER_TOKEN (create one at https://open.aminer.cn/open/board?tab=control)"
PAGE = 10  # the documented page size cap of the search endpoints
MAX_PAGES = 5  # paid endpoints: never fan out into dozens of calls for one search
_ID = re.compile(r"^[A-Za-z0-9_\-]{6,64}$")


def aminer_key(entity_id: str, what: str = "paper") -> str:
    """The bare AMiner id of ``aminer:<id>`` (or a bare id); anything else is a BadRequest."""
    text = (entity_id or "").strip()
    if text.lower().startswith("aminer:"):
        text = text[7:].strip()
    if not _ID.match(text):
        raise BadRequest(
            NAME,
            f"{entity_id!r} is not an AMiner {what} id",
            f"AMiner {what} ids look like aminer:53e9ab9bb7602d97023e53b2",
        )
    return text


# --- mapping -----------------------------------------------------------------------------------
def _first(data: Any) -> dict[str, Any] | None:
    """Detail endpoints answer with an object or a one-element list."""
    if isinstance(data, list):
        data = data[0] if data else None
    return data if isinstance(data, dict) else None


def _rid(d: dict[str, Any], *keys: str) -> str | None:
    for k in keys:
        if d.get(k):
            return str(d[k])
    return None


def _int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _dict(value: Any) -> dict[str, Any]:
    """A record's nested object, or an empty one when the field is missing or of another type."""
    return value if isinstance(value, dict) else {}


def _text(*values: Any) -> str | None:
    for v in values:
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def _venue_name(d: dict[str, Any]) -> str | None:
    v = d.get("venue")
    if isinstance(v, str):
        return _text(v, d.get("raw"))
    if isinstance(v, dict):
        info = _dict(v.get("info"))
        return _text(
            v.get("raw"),
            v.get("name_en"),
            v.get("name"),
            info.get("name"),
            info.get("name_en"),
            d.get("raw"),
            v.get("name_zh"),
        )
    return _text(d.get("raw"))


def _topics(values: Any) -> list[str]:
    out = []
    for v in values or []:
        t = v.get("t") if isinstance(v, dict) else v
        if isinstance(t, str) and t.strip():
            out.append(t.strip())
    return out


def author_from_aminer(d: dict[str, Any] | None) -> Author | None:
    if not isinstance(d, dict):
        return None
    name = _text(d.get("name"), d.get("name_zh"))
    if not name:
        return None
    aid = _rid(d, "id", "_id", "person_id")
    indices = _dict(d.get("indices"))
    orgs = [o for o in (d.get("orgs") or []) if isinstance(o, str) and o.strip()]
    org = _text(d.get("org"), orgs[0] if orgs else None, d.get("org_zh"))
    if org and org not in orgs:
        orgs.insert(0, org)
    return Author(
        id=f"aminer:{aid}" if aid else None,
        name=name,
        affiliation=org,
        url=AMINER_AUTHOR_URL.format(id=aid) if aid else None,
        source=NAME,
        paper_count=_int(indices.get("pubs") or d.get("n_pubs")),
        citation_count=_int(indices.get("citations") or d.get("n_citation")),
        h_index=_int(indices.get("hindex") or d.get("h_index")),
        orgs=orgs,
        topics=_topics(d.get("interests") or d.get("domain")),
    )


def paper_from_aminer(d: dict[str, Any] | None) -> Paper | None:
    if not isinstance(d, dict):
        return None
    pid = _rid(d, "id", "_id")
    title = _text(d.get("title"), d.get("title_zh"))
    if not pid or not title:
        return None
    ext = {"AMiner": pid}
    if doi := _text(d.get("doi")):
        ext["DOI"] = doi
    return Paper(
        id=f"aminer:{pid}",
        title=title,
        abstract=_text(d.get("abstract"), d.get("abstract_zh")),
        year=_int(d.get("year")),
        venue=_venue_name(d),
        authors=[a for a in (author_from_aminer(x) for x in d.get("authors") or []) if a],
        citation_count=d.get("n_citation") if isinstance(d.get("n_citation"), int) else None,
        external_ids=ext,
        fields_of_study=_topics(d.get("keywords")),
        url=AMINER_PAPER_URL.format(id=pid),
        source=NAME,
    )


def venue_from_aminer(d: dict[str, Any] | None) -> Venue | None:
    if not isinstance(d, dict):
        return None
    vid = _rid(d, "id", "_id")
    name = _text(d.get("name_en"), d.get("name"), d.get("name_zh"))
    if not vid or not name:
        return None
    return Venue(id=f"aminer:{vid}", name=name, url=AMINER_VENUE_URL.format(id=vid), source=NAME)


def org_from_aminer(d: dict[str, Any] | None) -> Org | None:
    if not isinstance(d, dict):
        return None
    oid = _rid(d, "id", "org_id", "_id")
    name = _text(d.get("name_en"), d.get("name"), d.get("org_name"), d.get("name_zh"))
    if not oid or not name:
        return None
    return Org(id=f"aminer:{oid}", name=name, url=AMINER_ORG_URL.format(id=oid), source=NAME)


def _mapped(rows: Any, fn) -> list:
    return [x for x in (fn(r) for r in (rows if isinstance(rows, list) else [])) if x]


# --- the source --------------------------------------------------------------------------------
class AMinerSource(Source):
    name = NAME

    def free_graph(self) -> bool:
        return False  # a remote API with a request limit

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        cache: Any = None,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        max_wait_s: float = 30.0,
    ):
        settings = settings or get_settings()
        if cache is None:
            cache = open_cache(
                settings.cache_dir, "api", ttl_s=settings.api_ttl_s, size_mb=settings.cache_size_mb,
                redis_url=settings.redis(),
            )  # fmt: skip
        self.cache = cache
        self._token = settings.aminer_token
        self._base = settings.aminer_base_url.rstrip("/")
        self.cache_key = f"aminer|{self._base}"  # for node caches; never the token
        token = self._token.get_secret_value().strip() if self._token is not None else ""
        limiter = None
        if settings.aminer_rate:  # the platform publishes no rate; a configured one is kept per token
            limiter = rate_limiter(
                f"aminer|{self._base}", token, Rate.parse(settings.aminer_rate), settings.redis(), max_wait_s
            )
        self._remote = Remote(
            NAME,
            "AMiner",
            httpx.Timeout(settings.http_timeout_s, connect=settings.connect_timeout_s),
            RetryPolicy(max_retries, backoff_s, max_wait_s, deadline_s=settings.http_timeout_s),
            cache,
            limiter,
        )

    async def _call(self, method: str, path: str, *, params: dict | None = None, body: dict | None = None) -> Any:
        """The ``data`` of one endpoint's answer (cached), or a typed error."""
        token = self._token.get_secret_value().strip() if self._token is not None else ""
        if not token:
            raise SourceUnavailable(NAME, "AMiner needs an API token", TOKEN_HINT)

        endpoint = path.rsplit("/api/", 1)[-1]

        def check(payload: Any) -> Any:
            if isinstance(payload, dict) and (
                payload.get("success") is False or str(payload.get("code", 200)) not in ("0", "200")
            ):
                self._raise_envelope(payload)
            return checked(NAME, "AMiner", endpoint, AMinerEnvelope.model_validate, payload)

        return await self._remote.fetch(
            method,
            self._base + path,
            key=fingerprint(NAME, method, path, params, body),
            what=f"AMiner {endpoint}",
            check=check,
            decode=lambda payload: payload.get("data"),
            params=params,
            json=body,
            headers={"Authorization": token},
            auth_hint="check PILOT_AMINER_TOKEN",
        )

    @staticmethod
    def _raise_envelope(payload: dict[str, Any]) -> None:
        """AMiner reports some failures in a 200 answer: ``{"success": false, "code": …, "msg": …}``."""
        code, msg = payload.get("code"), str(payload.get("msg") or "request failed")
        low = msg.lower()
        if code in (401, 403) or "token" in low or "auth" in low:
            raise SourceUnavailable(NAME, f"AMiner rejected the token: {msg}", "check PILOT_AMINER_TOKEN")
        if code == 429 or "limit" in low or "frequen" in low:
            raise rate_limited(NAME, "AMiner", None, msg, None)
        if code == 404:
            raise NotFound(NAME, msg)
        raise BadRequest(NAME, f"AMiner refused the request: {msg}")

    # --- papers -------------------------------------------------------------------------------
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        # AMiner ranks by its own relevance; ``mode`` has no counterpart here.
        text = clean_query(NAME, query)
        limit = max(1, min(limit, PAGE * MAX_PAGES))
        f = filters or SearchFilters()
        papers: list[Paper] = []
        for page in range(MAX_PAGES):
            rows = await self._call(
                "GET", "/api/paper/list/by/search/venue", params={"keyword": text, "page": page, "size": PAGE}
            )
            batch = _mapped(rows, paper_from_aminer)
            # The endpoint takes keyword OR venue OR author, so filters are applied to what it returns.
            papers.extend(p for p in batch if f.accepts(p))
            if len(papers) >= limit or len(rows or []) < PAGE:
                break
        return [SearchHit(paper=p, score=1.0 / (1 + i)) for i, p in enumerate(papers[:limit])]

    async def _one(self, what: str, entity_id: str, mapper, method: str, path: str, **kw: Any) -> Any:
        """One entity from a detail endpoint; an empty answer is a NotFound."""
        item = mapper(_first(await self._call(method, path, **kw)))
        if item is None:
            raise NotFound(NAME, f"no AMiner {what} with id {entity_id!r}")
        return item

    async def get_paper(self, paper_id: str) -> Paper:
        return await self._one(
            "paper", paper_id, paper_from_aminer, "GET", "/api/paper/detail", params={"id": aminer_key(paper_id)}
        )

    async def get_papers(self, ids: list[str]) -> list[Paper]:
        wanted: list[str] = []
        for raw in ids:
            try:
                key = aminer_key(raw)
            except BadRequest:
                log.info("aminer: skipping %r, not an AMiner paper id", raw)
                continue
            if key not in wanted:
                wanted.append(key)
        gate = asyncio.Semaphore(4)

        async def one(pid: str) -> Paper | None:
            async with gate:
                try:
                    return await self.get_paper(pid)
                except NotFound:
                    return None

        found = await asyncio.gather(*(one(pid) for pid in wanted))
        return [p for p in found if p]

    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        rows = await self._call("GET", "/api/paper/relation", params={"id": aminer_key(paper_id)})
        cited: list[Any] = []
        for row in rows if isinstance(rows, list) else [rows]:
            # Documented as the paper with a ``cited`` list; tolerate a flat list of cited papers too.
            if isinstance(row, dict) and isinstance(row.get("cited"), list):
                cited.extend(row["cited"])
            elif isinstance(row, dict):
                cited.append(row)
        return _mapped(cited, paper_from_aminer)[:limit]

    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        raise self._unsupported("citing papers (AMiner's open platform only lists what a paper cites)")

    # --- people -------------------------------------------------------------------------------
    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        text = clean_query(NAME, query)
        rows = await self._call(
            "POST", "/api/person/search", body={"name": text, "offset": 0, "size": max(1, min(limit, PAGE))}
        )
        return _mapped(rows, author_from_aminer)[:limit]

    async def get_author(self, author_id: str) -> Author:
        key = aminer_key(author_id, "author")
        return await self._one("author", author_id, author_from_aminer, "GET", "/api/person/detail", params={"id": key})

    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        rows = await self._call("GET", "/api/person/paper/relation", params={"id": aminer_key(author_id, "author")})
        return _mapped(rows, paper_from_aminer)[:limit]

    # --- organisations and venues -------------------------------------------------------------
    async def search_orgs(self, query: str, limit: int = 10) -> list[Org]:
        rows = await self._call("POST", "/api/organization/search", body={"orgs": [clean_query(NAME, query)]})
        return _mapped(rows, org_from_aminer)[:limit]

    async def get_org(self, org_id: str) -> Org:
        key = aminer_key(org_id, "organisation")
        return await self._one(
            "organisation", org_id, org_from_aminer, "POST", "/api/organization/detail", body={"ids": [key]}
        )

    async def org_authors(self, org_id: str, limit: int = 50) -> list[Author]:
        oid = aminer_key(org_id, "organisation")
        authors: list[Author] = []
        for page in range(MAX_PAGES):
            rows = await self._call(
                "GET", "/api/organization/person/relation", params={"org_id": oid, "offset": page * PAGE}
            )
            authors.extend(_mapped(rows, author_from_aminer))
            if len(authors) >= limit or len(rows or []) < PAGE:
                break
        return authors[:limit]

    async def search_venues(self, query: str, limit: int = 10) -> list[Venue]:
        rows = await self._call("POST", "/api/venue/search", body={"name": clean_query(NAME, query)})
        return _mapped(rows, venue_from_aminer)[:limit]

    async def get_venue(self, venue_id: str) -> Venue:
        key = aminer_key(venue_id, "venue")
        return await self._one("venue", venue_id, venue_from_aminer, "POST", "/api/venue/detail", body={"id": key})

    async def aclose(self) -> None:
        await self._remote.aclose()
