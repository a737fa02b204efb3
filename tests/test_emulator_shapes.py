"""The S2 emulator answers like Semantic Scholar: same keys and value types as the recorded real responses
(``../shared/fixtures/semanticscholar/``) and as the published OpenAPI schemas
(``../shared/reference/semanticscholar/``), the documented limits, 429 + ``Retry-After``, faults, ``/_stats``.

Each recorded interaction is replayed against the emulator with the same path shape and query parameters
(``fields``, ``offset``, ``limit``, filters), only the ids and query words swapped for ones of the corpus
slice. Where a recording and the specification disagree (the spec types ``paperCount``, ``citationCount``,
``hIndex`` and ``total`` as strings and ``matchScore`` as an integer; the recordings have integers and a
float), the recording wins.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from emulators.s2 import S2Emulator
from emulators.server import Limits, RateSpec, Running, parse_faults

ANCHOR = "ACL:D08-1048"  # in the slice, with references and citers
CITED = "ACL:J93-2004"  # the Penn Treebank: many citers in the slice


@pytest.fixture(scope="module")
def fixtures(shared: Path) -> Path:
    return shared / "fixtures" / "semanticscholar"


@pytest.fixture(scope="module")
def spec(shared: Path) -> dict:
    ref = shared / "reference" / "semanticscholar"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    graph = yaml.load((ref / "academic-graph-openapi.yml").read_text(encoding="utf-8"), Loader=loader)
    recs = yaml.load((ref / "recommendations-openapi.yml").read_text(encoding="utf-8"), Loader=loader)
    return {"graph": graph, "recs": recs}


@pytest.fixture(scope="module")
def emulator(local_source):
    emu = S2Emulator(local_source)
    with Running(emu) as running:
        yield emu, running.url


def recorded(fixtures: Path, name: str) -> tuple[dict, int, Any]:
    """(query params, status, JSON body) of the first interaction of a cassette."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load((fixtures / name).read_text(encoding="utf-8"), Loader=loader)
    it = doc["interactions"][0]
    resp = it["response"]
    if "status" in resp:  # both vcrpy layouts occur among the recordings
        status, raw = int(resp["status"]["code"]), resp["body"]["string"]
    else:
        status, raw = int(resp["status_code"]), resp["content"]
    body = json.loads(raw)
    query = dict(httpx.URL(it["request"]["uri"]).params)
    return query, status, body


# --- shapes ------------------------------------------------------------------------------------------
def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def shape(value: Any, path: str = "$", out: dict | None = None) -> dict[str, set]:
    """path -> kinds seen there; ``path{}`` -> the key sets of the objects seen there."""
    out = out if out is not None else defaultdict(set)
    out[path].add(_kind(value))
    if isinstance(value, dict) and path.rsplit(".", 1)[-1] in MAPS:
        for v in value.values():  # keys are data here (which external ids a paper has), not schema
            shape(v, path + ".*", out)
    elif isinstance(value, dict):
        out[path + "{}"].add(frozenset(value))
        for k, v in value.items():
            shape(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        for v in value:
            shape(v, path + "[]", out)
    return out


MAPS = {"externalIds"}
OPTIONAL_KEYS = {"next", "data"}  # present only when there are more results / any results


def assert_same_shape(ours: Any, real: Any, what: str) -> None:
    mine, theirs = shape(ours), shape(real)
    problems = []
    for path, kinds in mine.items():
        if path.endswith("{}"):
            if path not in theirs:
                continue
            allowed = frozenset().union(*theirs[path])
            required = frozenset.intersection(*theirs[path]) - OPTIONAL_KEYS
            for keys in kinds:
                if keys - allowed - OPTIONAL_KEYS:
                    problems.append(
                        f"{path[:-2]}: keys the service never sends: {sorted(keys - allowed - OPTIONAL_KEYS)}"
                    )
                if required - keys:
                    problems.append(
                        f"{path[:-2]}: keys the service always sends are missing: {sorted(required - keys)}"
                    )
        elif path in theirs:
            # null is how the service answers a value it lacks; the recordings show it for most fields
            extra = kinds - theirs[path] - {"null"}
            if extra == {"number"} and "integer" in theirs[path]:
                extra = set()
            if extra:
                problems.append(f"{path}: {sorted(kinds)} where the service sends {sorted(theirs[path])}")
    assert not problems, f"{what}:\n" + "\n".join(sorted(set(problems)))


# --- the OpenAPI schemas -----------------------------------------------------------------------------------
# the spec types these as strings (matchScore as integer); the recorded service sends ints (a float)
RECORDED_OVER_SPEC = {"paperCount", "citationCount", "hIndex", "total", "matchScore"}
SPEC_KINDS = {"string": {"string"}, "integer": {"integer"}, "number": {"integer", "number"}, "boolean": {"boolean"},
              "array": {"array"}, "object": {"object"}}  # fmt: skip


def _resolve(schema: dict, doc: dict) -> dict:
    while "$ref" in schema or "allOf" in schema:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            schema = doc["components"]["schemas"][name]
        else:
            merged: dict = {"properties": {}}
            for part in schema["allOf"]:
                part = _resolve(part, doc)
                merged["properties"].update(part.get("properties", {}))
                merged.setdefault("type", part.get("type"))
            schema = merged
    return schema


def check_schema(value: Any, schema: dict, doc: dict, path: str = "$") -> list[str]:
    schema = _resolve(schema, doc)
    problems: list[str] = []
    kind = _kind(value)
    if kind == "null":
        return problems
    declared = schema.get("type") or ("object" if "properties" in schema else None)
    name = path.rsplit(".", 1)[-1]
    if declared and kind not in SPEC_KINDS.get(declared, {kind}) and name not in RECORDED_OVER_SPEC:
        problems.append(f"{path}: {kind}, the specification says {declared}")
    if isinstance(value, dict) and "properties" in schema:
        unknown = set(value) - set(schema["properties"])
        if unknown:
            problems.append(f"{path}: keys not in the specification: {sorted(unknown)}")
        for k, v in value.items():
            if k in schema["properties"]:
                problems += check_schema(v, schema["properties"][k], doc, f"{path}.{k}")
    if isinstance(value, list) and "items" in schema:
        for v in value[:5]:
            problems += check_schema(v, schema["items"], doc, path + "[]")
    return problems


def response_schema(doc: dict, path: str, method: str) -> dict:
    return doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]


# --- the cases -----------------------------------------------------------------------------------------
def _ids(emu: S2Emulator) -> dict[str, str]:
    row = emu.resolve(ANCHOR)
    paper = emu.store.papers([row])[0]
    author = paper.authors[0]
    return {
        "paper": emu.pids[row],
        "title": paper.title,
        "author": emu.author_key(author.id),
        "surname": author.name.split(",")[0].split()[-1],
        "other": emu.pids[emu.resolve(CITED)],
    }


def _cases(ids: dict[str, str]) -> list[tuple[str, str, str, dict, Any, tuple[str, str] | None]]:
    """(cassette, method, path, query overrides, body, (spec path, spec method) or None)."""
    g = "/graph/v1"
    search, batch, spec = f"{g}/paper/search", f"{g}/paper/batch", ("/paper/search", "get")
    q = {"query": "frame semantic lexical units"}
    return [
        ("test_get_paper.yaml", "GET", f"{g}/paper/{ANCHOR}", {}, None, ("/paper/{paper_id}", "get")),
        ("test_get_papers.yaml", "POST", batch, {}, {"ids": [ids["paper"], CITED]}, ("/paper/batch", "post")),
        ("test_get_papers_not_found_warning.yaml", "POST", f"{g}/paper/batch", {},
         {"ids": ["CorpusId:211530585", ANCHOR, CITED, ids["other"]]}, ("/paper/batch", "post")),
        ("test_get_paper_references.yaml", "GET", f"{g}/paper/{ANCHOR}/references", {}, None,
         ("/paper/{paper_id}/references", "get")),
        ("test_get_paper_citations.yaml", "GET", f"{g}/paper/{CITED}/citations", {}, None,
         ("/paper/{paper_id}/citations", "get")),
        ("test_get_paper_authors.yaml", "GET", f"{g}/paper/{ANCHOR}/authors", {}, None,
         ("/paper/{paper_id}/authors", "get")),
        ("test_search_paper.yaml", "GET", f"{g}/paper/search", q, None, ("/paper/search", "get")),
        ("test_search_paper_year.yaml", "GET", search, {**q, "year": "2008"}, None, spec),
        ("test_search_paper_year_range.yaml", "GET", f"{g}/paper/search", {**q, "year": "2005-2008"}, None, None),
        ("test_search_paper_min_citation_count.yaml", "GET", search, {**q, "minCitationCount": "5"}, None, None),
        ("test_search_paper_venue.yaml", "GET", f"{g}/paper/search", {**q, "venue": "Empirical Methods"}, None, None),
        ("test_search_paper_fields_of_study.yaml", "GET", search, {**q, "fieldsOfStudy": "Computer Science"}, None,
         None),
        ("test_search_paper_bulk_retrieval.yaml", "GET", f"{g}/paper/search/bulk", {"query": "parsing | tagging"},
         None, ("/paper/search/bulk", "get")),
        ("test_search_paper_bulk_retrieval_sorted_results_desc.yaml", "GET", f"{g}/paper/search/bulk",
         {"query": "parsing"}, None, ("/paper/search/bulk", "get")),
        ("test_search_paper_match_title.yaml", "GET", f"{g}/paper/search/match", {"query": ids["title"]}, None,
         ("/paper/search/match", "get")),
        ("test_empty_paginated_results.yaml", "GET", f"{g}/paper/search", {}, None, None),
        ("test_search_author.yaml", "GET", f"{g}/author/search", {"query": ids["surname"]}, None, None),
        ("test_get_author.yaml", "GET", f"{g}/author/{ids['author']}", {}, None, ("/author/{author_id}", "get")),
        ("test_get_author_papers.yaml", "GET", f"{g}/author/{ids['author']}/papers", {}, None,
         ("/author/{author_id}/papers", "get")),
        ("test_get_authors.yaml", "POST", f"{g}/author/batch", {}, {"ids": [ids["author"]]}, None),
        ("test_get_authors_not_found_warning.yaml", "POST", f"{g}/author/batch", {}, {"ids": [ids["author"], "0"]},
         None),
        ("test_get_recommended_papers_pool_from.yaml", "GET", f"/recommendations/v1/papers/forpaper/{ANCHOR}", {}, None,
         None),
        ("test_get_recommended_papers_from_lists.yaml", "POST", "/recommendations/v1/papers/", {},
         {"positivePaperIds": [ids["paper"]], "negativePaperIds": [ids["other"]]}, None),
        ("test_get_recommended_papers_from_lists_negative_only.yaml", "POST", "/recommendations/v1/papers/", {},
         {"positivePaperIds": [], "negativePaperIds": [ids["other"]]}, None),
        ("test_not_found.yaml", "GET", f"{g}/paper/0", {}, None, None),
        ("test_bad_query_parameters.yaml", "GET", f"{g}/paper/{ANCHOR}", {}, None, None),
    ]  # fmt: skip


def test_answers_have_the_recorded_shapes_and_the_specified_keys(emulator, fixtures, spec):
    emu, url = emulator
    ids = _ids(emu)
    checked = 0
    with httpx.Client(base_url=url, timeout=120) as client:
        for cassette, method, path, overrides, body, spec_ref in _cases(ids):
            query, status, real = recorded(fixtures, cassette)
            params = {**query, **overrides}
            r = client.request(method, path, params=params, json=body)
            assert r.status_code == status, f"{cassette}: HTTP {r.status_code} ({r.text[:200]}), recorded {status}"
            ours = r.json()
            assert_same_shape(ours, real, cassette)
            if spec_ref is not None:
                schema = response_schema(spec["graph"], *spec_ref)
                # the batch endpoint's schema describes one element of the array it answers
                items = ours if isinstance(ours, list) else [ours]
                problems = [p for item in items for p in check_schema(item, schema, spec["graph"])]
                assert not problems, f"{cassette} vs the specification:\n" + "\n".join(problems)
            checked += 1
    assert checked == len(_cases(ids))


def test_rich_nested_batch_fields_match_the_specification(emulator, spec):
    """The batch call pilot's citation expansion makes: references and citations nested in each paper."""
    _, url = emulator
    fields = ",".join(
        ["title", "year", "externalIds", "citationCount", "authors", "references.title", "references.abstract"]
        + ["references.authors", "citations.title", "citations.year"]
    )
    r = httpx.post(f"{url}/graph/v1/paper/batch", params={"fields": fields}, json={"ids": [ANCHOR, CITED]}, timeout=30)
    assert r.status_code == 200
    data = r.json()
    assert data[0]["references"] and data[1]["citations"]
    assert {"paperId", "title", "abstract", "authors"} == set(data[0]["references"][0])
    problems = []
    for record in data:
        problems += check_schema(record, response_schema(spec["graph"], "/paper/batch", "post"), spec["graph"])
    assert not problems, "\n".join(problems)


# --- documented limits ---------------------------------------------------------------------------------
def test_documented_limits_are_enforced(emulator):
    _, url = emulator
    with httpx.Client(base_url=url, timeout=30) as c:
        too_many = c.post("/graph/v1/paper/batch", json={"ids": [ANCHOR] * 501})
        assert too_many.status_code == 400 and "500" in too_many.json()["error"]
        assert c.post("/graph/v1/paper/batch", json={"ids": [ANCHOR] * 500}).status_code == 200
        assert c.get("/graph/v1/paper/search", params={"query": "parsing", "limit": 101}).status_code == 400
        deep = c.get("/graph/v1/paper/search", params={"query": "parsing", "offset": 950, "limit": 100})
        assert deep.status_code == 400 and "1000" in deep.json()["error"]
        assert c.get(f"/graph/v1/paper/{CITED}/citations", params={"limit": 1001}).status_code == 400
        assert c.get(f"/graph/v1/paper/{CITED}/citations", params={"limit": 1000}).status_code == 200
        bad = c.get(f"/graph/v1/paper/{ANCHOR}", params={"fields": "title,creditCardNumber"})
        assert bad.status_code == 400 and "creditCardNumber" in bad.json()["error"]
        page = c.get("/graph/v1/paper/search", params={"query": "parsing", "limit": 10}).json()
        assert page["offset"] == 0 and page["next"] == 10 and len(page["data"]) == 10


def test_bulk_search_pages_by_token_and_matches_the_boolean_query(local_source, monkeypatch):
    """/paper/search/bulk: every answer holds what matches the query (terms AND-ed, | or, - not, phrases),
    at most a page (1,000; 7 here) per answer, a token to continue and none after the last page."""
    from emulators import s2
    from pilot.sources.boolean import matcher

    monkeypatch.setattr(s2, "BULK_PAGE", 7)
    query = '(parsing | tagging) + -"dependency parsing"'
    test = matcher(query)
    with Running(S2Emulator(local_source)) as running, httpx.Client(base_url=running.url, timeout=60) as c:
        bulk = "/graph/v1/paper/search/bulk"
        params = {"query": query, "fields": "title,abstract,citationCount", "sort": "citationCount:desc"}
        first = c.get(bulk, params=params).json()
        assert first["total"] > 14 and len(first["data"]) == 7 and first["token"]
        seen, token, pages = [], None, 0
        while True:
            page = c.get(bulk, params={**params, **({"token": token} if token else {})}).json()
            seen += page["data"]
            pages += 1
            token = page["token"]
            if token is None:
                break
        assert len(seen) == first["total"] and pages == -(-first["total"] // 7)
        assert len({p["paperId"] for p in seen}) == len(seen)  # no paper twice across pages
        assert all(test(f"{p['title']}. {p.get('abstract') or ''}") for p in seen)
        counts = [p["citationCount"] for p in seen]
        assert counts == sorted(counts, reverse=True)
        assert not any("dependency parsing" in f"{p['title']} {p.get('abstract') or ''}".lower() for p in seen)
        for bad in ({"token": "NOTATOKEN"}, {"sort": "relevance"}, {"query": "(parsing"}, {"fields": "references"}):
            r = c.get(bulk, params={**params, **bad})
            assert r.status_code == 400 and r.json()["error"], bad


def test_nested_citations_over_the_cap_are_refused(local_source, monkeypatch):
    from emulators import s2

    monkeypatch.setattr(s2, "BATCH_CITATIONS", 5)
    with Running(S2Emulator(local_source)) as running:
        r = httpx.post(f"{running.url}/graph/v1/paper/batch", params={"fields": "citations"}, json={"ids": [CITED]})
    assert r.status_code == 400 and "exceed" in r.json()["error"]


def test_rate_limit_answers_429_with_retry_after_and_counts_it(local_source):
    emu = S2Emulator(local_source, limits=Limits(keyed=RateSpec(2, 1.0), anonymous=RateSpec(1, 60.0)))
    with Running(emu) as running, httpx.Client(base_url=running.url, timeout=30) as c:
        keyed = [c.get(f"/graph/v1/paper/{ANCHOR}", headers={"x-api-key": "k1"}).status_code for _ in range(3)]
        assert keyed == [200, 200, 429]
        other_key = c.get(f"/graph/v1/paper/{ANCHOR}", headers={"x-api-key": "k2"})
        assert other_key.status_code == 200  # each key has its own window
        assert c.get(f"/graph/v1/paper/{ANCHOR}").status_code == 200
        pool = c.get(f"/graph/v1/paper/{ANCHOR}")
        assert pool.status_code == 429 and 55 <= int(pool.headers["Retry-After"]) <= 60
        assert "Too Many Requests" in pool.json()["message"]
        stats = c.get("/_stats").json()
    assert stats["rate_limited"] == 2
    assert stats["requests"] == {"GET /graph/v1/paper/{paper_id}": 6}
    assert stats["total"] == 6 and stats["statuses"] == {"200": 4, "429": 2}
    assert "k1" not in json.dumps(stats)  # keys are never shown, only a hash


def test_injected_faults_and_runtime_changes(local_source):
    emu = S2Emulator(local_source, faults="503:1")
    with Running(emu) as running, httpx.Client(base_url=running.url, timeout=30) as c:
        assert c.get(f"/graph/v1/paper/{ANCHOR}").status_code == 503
        assert c.post("/_faults", json={"spec": "reset:1"}).status_code == 200
        with pytest.raises(httpx.TransportError):
            c.get(f"/graph/v1/paper/{ANCHOR}")
        c.post("/_faults", json={"spec": ""})
        assert c.get(f"/graph/v1/paper/{ANCHOR}").status_code == 200
        stats = c.get("/_stats").json()
    assert stats["faults"] == {"503": 1, "reset": 1}
    assert stats["total"] == 3


def test_fault_specs_are_validated():
    assert [str(f) for f in parse_faults("503:0.1, reset:0.05,slow=4000:0.2")] == [
        "503:0.1",
        "reset:0.05",
        "slow=4000:0.2",
    ]
    for bad in ("404:0.1", "503:2", "boom:0.1", "503"):
        with pytest.raises(ValueError):
            parse_faults(bad)
