"""The executor: parallel, cached per node, failure-tolerant, traced."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cache import Cache
from pilot.sources.base import Source
from tests.workflow_testops import CALLS, edit_st, pipeline, wf
from workflows.edit import apply_edit
from workflows.executor import MemoCache, execute, run_node
from workflows.graph import iter_ready
from workflows.model import ModifyNode, Workflow
from workflows.operator import RunContext
from workflows.validate import MISSING_NODE, WorkflowError


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()
    yield
    CALLS.clear()


@pytest.fixture
def bare_ctx() -> RunContext:
    """A run context whose source can do nothing: the t_ operators need no source (the shared ``ctx``
    fixture is a context over the corpus slice)."""
    return RunContext(source=Source())


def ran(op_or_node: str) -> list:
    return [c for c in CALLS if op_or_node in (c[0], c[1])]


def ids(value) -> list[str]:
    return [r.paper.id for r in value]


def statuses(result) -> dict[str, str]:
    return {n.node_id: n.status for n in result.trace.nodes}


async def test_runs_pipeline_and_traces_counts(bare_ctx):
    res = await execute(pipeline(), bare_ctx)
    assert res.ok and ids(res.output) == ["a", "b", "c"]
    t = {n.node_id: n for n in res.trace.nodes}
    assert [n.node_id for n in res.trace.nodes] == ["src1", "src2", "union", "filter"]
    assert (t["union"].n_in, t["union"].n_out) == (3, 3)
    assert (t["src1"].n_in, t["src1"].n_out) == (0, 2)
    assert set(statuses(res).values()) == {"ok"}


async def test_many_port_receives_values_in_edge_order(bare_ctx):
    w = pipeline()
    w.edges[0], w.edges[1] = w.edges[1], w.edges[0]
    res = await execute(w, bare_ctx)
    assert ids(res.output) == ["c", "a", "b"]


async def test_independent_slow_nodes_overlap(bare_ctx):
    w = wf(
        [
            ("s1", "t_slow", {"seconds": 0.3, "tag": "x"}),
            ("s2", "t_slow", {"seconds": 0.3, "tag": "y"}),
            ("u", "t_union", {}),
        ],
        [("s1", "u"), ("s2", "u")],
        "u",
    )
    res = await execute(w, bare_ctx)
    assert ids(res.output) == ["x", "y"]
    (s1,), (s2,), (u,) = ran("s1"), ran("s2"), ran("u")
    assert s1[3] < s2[4] and s2[3] < s1[4], "the two slow sources ran one after the other"
    assert u[3] >= max(s1[4], s2[4]), "the union started before its inputs were ready"


async def test_editing_one_node_reruns_only_what_changed(bare_ctx):
    cache = MemoCache()
    w = pipeline()
    await execute(w, bare_ctx, cache=cache)
    CALLS.clear()

    w2 = apply_edit(w, ModifyNode(node_id="filter", params={"k": 2}))
    res = await execute(w2, bare_ctx, cache=cache)
    assert statuses(res) == {"src1": "cached", "src2": "cached", "union": "cached", "filter": "ok"}
    assert [c[1] for c in CALLS] == ["filter"]
    assert ids(res.output) == ["a", "b"]

    CALLS.clear()
    w3 = apply_edit(w2, ModifyNode(node_id="src2", params={"ids": ["d"]}))
    res = await execute(w3, bare_ctx, cache=cache)
    assert statuses(res) == {"src1": "cached", "src2": "ok", "union": "ok", "filter": "ok"}
    assert sorted(c[1] for c in CALLS) == ["filter", "src2", "union"]


async def test_an_edit_that_does_not_change_a_value_stops_the_rerun_there(bare_ctx):
    cache = MemoCache()
    await execute(pipeline(), bare_ctx, cache=cache)
    CALLS.clear()
    # a different param, the same output: downstream sees identical inputs and is served from cache
    w = apply_edit(pipeline(), ModifyNode(node_id="src2", params={"delay": 0.01}))
    res = await execute(w, bare_ctx, cache=cache)
    assert statuses(res) == {"src1": "cached", "src2": "ok", "union": "cached", "filter": "cached"}


async def test_disk_cache_survives_a_new_executor_call(bare_ctx, tmp_path, monkeypatch):
    import workflows.executor as executor

    monkeypatch.setattr(executor, "STORE_S_PER_ITEM", 0.0)  # every value here is worth storing
    cache = Cache(tmp_path, "nodes")
    first = await execute(pipeline(), bare_ctx, cache=cache)
    cache.close()
    CALLS.clear()
    again = await execute(pipeline(), bare_ctx, cache=Cache(tmp_path, "nodes"))
    assert set(statuses(again).values()) == {"cached"} and CALLS == []
    assert ids(again.output) == ids(first.output)


async def test_a_value_cheaper_to_compute_than_to_store_stays_in_memory(bare_ctx, tmp_path, monkeypatch):
    # writing a paper list to disk and reading it back costs ~0.2 ms a paper: a step that took less is not stored
    import workflows.executor as executor

    assert executor.worth_storing(0.5, 1000) and not executor.worth_storing(0.01, 1000)  # 500 papers in 10 ms: no
    monkeypatch.setattr(executor, "STORE_S_PER_ITEM", 1.0)  # nothing here took a second per item
    cache = Cache(tmp_path, "nodes")
    first = await execute(pipeline(), bare_ctx, cache=cache)
    warm = await execute(pipeline(), bare_ctx, cache=cache)  # the memory front still has them: an edit is cheap
    assert set(statuses(warm).values()) == {"cached"}
    cache.close()
    CALLS.clear()
    cold = await execute(pipeline(), bare_ctx, cache=Cache(tmp_path, "nodes"))  # another process: computed again
    assert "cached" not in set(statuses(cold).values()) and CALLS
    assert ids(cold.output) == ids(first.output)


async def test_a_disk_cache_from_another_code_version_is_not_read(bare_ctx, tmp_path, monkeypatch):
    """An upgraded operator must not serve what the old code stored (the node cache outlives a deploy)."""
    import workflows.executor as executor

    cache = Cache(tmp_path, "nodes")
    await execute(pipeline(), bare_ctx, cache=cache)
    monkeypatch.setattr(executor, "code_version", lambda: "another-version")
    CALLS.clear()
    again = await execute(pipeline(), bare_ctx, cache=cache)
    assert "cached" not in set(statuses(again).values()) and CALLS
    cache.close()


async def test_disk_cache_gets_a_memory_front_for_warm_reruns(bare_ctx, tmp_path):
    disk = Cache(tmp_path, "nodes")
    await execute(pipeline(), bare_ctx, cache=disk)
    reads = []
    original_get = disk.get
    disk.get = lambda key, default=None: reads.append(key) or original_get(key, default)
    again = await execute(pipeline(), bare_ctx, cache=disk)
    assert set(statuses(again).values()) == {"cached"} and reads == []  # served from memory, no unpickling


async def test_other_source_does_not_share_cache_entries(bare_ctx):
    cache = MemoCache()
    await execute(pipeline(), bare_ctx, cache=cache)

    class Other(Source):
        name = "other"

    res = await execute(pipeline(), RunContext(source=Other()), cache=cache)
    assert set(statuses(res).values()) == {"ok"}


async def test_source_error_gives_partial_results_with_failure_named(bare_ctx):
    w = wf(
        [
            ("good", "t_source", {"ids": ["a"]}),
            ("bad", "t_fail", {}),
            ("fbad", "t_filter", {}),
            ("union", "t_union", {}),
            ("top", "t_filter", {"k": 3}),
        ],
        [("bad", "fbad"), ("good", "union"), ("fbad", "union"), ("union", "top")],
        "top",
    )
    res = await execute(w, bare_ctx)
    assert ids(res.output) == ["a"]
    st = statuses(res)
    assert st == {"good": "ok", "bad": "failed", "fbad": "skipped", "union": "ok", "top": "ok"}
    assert res.errors["bad"].startswith("[testsrc] citations are not available offline")
    assert "set PILOT_S2_API_KEY" in res.errors["bad"]  # the hint reaches the user
    t = {n.node_id: n for n in res.trace.nodes}
    assert t["fbad"].error == "skipped: input from 'bad' failed"
    assert "input from 'fbad' was skipped" in t["union"].note and "ran without it" in t["union"].note
    assert not res.ok and res.trace.failed_nodes == ["bad"]


async def test_failure_on_a_single_input_skips_the_chain(bare_ctx):
    w = wf(
        [("bad", "t_fail", {"kind": "crash"}), ("f", "t_filter", {}), ("a", "t_answer", {}), ("ok", "t_source", {})],
        [("bad", "f"), ("f", "a")],
        "a",
    )
    res = await execute(w, bare_ctx)
    assert res.output is None and res.errors == {"bad": "RuntimeError: boom"}
    t = {n.node_id: n for n in res.trace.nodes}
    assert t["a"].status == "skipped" and "input from 'f' was skipped" in t["a"].error
    assert ids(res.values["ok"]) == ["a", "b"]  # the independent branch still completed


async def test_failed_optional_inputs_are_dropped_but_a_node_with_nothing_left_is_skipped(bare_ctx):
    w = wf(
        [("k", "t_keywords", {}), ("bad", "t_fail", {}), ("s", "t_search", {}), ("c", "t_collect", {})],
        [("k", "s"), ("bad", "s", "seeds"), ("bad", "c", "papers")],
        "s",
    )
    res = await execute(w, bare_ctx)
    t = {n.node_id: n for n in res.trace.nodes}
    assert ids(res.output) == ["kw-parsing"] and "input from 'bad' failed; ran without it" in t["s"].note
    assert t["c"].status == "skipped" and t["c"].error == "skipped: input from 'bad' failed"
    w.edges.append(wf([], [("k", "c", "keywords")], None).edges[0])
    res = await execute(w, bare_ctx)
    assert res.values["c"] == "['keywords'] 0"


async def test_per_node_timeout(bare_ctx):
    w = wf([("slow", "t_slow", {"seconds": 30}), ("quick", "t_source", {})], [], "quick")
    res = await execute(w, bare_ctx, timeout_s=0.2)
    t = {n.node_id: n for n in res.trace.nodes}
    assert t["slow"].status == "failed" and "timed out after 0.2s" in t["slow"].error
    assert t["quick"].status == "ok"
    (call,) = ran("slow")
    assert call[4] - call[3] < 30  # cancelled, not waited out


async def test_a_reordering_step_that_times_out_passes_its_list_on(bare_ctx):
    # over a slow source the facet_match step once timed out and the whole search came back empty
    w = wf(
        [("src", "t_source", {"ids": ["a", "b", "c"]}), ("rank", "t_filter", {}),
         ("slow", "t_reorder", {"seconds": 30}), ("top", "t_filter", {"k": 2})],
        [("src", "rank", "in"), ("rank", "slow", "in"), ("slow", "top", "in")],
        "top",
    )  # fmt: skip
    res = await execute(w, bare_ctx, timeout_s=0.3)
    t = {n.node_id: n for n in res.trace.nodes}
    assert t["slow"].status == "failed" and "timed out" in t["slow"].error and "passed on unchanged" in t["slow"].note
    assert "slow" in res.errors and t["top"].status == "ok"
    assert ids(res.output) == ["a", "b"]  # the list as it came in, not reversed, not lost
    w.node("slow").params["seconds"] = 0.0
    assert ids((await execute(w, bare_ctx, timeout_s=0.3)).output) == ["c", "b"]  # in time, it re-orders


async def test_timeout_defaults_to_the_settings(bare_ctx):
    from pilot.settings import Settings

    w = wf([("slow", "t_slow", {"seconds": 30})], [], "slow")
    res = await execute(w, RunContext(source=Source(), settings=Settings(node_timeout_s=0.1)))
    assert "timed out after 0.1s" in res.errors["slow"]


async def test_cancelling_a_run_cancels_its_nodes(bare_ctx):
    w = wf([("s1", "t_slow", {"seconds": 30}), ("s2", "t_slow", {"seconds": 30})], [], "s1")
    run = asyncio.create_task(execute(w, bare_ctx))
    await asyncio.sleep(0.1)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert sorted(c[1] for c in CALLS) == ["s1", "s2"]  # both ended (cancelled), none left running
    assert all(c[4] - c[3] < 30 for c in CALLS)


async def test_invalid_workflow_never_runs(bare_ctx):
    w = pipeline()
    w.nodes[3].params = {"k": 0}
    with pytest.raises(WorkflowError) as ei:
        await execute(w, bare_ctx)
    assert "cannot run the workflow" in str(ei.value) and "'k'" in str(ei.value)
    assert CALLS == []


async def test_consumer_mutating_its_input_does_not_corrupt_the_producer_value(bare_ctx):
    cache = MemoCache()
    res = await execute(pipeline(), bare_ctx, cache=cache)
    # t_filter appends its id to the evidence of the papers it receives
    assert all("filter" in r.evidence.nodes for r in res.values["filter"])
    assert not any("filter" in r.evidence.nodes for r in res.values["union"])
    again = await execute(pipeline(), bare_ctx, cache=cache)
    assert [r.evidence.nodes for r in again.values["filter"]] == [r.evidence.nodes for r in res.values["filter"]]


async def test_operator_notes_reach_the_trace_and_the_context(bare_ctx):
    w = wf([("s", "t_source", {}), ("n", "t_note", {})], [("s", "n")], "n")
    res = await execute(w, bare_ctx)
    t = {n.node_id: n for n in res.trace.nodes}
    assert t["n"].note == "LLM unavailable, used embedding fallback"
    assert bare_ctx.notes == ["n: LLM unavailable, used embedding fallback"]


async def test_a_step_served_from_the_cache_still_says_its_notes():
    # a second researcher asking the same question got the answer without its notes ("kept X apart from Y")
    cache, w = MemoCache(), wf([("s", "t_source", {}), ("n", "t_note", {})], [("s", "n")], "n")
    await execute(w, RunContext(source=Source()), cache=cache)
    again = RunContext(source=Source())
    res = await execute(w, again, cache=cache)
    assert statuses(res)["n"] == "cached" and again.notes == ["n: LLM unavailable, used embedding fallback"]


async def test_progress_callback_counts_every_node(bare_ctx):
    seen = []
    await execute(pipeline(), bare_ctx, progress=lambda done, total, nid: seen.append((done, total, nid)))
    assert [s[0] for s in seen] == [1, 2, 3, 4] and {s[1] for s in seen} == {4}
    assert seen[-1][2] == "filter"


async def test_broken_progress_callback_does_not_sink_the_run(bare_ctx):
    def boom(*_):
        raise ValueError("ui gone")

    assert (await execute(pipeline(), bare_ctx, progress=boom)).ok


async def test_step_by_step_execution_matches_a_full_run(bare_ctx):
    w = pipeline()
    full = await execute(w, bare_ctx)
    CALLS.clear()
    values: dict = {}
    while layer := set(iter_ready(w, set(values))):
        step = await execute(w, bare_ctx, only=layer, values=values)
        assert {n.node_id for n in step.trace.nodes if n.status == "ok"} == set(layer)
        values.update(step.values)
    assert ids(values["filter"]) == ids(full.output)
    assert sorted(c[1] for c in CALLS) == sorted(["src1", "src2", "union", "filter"])  # each ran once


async def test_only_runs_the_needed_upstream(bare_ctx):
    w = pipeline()
    w.nodes.append(wf([("stray", "t_slow", {"seconds": 0})], [], None).nodes[0])
    res = await execute(w, bare_ctx, only={"union"})
    assert set(res.values) == {"src1", "src2", "union"}


async def test_run_node_alone_with_previous_values(bare_ctx):
    w = pipeline()
    first = await execute(w, bare_ctx)
    w2 = apply_edit(w, ModifyNode(node_id="filter", params={"drop": ["a"]}))
    CALLS.clear()
    out = await run_node(w2, "filter", bare_ctx, first.values)
    assert ids(out.value) == ["b", "c"] and out.trace.status == "ok"
    assert [c[1] for c in CALLS] == ["filter"]
    with pytest.raises(WorkflowError) as ei:
        await run_node(w2, "filter", bare_ctx, {})
    assert "no value yet for its input 'union'" in str(ei.value)
    # a many port runs on whatever inputs are there
    partial = await run_node(w2, "union", bare_ctx, {"src1": first.values["src1"]})
    assert ids(partial.value) == ["a", "b"] and "'src2' has no value yet" in partial.trace.note


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(edit_st, min_size=1, max_size=8))
def test_any_workflow_reachable_by_edits_runs_to_a_full_trace(edits):
    w = apply_edit(pipeline(), ModifyNode(node_id="src2", op="t_fail"))  # failures must flow through too
    for edit in edits:  # keep the edits that apply; each result is a valid workflow
        with contextlib.suppress(WorkflowError):
            w = apply_edit(w, edit)
    res = asyncio.run(execute(w, RunContext(source=Source()), cache=MemoCache()))
    by_id = {n.node_id: n for n in res.trace.nodes}
    assert set(by_id) == {n.id for n in w.nodes}  # every node accounted for
    for nid, t in by_id.items():
        assert (t.status == "failed") == (nid in res.errors)
        assert (nid in res.values) == (t.status in ("ok", "cached"))
        if t.status == "skipped":
            assert t.error.startswith("skipped: input from")
    assert (res.output is None) or (w.output in res.values)


# --- a real workflow over the corpus slice -------------------------------------------------------


async def test_real_operators_over_the_corpus_slice(local_source):
    from workflows.model import Workflow

    w = Workflow.model_validate(
        {
            "name": "bleu successors",
            "nodes": [
                {"id": "anchor", "op": "anchor", "params": {"query": "acl:P02-1040"}},
                {"id": "cites", "op": "citation_expand", "params": {"direction": "citations", "depth": 1}},
                {
                    "id": "search",
                    "op": "keyword_search",
                    "params": {"query": "machine translation evaluation", "limit": 30},
                },
                {"id": "union", "op": "union"},
                {"id": "top", "op": "top_k", "params": {"k": 10}},
            ],
            "edges": [
                {"source": "anchor", "target": "cites"},
                {"source": "anchor", "target": "search", "port": "anchor"},
                {"source": "cites", "target": "union"},
                {"source": "search", "target": "union"},
                {"source": "union", "target": "top"},
            ],
            "output": "top",
        }
    )
    cache = MemoCache()
    corpus_ctx = RunContext(source=local_source)
    res = await execute(w, corpus_ctx, cache=cache)
    assert res.ok, res.errors
    assert 0 < len(res.output) <= 10
    assert all({"cites", "search"} & set(r.evidence.nodes) for r in res.output)  # provenance survives the union
    again = await execute(apply_edit(w, ModifyNode(node_id="top", params={"k": 5})), corpus_ctx, cache=cache)
    assert statuses(again) == {
        "anchor": "cached",
        "cites": "cached",
        "search": "cached",
        "union": "cached",
        "top": "ok",
    }
    assert [r.paper.id for r in again.output] == [r.paper.id for r in res.output][:5]


async def test_hidden_edges_cases_never_share_node_values(local_source):
    from pilot.sources.hidden import HiddenEdgesSource
    from workflows.model import Workflow

    w = Workflow.model_validate(
        {
            "nodes": [
                {"id": "anchor", "op": "anchor", "params": {"query": "acl:P02-1040"}},
                {"id": "refs", "op": "citation_expand", "params": {"direction": "citations", "depth": 1}},
            ],
            "edges": [{"source": "anchor", "target": "refs"}],
            "output": "refs",
        }
    )
    cache = MemoCache()
    open_run = await execute(w, RunContext(source=local_source), cache=cache)
    assert open_run.ok and len(open_run.output) > 0
    hidden = HiddenEdgesSource(local_source, "acl:P02-1040", "anchor_incoming")
    hidden_run = await execute(w, RunContext(source=hidden), cache=cache)
    assert statuses(hidden_run)["refs"] != "cached"
    assert {r.paper.id for r in hidden_run.output or []} < {r.paper.id for r in open_run.output}
    other_case = HiddenEdgesSource(local_source, "acl:J93-2004", "anchor_incoming")
    assert statuses(await execute(w, RunContext(source=other_case), cache=cache))["refs"] != "cached"


# --- drawing -------------------------------------------------------------------------------------


async def _failed_run(bare_ctx):
    w = wf(
        [
            ("good", "t_source", {"ids": ["<b>x</b>"]}),
            ("bad", "t_fail", {}),
            ("fbad", "t_filter", {}),
            ("u", "t_union", {}),
        ],
        [("bad", "fbad"), ("good", "u"), ("fbad", "u")],
        "u",
    )
    w.nodes[0].label = 'evil "<script>alert(1)</script>'
    cache = MemoCache()
    await execute(wf([("good", "t_source", {"ids": ["<b>x</b>"]})], [], "good"), bare_ctx, cache=cache)
    return w, (await execute(w, bare_ctx, cache=cache)).trace


async def test_svg_colours_statuses_and_escapes_labels(bare_ctx):
    import xml.etree.ElementTree as ET

    from workflows.draw import to_svg

    w, trace = await _failed_run(bare_ctx)
    svg = to_svg(w, trace)
    root = ET.fromstring(svg)  # well-formed despite the hostile label
    assert "<script" not in svg and "&lt;script&gt;" in svg
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = {g.get("data-node"): g for g in root.iterfind(".//s:g", ns)}
    fills = {nid: g.find("s:rect", ns).get("fill") for nid, g in groups.items()}
    assert fills["bad"] == "#fde2e2"  # failed: red
    assert groups["good"].get("class") == "node status-cached"
    assert groups["fbad"].get("class") == "node status-skipped" and fills["fbad"] == "#eeeeee"
    tip = groups["bad"].find("s:title", ns).text
    assert "[testsrc] citations are not available offline" in tip and "bad (t_fail): test: always fails" in tip
    assert len(root.findall(".//s:path[@class='edge']", ns)) == 3


def test_svg_layout_flows_left_to_right():
    from workflows.draw import layout

    w = pipeline()
    pos = layout(w)
    assert all(pos[e.source][0] < pos[e.target][0] for e in w.edges)
    assert pos["src1"][1] != pos["src2"][1]  # two sources do not overlap
    # a draft with a cycle still gets drawn
    w.edges.append(wf([], [("filter", "union")], None).edges[0])
    assert set(layout(w)) == {"src1", "src2", "union", "filter"}


async def test_mermaid_and_dot(bare_ctx):
    from workflows.draw import to_dot, to_mermaid

    w, trace = await _failed_run(bare_ctx)
    text = to_mermaid(w, trace)
    assert text.startswith("flowchart LR")
    assert "<script" not in text and '"<' not in text and "#60;script#62;" in text
    n_bad = [line.split("[")[0].strip() for line in text.splitlines() if "t_fail" in line][0]
    assert f"class {n_bad} failed" in text
    assert "-->" in text and '(["' in text  # output node gets the rounded shape
    dot = to_dot(w, trace)
    assert dot.startswith("digraph") and '"bad" -> "fbad"' in dot and 'fillcolor="#fde2e2"' in dot


async def test_running_a_node_that_does_not_exist_is_a_missing_node_error(bare_ctx):
    with pytest.raises(WorkflowError) as err:
        await run_node(pipeline(), "ghost", bare_ctx, {})
    assert err.value.kinds == {MISSING_NODE} and "no such node" in str(err.value)
    with pytest.raises(WorkflowError) as err:
        await execute(pipeline(), bare_ctx, only={"ghost"})
    assert err.value.kinds == {MISSING_NODE}


async def test_an_operators_own_input_problem_is_its_error_not_a_source_one(bare_ctx):
    w = Workflow.model_validate(
        {"nodes": [{"id": "search", "op": "keyword_search", "params": {}}], "edges": [], "output": "search"}
    )
    res = await execute(w, bare_ctx)
    assert res.errors["search"].startswith("nothing to search for — set params.query")  # no "[keyword_search]"
