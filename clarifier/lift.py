"""A filter that leaves few papers says so and offers to lift it (issue 33).

"datasets for table question answering" keeps only resource papers; when that leaves fewer than ``FEW`` results the
reply says which of the user's own constraints narrowed the list and asks, with the results on screen, whether to
lift it — a type filter becomes a preference then (the type still ranks first, the others come back), a citation
floor, a period or a venue goes. The answer re-runs the search like any other answer.
"""

from __future__ import annotations

from typing import Any

from clarifier.question import Option, Question
from pilot.models import Intent
from pilot.vocab import PAPER_TYPE_PLURALS

FEW = 10
KEEP = "Keep the filter"


def _constraints(intent: Intent) -> list[tuple[str, str, dict[str, Any]]]:
    """(what narrows, the option's label, what the option sets) for each hard constraint the user stated."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    if intent.paper_types:
        kinds = " and ".join(PAPER_TYPE_PLURALS[t] for t in intent.paper_types)
        prefer = list(dict.fromkeys([*intent.prefer_types, *intent.paper_types]))
        out.append(
            (f"only {kinds}", f"Show every kind of paper, {kinds} first", {"paper_types": [], "prefer_types": prefer})
        )
    if intent.min_citations:
        out.append((f"at least {intent.min_citations} citations", "Drop the citation floor", {"min_citations": None}))
    if intent.year_min is not None or intent.year_max is not None:
        lo, hi = intent.year_min, intent.year_max
        period = f"{lo}–{hi}" if lo and hi else (f"from {lo} on" if lo else f"up to {hi}")
        out.append((f"the period {period}", "Any year", {"year_min": None, "year_max": None}))
    if intent.venues:
        out.append((f"only {', '.join(intent.venues)}", "Any venue", {"venues": []}))
    return out


def lift_offer(intent: Intent, shown: int) -> Question | None:
    """The offer to lift the user's filters when they leave fewer than ``FEW`` papers (None otherwise)."""
    found = _constraints(intent)
    if shown >= FEW or not found:
        return None
    said = "; ".join(what for what, _, _ in found)
    options = [Option(label=label, sets=sets) for _, label, sets in found[:3]]
    if len(found) > 1:
        lift_all: dict[str, Any] = {}
        for _, _, sets in found:
            lift_all.update(sets)
        options.append(Option(label="Lift all of them", sets=lift_all))
    options.append(Option(label=KEEP, sets={}))
    papers = "paper is" if shown == 1 else "papers are"
    return Question(slot="lift", text=f"Only {shown} {papers} left with {said}. Lift it?", options=options)
