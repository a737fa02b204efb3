"""The other downloads of a result list: CSV (one row per paper, with why it is there) and the workflow
JSON recipe, which loads back to re-run."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Iterable, Sequence

from pydantic import ValidationError

from pilot.models import RankedPaper
from workflows.explain import why
from workflows.model import Workflow

# --- CSV --------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "rank", "id", "title", "authors", "year", "venue", "citation_count", "score",
    "doi", "url", "nodes", "why", "matched_terms", "snippet", "kept",
)  # fmt: skip


def _cell(value: object) -> object:
    # Spreadsheet apps execute cells that start with these characters; a quote makes them plain text.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


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
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise RecipeError("the workflow file is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecipeError(f"the workflow file is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if isinstance(data, dict) and isinstance(data.get("workflow"), dict):
        data = data["workflow"]  # tolerate a wrapper such as an evaluation run record
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()[:5])
        raise RecipeError(f"the file is not a pilot workflow: {problems}") from None


def export_targets(results: Sequence[RankedPaper], kept_ids: Iterable[str]) -> list[RankedPaper]:
    """What an export covers: the kept papers (in rank order) when any are kept, else the whole list."""
    kept = set(kept_ids)
    chosen = [r for r in results if r.paper.id in kept]
    return chosen or list(results)
