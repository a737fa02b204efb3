"""Helpers for the operator tests: run one operator the way the executor does (validated params, own node id)."""

from __future__ import annotations

import dataclasses
from typing import Any

from pilot.models import Paper, RankedPaper
from pilot.store.text import display_name, split_affiliation
from pilot.text import fold
from workflows.operator import RunContext
from workflows.ops.entities import org_matches
from workflows.registry import get_operator


async def run_op(
    ctx: RunContext, op: str, params: dict[str, Any] | None = None, node_id: str = "", **inputs: Any
) -> Any:
    """Run operator ``op`` with ``params`` on ``inputs`` (port name -> value), as node ``node_id`` (default: op)."""
    cls = get_operator(op)
    node_ctx = dataclasses.replace(ctx, node_id=node_id or op, notes=[])  # as the executor: its own notes
    value = await cls().run(node_ctx, cls.Params.model_validate(params or {}), cls.Inputs.of(inputs))
    ctx.notes.extend(node_ctx.notes)
    return value


def as_ranked(papers: list[Paper], node: str = "given") -> list[RankedPaper]:
    return [RankedPaper(paper=p, score=1.0 / (i + 1), evidence={"nodes": [node]}) for i, p in enumerate(papers)]


def ids(items: list[RankedPaper]) -> list[str]:
    return [it.paper.id for it in items]


def at_venue_row(row: dict, venue: str) -> bool:
    """A raw corpus row appeared at ``venue`` by the corpus's venue rule (``pilot.venues.at_venue``: the ACL
    Anthology id decides for anthology papers; Findings are not the main conference)."""
    from pilot.venues import at_venue

    return at_venue(Paper.model_validate(row), venue)


def wrote_at_org_on_topic(rows: list[dict], name: str, org: str, topic_word: str) -> bool:
    """The raw corpus rows show ``name`` on a paper about ``topic_word``, written while at ``org``
    (an independent check of what the org/topic operators and answers claim)."""
    return any(
        fold(display_name(a["name"])) == fold(name)
        and any(org_matches(org, o) for o in split_affiliation(a["affiliation"]))
        and topic_word in fold(r["title"] + " " + (r["abstract"] or ""))
        for r in rows
        for a in r["authors"]
    )


def authored(rows: list[dict], person: str) -> list[dict]:
    """The raw corpus rows that list ``person`` as an author (names folded the store's way)."""
    want = fold(person)
    return [r for r in rows if any(fold(display_name(a["name"])) == want for a in r["authors"])]
