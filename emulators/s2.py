"""Semantic Scholar's Graph API and Recommendations API over a corpus in the shared schema.

Endpoints (the ones pilot calls, plus their neighbours in the recorded fixtures):

    GET  /graph/v1/paper/search              relevance search: query, offset, limit <= 100, offset+limit <= 1000,
                                              year, publicationDateOrYear, venue, fieldsOfStudy, minCitationCount
    GET  /graph/v1/paper/search/bulk         boolean match (pilot.sources.boolean), unranked: up to 1,000 per
                                              answer + a continuation ``token`` (null on the last page), sort=
                                              paperId | publicationDate | citationCount [:asc|:desc], same filters
    GET  /graph/v1/paper/search/match        the one closest title (404 "Title match not found")
    POST /graph/v1/paper/batch               {"ids": [...]} <= 500 ids, nested references/citations, <= 9999
                                              citations and <= 10 MB per answer; unknown ids answer null
    GET  /graph/v1/paper/{id}                any id form S2 takes: paperId, CorpusId:, DOI / 10.…, ACL:, ARXIV:, …
    GET  /graph/v1/paper/{id}/references     offset, limit <= 1000 (same for /citations); data[].citedPaper
    GET  /graph/v1/paper/{id}/authors
    GET  /graph/v1/author/search             query, offset, limit <= 1000
    GET  /graph/v1/author/{id}, /author/{id}/papers, POST /author/batch
    GET  /recommendations/v1/papers/forpaper/{id}   limit <= 500, from = recent | all-cs
    POST /recommendations/v1/papers          {"positivePaperIds", "negativePaperIds"}

Only requested fields are returned (``paperId`` / ``authorId`` always), unknown fields are a 400, as in the
API. The corpus supplies titles, abstracts, years, venues, authors, external ids and its citation graph;
what it lacks is answered the way S2 answers a paper without it (``null``, ``""``, ``[]``, ``false``).

Ids: ``paperId`` = sha1 of the corpus id (40 hex, stable per corpus); ``corpusId`` = the corpus's own
``CorpusId`` where it has one, else 10^9 + the store row; ``externalIds`` carries the corpus's ACL / DOI /
CorpusId values, so ``ACL:P02-1040`` and ``CorpusId:…`` resolve as on the real service.

Ranking: relevance search is the offline store's hybrid (BM25 + MiniLM) ranking, recommendations its
dense neighbours, references / citations in the store's order (most cited first); the ``embedding`` field
is the store's MiniLM vector. The real service ranks and embeds with its own models; the emulator stands in
for its shapes, limits and costs, not its relevance.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from emulators.server import Emulator, json_error, retry_after
from pilot.models import Paper, SearchFilters
from pilot.sources.boolean import ExpressionError, candidates, exact_from_index, matcher, parse
from pilot.text import normalize_title

GRAPH = "/graph/v1"
RECS = "/recommendations/v1"
PAPER_URL = "https://www.semanticscholar.org/paper/{id}"
AUTHOR_URL = "https://www.semanticscholar.org/author/{id}"
SYNTHETIC_CORPUS_ID = 1_000_000_000  # + store row, for papers whose CorpusId the corpus does not know

SEARCH_PAGE = 100
BULK_PAGE = 1000
BULK_SORTS = ("paperId", "publicationDate", "citationCount")
SEARCH_CAP = 1000
GRAPH_PAGE = 1000
BATCH_IDS = 500
BATCH_CITATIONS = 9999
MAX_BYTES = 10 * 1024 * 1024
AUTHOR_PAGE = 1000
RECS_LIMIT = 500
TOO_BIG = "Response would exceed maximum size. Please break the request into smaller batches or use limit and offset."
RATE_MESSAGE = (
    "Too Many Requests. Please wait and try again or apply for a key for higher rate limits. "
    "https://www.semanticscholar.org/product/api#api-key-form"
)

BASE_PAPER_FIELDS = (
    "paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue", "publicationVenue", "year",
    "referenceCount", "citationCount", "influentialCitationCount", "isOpenAccess", "openAccessPdf", "fieldsOfStudy",
    "s2FieldsOfStudy", "publicationTypes", "publicationDate", "journal", "citationStyles", "authors",
)  # fmt: skip
PAPER_FIELDS = BASE_PAPER_FIELDS + ("citations", "references", "embedding", "tldr", "textAvailability")
AUTHOR_FIELDS = (
    "authorId", "externalIds", "url", "name", "affiliations", "homepage", "paperCount", "citationCount", "hIndex",
)  # fmt: skip
EMBEDDING_MODELS = ("specter_v1", "specter_v2")  # fields=embedding (v1) or embedding.specter_v2
EDGE_FIELDS = ("contexts", "intents", "contextsWithIntent", "isInfluential")


class FieldError(ValueError):
    pass


@dataclass
class Fields:
    """A parsed ``fields`` parameter: top-level names in order, and sub-fields of nested lists."""

    top: list[str] = field(default_factory=list)
    sub: dict[str, list[str]] = field(default_factory=dict)


def parse_fields(
    raw: str | None, allowed: tuple[str, ...], nested: Mapping[str, tuple[str, ...]], default: list[str]
) -> Fields:
    if raw is None or not raw.strip():
        return Fields(top=list(default))
    out = Fields()
    bad: list[str] = []
    for name in (f.strip() for f in raw.split(",")):
        if not name:
            continue
        head, _, rest = name.partition(".")
        if head not in allowed or (rest and (head not in nested or rest not in nested[head])):
            bad.append(name)
            continue
        if head not in out.top:
            out.top.append(head)
        if rest:
            out.sub.setdefault(head, [])
            if rest not in out.sub[head]:
                out.sub[head].append(rest)
    if bad:
        raise FieldError(f"Unrecognized or unsupported fields: [{', '.join(bad)}]")
    return out


def _int_param(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise FieldError(f"Unacceptable query params: [{name}={raw}]") from None
    if value < 0:
        raise FieldError(f"Unacceptable query params: [{name}={raw}]")
    return value


def _paging(request: web.Request, cap: int, default: int = 100) -> tuple[int, int]:
    """``offset`` and ``limit`` of a paged endpoint; a limit above the endpoint's cap is refused, as documented."""
    offset, limit = _int_param(request, "offset", 0), _int_param(request, "limit", default)
    if limit > cap:
        raise FieldError(f"Unacceptable query params: [limit={limit}]: limit must be <= {cap}")
    return offset, limit


def _page(rows: list[Any], offset: int, limit: int) -> tuple[list[Any], dict[str, int]]:
    chunk = rows[offset : offset + limit]
    extra = {"next": offset + len(chunk)} if offset + len(chunk) < len(rows) else {}
    return chunk, extra


def _year_range(text: str) -> tuple[int | None, int | None]:
    """``2019``, ``2016-2020``, ``2010-``, ``-2015`` (year); ``2023:2024``, ``:2024-12-31`` (publicationDateOrYear)."""
    text = text.strip()
    sep = ":" if ":" in text else "-" if re.fullmatch(r"\d{0,4}-\d{0,4}", text) else None
    lo, hi = text.split(sep, 1) if sep else (text, text)

    def year(part: str) -> int | None:
        m = re.match(r"\s*(\d{4})", part)
        return int(m.group(1)) if m else None

    return year(lo), year(hi)


class S2Emulator(Emulator):
    name = "s2"
    key_header = "x-api-key"

    def __init__(self, source: Any, **kw: Any):
        super().__init__(source, **kw)
        self.pids = [hashlib.sha1(cid.encode()).hexdigest() for cid in self.store.ids]
        self.row_of_pid = {pid: row for row, pid in enumerate(self.pids)}
        self._author_ids: dict[str, str] | None = None  # S2 author id -> store author id, built on first use
        self._searches: OrderedDict[str, list[int]] = OrderedDict()
        self.max_year = int(self.store.year.max()) if len(self.store) else 0

    # --- ids ------------------------------------------------------------------------------------
    def resolve(self, ref: str) -> int | None:
        """The store row of any paper id form S2 accepts, or None."""
        ref = (ref or "").strip()
        if re.fullmatch(r"[0-9a-fA-F]{40}", ref):
            return self.row_of_pid.get(ref.lower())
        prefix, sep, value = ref.partition(":")
        key = prefix.lower() if sep else ""
        if not sep and ref.startswith("10."):
            key, value = "doi", ref
        if key == "corpusid" and value.isdigit():
            n = int(value)
            if n >= SYNTHETIC_CORPUS_ID:
                row = n - SYNTHETIC_CORPUS_ID
                return row if row < len(self.store) and self.corpus_id(row) == n else None
            found = self.store.rows_by_external_id("CorpusId", value)
            return found[0] if found else None
        if key == "acl":
            own = self.store.row_of.get(f"acl:{value}")
            if own is not None:
                return own
            found = self.store.rows_by_external_id("ACL", value)
            return found[0] if found else None
        if key == "url":
            m = re.search(r"semanticscholar\.org/paper/(?:[^/]+/)?([0-9a-f]{40})", value, re.IGNORECASE)
            return self.row_of_pid.get(m.group(1).lower()) if m else None
        names = {"doi": "DOI", "arxiv": "ArXiv", "mag": "MAG", "pmid": "PubMed", "pmcid": "PubMedCentral"}
        if key in names and value:
            found = self.store.rows_by_external_id(names[key], value)
            return found[0] if found else None
        return None

    def corpus_id(self, row: int, paper: Paper | None = None) -> int:
        paper = paper or self.store.papers([row])[0]
        value = str(paper.external_ids.get("CorpusId") or "")
        return int(value) if value.isdigit() else SYNTHETIC_CORPUS_ID + row

    def author_key(self, store_id: str) -> str:
        return str(int(hashlib.sha1(store_id.encode()).hexdigest()[:12], 16) % 10**10)

    def author_store_id(self, s2_id: str) -> str | None:
        if self._author_ids is None:
            ids = [a for (a,) in self.store._query("SELECT id FROM authors")]
            self._author_ids = {self.author_key(a): a for a in ids}
        return self._author_ids.get(s2_id.strip())

    # --- records --------------------------------------------------------------------------------
    def paper_json(self, row: int, paper: Paper, fields: Fields, budget: list[int] | None = None) -> dict[str, Any]:
        """One paper with the requested fields; ``budget`` counts nested citations against the batch cap."""
        pid = self.pids[row]
        out: dict[str, Any] = {"paperId": pid}
        for name in fields.top:
            if name == "paperId":
                continue
            out[name] = self._paper_value(name, row, paper, fields.sub.get(name), budget)
        return out

    def _paper_value(self, name: str, row: int, paper: Paper, sub: list[str] | None, budget: list[int] | None) -> Any:
        refs = self.store.references(row)
        if name == "corpusId":
            return self.corpus_id(row, paper)
        if name == "externalIds":
            ext: dict[str, Any] = {k: str(v) for k, v in paper.external_ids.items() if v not in (None, "")}
            ext["CorpusId"] = self.corpus_id(row, paper)
            return ext
        if name == "url":
            return PAPER_URL.format(id=self.pids[row])
        if name in ("title", "abstract", "year"):
            return getattr(paper, name) or (None if name != "title" else "")
        if name == "venue":
            return paper.venue or ""
        if name == "referenceCount":
            return len(refs)
        if name == "citationCount":
            return max(paper.citation_count or 0, paper.in_corpus_citations or 0)
        if name == "influentialCitationCount":
            return 0
        if name == "isOpenAccess":
            return False
        if name == "fieldsOfStudy":
            return ["Computer Science"]
        if name == "s2FieldsOfStudy":
            return [{"category": "Computer Science", "source": "external"}]
        if name == "publicationDate":
            return None
        if name == "journal":
            return {"name": paper.venue} if paper.venue else None
        if name == "citationStyles":
            names = " and ".join(a.name for a in paper.authors)
            fields = f"author = {{{names}}},\n title = {{{paper.title}}},\n year = {{{paper.year or ''}}}"
            return {"bibtex": f"@Inproceedings{{{self.pids[row][:12]},\n {fields}\n}}\n"}
        if name == "textAvailability":
            return "abstract" if paper.abstract else "none"
        if name == "authors":
            return [
                self.author_json(a.id or "", sub or [], name=a.name, affiliation=a.affiliation) for a in paper.authors
            ]
        if name in ("references", "citations"):
            rows = self.store.by_in_corpus_citations(refs if name == "references" else self.store.citing(row)).tolist()
            if budget is not None and name == "citations":
                budget[0] += len(rows)
            nested = Fields(top=sub or ["title"])
            return [self.paper_json(r, p, nested) for r, p in zip(rows, self.store.papers(rows), strict=True)]
        if name == "embedding":
            # the corpus's own vector (MiniLM) stands in for S2's SPECTER embedding, as its neighbours stand in for
            # the recommendations: the same shape and cost, not the same model
            return {
                "model": (sub or [EMBEDDING_MODELS[0]])[0],
                "vector": [round(float(x), 5) for x in self.store.vectors[row]],
            }
        return None  # publicationVenue, openAccessPdf, publicationTypes, tldr: the corpus has none

    def author_json(
        self, store_id: str, fields: list[str], *, name: str | None = None, affiliation: str | None = None,
        papers: Fields | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        entity = (
            self.store.entity("author", store_id)
            if store_id and (set(fields) - {"authorId", "name"} or not name)
            else None
        )
        out: dict[str, Any] = {
            "authorId": self.author_key(store_id) if store_id else None,
            "name": name or (entity.name if entity else ""),
        }
        for f in fields:
            if f in ("authorId", "name"):
                continue
            if f == "externalIds":
                out[f] = {}
            elif f == "url":
                out[f] = AUTHOR_URL.format(id=out["authorId"])
            elif f == "affiliations":
                out[f] = list(entity.orgs if entity and entity.orgs else ([affiliation] if affiliation else []))
            elif f == "homepage":
                out[f] = None
            elif f in ("paperCount", "citationCount", "hIndex"):
                attr = {"paperCount": "paper_count", "citationCount": "citation_count", "hIndex": "h_index"}[f]
                out[f] = int(getattr(entity, attr) or 0) if entity else 0
            elif f == "papers" and papers is not None:
                rows = self.store.author_rows(store_id)
                out[f] = [self.paper_json(r, p, papers) for r, p in zip(rows, self.store.papers(rows), strict=True)]
        return out

    # --- replies -------------------------------------------------------------------------------------
    def too_many(self, wait_s: float) -> web.Response:
        return web.json_response({"message": RATE_MESSAGE, "code": "429"}, status=429, headers=retry_after(wait_s))

    @staticmethod
    def _json(payload: Any, status: int = 200) -> web.Response:
        body = json.dumps(payload, ensure_ascii=False)
        if len(body.encode()) > MAX_BYTES:
            return json_error(400, TOO_BIG)
        return web.Response(text=body, status=status, content_type="application/json")

    def _paper_fields(self, request: web.Request, default: list[str] | None = None) -> Fields:
        nested = {
            "authors": AUTHOR_FIELDS, "citations": BASE_PAPER_FIELDS, "references": BASE_PAPER_FIELDS,
            "embedding": EMBEDDING_MODELS,
        }  # fmt: skip
        return parse_fields(request.query.get("fields"), PAPER_FIELDS, nested, default or ["title"])

    def _papers_json(self, rows: list[int], fields: Fields, budget: list[int] | None = None) -> list[dict[str, Any]]:
        return [self.paper_json(r, p, fields, budget) for r, p in zip(rows, self.store.papers(rows), strict=True)]

    # --- search -----------------------------------------------------------------------------------
    async def _ranked(self, query: str, filters: SearchFilters, venues: list[str]) -> list[int]:
        key = json.dumps([query, filters.model_dump(), venues])
        if key in self._searches:
            self._searches.move_to_end(key)
            return self._searches[key]
        hits = await self.source.search_papers(query, filters=filters, limit=SEARCH_CAP, mode="hybrid")
        # relevance search matches words: a paper sharing none with the query is not a result, however close
        # its embedding (the service answers nonsense with total 0, as recorded)
        lexical = await asyncio.to_thread(self.store.lexical_scores, query)
        rows = [r for r in (self.store.row_of[h.paper.id] for h in hits) if lexical[r] > 0]
        if len(venues) > 1:
            wanted = [v.lower() for v in venues]
            rows = [
                r
                for r, p in zip(rows, self.store.papers(rows), strict=True)
                if any(w in (p.venue or "").lower() for w in wanted)
            ]
        self._searches[key] = rows
        while len(self._searches) > 256:
            self._searches.popitem(last=False)
        return rows

    def _filters(self, request: web.Request) -> tuple[SearchFilters, list[str], bool]:
        """Filters from the query string; the last value says whether any paper can match at all."""
        q = request.query
        lo = hi = None
        if q.get("year"):
            lo, hi = _year_range(q["year"])
        elif q.get("publicationDateOrYear"):
            lo, hi = _year_range(q["publicationDateOrYear"])
        venues = [v.strip() for v in (q.get("venue") or "").split(",") if v.strip()]
        min_cites = _int_param(request, "minCitationCount", 0) or None
        filters = SearchFilters(
            year_min=lo, year_max=hi, venue=venues[0] if len(venues) == 1 else None, min_citations=min_cites
        )
        fos = [f.strip().lower() for f in (q.get("fieldsOfStudy") or "").split(",") if f.strip()]
        # every corpus paper is computer science, none has publication types or an open-access PDF on record
        possible = (not fos or "computer science" in fos) and not q.get("publicationTypes") and "openAccessPdf" not in q
        return filters, venues, possible

    async def search(self, request: web.Request) -> web.Response:
        try:
            fields = self._paper_fields(request)
            query = " ".join((request.query.get("query") or "").split())
            if not query:
                return json_error(400, "Missing required parameter: 'query'")
            offset, limit = _paging(request, SEARCH_PAGE, SEARCH_PAGE)
            if offset + limit > SEARCH_CAP:
                return json_error(
                    400,
                    f"Unacceptable query params: [offset={offset}, limit={limit}]: "
                    f"offset + limit must be <= {SEARCH_CAP}",
                )
            filters, venues, possible = self._filters(request)
        except FieldError as exc:
            return json_error(400, str(exc))
        rows = await self._ranked(query, filters, venues) if possible else []
        if not rows:
            return self._json({"total": 0, "offset": offset})
        chunk, extra = _page(rows, offset, limit)
        return self._json({"total": len(rows), "offset": offset, **extra, "data": self._papers_json(chunk, fields)})

    def _bulk_rows(self, query: str, filters: SearchFilters, venues: list[str], sort: str) -> list[int]:
        """Every paper matching the boolean ``query`` (all papers without one) and the filters, in ``sort``
        order. The word index answers the terms, as the service's would; texts are read only for phrases."""
        rows = list(range(len(self.store)))
        if query:
            found = candidates(query, self._rows_with, set(rows))
            rows = sorted(found)
        papers = self.store.papers(rows)
        test = matcher(query) if query and not exact_from_index(query) else None
        wanted = [v.lower() for v in venues]
        keep = []
        for r, p in zip(rows, papers, strict=True):
            served = p.model_copy(update={"citation_count": self._paper_value("citationCount", r, p, None, None)})
            if test is not None and not test(p.text):
                continue
            if filters.accepts(served) and (len(wanted) < 2 or any(w in (p.venue or "").lower() for w in wanted)):
                keep.append((r, served))
        key, _, order = sort.partition(":")
        value = {
            "paperId": lambda rp: self.pids[rp[0]],
            "publicationDate": lambda rp: rp[1].year or 0,
            "citationCount": lambda rp: rp[1].citation_count or 0,
        }[key]
        keep.sort(key=lambda rp: (value(rp), self.pids[rp[0]]), reverse=order == "desc")
        return [r for r, _ in keep]

    def _rows_with(self, word: str) -> set[int]:
        return {int(r) for r in np.flatnonzero(self.store.lexical_scores(word) > 0)}

    @staticmethod
    def _bulk_token(key: str, offset: int) -> str:
        digest = hashlib.sha1(key.encode()).hexdigest()[:16]
        return base64.b32encode(f"{offset}:{digest}".encode()).decode().rstrip("=")

    def _bulk_offset(self, key: str, token: str | None) -> int:
        if not token:
            return 0
        try:
            offset, digest = base64.b32decode(token + "=" * (-len(token) % 8)).decode().split(":")
        except (ValueError, UnicodeDecodeError):
            raise FieldError("Invalid token") from None
        if not offset.isdigit() or self._bulk_token(key, int(offset)) != token:
            raise FieldError("Invalid token")
        return int(offset)

    async def bulk(self, request: web.Request) -> web.Response:
        """Matches of a boolean query, unranked, 1,000 per answer; ``token`` continues where the last ended."""
        try:
            fields = self._paper_fields(request)
            bad = [f for f in fields.top if f in ("citations", "references", "embedding", "tldr")]
            if bad:
                raise FieldError(f"Unrecognized or unsupported fields: {bad}")
            query = " ".join((request.query.get("query") or "").split())
            sort = request.query.get("sort") or "paperId"
            key_name, _, order = sort.partition(":")
            if key_name not in BULK_SORTS or order not in ("", "asc", "desc"):
                raise FieldError(f"Unacceptable sort: {sort!r}; sort by one of {', '.join(BULK_SORTS)} [:asc|:desc]")
            sort = f"{key_name}:{order or 'asc'}"
            if query:
                parse(query)
            filters, venues, possible = self._filters(request)
            key = json.dumps([query, sort, filters.model_dump(), venues])
            offset = self._bulk_offset(key, request.query.get("token"))
        except (FieldError, ExpressionError) as exc:
            return json_error(400, str(exc))
        rows = await asyncio.to_thread(self._bulk_rows, query, filters, venues, sort) if possible else []
        chunk = rows[offset : offset + BULK_PAGE]
        more = offset + BULK_PAGE < len(rows)
        return self._json(
            {
                "total": len(rows),
                "token": self._bulk_token(key, offset + BULK_PAGE) if more else None,
                "data": self._papers_json(chunk, fields),
            }
        )

    async def match(self, request: web.Request) -> web.Response:
        try:
            fields = self._paper_fields(request)
        except FieldError as exc:
            return json_error(400, str(exc))
        query = " ".join((request.query.get("query") or "").split())
        if not query:
            return json_error(400, "Missing required parameter: 'query'")
        norm = normalize_title(query)
        rows = self.store.rows_by_title(query)
        best, score = (rows[0], 1.0) if rows else (None, 0.0)
        if best is None:
            for r in (await self._ranked(query, SearchFilters(), []))[:20]:
                title = normalize_title(self.store.papers([r])[0].title)
                ratio = difflib.SequenceMatcher(None, norm, title).ratio()
                if ratio > score:
                    best, score = r, ratio
        if best is None or score < 0.8:
            return json_error(404, "Title match not found")
        paper = self.store.papers([best])[0]
        record = self.paper_json(best, paper, fields)
        record["matchScore"] = round(100 * score + len(norm) / 10, 5)
        return self._json({"data": [record]})

    # --- papers -----------------------------------------------------------------------------------
    async def paper(self, request: web.Request) -> web.Response:
        ref = request.match_info["paper_id"]
        row = self.resolve(ref)  # the service checks the id before the fields (recorded: /paper/0?fields=t,i,t,l,e)
        if row is None:
            return json_error(404, f"Paper with id {ref} not found")
        try:
            fields = self._paper_fields(request)
        except FieldError as exc:
            return json_error(400, str(exc))
        budget = [0]
        record = self.paper_json(row, self.store.papers([row])[0], fields, budget)
        if budget[0] > BATCH_CITATIONS:
            return json_error(400, TOO_BIG)
        return self._json(record)

    async def batch(self, request: web.Request) -> web.Response:
        try:
            fields = self._paper_fields(request)
            body = await request.json()
        except FieldError as exc:
            return json_error(400, str(exc))
        except ValueError:
            return json_error(400, 'Request body must be JSON: {"ids": [...]}')
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return json_error(400, 'Request body must be JSON: {"ids": [...]} with string ids')
        if len(ids) > BATCH_IDS:
            return json_error(400, f"Batch size limit exceeded: at most {BATCH_IDS} ids per request, got {len(ids)}")
        rows = [self.resolve(i) for i in ids]
        known = [r for r in rows if r is not None]
        found = dict(zip(known, self.store.papers(known), strict=True))
        budget = [0]
        out = [self.paper_json(r, found[r], fields, budget) if r is not None and r in found else None for r in rows]
        if budget[0] > BATCH_CITATIONS:
            return json_error(400, f"{TOO_BIG} (at most {BATCH_CITATIONS} citations per request)")
        return self._json(out)

    async def edges(self, request: web.Request) -> web.Response:
        ref = request.match_info["paper_id"]
        kind = request.match_info["kind"]
        try:
            raw = request.query.get("fields")
            edge = [f for f in (raw or "").split(",") if f.strip() in EDGE_FIELDS]
            rest = ",".join(f for f in (raw or "").split(",") if f.strip() and f.strip() not in EDGE_FIELDS)
            nested = {"authors": AUTHOR_FIELDS}
            fields = parse_fields(rest or None, BASE_PAPER_FIELDS, nested, ["title"])
            offset, limit = _paging(request, GRAPH_PAGE)
        except FieldError as exc:
            return json_error(400, str(exc))
        row = self.resolve(ref)
        if row is None:
            return json_error(404, f"Paper with id {ref} not found")
        linked = self.store.references(row) if kind == "references" else self.store.citing(row)
        rows, extra = _page(self.store.by_in_corpus_citations(linked).tolist(), offset, limit)
        wrap = "citedPaper" if kind == "references" else "citingPaper"
        data = []
        for r, p in zip(rows, self.store.papers(rows), strict=True):
            item: dict[str, Any] = {}
            for f in edge:
                item[f.strip()] = False if f.strip() == "isInfluential" else []
            item[wrap] = self.paper_json(r, p, fields)
            data.append(item)
        return self._json({"offset": offset, **extra, "data": data})

    async def paper_authors(self, request: web.Request) -> web.Response:
        ref = request.match_info["paper_id"]
        try:
            fields = self._author_fields(request)
            offset, limit = _paging(request, AUTHOR_PAGE)
        except FieldError as exc:
            return json_error(400, str(exc))
        row = self.resolve(ref)
        if row is None:
            return json_error(404, f"Paper with id {ref} not found")
        authors, extra = _page(self.store.papers([row])[0].authors, offset, limit)
        data = [self._author_record(a.id or "", fields, name=a.name, affiliation=a.affiliation) for a in authors]
        return self._json({"offset": offset, **extra, "data": data})

    # --- authors -----------------------------------------------------------------------------------
    def _author_fields(self, request: web.Request) -> Fields:
        return parse_fields(
            request.query.get("fields"), AUTHOR_FIELDS + ("papers",), {"papers": BASE_PAPER_FIELDS}, ["name"]
        )

    def _author_record(self, store_id: str, fields: Fields, **kw: Any) -> dict[str, Any]:
        papers = Fields(top=fields.sub.get("papers") or ["title"]) if "papers" in fields.top else None
        return self.author_json(store_id, fields.top, papers=papers, **kw)

    async def author_search(self, request: web.Request) -> web.Response:
        try:
            fields = self._author_fields(request)
            offset, limit = _paging(request, AUTHOR_PAGE)
        except FieldError as exc:
            return json_error(400, str(exc))
        query = " ".join((request.query.get("query") or "").split())
        if not query:
            return json_error(400, "Missing required parameter: 'query'")
        found = self.store.search_entities("author", query, AUTHOR_PAGE)
        if not found:
            return self._json({"total": 0, "offset": offset})
        chunk, extra = _page(found, offset, limit)
        data = [self._author_record(a.id, fields, name=a.name) for a in chunk]
        return self._json({"total": len(found), "offset": offset, **extra, "data": data})

    async def author(self, request: web.Request) -> web.Response:
        aid = request.match_info["author_id"]
        try:
            fields = self._author_fields(request)
        except FieldError as exc:
            return json_error(400, str(exc))
        store_id = self.author_store_id(aid)
        if store_id is None:
            return json_error(404, f"Author with id {aid} not found")
        return self._json(self._author_record(store_id, fields))

    async def author_batch(self, request: web.Request) -> web.Response:
        try:
            fields = self._author_fields(request)
            body = await request.json()
        except (FieldError, ValueError) as exc:
            return json_error(400, str(exc))
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or len(ids) > 1000:
            return json_error(400, 'Request body must be JSON: {"ids": [...]} with at most 1000 ids')
        out = []
        for aid in ids:
            store_id = self.author_store_id(str(aid))
            out.append(self._author_record(store_id, fields) if store_id else None)
        return self._json(out)

    async def author_papers(self, request: web.Request) -> web.Response:
        aid = request.match_info["author_id"]
        try:
            fields = self._paper_fields(request)
            offset, limit = _paging(request, AUTHOR_PAGE)
        except FieldError as exc:
            return json_error(400, str(exc))
        store_id = self.author_store_id(aid)
        if store_id is None:
            return json_error(404, f"Author with id {aid} not found")
        papers = await self.source.author_papers(store_id, limit=100_000)
        rows, extra = _page([self.store.row_of[p.id] for p in papers], offset, limit)
        return self._json({"offset": offset, **extra, "data": self._papers_json(rows, fields)})

    # --- recommendations -------------------------------------------------------------------------------
    def _rec_limit(self, request: web.Request) -> int:
        return _paging(request, RECS_LIMIT)[1]

    async def _recommend(
        self, pos: list[int], neg: list[int], limit: int, fields: Fields, recent: bool
    ) -> web.Response:
        ids = [self.store.ids[r] for r in pos]
        papers = await self.source.recommend(ids, [self.store.ids[r] for r in neg], limit=limit * (4 if recent else 1))
        rows = [self.store.row_of[p.id] for p in papers]
        if recent:  # the service's "recent" pool: papers of the newest years it holds
            rows = [r for r in rows if int(self.store.year[r]) >= self.max_year - 1]
        return self._json({"recommendedPapers": self._papers_json(rows[:limit], fields)})

    async def recs_for_paper(self, request: web.Request) -> web.Response:
        ref = request.match_info["paper_id"]
        try:
            fields = self._paper_fields(request)
            limit = self._rec_limit(request)
        except FieldError as exc:
            return json_error(400, str(exc))
        pool = request.query.get("from", "recent")
        if pool not in ("recent", "all-cs"):
            return json_error(400, f"Unacceptable query params: [from={pool}]")
        row = self.resolve(ref)
        if row is None:
            return json_error(404, f"Paper with id {ref} not found")
        return await self._recommend([row], [], limit, fields, recent=pool == "recent")

    async def recs_for_lists(self, request: web.Request) -> web.Response:
        try:
            fields = self._paper_fields(request)
            limit = self._rec_limit(request)
            body = await request.json()
        except (FieldError, ValueError) as exc:
            return json_error(400, str(exc))
        pos_ids = body.get("positivePaperIds") if isinstance(body, dict) else None
        if not isinstance(pos_ids, list) or not pos_ids:
            return json_error(400, "positivePaperIds must be a non-empty list")
        pos = [r for r in (self.resolve(str(i)) for i in pos_ids) if r is not None]
        neg = [r for r in (self.resolve(str(i)) for i in body.get("negativePaperIds") or []) if r is not None]
        if not pos:
            return json_error(404, "None of the positive papers were found")
        return await self._recommend(pos, neg, limit, fields, recent=False)

    # --- wiring ------------------------------------------------------------------------------------------
    def routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get(f"{GRAPH}/paper/search", self.search)
        r.add_get(f"{GRAPH}/paper/search/bulk", self.bulk)
        r.add_get(f"{GRAPH}/paper/search/match", self.match)
        r.add_post(f"{GRAPH}/paper/batch", self.batch)
        r.add_get(f"{GRAPH}/paper/{{paper_id:.+}}/{{kind:references|citations}}", self.edges)
        r.add_get(f"{GRAPH}/paper/{{paper_id:.+}}/authors", self.paper_authors)
        r.add_get(f"{GRAPH}/paper/{{paper_id:.+}}", self.paper)
        r.add_get(f"{GRAPH}/author/search", self.author_search)
        r.add_post(f"{GRAPH}/author/batch", self.author_batch)
        r.add_get(f"{GRAPH}/author/{{author_id}}/papers", self.author_papers)
        r.add_get(f"{GRAPH}/author/{{author_id}}", self.author)
        r.add_get(f"{RECS}/papers/forpaper/{{paper_id:.+}}", self.recs_for_paper)
        for path in (f"{RECS}/papers", f"{RECS}/papers/"):
            r.add_post(path, self.recs_for_lists)
