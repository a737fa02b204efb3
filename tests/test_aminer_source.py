"""The AMiner adapter over real HTTP on 127.0.0.1.

The fixtures in ``tests/fixtures/aminer/`` are WRITTEN FROM THE DOCUMENTED RESPONSE SHAPES of the
AMiner open platform (envelope ``{code, success, msg, data, total}`` and each endpoint's fields), NOT
recorded: no recorded AMiner responses exist here. They test the adapter's mapping, headers, id
handling and errors; a change in the live API's shapes would not be caught by them.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from pilot.models import SearchFilters
from pilot.settings import Settings
from pilot.sources.aminer import AMinerSource
from pilot.sources.base import BadRequest, NotFound, NotSupported, RateLimited, SourceUnavailable
from tests.http_replay import ReplayServer, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "aminer"
TOKEN = "test-aminer-token-abcdef"
PREFIX = "/gateway/open_platform"
MACHINERY = "53e99784b7602d9701f3e4a4"
DID = "53e9a8a5b7602d97031f2aa6"
TURING = "53f466fadabfaec09f24b1c7"
MANCHESTER = "5f71b2bd1c455f439fe3e0c8"
MIND = "5ea1b22bedb6e7d53c00d1a9"


def fixture(name: str) -> Reply:
    return Reply.json(200, json.loads((FIXTURES / name).read_text(encoding="utf-8")))


def add_aminer_fixtures(server: ReplayServer) -> ReplayServer:
    """Route every documented endpoint the adapter uses to its written-from-docs fixture."""
    routes = [
        ("GET", "/api/paper/list/by/search/venue", "paper_search_turing.json", {"keyword": "turing"}),
        ("GET", "/api/paper/detail", "paper_detail_machinery.json", {"id": MACHINERY}),
        ("GET", "/api/paper/detail", "paper_detail_did.json", {"id": DID}),
        ("GET", "/api/paper/relation", "paper_relation_machinery.json", {"id": MACHINERY}),
        ("POST", "/api/person/search", "person_search_turing.json", None),
        ("GET", "/api/person/detail", "person_detail_turing.json", {"id": TURING}),
        ("GET", "/api/person/paper/relation", "person_papers_turing.json", {"id": TURING}),
        ("POST", "/api/organization/search", "org_search_manchester.json", None),
        ("POST", "/api/organization/detail", "org_detail_manchester.json", None),
        ("GET", "/api/organization/person/relation", "org_persons_manchester.json", {"org_id": MANCHESTER}),
        ("POST", "/api/venue/search", "venue_search_mind.json", None),
        ("POST", "/api/venue/detail", "venue_detail_mind.json", None),
    ]
    for method, path, name, query in routes:
        server.add(method, PREFIX + path, fixture(name), query=query)
    # An id the platform does not know: a successful envelope with no data.
    server.add("GET", PREFIX + "/api/paper/detail", fixture("paper_detail_missing.json"))
    return server


def aminer_settings(base: str, cache_dir: Path, token: str | None = TOKEN) -> Settings:
    return Settings(
        _env_file=None,
        aminer_base_url=base + PREFIX,
        aminer_token=SecretStr(token) if token else None,
        cache_dir=cache_dir,
        connect_timeout_s=1.0,
        http_timeout_s=5.0,
    )


@pytest.fixture
async def aminer(tmp_path: Path):
    with add_aminer_fixtures(ReplayServer()) as server:
        src = AMinerSource(aminer_settings(server.url, tmp_path), backoff_s=0.01)
        yield server, src
        await src.aclose()


async def test_without_a_token_says_what_to_set(tmp_path):
    with add_aminer_fixtures(ReplayServer()) as server:
        src = AMinerSource(aminer_settings(server.url, tmp_path, token=None))
        with pytest.raises(SourceUnavailable) as err:
            await src.search_papers("turing")
        assert "PILOT_AMINER_TOKEN" in (err.value.hint or "")
        assert server.requests == []


async def test_search_maps_papers_and_sends_the_token(aminer):
    server, src = aminer
    hits = await src.search_papers("turing", limit=10)
    assert [h.paper.title for h in hits][:2] == [
        "Neural Turing Machines",
        "On Computable Numbers, with an Application to the Entscheidungsproblem",
    ]
    ntm = hits[0].paper
    assert ntm.id == "aminer:5550415d45ce0a409eb3a8a1"
    assert ntm.canonical_url == "https://www.aminer.cn/pub/5550415d45ce0a409eb3a8a1"
    assert ntm.year == 2014 and ntm.citation_count == 2810 and ntm.abstract
    assert ntm.venue == "arXiv: Neural and Evolutionary Computing"
    assert ntm.authors[0].id == "aminer:53f4676fdabfaee0d9c2ee11"
    assert ntm.authors[0].url == "https://www.aminer.cn/profile/53f4676fdabfaee0d9c2ee11"
    assert ntm.authors[0].affiliation == "Google DeepMind"
    assert ntm.authors[2].id is None  # an author without an AMiner id keeps its name only
    req = server.requests[-1]
    assert req.headers["authorization"] == TOKEN
    assert req.query == {"keyword": "turing", "page": "0", "size": "10"}


async def test_search_applies_filters_to_what_the_endpoint_returns(aminer):
    _, src = aminer
    hits = await src.search_papers("turing", filters=SearchFilters(year_min=1930, year_max=1960))
    assert [h.paper.year for h in hits] == [1937, 1950]
    hits = await src.search_papers("turing", filters=SearchFilters(venue="mind"))
    assert [h.paper.title for h in hits] == ["Computing Machinery and Intelligence"]


async def test_paper_detail_batch_and_unknown_ids(aminer):
    server, src = aminer
    paper = await src.get_paper(f"aminer:{MACHINERY}")
    assert paper.title == "Computing Machinery and Intelligence"
    assert paper.doi == "10.1093/mind/LIX.236.433" and paper.venue == "Mind" and paper.year == 1950
    papers = await src.get_papers([f"aminer:{DID}", "aminer:000000000000000000000000", "s2:abc", f"aminer:{MACHINERY}"])
    assert [p.id for p in papers] == [f"aminer:{DID}", f"aminer:{MACHINERY}"]
    assert all(r.query.get("id") != "s2:abc" for r in server.requests)
    with pytest.raises(NotFound):
        await src.get_paper("aminer:000000000000000000000000")
    with pytest.raises(BadRequest):
        await src.get_paper("acl:P02-1040")


async def test_references_come_from_the_relation_endpoint(aminer):
    _, src = aminer
    refs = await src.references(f"aminer:{MACHINERY}")
    assert [r.title for r in refs][0] == "On Computable Numbers, with an Application to the Entscheidungsproblem"
    assert len(refs) == 3 and all(r.id.startswith("aminer:") for r in refs)
    assert (await src.references(f"aminer:{MACHINERY}", limit=1))[0].citation_count == 9600
    with pytest.raises(NotSupported):
        await src.citations(f"aminer:{MACHINERY}")
    with pytest.raises(NotSupported):
        await src.recommend([f"aminer:{MACHINERY}"])


async def test_people(aminer):
    server, src = aminer
    people = await src.search_authors("Turing", limit=5)
    assert [a.name for a in people] == ["Alan M. Turing", "Dermot Turing"]
    assert people[0].affiliation == "University of Manchester" and people[0].topics == [
        "computability",
        "artificial intelligence",
    ]
    assert people[0].url == f"https://www.aminer.cn/profile/{TURING}"
    assert server.requests[-1].body == {"name": "Turing", "offset": 0, "size": 5}
    detail = await src.get_author(f"aminer:{TURING}")
    assert detail.h_index == 23 and detail.paper_count == 74 and detail.orgs[0] == "University of Manchester"
    papers = await src.author_papers(TURING, limit=2)
    assert [p.title for p in papers] == [
        "Computing Machinery and Intelligence",
        "On Computable Numbers, with an Application to the Entscheidungsproblem",
    ]


async def test_organisations_and_venues(aminer):
    server, src = aminer
    orgs = await src.search_orgs("Manchester")
    assert orgs[0].id == f"aminer:{MANCHESTER}" and orgs[0].url == f"https://www.aminer.cn/institution/{MANCHESTER}"
    assert server.requests[-1].body == {"orgs": ["Manchester"]}
    org = await src.get_org(orgs[0].id)
    assert org.name == "University of Manchester"
    assert server.requests[-1].body == {"ids": [MANCHESTER]}
    staff = await src.org_authors(orgs[0].id)
    assert [a.name for a in staff] == ["Alan M. Turing", "Tom Kilburn"]
    venues = await src.search_venues("Mind")
    assert [v.name for v in venues] == ["Mind", "Mind & Language"]
    venue = await src.get_venue(venues[0].id)
    assert venue.name == "Mind" and venue.url == f"https://www.aminer.cn/open/journal/detail/{MIND}"


async def test_rejected_token_is_reported_with_the_setting(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    with ReplayServer() as server:
        server.add("POST", PREFIX + "/api/person/search", fixture("token_invalid.json"))
        server.add("POST", PREFIX + "/api/venue/search", Reply.json(401, {"code": 401, "msg": "unauthorized"}))
        src = AMinerSource(aminer_settings(server.url, tmp_path))
        with pytest.raises(SourceUnavailable, match="token is invalid") as err:
            await src.search_authors("turing")
        assert "PILOT_AMINER_TOKEN" in (err.value.hint or "")
        with pytest.raises(SourceUnavailable) as err:
            await src.search_venues("mind")
        assert "PILOT_AMINER_TOKEN" in (err.value.hint or "")
        await src.aclose()
    assert TOKEN not in caplog.text


async def test_429_is_retried_then_rate_limited(tmp_path):
    with add_aminer_fixtures(ReplayServer()) as server:
        path = PREFIX + "/api/venue/search"
        server.script("POST", path, [Reply.json(429, {"msg": "too many requests"}, {"Retry-After": "0"})])
        src = AMinerSource(aminer_settings(server.url, tmp_path), backoff_s=0.01, max_retries=1)
        assert (await src.search_venues("mind"))[0].name == "Mind"
        server.script("POST", PREFIX + "/api/venue/detail", [Reply.json(429, {}, {"Retry-After": "0"})] * 3)
        with pytest.raises(RateLimited):
            await src.get_venue(MIND)
        await src.aclose()


async def test_bad_input(aminer):
    server, src = aminer
    with pytest.raises(BadRequest):
        await src.search_papers("  ")
    with pytest.raises(BadRequest):
        await src.get_author("author:alan-turing")
    assert server.requests == []
