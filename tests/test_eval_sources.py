"""``pilot eval --sources s2``: the benchmark cases through the Semantic Scholar source, here the emulator
serving the corpus slice, scored against the corpus-id gold, with every turn's requests recorded."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
from pydantic import SecretStr

from emulators.s2 import S2Emulator
from emulators.server import Running
from pilot.eval.harness import EvalConfig, run_eval
from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.sources.s2 import SemanticScholarSource

CASES = ("predecessor-acl:D08-1048", "successor-acl:P02-1040")  # anchors in the slice; the first hides edges


def test_cases_run_through_the_emulated_s2_with_requests_per_turn(local_source, corpus_slice, bench_cases, tmp_path):
    cases = [c for c in bench_cases if c["case_id"] in CASES]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    with Running(S2Emulator(local_source)) as running:
        settings = Settings(
            _env_file=None, sources="s2", s2_base_url=f"{running.url}/graph/v1",
            s2_recommendations_url=f"{running.url}/recommendations/v1", s2_api_key=SecretStr(uuid.uuid4().hex),
            s2_rate="20/1", cache_dir=tmp_path / "cache", http_timeout_s=120, request_budget=30,
        )  # fmt: skip
        runtime = Runtime.for_source(SemanticScholarSource(settings), settings, embedder=local_source.embedder)
        config = EvalConfig(
            cases=path, mode="single", out=tmp_path / "out", corpus=corpus_slice, workers=1, progress=False,
            sources="s2",
        )  # fmt: skip
        metrics = run_eval(config, runtime=runtime, corpus=local_source)
        served = httpx.get(f"{running.url}/_stats").json()["total"]
    runs = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert [r["case_id"] for r in runs] == list(CASES)
    assert not any(r["failed"] for r in runs), [(r["error"], r["traceback"]) for r in runs]
    ids = set(local_source.store.ids)
    for r in runs:
        assert r["ranked_ids"] and set(r["ranked_ids"]) <= ids  # S2 papers mapped back to the gold's corpus ids
        assert r["source_usage"] and all("requests" in t and "seconds" in t for t in r["source_usage"])
        assert r["sources"] == "s2"
    # what the service saw = the turns' requests + the harness's own look-ups (hidden edges, gold authors)
    sent = sum(t["requests"] for r in runs for t in r["source_usage"]) + sum(
        r["harness_usage"]["requests"] for r in runs
    )
    assert sent == served
    # the hidden-edges rule holds over the remote source: the anchor's own reference list came back empty
    pred = runs[0]
    refs = next(n for n in pred["trace"]["nodes"] if n["node_id"] == "refs")
    assert refs["n_out"] == 0
    assert metrics["label"] == "single@s2"
    usage = metrics["source_usage"]
    assert usage["searches"] == 2 and usage["requests_per_search"]["median"] > 0
    assert usage["first_results_s"] and usage["search_turn_s"]["max"] >= usage["first_results_s"]["median"]
    asyncio.run(runtime.source.aclose())
