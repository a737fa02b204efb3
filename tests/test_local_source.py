"""The offline corpus source on a real slice of the shared corpus (and small hand-made corpus files).

Built stores are real: SQLite, a bm25s index and MiniLM vectors on disk under a temporary cache dir.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pilot.embed import Embedder
from pilot.models import SearchFilters
from pilot.sources.base import BadRequest, NotFound, SourceUnavailable
from pilot.sources.local import LocalCorpusSource
from pilot.text import normalize_title

BLEU = "acl:P02-1040"
TAGGER = "acl:N03-1033"
FRAMENET = "acl:D08-1048"


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("automatic metric for judging machine translation output against human reference translations", BLEU),
        ("part of speech tagger using a dependency network with rich features", TAGGER),
    ],
)
async def test_paraphrase_finds_the_known_paper_at_rank_1(local_source, query, expected, mode):
    hits = await local_source.search_papers(query, limit=10, mode=mode)
    assert hits[0].paper.id == expected


async def test_dense_search_finds_the_penn_treebank_from_a_paraphrase(local_source):
    # lexical search ranks other treebank papers first here;
    # the embedding gets "big ... syntactic trees" = "Large ... Treebank"
    hits = await local_source.search_papers(
        "a big English corpus annotated with syntactic trees", mode="dense", limit=3
    )
    assert hits[0].paper.id == "acl:J93-2004"
    assert hits[0].score > hits[-1].score


async def test_filters_restrict_every_mode(local_source, corpus_slice_rows):
    filters = SearchFilters(year_min=2005, year_max=2008, venue="emnlp")
    for mode in ("lexical", "dense", "hybrid"):
        hits = await local_source.search_papers("semantic role labeling", filters=filters, limit=20, mode=mode)
        assert hits, mode
        for h in hits:
            assert 2005 <= h.paper.year <= 2008 and "emnlp" in h.paper.venue.lower()
    cited = await local_source.search_papers("neural networks", filters=SearchFilters(min_citations=100), limit=20)
    assert cited and all(h.paper.citation_count >= 100 for h in cited)


async def test_references_and_citations_match_the_file(local_source, corpus_slice_rows):
    ids = {r["id"] for r in corpus_slice_rows}
    anchor = next(r for r in corpus_slice_rows if r["id"] == FRAMENET)
    refs = await local_source.references(FRAMENET, limit=1000)
    assert {p.id for p in refs} == {x for x in anchor["references"] if x in ids}
    citing = await local_source.citations(BLEU, limit=1000)
    assert {p.id for p in citing} == {r["id"] for r in corpus_slice_rows if BLEU in r["references"]}
    counts = [p.in_corpus_citations for p in citing]
    assert counts == sorted(counts, reverse=True)
    assert len(await local_source.citations(BLEU, limit=5)) == 5


async def test_get_papers_keeps_order_skips_unknown_and_unescapes(local_source):
    papers = await local_source.get_papers(["acl:C10-2052", "nope:1", BLEU])
    assert [p.id for p in papers] == ["acl:C10-2052", BLEU]
    assert papers[0].title.startswith("What\u2019s in a Preposition?")
    assert papers[1].canonical_url == "https://aclanthology.org/P02-1040"
    assert papers[1].abstract and papers[1].references == []


async def test_unknown_ids_raise_not_found(local_source):
    with pytest.raises(NotFound):
        await local_source.get_paper("acl:X99-9999")
    for call in (
        local_source.references,
        local_source.citations,
        local_source.get_author,
        local_source.get_venue,
        local_source.get_org,
    ):
        with pytest.raises(NotFound):
            await call("no-such-id")


@pytest.mark.parametrize("query", ["", "   \n\t "])
async def test_empty_query_is_a_bad_request(local_source, query):
    with pytest.raises(BadRequest, match="empty"):
        await local_source.search_papers(query)
    with pytest.raises(BadRequest):
        await local_source.search_authors(query)


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
async def test_ten_thousand_character_query_still_searches(local_source, mode):
    query = ("machine translation evaluation " * 400)[:10_000]
    hits = await local_source.search_papers(query, limit=5, mode=mode)
    assert len(hits) == 5


async def test_match_paper_resolves_ids_and_titles(local_source):
    assert (await local_source.match_paper("P02-1040"))[0].id == BLEU
    assert (await local_source.match_paper("https://aclanthology.org/P02-1040"))[0].id == BLEU
    assert (await local_source.match_paper(BLEU))[0].id == BLEU
    assert (await local_source.match_paper("bleu: a method for automatic evaluation of machine translation"))[
        0
    ].id == BLEU
    assert (await local_source.match_paper("CorpusId:10168779"))[0].id == "s2:10168779"


async def test_recommend_from_a_seed_finds_its_neighbourhood(local_source):
    recs = await local_source.recommend([BLEU], limit=10)
    assert BLEU not in {p.id for p in recs}
    assert sum("evaluat" in p.title.lower() or "translation" in p.title.lower() for p in recs) >= 7
    with pytest.raises(NotFound):
        await local_source.recommend(["nope:1"])


async def test_paper_vectors_are_the_stored_unit_vectors(local_source):
    vecs = local_source.paper_vectors([BLEU, "nope:1", TAGGER])
    assert vecs.shape == (3, 384) and np.isnan(vecs[1]).all()
    assert np.allclose(np.linalg.norm(vecs[[0, 2]], axis=1), 1.0, atol=1e-3)
    query = local_source.embedder.encode_one("Bleu: A Method For Automatic Evaluation Of Machine Translation")
    assert float(vecs[0] @ query) > float(vecs[2] @ query)


async def test_author_names_are_unescaped_reordered_and_searchable(local_source):
    paper = await local_source.get_paper("acl:A97-1017")
    assert [a.name for a in paper.authors] == ["Jan Hajič", "Barbora Hladká"]
    for query in ("Jan Hajic", "Hajič", "hajic jan"):
        found = await local_source.search_authors(query)
        assert found and found[0].name == "Jan Hajič", query
    author = found[0]
    assert author.id == paper.authors[0].id and author.url == f"corpus://author/{author.id}"
    assert "Barbora Hladká" in author.coauthors
    papers = await local_source.author_papers(author.id)
    assert "acl:A97-1017" in {p.id for p in papers} and len(papers) == author.paper_count


async def test_author_affiliation_and_org_are_derived(local_source, corpus_slice_rows):
    paper = await local_source.get_paper("pc:3dv2025:IviNrUpXHc")
    chen = next(a for a in paper.authors if a.name == "Chen Li")
    assert chen.affiliation == "A*STAR"
    author = await local_source.get_author(chen.id)
    expected_papers = [r for r in corpus_slice_rows if any(a["name"] == "Chen Li" for a in r["authors"])]
    assert author.paper_count == len(expected_papers)
    assert "A*STAR" in author.orgs and author.affiliation
    orgs = await local_source.search_orgs("a*star")
    assert orgs[0].name == "A*STAR" and orgs[0].url == f"corpus://org/{orgs[0].id}"
    people = await local_source.org_authors(orgs[0].id)
    assert "Chen Li" in {p.name for p in people}
    # joined affiliations ("University of Oxford+Google") are split into two organisations
    oxford = await local_source.search_orgs("University of Oxford")
    assert oxford and oxford[0].name == "University of Oxford"


async def test_venue_entities_count_papers_and_years(local_source, corpus_slice_rows):
    emnlp = [r for r in corpus_slice_rows if r["venue"] == "EMNLP"]
    venue = (await local_source.search_venues("emnlp"))[0]
    assert venue.name == "EMNLP" and venue.paper_count == len(emnlp)
    assert (venue.year_min, venue.year_max) == (min(r["year"] for r in emnlp), max(r["year"] for r in emnlp))
    top_author = Counter(a["name"] for r in emnlp for a in r["authors"]).most_common(1)[0][0]
    assert top_author in venue.top_authors or any(top_author.split(", ")[0] in n for n in venue.top_authors)
    assert (await local_source.get_venue(venue.id)).paper_count == len(emnlp)


async def test_concurrent_searches_from_tasks_and_threads(local_source):
    queries = ["parsing", "translation", "word sense", "sentiment", "speech"]
    results = await asyncio.gather(*(local_source.search_papers(q, limit=5) for q in queries * 4))
    assert all(len(r) == 5 for r in results)
    threaded = await asyncio.gather(
        *(asyncio.to_thread(asyncio.run, local_source.search_papers(q, limit=5, mode="lexical")) for q in queries)
    )
    assert [r[0].paper.id for r in threaded] == [r[0].paper.id for r in results[:5]] or all(threaded)


# --- building stores from small hand-made files ----------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _small_corpus(rows: list[dict], n: int = 30) -> list[str]:
    return [json.dumps(r) for r in rows[:n]]


def test_store_is_reused_when_unchanged_and_rebuilt_when_changed(tmp_path, corpus_slice_rows, embedder):
    corpus = _write(tmp_path / "papers.jsonl", _small_corpus(corpus_slice_rows))
    cache = tmp_path / "cache"
    first = LocalCorpusSource.open(corpus, cache, embedder=embedder, progress=False)
    assert first.stats["built"] and first.stats["papers"] == 30 and first.stats["vectors"] == "computed"
    marker = Path(first.stats["store"]) / "manifest.json"
    mtime = marker.stat().st_mtime_ns
    again = LocalCorpusSource.open(corpus, cache, embedder=embedder, progress=False)
    assert not again.stats["built"] and again.stats["store"] == first.stats["store"]
    assert marker.stat().st_mtime_ns == mtime
    _write(corpus, _small_corpus(corpus_slice_rows, 31))
    changed = LocalCorpusSource.open(corpus, cache, embedder=embedder, progress=False)
    assert changed.stats["built"] and changed.stats["papers"] == 31
    assert changed.stats["store"] != first.stats["store"]
    assert not Path(first.stats["store"]).exists(), "the stale store of the old file is removed"


async def test_malformed_lines_are_skipped_and_counted(tmp_path, corpus_slice_rows, embedder, local_source):
    good = _small_corpus(corpus_slice_rows, 6)
    lines = good[:2] + ["{not json", json.dumps({"title": "no id"}), "[1, 2]"] + good[2:] + ['{"id": "x:1", "title": ']
    corpus = tmp_path / "papers.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    # a vectors file whose row i belongs to line i, malformed lines included (those get random rows)
    ids = [json.loads(x)["id"] for x in good]
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(lines), 384)).astype(np.float32)
    good_lines = [0, 1, 5, 6, 7, 8]
    for line_no, pid in zip(good_lines, ids, strict=False):
        vectors[line_no] = local_source.store.vectors[local_source.store.row_of[pid]]
    np.save(tmp_path / "vecs.npy", vectors.astype(np.float16))
    source = LocalCorpusSource.open(
        corpus, tmp_path / "cache", vectors=tmp_path / "vecs.npy", embedder=embedder, progress=False
    )
    assert source.stats["malformed"] == 4 and source.stats["papers"] == 6 and source.stats["lines"] == 10
    assert source.stats["vectors"].startswith("file:")
    assert [p.id for p in await source.get_papers(ids)] == ids
    for line_no, pid in zip(good_lines, ids, strict=False):
        stored = source.store.vectors[source.store.row_of[pid]]
        assert np.allclose(stored, vectors[line_no] / np.linalg.norm(vectors[line_no]), atol=2e-3), pid


def test_vectors_with_the_wrong_shape_or_model_are_refused(tmp_path, corpus_slice_rows, embedder, caplog):
    corpus = _write(tmp_path / "papers.jsonl", _small_corpus(corpus_slice_rows, 10))
    cases = {
        "rows.npy": (np.ones((9, 384)), "9 rows but the corpus has 10 lines"),
        "dim.npy": (np.ones((10, 768)), "(10, 768)"),
        "model.npy": (np.random.default_rng(1).normal(size=(10, 384)), "do not match all-MiniLM-L6-v2"),
    }
    for name, (array, message) in cases.items():
        np.save(tmp_path / name, array.astype(np.float16))
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            source = LocalCorpusSource.open(
                corpus, tmp_path / name.replace(".npy", ""), vectors=tmp_path / name, embedder=embedder, progress=False
            )
        assert source.stats["vectors"] == "computed", name
        assert message in caplog.text and "refusing vectors file" in caplog.text, name


async def test_computed_vectors_make_dense_search_work(tmp_path, corpus_slice_rows, embedder):
    rows = [r for r in corpus_slice_rows if r["id"] in {BLEU, TAGGER, FRAMENET}] + corpus_slice_rows[:20]
    corpus = _write(tmp_path / "papers.jsonl", [json.dumps(r) for r in rows])
    source = LocalCorpusSource.open(corpus, tmp_path / "cache", embedder=embedder, progress=False)
    hits = await source.search_papers("evaluating machine translation quality automatically", mode="dense", limit=1)
    assert hits[0].paper.id == BLEU
    assert normalize_title(hits[0].paper.title) == normalize_title(rows[0]["title"]) or hits[0].paper.id == BLEU


def test_stores_of_the_same_file_with_other_vectors_are_kept(tmp_path, corpus_slice_rows, embedder):
    corpus = _write(tmp_path / "papers.jsonl", _small_corpus(corpus_slice_rows, 12))
    computed = LocalCorpusSource.open(corpus, tmp_path / "cache", embedder=embedder, progress=False)
    np.save(tmp_path / "vecs.npy", np.asarray(computed.store.vectors, dtype=np.float16))
    shipped = LocalCorpusSource.open(
        corpus, tmp_path / "cache", vectors=tmp_path / "vecs.npy", embedder=embedder, progress=False
    )
    assert shipped.stats["built"] and shipped.stats["vectors"].startswith("file:")
    assert Path(computed.stats["store"]).exists() and shipped.stats["store"] != computed.stats["store"]


def test_a_damaged_store_is_rebuilt(tmp_path, corpus_slice_rows, embedder):
    corpus = _write(tmp_path / "papers.jsonl", _small_corpus(corpus_slice_rows, 8))
    first = LocalCorpusSource.open(corpus, tmp_path / "cache", embedder=embedder, progress=False)
    (Path(first.stats["store"]) / "ids.json").unlink()
    again = LocalCorpusSource.open(corpus, tmp_path / "cache", embedder=embedder, progress=False)
    assert again.stats["built"] and again.stats["papers"] == 8


def test_a_file_without_one_valid_record_is_a_clear_error(tmp_path):
    corpus = _write(tmp_path / "papers.jsonl", ["not json", '{"id": 3}'])
    with pytest.raises(SourceUnavailable, match="no valid paper records"):
        LocalCorpusSource.open(corpus, tmp_path / "cache", progress=False)
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"id": "a:1", "title": "x"}\n' * 50)[:40])
    with pytest.raises(SourceUnavailable, match="PILOT_CORPUS"):
        LocalCorpusSource.open(broken, tmp_path / "cache", progress=False)
    assert not any((tmp_path / "cache").glob("corpus-*")), "a failed build leaves nothing behind"


def test_missing_corpus_file_names_the_setting(tmp_path):
    with pytest.raises(SourceUnavailable, match="PILOT_CORPUS") as err:
        LocalCorpusSource.open(tmp_path / "nowhere.jsonl.gz", tmp_path / "cache")
    assert "nowhere.jsonl.gz" in str(err.value)
    with pytest.raises(SourceUnavailable, match="PILOT_CORPUS"):
        LocalCorpusSource.open(None, tmp_path / "cache")


def test_bench_corpus_prints_one_json_object(local_source, corpus_slice, capsys):
    from pilot.cli import main

    store = Path(local_source.stats["store"])
    vectors = local_source.stats["vectors"].removeprefix("file:")
    argv = [
        "bench",
        "corpus",
        "--corpus",
        str(corpus_slice),
        "--cache-dir",
        str(store.parent),
        "--vectors",
        vectors,
        "--queries",
        "12",
        "--json",
    ]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["papers"] == local_source.stats["papers"] and result["build_measured"] == "recorded"
    for key in ("build_s", "warm_start_s", "disk_mb", "peak_rss_mb"):
        assert result[key] > 0, key
    for mode in ("lexical", "dense", "hybrid"):
        assert 0 < result[mode]["p50_ms"] <= result[mode]["p95_ms"], mode


def test_bench_corpus_without_a_corpus_says_what_to_set(tmp_path, capsys):
    from pilot.cli import main

    assert main(["bench", "corpus", "--corpus", str(tmp_path / "missing.jsonl.gz")]) == 2
    assert "PILOT_CORPUS" in capsys.readouterr().err


def test_papers_with_equal_scores_keep_one_order_whatever_the_number_asked_for():
    # a paper recorded twice has one vector: the two tie with every query. Their order depended on how many
    # neighbours were asked for, so the first 200 of 500 were not the 200 (a service answering 500
    # recommendations disagreed with the same store asked for 200).
    import numpy as np

    from pilot.store.store import CorpusStore

    scores = np.round(np.random.default_rng(0).random(5000), 2).astype(np.float32)  # many ties
    first = [row for row, _ in CorpusStore.top(scores, 200)]
    assert first == [row for row, _ in CorpusStore.top(scores, 500)][:200]
    assert all((-scores[a], a) < (-scores[b], b) for a, b in zip(first, first[1:], strict=False))
