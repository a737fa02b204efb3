"""``pilot search "REQUEST" [--corpus PATH] [--format table|json|bibtex|ris|csljson] [--out FILE]
[--answer TEXT ...]``: one paper search for scripts, no questions asked.

The request goes through the same session as the chat. Each clarifying question is answered by the next
``--answer`` meant for it — ``--answer "direction=later work"`` answers the question about the search
direction, a bare ``--answer "after 2015"`` the next open question — and once the answers run out the
search runs with the defaults (as "Search now" does). The list goes to stdout or ``--out``; what was
asked and answered goes to stderr, so stdout stays a clean table, JSON array or reference file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from typing import Any

from pilot import export
from pilot.commands.ask import _runtime
from pilot.domain import profile
from pilot.session import Session
from workflows.explain import match_strength, why

log = logging.getLogger(__name__)
FORMATS = ("table", "json", "bibtex", "ris", "csljson")
MAX_QUESTIONS = 8  # a runaway dialogue ends in a search, whatever the answers


def add(sub) -> None:
    p = sub.add_parser("search", help="search papers non-interactively (questions answered with defaults)")
    p.add_argument("request", help="what you want, e.g. 'later work on \"BLEU: a Method for …\"'")
    p.add_argument("--corpus", help="offline corpus file (overrides PILOT_CORPUS; uses only that source)")
    p.add_argument("--llm", default=None, help="litellm model name (default: none, deterministic rules)")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    p.add_argument("--out", help="write the output to this file instead of stdout")
    p.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="[SLOT=]TEXT",
        help="answer a clarifying question (SLOT: the question's topic, e.g. direction, years, venue); repeatable",
    )
    p.set_defaults(func=run)


def _split_answers(answers: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    by_slot: dict[str, list[str]] = {}
    free: list[str] = []
    for a in answers:
        slot, sep, text = a.partition("=")
        if sep and slot.strip() and " " not in slot.strip():
            by_slot.setdefault(slot.strip().lower(), []).append(text.strip())
        else:
            free.append(a.strip())
    return by_slot, free


def _slot_matches(slot: str, wanted: str) -> bool:
    slot, wanted = slot.lower(), wanted.lower()
    return slot == wanted or slot.startswith(wanted) or wanted.startswith(slot) or wanted in slot


async def search(request: str, runtime: Any, answers: list[str]) -> tuple[Any, list[str]]:
    """Run the dialogue to a result list; returns the session's final reply and a log of the dialogue."""
    session = Session(runtime)
    by_slot, free = _split_answers(answers)
    dialogue: list[str] = [f"request: {request}"]
    reply = await session.user_says(request)
    for _ in range(MAX_QUESTIONS):
        q = reply.question
        if q is None:
            break
        dialogue.append(f"asked ({q.slot}): {q.text}")
        slot = next((s for s in by_slot if by_slot[s] and _slot_matches(q.slot, s)), None)
        answer = by_slot[slot].pop(0) if slot else (free.pop(0) if free else None)
        if answer is None:
            dialogue.append("answered: (defaults) — searching now")
            reply = await session.search_now()
            break
        dialogue.append(f"answered: {answer}")
        reply = await session.user_says(answer)
    else:
        reply = await session.search_now()
    for note in reply.notes:
        dialogue.append(f"note: {note}")
    if reply.error:
        dialogue.append(f"error: {reply.error}")
    return reply, dialogue


def render(reply: Any, fmt: str) -> str:
    results = list(reply.results)
    papers = [r.paper for r in results]
    if fmt == "bibtex":
        return export.to_bibtex(papers)
    if fmt == "ris":
        return export.to_ris(papers)
    if fmt == "csljson":
        return export.to_csljson(papers)
    if fmt == "json":
        rows = [
            {
                "rank": i,
                "id": r.paper.id,
                "title": r.paper.title,
                "year": r.paper.year,
                "venue": r.paper.venue,
                "authors": [a.name for a in r.paper.authors],
                "citations": r.paper.citation_count,
                "url": r.paper.canonical_url,
                "match": match_strength(r),
                "score": round(r.score, 4),
                "why": _why(reply, r),
            }
            for i, r in enumerate(results, start=1)
        ]
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    lines = [f"{'#':>3}  {'year':<4}  {'venue':<10}  {'match':<13}  title"]
    for i, r in enumerate(results, start=1):
        p = r.paper
        venue = (profile().venue_label(p) or p.venue or "")[:10]
        lines.append(f"{i:>3}  {p.year or '':<4}  {venue:<10}  {match_strength(r):<13}  {p.title}")
    return "\n".join(lines) + "\n"


def _why(reply: Any, r: Any) -> list[str]:
    return why(reply.workflow, r)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):  # progress bars and model loading stay off stdout
        runtime = _runtime(args.corpus, args.llm)
        try:
            reply, dialogue = asyncio.run(search(args.request, runtime, list(args.answer)))
        finally:
            source = getattr(runtime, "source", None)
            if source is not None:
                with contextlib.suppress(Exception):
                    asyncio.run(source.aclose())
    for line in dialogue:
        print(line, file=sys.stderr)
    if not reply.results:
        print(reply.error or reply.message or "no results", file=sys.stderr)
        return 1
    text = render(reply, args.format)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {len(reply.results)} papers to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
