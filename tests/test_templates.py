"""Direction templates and the generic workflow: they validate, run end to end on the slice through the
executor, never return the anchor, and turn intent fields into node params."""

from __future__ import annotations

import pytest

from pilot.embed import Embedder
from pilot.models import Intent
from pilot.sources.hidden import HiddenEdgesSource
from pilot.vocab import DIRECTIONS
from workflows.executor import MemoCache, execute
from workflows.operator import RunContext
from workflows.templates import TemplateError, generic_workflow, template
from workflows.validate import check

ANCHOR = "acl:N03-1033"


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def test_every_template_validates_with_and_without_intent():
    intent = Intent(year_min=1995, year_max=2005, venues=["ACL"], topic_terms=["tagging"], recency="recent", k=20,
                    resource_types=["treebank"], exclude_terms=["speech"], disliked_ids=["acl:X"])  # fmt: skip
    for direction in DIRECTIONS:
        for it in (None, intent):
            wf = template(direction, ANCHOR, it)
            assert check(wf) == [], direction
            assert wf.output == "evidence" and wf.has_node("anchor") and wf.has_node("score")
    assert check(generic_workflow(ANCHOR, "papers like this")) == []
    assert check(generic_workflow("", "part-of-speech tagging with dependency networks")) == []


def test_intent_fields_become_params():
    intent = Intent(year_min=2000, year_max=2004, venues=["EMNLP"], topic_terms=["tagging", "pos"], k=15,
                    exclude_terms=["speech"], disliked_ids=["acl:W00-1308"], resource_types=["treebank"])  # fmt: skip
    wf = template("benchmark", ANCHOR, intent)
    f = wf.node("filter").params
    assert (f["year_min"], f["year_max"], f["venues"], f["exclude_terms"], f["exclude_ids"]) == (
        2000,
        2004,
        ["EMNLP"],
        ["speech"],
        ["acl:W00-1308"],
    )
    assert "relative_to_anchor" not in f  # the user's years replace "older than the anchor"
    s = wf.node("score").params
    assert s["text"] == "tagging pos" and s["features"]["lexical"] >= 1.0 and "treebank" in s["title_terms"]
    assert wf.node("top").params["k"] == 15
    assert template("predecessor", ANCHOR).node("filter").params["relative_to_anchor"] == "before"
    seminal = template("successor", ANCHOR, Intent(recency="seminal")).node("score").params["features"]
    assert seminal["recency"] < 0 and seminal["citations"] > 0.2


def test_template_errors_are_clear():
    with pytest.raises(TemplateError, match="unknown direction 'sideways'"):
        template("sideways", ANCHOR)
    with pytest.raises(TemplateError, match="needs an anchor"):
        template("survey", "  ")
    with pytest.raises(TemplateError):
        generic_workflow("", "")
    # an anchor already resolved into the intent is enough
    assert template("survey", "", Intent(anchor_id=ANCHOR)).node("anchor").params["query"] == ANCHOR
    assert generic_workflow("", "", Intent(anchor_id=ANCHOR)).has_node("anchor")


@pytest.mark.parametrize("direction", DIRECTIONS)
async def test_template_runs_and_excludes_the_anchor(direction, local_source, embedder):
    ctx = RunContext(source=local_source, embedder=embedder)
    result = await execute(template(direction, ANCHOR), ctx)
    assert result.errors == {}
    ranked = result.output
    assert ranked and len(ranked) <= 50
    assert ANCHOR not in [r.paper.id for r in ranked]
    assert all(r.evidence.nodes and r.evidence.snippet for r in ranked)
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)


async def test_successor_finds_citers_in_the_users_years(local_source, embedder, corpus_slice_rows):
    ctx = RunContext(source=local_source, embedder=embedder)
    citers = {r["id"] for r in corpus_slice_rows if "acl:P02-1040" in r["references"] and r["year"] in (2005, 2006)}
    result = await execute(template("successor", "acl:P02-1040", Intent(year_min=2005, year_max=2006, k=200)), ctx)
    got = [r.paper.id for r in result.output]
    assert citers and set(got[: len(citers)]) == citers  # every citer of those years, ranked above look-alikes
    assert all(r.paper.year in (2005, 2006) for r in result.output)


async def test_sibling_ranks_coupled_papers_first(local_source, embedder, corpus_slice_rows):
    by_id = {r["id"]: r for r in corpus_slice_rows}
    a_refs = set(by_id["acl:P03-1054"]["references"])
    ctx = RunContext(source=local_source, embedder=embedder)
    result = await execute(template("sibling", "acl:P03-1054"), ctx)
    top = result.output[:5]
    assert all(len(a_refs & set(by_id[r.paper.id]["references"])) >= 2 for r in top)
    # siblings neither cite nor are cited by the anchor
    assert all(
        "acl:P03-1054" not in by_id[r.paper.id]["references"] and r.paper.id not in a_refs for r in result.output
    )


async def test_generic_workflow_runs_with_text_only_and_reruns_from_cache(local_source, embedder):
    ctx = RunContext(source=local_source, embedder=embedder)
    cache = MemoCache()
    wf = generic_workflow("", "part-of-speech tagging with dependency networks")
    first = await execute(wf, ctx, cache=cache)
    assert first.errors == {} and first.output
    assert any("tagging" in r.paper.title.lower() for r in first.output[:10])
    again = await execute(wf, ctx, cache=cache)
    assert {n.status for n in again.trace.nodes} == {"cached"}
    assert [r.paper.id for r in again.output] == [r.paper.id for r in first.output]


async def test_liked_papers_and_more_like_them_join_the_candidates(local_source, embedder):
    intent = Intent(liked_ids=["acl:W96-0213"], disliked_ids=["acl:P03-1054"])
    wf = template("sibling", ANCHOR, intent)
    assert {"liked", "more_like_liked"} <= {e.source for e in wf.inputs_of("merge")}
    result = await execute(wf, RunContext(source=local_source, embedder=embedder))
    assert result.errors == {}
    got = [r.paper.id for r in result.output]
    assert "acl:P03-1054" not in got
    assert any("more_like_liked" in r.evidence.nodes for r in result.output)


async def test_predecessor_without_references_ranks_what_the_closest_neighbours_cite(
    local_source, embedder, corpus_slice_rows
):
    # a draft: none of the anchor's references are known; the neighbours' votes, closest weighing most, and
    # counting older neighbours the other neighbours cite, are visible per result as graph.centrality
    by_id = {r["id"]: r for r in corpus_slice_rows}
    source = HiddenEdgesSource(local_source, ANCHOR, "anchor_outgoing")
    wf = template("predecessor", ANCHOR)
    # a cold model and index on a loaded machine must not fail the run: this test is about the ranking
    result = await execute(wf, RunContext(source=source, embedder=embedder), timeout_s=300)
    assert result.errors == {}
    decay = wf.node("graph").params["rank_decay"]
    seeds = [it.paper.id for it in result.values["search_dense"]][: wf.node("graph").params["max_seeds"]]
    expected: dict[str, float] = {}
    for rank, seed in enumerate(seeds):
        for ref in set(by_id[seed]["references"]):
            expected[ref] = expected.get(ref, 0.0) + 1.0 / (1.0 + rank / decay)
    got = {it.paper.id: it.evidence.scores.get("graph.centrality", 0.0) for it in result.values["graph"]}
    assert got == pytest.approx({pid: expected.get(pid, 0.0) for pid in got}, abs=1e-3)
    assert any(pid in seeds and v > 0 for pid, v in got.items())  # a neighbour the others cite counts too
    ranked = [it.paper.id for it in result.output]
    central = max((pid for pid in got if pid in ranked), key=lambda pid: got[pid])
    assert ranked.index(central) < len(ranked) // 2
