"""The reading cases' neutral format (``../shared/reading/README.md``): a case's context as a reader ``State``, and
a ``Reading`` as the neutral reading the scorer grades.
"""

from __future__ import annotations

from typing import Any

from pilot.reading.answers import option_range
from pilot.reading.lexicon import lexicon
from pilot.reading.model import QuestionState, Reading, State
from pilot.reading.tokens import without_possessive
from pilot.vocab import DIRECTION_OPTIONS, FACET_OPTIONS

_DIRECTION_NAME = {"sibling": "similar"}
_TYPE_NAME = {"resource": "dataset"}
_DIRECTION_OF_OPTION = {label.lower(): d for d, label in DIRECTION_OPTIONS.items()}
_RECENCY_OF_OPTION = {"seminal, highly cited work": "seminal", "the most recent work": "recent"}
_NEUTRAL_DIRECTION = {"similar": "sibling"}
_FACET_OF_OPTION = {label: facet for facet, label in FACET_OPTIONS.items()}


def state_of(context: dict[str, Any]) -> State:
    """The reader's state for a case's ``context``."""
    phase = context.get("state", "fresh")
    search = context.get("search") or {}
    listed = int(context.get("listed", 10 if phase in ("results", "entity_answer") else 0))
    question = None
    if (q := context.get("question")) is not None:
        sets: list[dict[str, Any]] = []
        for label in q.get("options", []):
            low = label.lower()
            if q["slot"] == "direction" and low in _DIRECTION_OF_OPTION:
                sets.append({"direction": _DIRECTION_OF_OPTION[low]})
            elif q["slot"] == "facet" and label in _FACET_OF_OPTION:
                sets.append({"facet": _FACET_OF_OPTION[label]})
            elif q["slot"] == "recency" and low in _RECENCY_OF_OPTION:
                sets.append({"recency": _RECENCY_OF_OPTION[low]})
            else:
                sets.append({})
        question = QuestionState(
            slot=q["slot"], text=q.get("text", ""), options=list(q.get("options", [])), option_sets=sets
        )
    direction = search.get("direction")
    return State(
        phase=phase,
        question=question,
        listed=listed,
        anchor=search.get("anchor"),
        topic=search.get("topic"),
        direction=_NEUTRAL_DIRECTION.get(direction or "", direction),
        asked=context.get("asked"),
    )


def _as_written(reading: Reading, venue: str) -> str:
    """A venue as the message names it ("NIPS", "Computational Linguistics"), not the lexicon's short name."""
    for s in reading.spans:
        if s.kind == "venue" and s.value == venue:
            return without_possessive(s.text)
    return venue


def neutral(reading: Reading, state: State) -> dict[str, Any]:
    """The neutral reading of ``reading`` (only the keys it sets)."""
    out: dict[str, Any] = {"act": reading.act}
    c = reading.constraints
    if reading.act == "search":
        a = reading.anchor
        out["anchor"] = (state.anchor if a.kind == "current" else a.text) if a is not None else None
        out["topic"] = reading.topic
        out["direction"] = _DIRECTION_NAME.get(reading.direction or "", reading.direction)
        if reading.also_cites:
            out["also_cites"] = [a.text for a in reading.also_cites]
        # pilot's own keys (graded only where a case gives them)
        if a is not None and a.kind in ("current", "result"):
            out["target"] = a.kind
            if a.kind == "result" and a.ref is not None:
                out["refs"] = [a.ref]
        if a is not None and a.year is not None and a.kind != "cited":
            out["anchor_year"] = a.year
            if a.kind == "current":
                del out["target"]
        if a is not None and a.authors and "authors" not in out:
            out["authors"] = list(a.authors)
        if reading.correction:
            out["correction"] = True
        if reading.period_of:
            out["period_of"] = list(reading.period_of)
        if reading.focus:
            out["focus"] = reading.focus
    if reading.act in ("search", "refine", "answer"):
        for key in ("year_min", "year_max", "min_citations", "k", "sort", "recency", "facet"):
            if (v := getattr(c, key)) is not None:
                out[key] = v
        for key in ("venues", "authors", "exclude_authors", "exclude_venues", "exclude_terms", "orgs"):
            if v := getattr(c, key):
                out[key] = [_as_written(reading, x) for x in v] if "venues" in key else list(v)
        for key in ("publication_kinds", "exclude_kinds"):
            if v := [k for k in getattr(c, key) if k != "preprint"]:
                out[key] = v
        if c.exclude_years:
            out["exclude_years"] = [list(p) for p in c.exclude_years]
        # the neutral format counts a preprint as a kind of paper
        types = [_TYPE_NAME.get(t, t) for t in c.paper_types] + (
            ["preprint"] if "preprint" in c.publication_kinds else []
        )
        excluded = [_TYPE_NAME.get(t, t) for t in c.exclude_types] + (
            ["preprint"] if "preprint" in c.exclude_kinds else []
        )
        if types:
            out["paper_types"] = types
        if excluded:
            out["exclude_types"] = excluded
    if reading.act == "refine" and reading.refine is not None:
        r = reading.refine
        for key in ("drop", "keep", "more_like", "less_like"):
            if v := getattr(r, key):
                out[key] = list(v)
        if r.focus:
            out["focus"] = r.focus
        for key in ("size", "extra"):
            if (v := getattr(r, key)) is not None:
                out[key] = v
        for key in ("any_year", "any_venue"):
            if getattr(r, key):
                out[key] = True
    if reading.act == "answer":
        q = state.question
        if reading.option is not None and q is not None and 0 <= reading.option < len(q.options):
            out["option"] = label = q.options[reading.option]
            # what the option chosen sets, where its label says it: a venue's name, a period's years
            if q.slot == "venue" and "venues" not in out and lexicon().venue(label) is not None:
                out["venues"] = [label]
            if q.slot == "time" and "year_min" not in out and "year_max" not in out and (years := option_range(label)):
                out.update({k: v for k, v in zip(("year_min", "year_max"), years, strict=True) if v is not None})
        elif reading.no_preference:
            out["option"] = "none"
        if reading.topic:
            out["topic"] = reading.topic
    if reading.act == "entity" and reading.entity is not None:
        e = reading.entity
        ask = {"authors_papers": "papers", "profile": "papers"}.get(e.ask, e.ask)
        out["ask"] = ask
        for key in ("person", "venue", "org", "topic", "paper", "year_min", "year_max"):
            if (v := getattr(e, key)) is not None:
                out[key] = _as_written(reading, v) if key == "venue" else v
    if reading.act == "command":
        # the neutral vocabulary has no "cite": results' citations in a format are those results exported
        out["command"] = "export" if reading.command == "cite" else reading.command
        if reading.command == "earlier" and reading.about == "previous":
            out["command"] = "undo"  # "back to the previous results" is one step back; only a named search is "earlier"
        if reading.format:
            out["format"] = reading.format
        if reading.refs:
            out["refs"] = list(reading.refs)
        if reading.about:
            out["about"] = {"resource": "dataset"}.get(reading.about, reading.about)
        if reading.papers:
            out["paper"] = reading.papers[0].text
        if reading.step:
            out["step_action"] = reading.step.get("action")
            for key in ("step", "param", "value"):
                if reading.step.get(key):
                    out[key] = reading.step[key]
    if reading.act == "entity" and reading.entity is not None and reading.entity.coauthor:
        out["coauthor"] = reading.entity.coauthor
    return out
