"""The gold set of entity questions is well-formed, and the gold runner scores answers correctly."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from pilot.eval.kg_gold import load_questions, report_markdown, run_gold
from pilot.kg import classify
from pilot.runtime import Runtime
from workflows.registry import get_operator

DATA = Path(__file__).resolve().parent / "data"
GOLD = DATA / "kg_questions.jsonl"


def _maker():
    spec = importlib.util.spec_from_file_location("make_kg_questions", DATA / "make_kg_questions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gold_set_is_well_formed():
    cases = load_questions(GOLD)
    assert len(cases) >= 20
    shapes = {c["shape"] for c in cases}
    assert shapes == {
        "author_papers",
        "most_cited",
        "coauthors",
        "author_topics",
        "author_profile",
        "org_researchers",
        "org_profile",
        "venue_papers",
        "venue_profile",
    }
    assert sum(1 for c in cases if re.search(r"[\u4e00-\u9fff]", c["question"])) >= 4
    assert {c["set"] for c in cases} == {"seen", "paraphrase", "paraphrase2", "paraphrase3", "heldout4"}
    for c in cases:
        if c["set"] == "seen":  # held-out paraphrases are scored, not required to pass
            assert classify(c["question"]) == "entity", c["question"]
        assert c["gold_plan"][-1]["op"] == "synthesize_answer"
        for step in c["gold_plan"]:
            get_operator(step["op"]).Params.model_validate(step["params"])  # the gold plan is runnable
        assert c["gold_urls"] and all(u.startswith(("corpus://", "http")) for u in c["gold_urls"])
        assert len(set(c["gold_urls"])) == len(c["gold_urls"])


def test_load_questions_names_the_bad_line(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "x", "gold_plan": [], "gold_urls": []}\n{"question": "y"}\n')
    with pytest.raises(ValueError, match=r"q.jsonl:2: missing gold_plan, gold_urls"):
        load_questions(bad)


async def test_runner_scores_gold_questions_built_from_the_slice(local_source, corpus_slice):
    """Gold answers computed from the raw slice rows; pilot's answers on the slice must match them."""
    make = _maker()
    corpus = make.Corpus(corpus_slice)
    cases = [
        {
            "id": "s1",
            "question": "papers by Christopher D. Manning at ACL between 2005 and 2010",
            **make.author_papers(
                corpus, "q", person="Christopher D. Manning", venue="ACL", year_min=2005, year_max=2010
            ),
        },
        {
            "id": "s2",
            "question": "What is the most cited paper of Dan Klein?",
            **make.most_cited(corpus, "q", person="Dan Klein"),
        },
        {"id": "s3", "question": "Tell me about EMNLP", **make.venue_profile(corpus, "q", venue="EMNLP")},
    ]
    for c in cases:
        c["gold_plan"][-1]["params"]["question"] = c["question"]
    summary, records = await run_gold(cases, Runtime.for_source(local_source))
    assert summary["questions"] == 3
    for key in (
        "url_precision",
        "url_recall",
        "format_ok",
        "execution_success",
        "parameter_accuracy",
        "recognised",
        "grounded",
        "facts_stated",
    ):
        assert summary[key] == 1.0, (key, records)
    # fuzzy-F1 precision counts every predicted param; the planner's extra "scope" text is the only miss
    assert 0.9 <= summary["param_f1"] < 1.0
    assert summary["api_sequence_distance"] == 0.0
    assert "| s2 | seen | most_cited | 1.00 | 1.00 |" in report_markdown(summary, records)


async def test_runner_penalises_a_wrong_answer(local_source, corpus_slice):
    make = _maker()
    corpus = make.Corpus(corpus_slice)
    case = {
        "id": "w",
        "question": "What is the most cited paper of Dan Klein?",
        **make.most_cited(corpus, "q", person="Dan Klein"),
    }
    case["gold_urls"] = case["gold_urls"][:1] + ["https://example.org/not-this-one"]
    case["gold_plan"] = case["gold_plan"][:1] + [{"op": "author_detail", "params": {}}] + case["gold_plan"][1:]
    summary, _ = await run_gold([case], Runtime.for_source(local_source))
    assert summary["url_precision"] == 0.5 and summary["url_recall"] == 0.5
    assert summary["api_sequence_distance"] == pytest.approx(1 / 4)


def test_pilot_eval_kg_writes_metrics_report_and_plot(
    local_source, corpus_slice, tmp_path, tmp_path_factory, monkeypatch, capsys
):
    """`pilot eval kg` is the evaluation command for entity questions: it scores a gold file and writes its outputs."""
    import json

    from pilot.cli import main

    make = _maker()
    corpus = make.Corpus(corpus_slice)
    question = "What is the most cited paper of Dan Klein?"
    case = {"id": "k1", "set": "seen", "question": question, **make.most_cited(corpus, "q", person="Dan Klein")}
    case["gold_plan"][-1]["params"]["question"] = question
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(case) + "\n", encoding="utf-8")
    # point the command at the slice store the local_source fixture already built
    monkeypatch.setenv("PILOT_CACHE_DIR", str(Path(local_source.stats["store"]).parent))
    vectors = next(Path(tmp_path_factory.getbasetemp()).glob("slice-vectors*/slice.f16.npy"))
    monkeypatch.setenv("PILOT_CORPUS_VECTORS", str(vectors))
    monkeypatch.setenv("PILOT_SOURCES", "local")

    out = tmp_path / "kg"
    assert main(["eval", "kg", "--questions", str(gold), "--corpus", str(corpus_slice), "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["all"]["questions"] == 1 and printed["all"]["url_recall"] == 1.0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["by_shape"]["most_cited"]["url_precision"] == 1.0
    assert "| k1 | seen | most_cited | 1.00 | 1.00 |" in (out / "report.md").read_text()
    assert (out / "report.png").stat().st_size > 1000
    # a bad gold file is a one-line error, not a traceback
    (tmp_path / "bad.jsonl").write_text('{"question": "x"}\n')
    assert main(["eval", "kg", "--questions", str(tmp_path / "bad.jsonl"), "--out", str(out)]) == 2
    assert "missing gold_plan" in capsys.readouterr().err
