"""The AMiner open-platform endpoints pilot calls, over a corpus in the shared schema.

No recorded AMiner responses exist on this machine: every answer follows the shapes the platform
documents (the ``{code, success, msg, data, total, log_id}`` envelope and the per-endpoint fields), the
same shapes as the written-from-docs fixtures in ``tests/fixtures/aminer/``, which
``tests/test_emulator_shapes.py`` compares them with. A change in the live API would not be caught.

Served under ``/gateway/open_platform`` (set ``PILOT_AMINER_BASE_URL=http://127.0.0.1:PORT/gateway/open_platform``)::

    GET  /api/paper/list/by/search/venue   keyword, page, size <= 10
    GET  /api/paper/detail?id=             GET /api/paper/relation?id=   (what the paper cites)
    POST /api/person/search                {"name", "offset", "size" <= 10}
    GET  /api/person/detail?id=            GET /api/person/paper/relation?id=
    POST /api/organization/search          {"orgs": [name]}      POST /api/organization/detail {"ids": [id]}
    GET  /api/organization/person/relation?org_id=&offset=   10 researchers per call
    POST /api/venue/search                 {"name"}              POST /api/venue/detail {"id"}

Every call needs ``Authorization: <token>`` (any non-empty token; a missing one gets the platform's
``token is invalid`` envelope). The platform documents no public rate figure: ``--rps`` sets one per token.
Ids are the first 24 hex digits of sha1(corpus or entity id), stable per corpus.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from aiohttp import web

from emulators.server import Emulator, retry_after
from pilot.models import Paper
from pilot.store.text import org_id, venue_id

PREFIX = "/gateway/open_platform"
PAGE = 10


def aid(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:24]


def envelope(data: Any, total: int | None = None, code: int = 200, msg: str = "", success: bool = True) -> web.Response:
    body: dict[str, Any] = {
        "code": code,
        "success": success,
        "msg": msg,
        "log_id": aid(json.dumps(data, default=str))[:10],
    }
    if total is not None:
        body["total"] = total
    body["data"] = data
    return web.json_response(body, status=200 if success or code != 429 else 429)


def failure(code: int, msg: str) -> web.Response:
    return envelope(None, code=code, msg=msg, success=False)


class AMinerEmulator(Emulator):
    name = "aminer"
    key_header = "authorization"

    def __init__(self, source: Any, **kw: Any):
        super().__init__(source, **kw)
        self.row_of_aid = {aid(cid): row for row, cid in enumerate(self.store.ids)}
        self._entities: dict[str, dict[str, str]] = {}

    def entity_id(self, kind: str, short: str) -> str | None:
        """Store id of an author / org / venue from its emulated AMiner id."""
        if kind not in self._entities:
            table = {"author": "authors", "org": "orgs", "venue": "venues"}[kind]
            self._entities[kind] = {aid(i): i for (i,) in self.store._query(f"SELECT id FROM {table}")}
        return self._entities[kind].get(short.strip())

    # --- records (each endpoint's documented fields) ---------------------------------------------------
    @staticmethod
    def _cites(p: Paper) -> int:
        return max(p.citation_count or 0, p.in_corpus_citations or 0)

    def search_record(self, paper: Paper) -> dict[str, Any]:
        return {
            "_id": aid(paper.id),
            "title": paper.title,
            "title_zh": "",
            "abstract": paper.abstract or "",
            "authors": [
                {
                    "name": a.name,
                    "id": aid(a.id or a.name),
                    "org": a.affiliation or "",
                    "org_id": aid(org_id(a.affiliation)) if a.affiliation else "",
                }
                for a in paper.authors
            ],
            "venue": {"info": {"name": paper.venue or "", "name_zh": ""}, "alias": []},
            "venue_hhb_id": aid(venue_id(paper.venue)) if paper.venue else "",
            "year": paper.year or 0,
            "n_citation": self._cites(paper),
            "doi": str(paper.external_ids.get("DOI") or ""),
            "keywords": [],
            "url": [paper.url] if paper.url else [],
        }

    def detail_record(self, paper: Paper) -> dict[str, Any]:
        return {
            "id": aid(paper.id),
            "title": paper.title,
            "title_zh": "",
            "abstract": paper.abstract or "",
            "abstract_zh": "",
            "authors": [
                {"name": a.name, "name_zh": "", "org": a.affiliation or "", "org_zh": ""} for a in paper.authors
            ],
            "doi": str(paper.external_ids.get("DOI") or ""),
            "issn": "",
            "issue": "",
            "volume": "",
            "year": paper.year or 0,
            "keywords": [],
            "keywords_zh": [],
            "raw": paper.venue or "",
            "venue": {"raw": paper.venue or "", "info": {"name": paper.venue or ""}},
        }

    def _author(self, store_id: str):
        return self.store.entity("author", store_id)

    def person_record(self, store_id: str) -> dict[str, Any] | None:
        """A person as ``/person/search`` lists them."""
        a = self._author(store_id)
        if a is None:
            return None
        org = a.affiliation or (a.orgs[0] if a.orgs else "")
        return {
            "id": aid(store_id),
            "name": a.name,
            "name_zh": "",
            "org": org,
            "org_zh": "",
            "org_id": aid(org_id(org)) if org else "",
            "interests": [{"t": t, "n": 1} for t in a.topics],
            "n_citation": a.citation_count or 0,
        }

    def person_detail_record(self, store_id: str) -> dict[str, Any] | None:
        a = self._author(store_id)
        if a is None:
            return None
        return {
            "id": aid(store_id),
            "name": a.name,
            "name_zh": "",
            "bio": "",
            "edu": "",
            "orgs": list(a.orgs or ([a.affiliation] if a.affiliation else [])),
            "position": "",
            "domain": list(a.topics),
            "honor": [],
            "award": [],
            "indices": {"hindex": a.h_index or 0, "pubs": a.paper_count or 0, "citations": a.citation_count or 0},
        }

    # --- replies ------------------------------------------------------------------------------------
    def too_many(self, wait_s: float) -> web.Response:
        body = {"code": 429, "success": False, "msg": "request too frequent, rate limit exceeded", "data": None}
        return web.json_response(body, status=429, headers=retry_after(wait_s))

    def server_error(self, status: int) -> web.Response:
        return web.json_response(
            {"code": status, "success": False, "msg": "internal error", "data": None}, status=status
        )

    async def _body(self, request: web.Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    # --- papers -------------------------------------------------------------------------------------
    async def paper_search(self, request: web.Request) -> web.Response:
        keyword = " ".join((request.query.get("keyword") or "").split())
        try:
            page = int(request.query.get("page") or 0)
            size = int(request.query.get("size") or PAGE)
        except ValueError:
            return failure(400, "page and size must be integers")
        if not keyword:
            return failure(400, "keyword is required")
        if size > PAGE or size < 1 or page < 0:
            return failure(400, f"size must be between 1 and {PAGE}")
        hits = await self.source.search_papers(keyword, limit=(page + 1) * size, mode="hybrid")
        chunk = [h.paper for h in hits[page * size : (page + 1) * size]]
        return envelope([self.search_record(p) for p in chunk], total=len(hits))

    async def paper_detail(self, request: web.Request) -> web.Response:
        row = self.row_of_aid.get((request.query.get("id") or "").strip())
        if row is None:
            return envelope(None)
        return envelope([self.detail_record(self.store.papers([row])[0])])

    async def paper_relation(self, request: web.Request) -> web.Response:
        row = self.row_of_aid.get((request.query.get("id") or "").strip())
        if row is None:
            return envelope(None)
        paper = self.store.papers([row])[0]
        cited = self.store.papers(self.store.by_in_corpus_citations(self.store.references(row)).tolist())
        item = {
            "_id": aid(paper.id),
            "title": paper.title,
            "n_citation": self._cites(paper),
            "cited": [{"_id": aid(p.id), "title": p.title, "n_citation": self._cites(p)} for p in cited],
        }
        return envelope([item])

    # --- people ----------------------------------------------------------------------------------------
    async def person_search(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        name = " ".join(str(body.get("name") or "").split())
        size = int(body.get("size") or PAGE)
        offset = int(body.get("offset") or 0)
        if not name:
            return failure(400, "name is required")
        if size > PAGE or size < 1:
            return failure(400, f"size must be between 1 and {PAGE}")
        found = self.store.search_entities("author", name, offset + size)
        people = [r for r in (self.person_record(a.id) for a in found[offset:]) if r]
        return envelope(people, total=len(found))

    async def person_detail(self, request: web.Request) -> web.Response:
        store_id = self.entity_id("author", request.query.get("id") or "")
        return envelope(self.person_detail_record(store_id) if store_id else None)

    async def person_papers(self, request: web.Request) -> web.Response:
        short = (request.query.get("id") or "").strip()
        store_id = self.entity_id("author", short)
        if store_id is None:
            return envelope(None)
        papers = await self.source.author_papers(store_id, limit=100_000)
        return envelope([{"author_id": short, "id": aid(p.id), "title": p.title} for p in papers], total=len(papers))

    # --- organisations and venues -------------------------------------------------------------------
    async def org_search(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        names = [str(n) for n in body.get("orgs") or [] if str(n).strip()]
        if not names:
            return failure(400, "orgs is required")
        found = [o for n in names for o in self.store.search_entities("org", n, PAGE)]
        return envelope([{"org_id": aid(o.id), "org_name": o.name} for o in found], total=len(found))

    async def org_detail(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        out = []
        for short in body.get("ids") or []:
            store_id = self.entity_id("org", str(short))
            org = self.store.entity("org", store_id) if store_id else None
            if org is not None:
                names = {"name": org.name, "name_en": org.name, "name_zh": ""}
                extra = {"acronyms": [], "aliases": [], "details": "", "type": "", "location": "", "language": "en"}
                out.append({"id": aid(org.id), **names, **extra})
        return envelope(out or None, total=len(out))

    async def org_persons(self, request: web.Request) -> web.Response:
        short = (request.query.get("org_id") or "").strip()
        store_id = self.entity_id("org", short)
        if store_id is None:
            return envelope(None)
        offset = int(request.query.get("offset") or 0)
        ids = self.store.org_author_ids(store_id, offset + PAGE)[offset:]
        people = []
        for i in ids:
            a = self._author(i)
            if a is not None:
                people.append(
                    {"id": aid(i), "name": a.name, "name_zh": "", "org": a.affiliation or "", "org_id": short}
                )
        return envelope(people, total=len(people))

    async def venue_search(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        name = " ".join(str(body.get("name") or "").split())
        if not name:
            return failure(400, "name is required")
        found = self.store.search_entities("venue", name, PAGE)
        return envelope([{"id": aid(v.id), "name_en": v.name, "name_zh": ""} for v in found], total=len(found))

    async def venue_detail(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        store_id = self.entity_id("venue", str(body.get("id") or ""))
        v = self.store.entity("venue", store_id) if store_id else None
        if v is None:
            return envelope(None)
        return envelope({
            "id": aid(v.id), "name": v.name, "name_en": v.name, "name_zh": "", "issn": "", "eissn": "", "alias": [],
            "type": "conference",
        })  # fmt: skip

    # --- wiring ------------------------------------------------------------------------------------------
    def routes(self, app: web.Application) -> None:
        @web.middleware
        async def token(request: web.Request, handler) -> web.StreamResponse:
            if request.path.startswith(PREFIX) and not (request.headers.get("Authorization") or "").strip():
                return failure(40101, "token is invalid or expired")
            return await handler(request)

        app.middlewares.append(token)
        r = app.router
        p = PREFIX + "/api"
        r.add_get(f"{p}/paper/list/by/search/venue", self.paper_search)
        r.add_get(f"{p}/paper/detail", self.paper_detail)
        r.add_get(f"{p}/paper/relation", self.paper_relation)
        r.add_post(f"{p}/person/search", self.person_search)
        r.add_get(f"{p}/person/detail", self.person_detail)
        r.add_get(f"{p}/person/paper/relation", self.person_papers)
        r.add_post(f"{p}/organization/search", self.org_search)
        r.add_post(f"{p}/organization/detail", self.org_detail)
        r.add_get(f"{p}/organization/person/relation", self.org_persons)
        r.add_post(f"{p}/venue/search", self.venue_search)
        r.add_post(f"{p}/venue/detail", self.venue_detail)
