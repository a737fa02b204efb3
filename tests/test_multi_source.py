"""Several sources behind one, and the factory that opens them, over two real loopback servers:
Semantic Scholar replaying recorded responses, and AMiner serving fixtures written from its
documented response shapes (see ``tests/test_aminer_source.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from pilot.settings import Settings
from pilot.sources.aminer import AMinerSource
from pilot.sources.base import BadRequest, NotSupported, SourceUnavailable
from pilot.sources.factory import UnavailableSource, clear_probe_cache, open_source
from pilot.sources.multi import MultiSource, fuse
from pilot.sources.s2 import SemanticScholarSource
from tests.http_replay import ReplayServer, SilentServer
from tests.test_aminer_source import DID, MACHINERY, PREFIX, TOKEN, add_aminer_fixtures

S2_CASSETTES = (
    "test_search_paper.yaml",
    "test_get_papers_return_not_found.yaml",
    "test_search_author.yaml",
    "test_get_author.yaml",
    "test_get_recommended_papers_pool_from.yaml",
)
NTM_S2 = "c1126fbffd6b8547a44c58b192b36b08b18299de"
DID_S2 = "c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce"


def settings_for(s2_url: str, aminer_url: str, cache_dir: Path, **kw) -> Settings:
    values = dict(
        _env_file=None,
        s2_base_url=f"{s2_url}/graph/v1",
        s2_recommendations_url=f"{s2_url}/recommendations/v1",
        aminer_base_url=aminer_url + PREFIX,
        aminer_token=SecretStr(TOKEN),
        cache_dir=cache_dir,
        connect_timeout_s=5.0,  # a loaded machine once took over 1 s to accept a loopback connection
        http_timeout_s=5.0,
    )
    values.update(kw)
    return Settings(**values)


@pytest.fixture
def servers(shared: Path):
    cassettes = shared / "fixtures" / "semanticscholar"
    s2 = ReplayServer()
    for name in S2_CASSETTES:
        s2.add_cassette(cassettes / name)
    with s2, add_aminer_fixtures(ReplayServer()) as aminer:
        yield s2, aminer


@pytest.fixture
async def multi(servers, tmp_path: Path):
    s2_server, aminer_server = servers
    settings = settings_for(s2_server.url, aminer_server.url, tmp_path)
    src = MultiSource([SemanticScholarSource(settings, backoff_s=0.01), AMinerSource(settings, backoff_s=0.01)])
    yield src
    await src.aclose()


def dead_url() -> str:
    with ReplayServer() as server:
        return server.url


async def test_search_merges_duplicates_across_sources_and_keeps_the_best_rank(multi):
    hits = await multi.search_papers("turing", limit=20)
    titles = [h.paper.title for h in hits]
    assert len(hits) == 20
    # Found by both: S2 ranks it 5th, AMiner 1st; it appears once, at the top, with both ids.
    ntm = [h.paper for h in hits if h.paper.title == "Neural Turing Machines"]
    assert len(ntm) == 1 and hits[0].paper.title == "Neural Turing Machines"
    assert ntm[0].external_ids["S2"] == NTM_S2 and ntm[0].abstract and ntm[0].year == 2014
    # "Attention is Turing-Complete" (S2) and "Attention is Turing Complete" (AMiner): one paper.
    assert sum("attention is turing" in t.lower() for t in titles) == 1
    assert "On Computable Numbers, with an Application to the Entscheidungsproblem" in titles
    assert (
        "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B, A Large-Scale Generative Language Model"
        in titles
    )
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert multi.last_failures == []


async def test_doi_links_copies_whose_titles_differ(multi):
    s2, aminer = multi.sources
    s2_copy = (await s2.get_papers([f"s2:{DID_S2}"]))[0]
    aminer_copy = await aminer.get_paper(f"aminer:{DID}")
    assert s2_copy.title != aminer_copy.title  # "Differences-in-Differences" vs "Difference-in-Differences"
    merged = fuse([("s2", [s2_copy]), ("aminer", [aminer_copy])])
    assert len(merged) == 1
    paper, best_rank, n_sources = merged[0]
    assert (best_rank, n_sources) == (0, 2)
    assert paper.id == f"s2:{DID_S2}" and paper.external_ids["AMiner"] == DID


def test_same_title_far_apart_in_time_is_not_merged():
    from pilot.models import Paper

    a = Paper(id="s2:a", title="A Survey of Machine Translation Evaluation", year=1995, source="s2")
    b = Paper(id="aminer:b", title="A survey of machine translation evaluation", year=2019, source="aminer")
    c = Paper(id="aminer:c", title="Introduction", source="aminer")
    d = Paper(id="s2:d", title="Introduction", source="s2")
    assert len(fuse([("s2", [a, d]), ("aminer", [b, c])])) == 4


async def test_one_failing_source_does_not_sink_the_search(servers, tmp_path):
    s2_server, _ = servers
    settings = settings_for(s2_server.url, dead_url(), tmp_path)
    multi = MultiSource([SemanticScholarSource(settings), AMinerSource(settings)])
    hits = await multi.search_papers("turing", limit=10)
    assert len(hits) == 10 and all(h.paper.source == "s2" for h in hits)
    assert [f.source for f in multi.last_failures] == ["aminer"]
    await multi.aclose()


async def test_all_sources_failing_raises_the_most_useful_error(tmp_path):
    dead = dead_url()
    settings = settings_for(dead, dead, tmp_path)
    multi = MultiSource([SemanticScholarSource(settings), AMinerSource(settings)])
    with pytest.raises(SourceUnavailable) as err:
        await multi.search_papers("turing")
    assert err.value.hint
    with pytest.raises(BadRequest):
        await multi.search_papers("   ")
    await multi.aclose()


async def test_ids_are_routed_to_the_source_that_owns_them(multi, servers):
    s2_server, aminer_server = servers
    papers = await multi.get_papers([f"s2:{DID_S2}", f"aminer:{DID}", "CorpusId:470667", "pc:nips2017:123"])
    # CorpusId:470667 is the same S2 paper as the first id; the corpus id has no source here.
    assert [p.id for p in papers] == [f"s2:{DID_S2}", f"aminer:{DID}"]
    assert s2_server.requests[-1].path == "/graph/v1/paper/batch"
    assert aminer_server.requests[-1].query == {"id": DID}
    paper = await multi.get_paper(f"aminer:{MACHINERY}")
    assert paper.title == "Computing Machinery and Intelligence"
    refs = await multi.references(f"aminer:{MACHINERY}")
    assert len(refs) == 3
    with pytest.raises(NotSupported):
        await multi.citations(f"aminer:{MACHINERY}")
    assert (await multi.get_author("s2:2262347")).name == "A. Turing"
    with pytest.raises(NotSupported, match="PILOT_CORPUS"):
        await multi.get_author("author:alan-turing")


async def test_entity_search_interleaves_sources(multi):
    authors = await multi.search_authors("turing", limit=4)
    assert [(a.source, a.name) for a in authors] == [
        ("s2", "A. Turing"),
        ("aminer", "Alan M. Turing"),
        ("s2", "J. Turing"),
        ("aminer", "Dermot Turing"),
    ]
    venues = await multi.search_venues("mind")  # S2 has no venue search: AMiner answers alone
    assert venues[0].name == "Mind"
    assert multi.last_failures == []


async def test_recommend_with_ids_from_two_sources(multi):
    recs = await multi.recommend(["10.2139/ssrn.2250500", f"aminer:{MACHINERY}"], limit=10)
    # AMiner has no recommendations; S2's answer stands.
    assert len(recs) == 10 and all(p.source == "s2" for p in recs)
    with pytest.raises(BadRequest):
        await multi.recommend([])


# --- factory -----------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def fresh_probes():
    clear_probe_cache()
    yield
    clear_probe_cache()


async def test_factory_with_nothing_reachable_still_gives_a_source_that_says_what_to_set(tmp_path):
    dead = dead_url()
    settings = settings_for(dead, dead, tmp_path, aminer_token=None)
    started = time.monotonic()
    source, notes = open_source(settings)
    assert time.monotonic() - started < 5  # a refused connection is one quick probe, not a hang
    assert isinstance(source, UnavailableSource)
    assert any("Semantic Scholar unreachable" in n and "PILOT_CORPUS" in n for n in notes)
    for call in (source.search_papers("turing"), source.get_paper("s2:x"), source.search_orgs("mit")):
        with pytest.raises(SourceUnavailable) as err:
            await call
        assert "PILOT_CORPUS" in (err.value.hint or "")


async def test_factory_keeps_a_service_that_connects_but_answers_slowly_and_does_not_hang(tmp_path):
    # A service that accepts the connection but has not answered the probe's search yet (a cold index, a long
    # queue at 1 request/s) is slow, not gone: calling it unreachable would turn every search of the session away.
    with SilentServer() as silent:
        settings = settings_for(silent.url, silent.url, tmp_path, aminer_token=None, connect_timeout_s=0.5,
                                http_timeout_s=1.0)  # fmt: skip
        started = time.monotonic()
        source, notes = open_source(settings)
        # bounded by the probe's deadline, not by the server (which never answers); the bound leaves room for a
        # loaded machine (10 s seen while other test runs shared its two cores), far below a hang
        assert time.monotonic() - started < 20
        assert isinstance(source, SemanticScholarSource)
        assert not any("unreachable" in n for n in notes)
        # a search it never answers fails with a sentence, within the request timeout
        with pytest.raises(SourceUnavailable, match="did not answer in time"):
            await source.search_papers("turing")
        await source.aclose()


async def test_factory_probes_once_and_remembers_the_verdict(servers, tmp_path):
    s2_server, aminer_server = servers
    settings = settings_for(s2_server.url, aminer_server.url, tmp_path, aminer_token=None)
    source, notes = open_source(settings)
    assert isinstance(source, SemanticScholarSource) and notes == []
    probes = len(s2_server.requests)
    assert probes == 1
    open_source(settings)  # remembered in the process
    clear_probe_cache()
    open_source(settings)  # remembered on disk
    assert len(s2_server.requests) == probes
    assert len(await source.search_papers("turing", limit=3)) == 3
    await source.aclose()


async def test_factory_opens_several_sources_as_one(servers, tmp_path):
    s2_server, aminer_server = servers
    settings = settings_for(s2_server.url, aminer_server.url, tmp_path, sources="s2,aminer,nonsense")
    source, notes = open_source(settings)
    assert isinstance(source, MultiSource)
    assert [s.name for s in source.sources] == ["s2", "aminer"]
    assert any("nonsense" in n for n in notes)
    assert TOKEN not in " ".join(notes)
    await source.aclose()


def test_factory_explains_missing_corpus_and_token(tmp_path):
    dead = dead_url()
    settings = settings_for(
        dead, dead, tmp_path, sources="local,aminer", corpus=tmp_path / "missing.jsonl.gz", aminer_token=None
    )
    source, notes = open_source(settings)
    assert isinstance(source, UnavailableSource)
    assert any("missing.jsonl.gz" in n and "PILOT_CORPUS" in n for n in notes)
    assert any("PILOT_AMINER_TOKEN" in n for n in notes)


async def test_batch_lookup_reports_an_unreachable_owner(servers, tmp_path):
    s2_server, _ = servers
    settings = settings_for(s2_server.url, dead_url(), tmp_path)
    multi = MultiSource([SemanticScholarSource(settings), AMinerSource(settings)])
    papers = await multi.get_papers([f"s2:{DID_S2}", f"aminer:{DID}"])
    assert [p.id for p in papers] == [f"s2:{DID_S2}"]
    assert [f.source for f in multi.last_failures] == ["aminer"]
    await multi.aclose()


def test_corpus_ids_meet_their_semantic_scholar_external_ids():
    from pilot.models import Paper

    # Shapes as the corpus stores them: ``acl:<ACL id>`` and ``s2:<S2 corpus id>`` (CSFCube papers).
    bleu_local = Paper(
        id="acl:P02-1040",
        title="Bleu: A Method For Automatic Evaluation Of Machine Translation",
        year=2002,
        source="local",
    )
    bleu_s2 = Paper(
        id="s2:d7da009f457917aa381619facfa5ffae9329a6e9",
        title="Bleu: a Method for Automatic Evaluation of Machine Translation.",
        external_ids={"ACL": "P02-1040", "CorpusId": "11080756"},
        citation_count=20000,
        source="s2",
    )
    csf_local = Paper(id="s2:470667", title="A paper the corpus knows by its CorpusId", source="local")
    csf_s2 = Paper(
        id="s2:c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce",
        title="Another title entirely",
        external_ids={"CorpusId": "470667"},
        source="s2",
    )
    merged = fuse([("local", [bleu_local, csf_local]), ("s2", [bleu_s2, csf_s2])])
    assert [(p.id, n) for p, _, n in merged] == [("acl:P02-1040", 2), ("s2:470667", 2)]
    bleu = merged[0][0]
    assert bleu.citation_count == 20000 and bleu.external_ids["S2"] == "d7da009f457917aa381619facfa5ffae9329a6e9"
