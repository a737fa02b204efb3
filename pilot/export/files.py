"""The other downloads of a result list: CSV (one row per paper, with why it is there) and the workflow
JSON recipe, which loads back to re-run."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterable, Sequence

from pydantic import ValidationError

from pilot import limits
from pilot.models import RankedPaper
from workflows.explain import why
from workflows.model import Workflow
from workflows.validate import size_problems

# --- CSV --------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "rank", "id", "title", "authors", "year", "venue", "citation_count", "score",
    "doi", "url", "nodes", "why", "matched_terms", "snippet", "kept",
)  # fmt: skip


# line and cell breaks of every kind: a title holding "\r" must not start a new row in any reader
_BREAKS = re.compile(r"[\r\n\t\v\f\x1c-\x1e\x85\u2028\u2029]+")


def _cell(value: object) -> object:
    """One CSV cell: breaks collapsed to a space first, so no formula can start a new line or row; then
    spreadsheet apps' formula characters at the start (after blanks) are made plain text with a quote."""
    if not isinstance(value, str):
        return value
    text = _BREAKS.sub(" ", value)
    if text.lstrip()[:1] in ("=", "+", "-", "@"):
        return "'" + text
    return text


def to_csv(results: Sequence[RankedPaper], kept_ids: Iterable[str] = (), workflow: Workflow | None = None) -> str:
    """One row per paper; with the workflow that found them, a "why" column in words (see workflows.explain)."""
    kept = set(kept_ids)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, r in enumerate(results, start=1):
        p = r.paper
        row = [
            rank, p.id, html.unescape(p.title), "; ".join(a.name for a in p.authors), p.year or "",
            p.venue or "", "" if p.citation_count is None else p.citation_count, f"{r.score:.4f}",
            p.doi or "", p.canonical_url, " ".join(r.evidence.nodes), "; ".join(why(workflow, r)),
            "; ".join(r.evidence.matched_terms), r.evidence.snippet or "", "yes" if p.id in kept else "",
        ]  # fmt: skip
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


# --- workflow recipe --------------------------------------------------------------------------


class RecipeError(ValueError):
    """A workflow JSON file that cannot be loaded; the message says what is wrong, for the UI."""


def workflow_recipe(workflow: Workflow) -> str:
    return workflow.to_json()


def load_recipe(text: str | bytes) -> Workflow:
    """A workflow from a recipe file's content, or a ``RecipeError`` that says in one short sentence what
    is wrong (never a traceback, never the file's content echoed back). A UTF-8 byte-order mark is fine;
    a file over ``limits.MAX_RECIPE_BYTES`` or a workflow over the other limits is refused."""
    if len(text) > limits.MAX_RECIPE_BYTES:
        raise RecipeError(
            f"the workflow file is {len(text) / 1024:,.0f} KB; at most {limits.MAX_RECIPE_BYTES // 1024} KB are allowed"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise RecipeError("the workflow file is not UTF-8 text") from None
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        raise RecipeError(f"the workflow file is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise RecipeError("the workflow file is nested too deeply to be a pilot workflow") from None
    except ValueError:  # an integer of more than 4,300 digits
        raise RecipeError("the workflow file holds a number too long to read") from None
    if isinstance(data, dict) and isinstance(data.get("workflow"), dict):
        data = data["workflow"]  # tolerate a wrapper such as an evaluation run record
    try:
        workflow = Workflow.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p)[:40] for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise RecipeError(f"the file is not a pilot workflow: {problems}") from None
    except RecursionError:
        raise RecipeError("the workflow file is nested too deeply to be a pilot workflow") from None
    too_big = size_problems(workflow)
    if too_big:
        raise RecipeError("the workflow is too big to load: " + "; ".join(p.message for p in too_big[:3]))
    return workflow


def export_targets(results: Sequence[RankedPaper], kept_ids: Iterable[str]) -> list[RankedPaper]:
    """What an export covers: the kept papers (in rank order) when any are kept, else the whole list."""
    kept = set(kept_ids)
    chosen = [r for r in results if r.paper.id in kept]
    return chosen or list(results)
