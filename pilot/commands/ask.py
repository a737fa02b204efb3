"""``pilot ask "QUESTION" [--corpus FILE] [--llm MODEL] [--json]``: one question, one cited answer.

With ``--json`` stdout carries exactly one JSON object, whatever the question:
``{"kind", "plan", "answer", "reference", "trace": {"ok", "failed_nodes"}, "notes"}``. Anything a
library prints while loading (progress bars, model loading) is sent to stderr so the JSON stays
parseable, and every failure becomes a readable ``answer`` rather than a traceback.
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

from pilot.kg.classify import classify
from pilot.kg.run import ask
from pilot.runtime import Runtime
from pilot.settings import Settings

log = logging.getLogger(__name__)


def add(sub) -> None:
    p = sub.add_parser("ask", help="answer one question about papers, authors, venues or institutions")
    p.add_argument("question", nargs="?", default="", help="the question, in any language")
    p.add_argument("--corpus", help="offline corpus file (overrides PILOT_CORPUS; uses only that source)")
    p.add_argument("--llm", default=None, help="litellm model name for planning and answering (default: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def _runtime(corpus: str | None, llm: str | None) -> Any:
    overrides: dict[str, Any] = {}
    if corpus:
        overrides["corpus"] = corpus
        if "PILOT_SOURCES" not in os.environ:
            overrides["sources"] = "local"  # an explicit corpus means offline: do not probe the network
    if llm:
        overrides["llm_model"] = llm
    settings = Settings(**overrides)

    return Runtime.from_settings(settings, llm_model=llm)


def result_json(kind: str, plan: Any, answer: Any, trace: Any, notes: list[str]) -> dict:
    return {
        "kind": kind,
        "plan": plan.model_dump(mode="json") if plan is not None else None,
        "answer": answer.answer,
        "reference": dict(answer.reference),
        "trace": {
            "ok": bool(trace is not None and trace.nodes and trace.ok),
            "failed_nodes": list(trace.failed_nodes) if trace is not None else [],
        },
        "notes": notes,
    }


async def _ask(question: str, corpus: str | None, llm: str | None) -> dict:
    runtime = _runtime(corpus, llm)
    try:
        asked = await ask(question, runtime)
    finally:
        source = getattr(runtime, "source", None)
        if source is not None:
            with contextlib.suppress(Exception):
                await source.aclose()
    notes = list(getattr(runtime, "notes", []) or []) + asked.notes
    return result_json(asked.kind, asked.plan, asked.answer, asked.run.trace, notes)


def answer_dict(question: str, corpus: str | None = None, llm: str | None = None) -> dict:
    """The ``--json`` object for ``question``; a failure anywhere becomes its ``answer`` text."""
    try:
        return asyncio.run(_ask(question, corpus, llm))
    except Exception as exc:  # noqa: BLE001 - the command's boundary: one JSON object, never a traceback
        log.debug("pilot ask failed", exc_info=True)
        return {
            "kind": "entity" if classify(question) == "entity" else "papers",
            "plan": None,
            "answer": f"I could not answer this: {type(exc).__name__}: {exc}",
            "reference": {},
            "trace": {"ok": False, "failed_nodes": []},
            "notes": [],
        }


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):
        out = answer_dict(args.question or "", args.corpus, args.llm)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(out["answer"])
        for key, url in out["reference"].items():
            print(f"  {key} {url}")
        for note in out["notes"]:
            print(f"  note: {note}", file=sys.stderr)
    return 0 if args.json or out["trace"]["ok"] else 1
