"""Sibling search with a facet ("similar in its method / problem / results") is a content relation: the
anchor's references stay candidates and text similarity outweighs coupling; without a facet, siblings
are the papers that neither cite nor are cited by the anchor, ranked by coupling first."""

from __future__ import annotations

import pytest

from pilot.embed import Embedder
from pilot.models import Intent
from workflows.executor import execute
from workflows.operator import RunContext
from workflows.templates import template
from workflows.validate import check

ANCHOR = "acl:P03-1054"


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


def test_facet_keeps_node_ids_and_only_drops_citers():
    plain = template("sibling", ANCHOR)
    faceted = template("sibling", ANCHOR, Intent(direction="sibling", facet="method"))
    assert check(faceted) == []
    # an edited plain workflow and a faceted one must diff node by node: the facet adds one step
    assert [n.id for n in faceted.nodes if n.id != "facet"] == [n.id for n in plain.nodes]
    assert faceted.node("facet").op == "facet_match"
    assert {e.source for e in faceted.inputs_of("merge")} >= {"refs"}
    assert "refs" not in {e.source for e in plain.inputs_of("merge")}
    minus = lambda wf: {e.source for e in wf.inputs_of("not_linked") if e.port == "minus"}  # noqa: E731
    assert minus(plain) == {"refs", "citers"} and minus(faceted) == {"citers"}
    f_plain = plain.node("score").params["features"]
    f_facet = faceted.node("score").params["features"]
    assert f_facet["dense"] > f_facet["ev:coupled.support"]  # text first when an aspect is named
    assert f_plain["ev:coupled.support"] > f_plain["dense"]  # the citation-graph sibling otherwise


async def test_facet_search_may_return_the_anchors_references_but_never_its_citers(
    local_source, embedder, corpus_slice_rows
):
    by_id = {r["id"]: r for r in corpus_slice_rows}
    a_refs = set(by_id[ANCHOR]["references"]) & set(by_id)
    citers = {r["id"] for r in corpus_slice_rows if ANCHOR in (r.get("references") or [])}
    assert a_refs and citers  # the slice holds both sides of the anchor's graph
    ctx = RunContext(source=local_source, embedder=embedder)
    faceted = await execute(template("sibling", ANCHOR, Intent(direction="sibling", facet="method", k=200)), ctx)
    plain = await execute(template("sibling", ANCHOR, Intent(k=200)), ctx)
    assert faceted.errors == {} and plain.errors == {}
    got_f = [r.paper.id for r in faceted.output]
    got_p = [r.paper.id for r in plain.output]
    assert ANCHOR not in got_f and not citers & set(got_f)
    assert a_refs & set(got_f[:50])  # work the anchor builds on, close to it in content, is a valid answer
    assert not a_refs & set(got_p)
