"""The Semantic Scholar adapter against recorded real S2 responses, replayed over HTTP on 127.0.0.1.

The cassettes in ``../shared/fixtures/semanticscholar/`` were recorded from the live API by the
``semanticscholar`` package's own tests; the adapter requests richer fields than they did, so the
replay server matches on method + path (+ paging parameters), and the assertions check what users
see: ids, titles, URLs, paging, typed errors, retries, and that the API key is sent but never logged.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from cache import Cache
from pilot.models import SearchFilters
from pilot.settings import Settings
from pilot.sources.base import BadRequest, NotFound, RateLimited, SourceUnavailable
from pilot.sources.s2 import SemanticScholarSource, parse_s2_id
from tests.http_replay import ReplayServer, Reply, SilentServer

API_KEY = "test-s2-key-0123456789"


@pytest.fixture(scope="module")
def cassettes(shared: Path) -> Path:
    return shared / "fixtures" / "semanticscholar"


def make_settings(base: str, cache_dir: Path, key: str | None = API_KEY) -> Settings:
    return Settings(
        _env_file=None,
        s2_base_url=f"{base}/graph/v1",
        s2_recommendations_url=f"{base}/recommendations/v1",
        cache_dir=cache_dir,
        s2_api_key=SecretStr(key) if key else None,
        # a loaded CI machine once took over 1 s to accept a loopback connection; a refused one fails at once anyway
        connect_timeout_s=5.0,
        http_timeout_s=5.0,
    )


@pytest.fixture
async def replay(cassettes: Path, tmp_path: Path):
    """replay("test_x.yaml", ...) -> (server, source) with a fresh cache per test."""
    opened: list[tuple[ReplayServer, SemanticScholarSource]] = []

    def start(*names: str, **source_kw) -> tuple[ReplayServer, SemanticScholarSource]:
        server = ReplayServer()
        for n in names:
            server.add_cassette(cassettes / n)
        server.__enter__()
        source_kw.setdefault("backoff_s", 0.01)
        src = SemanticScholarSource(make_settings(server.url, tmp_path / f"cache{len(opened)}"), **source_kw)
        opened.append((server, src))
        return server, src

    yield start
    for server, src in opened:
        await src.aclose()
        server.__exit__(None, None, None)


async def test_search_maps_recorded_results_to_papers(replay):
    server, s2 = replay("test_search_paper.yaml")
    hits = await s2.search_papers("turing", limit=10)
    assert len(hits) == 10
    first = hits[0].paper
    assert first.id == "s2:7cbc2a7843411a1768ab762930707af0a3c33a19"
    assert first.title.startswith("Using DeepSpeed and Megatron")
    assert first.canonical_url == "https://www.semanticscholar.org/paper/7cbc2a7843411a1768ab762930707af0a3c33a19"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    req = server.requests[-1]
    assert req.path == "/graph/v1/paper/search"
    assert req.query["query"] == "turing" and req.query["limit"] == "10"
    assert req.headers["x-api-key"] == API_KEY
    await s2.aclose()


async def test_search_sends_filters_and_escapes_the_query(replay):
    server, s2 = replay("test_search_paper.yaml")
    f = SearchFilters(year_min=2019, year_max=2021, venue="ACL", min_citations=5, fields_of_study=["Computer Science"])
    await s2.search_papers("turing & church #1", filters=f, limit=5)
    q = server.requests[-1].query
    assert q["query"] == "turing & church #1"
    assert q["year"] == "2019-2021" and q["venue"] == "ACL" and q["minCitationCount"] == "5"
    assert q["fieldsOfStudy"] == "Computer Science"


async def test_every_mode_is_a_ranked_relevance_search(replay):
    """The bulk endpoint returns its matches unranked: a keyword search must not take the top 30 of those."""
    server, s2 = replay("test_search_paper_with_relevance_and_sort.yaml", "test_search_paper_bulk_retrieval.yaml")
    hits = await s2.search_papers("kubernetes", limit=30, mode="lexical")
    assert len(hits) == 30
    assert [r.path for r in server.requests] == ["/graph/v1/paper/search"]


async def test_get_paper_by_doi(replay):
    server, s2 = replay("test_get_paper.yaml")
    paper = await s2.get_paper("DOI:10.1093/mind/lix.236.433")
    assert paper.title == "Computing Machinery and Intelligence"
    assert paper.id == "s2:2d5673caa9e6af3a7b82a43f19ee920992db07ad"
    assert server.requests[-1].path == "/graph/v1/paper/10.1093/mind/lix.236.433"


async def test_batch_papers_maps_ids_authors_and_skips_unknown(replay):
    server, s2 = replay("test_get_papers_return_not_found.yaml")
    ids = ["CorpusId:211530585", "CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"]
    papers = await s2.get_papers(ids + ["aminer:53e9ab9bb7602d97023e53b2"])
    # The first id is unknown to S2 (null in the response); the AMiner id is never sent to S2.
    assert len(papers) == 3
    assert server.requests[-1].body == {"ids": ids}
    did = papers[0]
    assert did.title == "How Much Should We Trust Differences-in-Differences Estimates?"
    assert did.external_ids["DOI"] == "10.2139/ssrn.288970" and did.external_ids["CorpusId"] == "470667"
    assert did.doi == "10.2139/ssrn.288970"
    assert did.abstract and did.year
    assert did.authors and all(a.id and a.id.startswith("s2:") for a in did.authors)
    assert did.authors[0].url == f"https://www.semanticscholar.org/author/{did.authors[0].id[3:]}"


async def test_references_of_a_paper(replay):
    server, s2 = replay("test_get_paper_references.yaml")
    refs = await s2.references("doi:10.2139/ssrn.2250500", limit=50)
    # 10 of the 50 recorded references are unresolved stubs (paperId null): left out, not crashed on.
    assert len(refs) == 40 and all(p.id.startswith("s2:") and p.title for p in refs)
    assert refs[0].id == "s2:e945ca4fdcf45b1a118f1462db7afa12629a131f"
    assert refs[0].title.startswith("Group lending or individual lending?")
    assert server.requests[-1].path == "/graph/v1/paper/10.2139/ssrn.2250500/references"


async def test_citations_page_through_results(replay):
    server, s2 = replay("test_get_paper_citations.yaml", graph_page=100)  # recorded in pages of 100
    cites = await s2.citations("CorpusId:14514057", limit=250)
    assert len(cites) == 250
    assert len({p.id for p in cites}) == 250
    assert [r.query["offset"] for r in server.requests] == ["0", "100", "200"]
    assert cites[0].title.startswith("We\u2019ve got you covered!")


async def test_recommendations_for_one_and_for_lists(replay):
    server, s2 = replay("test_get_recommended_papers_pool_from.yaml", "test_get_recommended_papers_from_lists.yaml")
    one = await s2.recommend(["10.2139/ssrn.2250500"], limit=20)
    assert len(one) == 20 and all(p.id.startswith("s2:") for p in one)
    assert server.requests[-1].path == "/recommendations/v1/papers/forpaper/10.2139/ssrn.2250500"
    assert server.requests[-1].query["from"] == "all-cs"
    lists = await s2.recommend(["10.1145/3544585.3544600"], ["10.1145/301250.301271"], limit=100)
    assert lists and lists[0].title
    assert server.requests[-1].body == {
        "positivePaperIds": ["10.1145/3544585.3544600"],
        "negativePaperIds": ["10.1145/301250.301271"],
    }


async def test_recommendations_need_a_positive_paper(replay):
    server, s2 = replay("test_get_recommended_papers_from_lists_negative_only.yaml")
    with pytest.raises(BadRequest):
        await s2.recommend([], ["10.1145/3544585.3544600"])
    assert server.requests == []


async def test_author_search_detail_and_papers(replay):
    server, s2 = replay("test_search_author.yaml", "test_get_author.yaml", "test_get_author_papers.yaml")
    authors = await s2.search_authors("turing", limit=5)
    assert [a.name for a in authors][:2] == ["A. Turing", "J. Turing"]
    assert authors[0].id == "s2:2262347" and authors[0].url == "https://www.semanticscholar.org/author/2262347"
    author = await s2.get_author("s2:2262347")
    assert author.name == "A. Turing"
    papers = await s2.author_papers("1723755", limit=150)
    assert len(papers) == 150 and len({p.id for p in papers}) == 150


async def test_venue_and_org_are_not_supported(replay):
    from pilot.sources.base import NotSupported

    _, s2 = replay()
    with pytest.raises(NotSupported):
        await s2.search_venues("ACL")
    with pytest.raises(NotSupported):
        await s2.get_org("x")


async def test_not_found_is_typed(replay):
    _, s2 = replay("test_not_found.yaml")
    with pytest.raises(NotFound, match="Author with id 0 not found"):
        await s2.get_author("0")
    # A paper id the recording has never seen gets the replay server's S2-style 404.
    with pytest.raises(NotFound):
        await s2.get_paper("CorpusId:999999999")
    assert await s2.match_paper("CorpusId:999999999") == []


async def test_bad_parameters_are_typed(replay):
    _, s2 = replay("test_bad_query_parameters.yaml")
    with pytest.raises(BadRequest, match="Unrecognized or unsupported fields"):
        await s2.get_paper("10.1093/mind/lix.236.433")


async def test_bad_input_is_refused_before_any_request(replay):
    server, s2 = replay("test_search_paper.yaml")
    with pytest.raises(BadRequest):
        await s2.search_papers("   ")
    with pytest.raises(BadRequest):
        await s2.get_paper("not an id at all")
    with pytest.raises(BadRequest):
        await s2.get_author("s2:abc")
    assert server.requests == []
    await s2.search_papers("turing " * 2000, limit=3)  # 14,000 characters: cut, not refused
    assert len(server.requests[-1].query["query"]) <= 1000


async def test_429_then_success_retries_and_honours_retry_after(replay):
    server, s2 = replay("test_get_paper.yaml")
    path = "/graph/v1/paper/10.1093/mind/lix.236.433"
    server.script(
        "GET", path, [Reply.json(429, {"message": "Too Many Requests"}, {"Retry-After": "0"}), Reply.json(429, {})]
    )
    paper = await s2.get_paper("10.1093/mind/lix.236.433")
    assert paper.title == "Computing Machinery and Intelligence"
    assert len(server.requests) == 3


async def test_429_forever_raises_rate_limited(replay):
    server, s2 = replay("test_get_paper.yaml", max_retries=2)
    path = "/graph/v1/paper/10.1093/mind/lix.236.433"
    server.script("GET", path, [Reply.json(429, {}, {"Retry-After": "0"})] * 10)
    with pytest.raises(RateLimited) as err:
        await s2.get_paper("10.1093/mind/lix.236.433")
    assert err.value.retry_after == 0
    assert len(server.requests) == 3


async def test_long_retry_after_is_not_slept_through(replay):
    server, s2 = replay("test_get_paper.yaml", max_wait_s=5)
    server.script("GET", "/graph/v1/paper/10.1093/mind/lix.236.433", [Reply.json(429, {}, {"Retry-After": "3600"})])
    with pytest.raises(RateLimited) as err:
        await s2.get_paper("10.1093/mind/lix.236.433")
    assert err.value.retry_after == 3600 and len(server.requests) == 1


async def test_5xx_forever_is_unavailable(replay):
    server, s2 = replay("test_get_paper.yaml", max_retries=1)
    server.script("GET", "/graph/v1/paper/10.1093/mind/lix.236.433", [Reply.json(503, {"message": "down"})] * 5)
    with pytest.raises(SourceUnavailable, match="HTTP 503"):
        await s2.get_paper("10.1093/mind/lix.236.433")
    assert len(server.requests) == 2


async def test_dead_port_fails_fast_with_a_hint(tmp_path):
    with ReplayServer() as server:
        dead = server.url  # the port is closed once the server stops
    s2 = SemanticScholarSource(make_settings(dead, tmp_path))
    started = time.monotonic()
    with pytest.raises(SourceUnavailable) as err:
        await s2.search_papers("turing")
    assert "PILOT_CORPUS" in (err.value.hint or "")
    assert time.monotonic() - started < 5  # a refused connection is not retried for minutes
    await s2.aclose()


async def test_hung_server_times_out_as_unavailable(tmp_path):
    with SilentServer() as silent:
        settings = make_settings(silent.url, tmp_path).model_copy(update={"http_timeout_s": 0.5})
        s2 = SemanticScholarSource(settings)
        with pytest.raises(SourceUnavailable, match="did not answer in time"):
            await s2.get_paper("CorpusId:470667")
        await s2.aclose()


async def test_api_key_is_never_logged(replay, caplog):
    caplog.set_level(logging.DEBUG)
    server, s2 = replay("test_search_paper.yaml", "test_not_found.yaml")
    await s2.search_papers("turing", limit=3)
    with pytest.raises(NotFound) as err:
        await s2.get_author("0")
    assert server.requests[0].headers["x-api-key"] == API_KEY
    assert API_KEY not in caplog.text
    assert API_KEY not in str(err.value)
    assert API_KEY not in repr(s2.__dict__)


async def test_responses_are_cached(replay):
    server, s2 = replay("test_search_paper.yaml")
    first = await s2.search_papers("turing", limit=5)
    again = await s2.search_papers("turing", limit=5)
    assert [h.paper.id for h in again] == [h.paper.id for h in first]
    assert len(server.requests) == 1


async def test_a_corrupt_cache_is_moved_aside_and_rebuilt(cassettes, tmp_path, caplog):
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "cache.db").write_bytes(b"this is not sqlite" * 100)
    with ReplayServer().add_cassette(cassettes / "test_search_paper.yaml") as server:
        settings = make_settings(server.url, tmp_path)
        s2 = SemanticScholarSource(settings, cache=Cache(tmp_path, "api", ttl_s=60))
        hits = await s2.search_papers("turing", limit=3)
        assert len(hits) == 3
        sent = len(server.requests)
        assert len(await s2.search_papers("turing", limit=3)) == 3
        assert len(server.requests) == sent  # the rebuilt cache works: the same search is not sent again
        await s2.aclose()
    assert "moved aside" in caplog.text
    # the damaged file is kept beside it for the operator, never read again
    assert [p.read_bytes()[:18] for p in tmp_path.glob("api.damaged-*/cache.db")] == [b"this is not sqlite"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("s2:2d5673caa9e6af3a7b82a43f19ee920992db07ad", "2d5673caa9e6af3a7b82a43f19ee920992db07ad"),
        ("2D5673CAA9E6AF3A7B82A43F19EE920992DB07AD", "2d5673caa9e6af3a7b82a43f19ee920992db07ad"),
        ("DOI:10.1093/mind/lix.236.433", "10.1093/mind/lix.236.433"),
        ("10.18653/v1/N19-1423", "10.18653/v1/N19-1423"),
        ("https://doi.org/10.18653/v1/N19-1423", "10.18653/v1/N19-1423"),
        ("arXiv:1810.04805", "ARXIV:1810.04805"),
        ("ARXIV:1810.04805v2", "ARXIV:1810.04805v2"),
        ("1810.04805", "ARXIV:1810.04805"),
        ("https://arxiv.org/abs/1810.04805", "ARXIV:1810.04805"),
        ("CorpusId:470667", "CorpusId:470667"),
        ("corpusid:470667", "CorpusId:470667"),
        ("s2:470667", "CorpusId:470667"),
        ("acl:P02-1040", "ACL:P02-1040"),
        (
            "https://www.semanticscholar.org/paper/Computing-Machinery/2d5673caa9e6af3a7b82a43f19ee920992db07ad",
            "2d5673caa9e6af3a7b82a43f19ee920992db07ad",
        ),
        ("attention is all you need", None),
        ("aminer:53e9ab9bb7602d97023e53b2", None),
        ("CorpusId:abc", None),
        ("", None),
    ],
)
def test_user_ids_resolve_to_s2_ids(text, expected):
    assert parse_s2_id(text) == expected


async def test_empty_results_end_the_search(replay):
    server, s2 = replay("test_empty_paginated_results.yaml")
    assert await s2.search_papers("n0 r3sult s3arch t3rm", limit=10) == []
    assert len(server.requests) == 1


async def test_batch_with_no_valid_id_is_an_empty_list(replay):
    server, s2 = replay()
    server.script("POST", "/graph/v1/paper/batch", [Reply.json(400, {"error": "No valid paper ids given"})])
    assert await s2.get_papers(["CorpusId:0"]) == []
    assert await s2.get_papers([]) == [] and len(server.requests) == 1
