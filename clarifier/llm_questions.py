"""The LLM path of the clarifier: the model phrases this turn's question, the data still decides.

The deterministic policy chooses whether to ask and which slot (its entropy criterion needs no model);
the model gets that slot, the request, the anchor and a summary of the candidate set, and writes the
question and 3–5 options in the ``Question`` schema. The reply is validated (schema, 3–5 distinct
options, ``sets`` naming real intent fields with valid values that agree with the option's words),
repaired once, and otherwise replaced
by the deterministic question with a note saying why.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from clarifier.question import Question
from pilot.llm import LLM, LLMError
from pilot.models import Intent, Paper
from pilot.vocab import DIRECTIONS, FACETS

SYSTEM = (
    "You help a researcher narrow a literature search with ONE multiple-choice question. "
    "Reply with only a JSON object: "
    '{"slot": "<slot>", "text": "<the question>", '
    '"options": [{"label": "<short button text>", "sets": {<intent field>: <value>}}, ...]}. '
    "Give 3 to 5 options with distinct labels; one option may be a 'no preference' choice with empty sets. "
    f"Intent fields you may set: direction ({'|'.join(DIRECTIONS)}), facet ({'|'.join(FACETS)}), "
    "year_min, year_max (integers), venues (list of names), topic_terms (list of words), resource_types (list), "
    "recency (seminal|recent|any), k (integer)."
)


def option_problems(question: Question, slot: str | None = None) -> list[str]:
    """Semantic checks the schema cannot express: every option's ``sets`` must make a valid intent."""
    problems: list[str] = []
    if slot and question.slot != slot:
        problems.append(f"the question must be about slot {slot!r}, not {question.slot!r}")
    base = Intent().model_dump()
    if not question.text.strip() or len(question.text) > 300:
        problems.append("the question text must be one short sentence")
    for i, opt in enumerate(question.options, 1):
        if len(opt.label) > 100 or any(c in opt.label for c in '{}[]"') or not any(ch.isalnum() for ch in opt.label):
            # small models leak JSON syntax into labels; a button must read as plain words
            problems.append(f"option {i} label {opt.label[:60]!r} must be a few plain words")
        unknown = [
            k for k in opt.sets if k not in Intent.model_fields or k in ("kind", "request", "notes", "anchor_id")
        ]
        if unknown:
            problems.append(f"option {i} sets unknown field(s) {unknown}")
            continue
        try:
            Intent.model_validate({**base, **opt.sets})
        except ValueError as exc:
            problems.append(f"option {i} sets invalid values: {str(exc).splitlines()[0][:150]}")
            continue
        problems += [f"option {i}: {p}" for p in label_mismatches(opt.label, opt.sets)]
    return problems


_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def label_mismatches(label: str, sets: dict[str, Any]) -> list[str]:
    """Where a button's words and what it sets disagree: the user clicks the words, the search gets the sets.

    "After 2015" may set year_min 2016 (one year of slack); "2015 to 2020" must not set 2010. A label that
    names years or a venue must set them; a venue it sets must be named in it.
    """
    out: list[str] = []
    label_years = {int(y) for y in _YEAR.findall(label)}
    set_years = {v for k in ("year_min", "year_max") if isinstance(v := sets.get(k), int)}
    if set_years and label_years and not all(any(abs(y - ly) <= 1 for ly in label_years) for y in set_years):
        out.append(f"label {label!r} names years {sorted(label_years)} but sets {sorted(set_years)}")
    if label_years and not set_years:
        out.append(f"label {label!r} names a year but sets no year_min / year_max")
    if set_years and not label_years:
        out.append(f"sets years {sorted(set_years)} but the label {label!r} names none")
    for venue in sets.get("venues") or []:
        if isinstance(venue, str) and venue.lower() not in label.lower():
            out.append(f"sets venue {venue!r} that the label {label!r} does not name")
    return out


def candidate_summary(candidates: list[Paper], limit: int = 12) -> dict[str, Any]:
    years = sorted(p.year for p in candidates if p.year)
    return {
        "n": len(candidates),
        "years": [years[0], years[len(years) // 2], years[-1]] if years else [],
        "venues": Counter(p.venue for p in candidates if p.venue).most_common(6),
        "sample_titles": [p.title for p in candidates[:limit]],
    }


async def llm_question(
    llm: LLM,
    intent: Intent,
    anchor: Paper | None,
    candidates: list[Paper],
    fallback: Question,
) -> tuple[Question, list[str]]:
    """(question, notes). Falls back to ``fallback`` (the deterministic question) when the model fails."""
    user = json.dumps(
        {
            "ask_about_slot": fallback.slot,
            "request": intent.request,
            "anchor": {"title": anchor.title, "year": anchor.year, "venue": anchor.venue} if anchor else None,
            "intent_so_far": intent.model_dump(exclude_defaults=True, exclude={"request", "notes"}),
            "candidates": candidate_summary(candidates),
            "example_question": fallback.model_dump(),
        },
        ensure_ascii=False,
        default=str,
    )
    try:
        q = await llm.json(SYSTEM, user, Question, repair=1, check=lambda q: option_problems(q, fallback.slot))
    except LLMError as exc:
        return fallback, [f"LLM question unavailable ({exc}); asked the data-driven question instead"]
    return q, []
