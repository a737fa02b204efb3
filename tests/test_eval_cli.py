"""``pilot eval`` end to end on dev cases over the corpus slice, plus its input errors and ``compare``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pilot.cli import main
from pilot.eval.harness import EvalConfig, EvalError, load_cases, run_eval, system_view
from pilot.eval.metrics import RANK_KEYS
from pilot.eval.report import BLOCK_KEYS, aggregate, write_outputs
from pilot.runtime import Runtime
from pilot.sources.base import Source, SourceUnavailable

# Anchors whose neighbourhoods the slice keeps (tests/conftest.py SLICE_ANCHORS), plus a CSFCube case whose
# anchor is in the slice but most of whose pool is not: the pool protocol must still rank the whole pool.
E2E_CASES = ("predecessor-acl:D08-1048", "successor-acl:P02-1040", "sibling-s2:5270848-method")


def _write_cases(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


# --- input errors ---


def test_missing_and_malformed_case_files_are_clear_errors(tmp_path, capsys):
    assert main(["eval", "--cases", str(tmp_path / "nope.jsonl"), "--mode", "fixed", "--out", str(tmp_path / "o")]) == 2
    assert "cases file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "x", "direction": "predecessor"}\n', encoding="utf-8")
    with pytest.raises(EvalError, match="lacks anchor_paper_id, user_query"):
        load_cases(bad)
    bad.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(EvalError, match=r"bad.jsonl:1: not JSON"):
        load_cases(bad)
    assert main(["eval", "--mode", "fixed"]) == 2
    assert "missing --cases, --out" in capsys.readouterr().err


def test_system_view_hides_gold_and_latent_intent(bench_cases):
    case = next(c for c in bench_cases if c.get("pool"))
    view = system_view(case)
    assert set(view) == {"case_id", "anchor_paper_id", "anchor_title", "user_query", "pool"}


# --- compare ---


def _fake_run(out: Path, mode: str, hit: float) -> Path:
    rec = {
        "case_id": "p1",
        "direction": "predecessor",
        "source": "aan",
        "metrics": {k: hit for k in RANK_KEYS},
        "failed": False,
        "turns": 1,
        "latency_s": 0.5,
    }
    csf = {
        **rec,
        "case_id": "s1",
        "direction": "sibling",
        "source": "csfcube",
        "facet": "method",
        "metrics": {k: 0.5 for k in RANK_KEYS},
        "pool_metrics": {"map": 0.4, "ndcg%20": 0.6},
    }
    write_outputs(out, aggregate(mode, [rec, csf]))
    _write_cases(out / "runs.jsonl", [rec, csf])
    return out


def test_compare_prints_modes_side_by_side(tmp_path, capsys):
    a = _fake_run(tmp_path / "a", "single", 0.25)
    b = _fake_run(tmp_path / "b", "multi", 0.75)
    assert main(["eval", "compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "| direction | metric | single | multi |" in out
    assert "| predecessor | hit@5 | 0.250 | 0.750 |" in out
    assert "| sibling_csfcube | mrr | 0.500 | 0.500 |" in out
    assert "NDCG%20" in out
    # per case: p1 improves (a win), s1 is unchanged (a tie)
    assert "| multi vs single | predecessor | 1 | 0 | 0 | 0.500 |" in out
    assert "| multi vs single | sibling | 0 | 1 | 0 | 0.000 |" in out
    assert "| multi vs single | overall | 1 | 1 | 0 | 0.250 |" in out
    # fewer questions before the first results is reported per direction (older runs: every question)
    assert "| predecessor | mean_questions_before_results | 1.000 | 1.000 |" in out
    assert (tmp_path / "compare.png").stat().st_size > 1000
    assert "## modes side by side" in (tmp_path / "compare.md").read_text()
    # the CSFCube pool per facet and mode, against the published results
    assert (tmp_path / "compare-pool.png").stat().st_size > 1000
    assert "(compare-pool.png)" in (tmp_path / "compare.md").read_text()
    assert main(["eval", "compare", str(tmp_path / "missing")]) == 2


def test_compare_names_runs_of_one_mode_by_their_folders(tmp_path, capsys):
    # four rounds of "multi" were four bars all called "multi" in the plots and columns of the table
    before = _fake_run(tmp_path / "before", "multi", 0.25)
    after = _fake_run(tmp_path / "after", "multi", 0.75)
    assert main(["eval", "compare", str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "| direction | metric | multi (before) | multi (after) |" in out
    assert "| multi (after) vs multi (before) | predecessor | 1 | 0 | 0 | 0.500 |" in out


# --- end to end over the slice ---


@pytest.fixture(scope="module")
def e2e_env(shared, corpus_slice, local_source, bench_cases, tmp_path_factory):
    """Cases file + env pointing the CLI at the slice store the ``local_source`` fixture already built."""
    store_dir = Path(local_source.stats["store"])
    vectors = next(Path(tmp_path_factory.getbasetemp()).glob("slice-vectors*/slice.f16.npy"))
    by_id = {c["case_id"]: c for c in bench_cases}
    cases = _write_cases(tmp_path_factory.mktemp("cases") / "cases.jsonl", [by_id[c] for c in E2E_CASES])
    env = {"PILOT_CACHE_DIR": str(store_dir.parent), "PILOT_CORPUS_VECTORS": str(vectors), "PILOT_SOURCES": "local"}
    return cases, env


@pytest.mark.parametrize("mode", ["fixed", "single", "multi", "bm25"])
def test_pilot_eval_end_to_end(mode, e2e_env, corpus_slice, tmp_path, monkeypatch):
    cases, env = e2e_env
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = tmp_path / mode
    argv = [
        "eval",
        "--cases",
        str(cases),
        "--corpus",
        str(corpus_slice),
        "--mode",
        mode,
        "--out",
        str(out),
        "--workers",
        "2",
        "--no-progress",
    ]
    assert main(argv) == 0

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["mode"] == mode and metrics["n_cases"] == 3
    assert set(metrics["by_direction"]) >= {"predecessor", "successor", "sibling", "sibling_csfcube"}
    for block in [metrics["overall"], *metrics["by_direction"].values()]:
        for key in BLOCK_KEYS:
            assert key in block
        for key in RANK_KEYS:
            assert 0.0 <= block[key] <= 1.0
        assert 0.0 <= block["workflow_error_rate"] <= 1.0 and block["mean_latency_s"] >= 0
    pool = metrics["csfcube_pool"]
    assert set(pool) == {"method", "all"} and 0 <= pool["all"]["map"] <= 1 and 0 <= pool["all"]["ndcg%20"] <= 1
    assert set(metrics["csfcube_pool_dense_only"]) == {"method", "all"}

    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["case_id"] for r in runs] == list(E2E_CASES)
    for r in runs:
        assert r["anchor_paper_id"] not in r["ranked_ids"] and len(r["ranked_ids"]) <= 50
        assert len(set(r["ranked_ids"])) == len(r["ranked_ids"])
        if mode != "bm25":
            assert not r["failed"], r["error"]
            assert r["versions"] and r["versions"][-1]["workflow"]["nodes"], "every workflow version is recorded"
            assert r["trace"] and r["trace"]["nodes"]
            assert r["dialogue"] or mode == "fixed"
    # the successor case keeps the full graph: its citers are in the slice, so some must be found
    assert runs[1]["metrics"]["recall@50"] > 0
    if mode == "multi":
        assert metrics["overall"]["mean_turns"] >= 1
    if mode in ("fixed", "single", "bm25"):
        assert metrics["overall"]["mean_turns"] == 0
    assert (out / "report.md").read_text().startswith("# pilot evaluation")
    assert (out / "report.png").stat().st_size > 1000


def test_reference_workflows_give_workflow_metrics(e2e_env, corpus_slice, tmp_path, monkeypatch):
    cases, env = e2e_env
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    base = [
        "eval",
        "--cases",
        str(cases),
        "--corpus",
        str(corpus_slice),
        "--mode",
        "fixed",
        "--case",
        E2E_CASES[1],
        "--no-progress",
    ]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    # the fixed workflow against itself: every similarity is 1 and no edit is needed
    assert main([*base, "--out", str(tmp_path / "b"), "--reference", str(tmp_path / "a" / "runs.jsonl")]) == 0
    sim = json.loads((tmp_path / "b" / "metrics.json").read_text())["workflow_similarity"]
    assert sim["n"] == 1
    assert sim["tfidf_whole"] == pytest.approx(1.0) and sim["op_jaccard"] == 1.0 and sim["node_jaccard"] == 1.0
    assert sim["edits_add"] == sim["edits_remove"] == sim["edits_modify"] == 0
    assert "final workflow vs the reference workflow" in (tmp_path / "b" / "report.md").read_text()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "x", "workflow": {"nodes": "no"}}\n')
    assert main([*base, "--out", str(tmp_path / "c"), "--reference", str(bad)]) == 2


# --- failures score zero and are counted ---


class _DeadSource(Source):
    """Every call fails the way an unreachable backend does."""

    name = "dead"

    async def match_paper(self, text, limit=5):
        raise SourceUnavailable("dead", "connection refused")

    async def search_papers(self, query, filters=None, limit=50, mode="hybrid"):
        raise SourceUnavailable("dead", "connection refused")


class _SlowSource(Source):
    name = "slow"

    async def match_paper(self, text, limit=5):
        await asyncio.sleep(5)
        return []


@pytest.mark.parametrize("source, error", [(_DeadSource(), "connection refused"), (_SlowSource(), "timed out")])
def test_failed_cases_score_zero_and_count_as_errors(source, error, bench_cases, tmp_path):
    case = next(c for c in bench_cases if c.get("pool"))  # graded + pool: every block must still be filled
    cases = _write_cases(tmp_path / "cases.jsonl", [case, bench_cases[0]])
    config = EvalConfig(cases=cases, mode="single", out=tmp_path / "out", workers=2, case_timeout_s=0.5, progress=False)
    metrics = run_eval(config, runtime=Runtime.for_source(source))
    overall = metrics["overall"]
    assert overall["workflow_error_rate"] == 1.0 and metrics["n_cases"] == 2
    assert all(overall[k] == 0.0 for k in RANK_KEYS) and overall["graded_ndcg@15"] == 0.0
    runs = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert all(r["failed"] and error in r["error"] and r["ranked_ids"] == [] for r in runs)
    # the pool is still ranked (in pool order) and scored, so the CSFCube block exists
    assert metrics["csfcube_pool"]["all"]["n"] == 1


def test_the_simulated_user_never_borrows_the_system_model(tmp_path):
    """With --llm the system under test gets a model; the simulator's leak check gets one only when asked."""
    from pilot.eval.harness import EvalConfig, Harness

    base = dict(cases=tmp_path / "c.jsonl", mode="multi", out=tmp_path, llm="openai/system-under-test")
    assert Harness(EvalConfig(**base), runtime=None).simulator_llm is None
    judge = Harness(EvalConfig(**base, simulator_llm="openai/simulator"), runtime=None).simulator_llm
    assert judge is not None and judge.model == "openai/simulator"


# --- topic cases: no anchor, the answer key hidden ---

TOPIC_SOURCE = "acl:D08-1048"  # its in-slice references are the gold of a topic case built on the slice


@pytest.fixture(scope="module")
def topic_cases(shared, by_id, tmp_path_factory) -> Path:
    gold = [r for r in by_id[TOPIC_SOURCE]["references"] if r in by_id]
    years = [by_id[g]["year"] for g in gold if by_id[g].get("year")]
    on_slice = {
        "case_id": f"topic-{TOPIC_SOURCE}",
        "direction": "topic",
        "anchor_paper_id": None,
        "anchor_title": None,
        "user_query": "Find the literature on automatic induction of FrameNet lexical units.",
        "golden_paper_ids": gold,
        "golden_titles": [by_id[g]["title"] for g in gold],
        "hidden_paper_ids": [TOPIC_SOURCE],
        "latent_intent": {
            "year_min": min(years),
            "year_max": by_id[TOPIC_SOURCE]["year"],
            "topic_terms": ["semantic", "frame", "lexical"],
            "description": "The key work on this, up to 2008; mostly about semantic frames.",
        },
        "hidden_edges": None,
        "source": "aan",
    }
    with open(shared / "bench" / "dev" / "topic_cases.jsonl", encoding="utf-8") as fh:
        real = json.loads(fh.readline())  # the benchmark's own schema, though its papers are mostly off the slice
    return _write_cases(tmp_path_factory.mktemp("topic") / "topic_cases.jsonl", [on_slice, real])


@pytest.mark.parametrize("mode", ["fixed", "single", "multi", "bm25"])
def test_topic_cases_run_end_to_end_in_every_mode(mode, topic_cases, e2e_env, corpus_slice, tmp_path, monkeypatch):
    _, env = e2e_env
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = tmp_path / mode
    argv = ["eval", "--cases", str(topic_cases), "--corpus", str(corpus_slice), "--mode", mode, "--out", str(out),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_cases"] == 2 and set(metrics["by_direction"]) == {"topic"}
    assert metrics["by_direction"]["topic"]["workflow_error_rate"] == 0.0
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    cases = [json.loads(line) for line in topic_cases.read_text().splitlines()]
    for run, case in zip(runs, cases, strict=True):
        assert not run["failed"], run["error"]
        assert run["anchor_paper_id"] is None and len(run["ranked_ids"]) <= 50
        assert not set(case["hidden_paper_ids"]) & set(run["ranked_ids"])  # the answer key is never returned
        if mode in ("single", "multi"):  # the request exactly as typed: no anchor id added
            assert run["dialogue"][0]["content"] == case["user_query"]
            assert not any("Which paper do you mean" in d["content"] for d in run["dialogue"])
    if mode in ("single", "multi"):
        assert runs[0]["versions"][-1]["workflow"]["name"] == "topic"
        assert runs[0]["metrics"]["hit@10"] == 1.0 and runs[0]["metrics"]["recall@50"] >= 0.5
    if mode == "multi":
        assert runs[0]["turns"] >= 1 and runs[0]["simulator_log"]


def test_a_topic_case_names_no_anchor(tmp_path):
    case = {"case_id": "t", "direction": "topic", "user_query": "papers on x", "anchor_paper_id": "acl:P02-1040"}
    with pytest.raises(EvalError, match="a topic case has no anchor paper"):
        load_cases(_write_cases(tmp_path / "c.jsonl", [case]))
    del case["anchor_paper_id"]
    assert load_cases(_write_cases(tmp_path / "c.jsonl", [case]))[0]["case_id"] == "t"
