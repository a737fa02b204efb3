"""``pilot eval conversations``: scripted multi-search conversations, scored turn by turn.

    pilot eval conversations --corpus ../shared/corpus/papers.jsonl.gz --out runs/conv [--split heldout]

Each line of ``tests/data/conversations.jsonl`` is ``{"id", "split", "about", "turns": [...]}``; a turn
is one user action — ``{"say": text}``, ``{"choose": index}``, ``{"choose_label": text}`` (the option whose
label contains the text) or ``{"clear": true}`` (the chat's clear button: a fresh session) — with an
``expect`` object of checks on what the session made of it:

- ``kind``: how the message was read (``new_search``, ``refine``, ``answer``, ``entity``, ``command``,
  ``ambiguous``, ``unclear``); ``target``: what a new search is about (``paper``, ``topic``, ``current``)
- ``anchor`` (paper id, or null for none), ``direction``, ``topic``, ``paper_types``, ``filters``
  (intent fields: ``year_min``, ``year_max``, ``exclude_years``, ``venues``, ``recency``, ``facet``, ``k``, ``order``)
- ``results`` (results shown or not), ``results_min`` (at least that many listed papers),
  ``result_ids_exclude`` (no listed id contains the text)
- ``max_questions``: questions answered before the first results; ``no_slots``: slots never asked;
  ``question_slot``: the question left open
- ``says``: texts the replies of the turn contain (case-insensitive)

A turn that expects ``results`` (or ``results_min`` / ``max_questions``) is *settled* like a user in a
hurry would: every question before the first results is answered with its last option ("no preference"),
an anchor question with the option of the expected anchor. A turn passes when every check passes; a
conversation when all its turns do.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from pilot.eval.report import rate_bars
from pilot.runtime import Runtime
from pilot.session import Session
from pilot.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_CONVERSATIONS = Path(__file__).resolve().parents[2] / "tests" / "data" / "conversations.jsonl"
SETTLE_LIMIT = 6  # questions answered at most while settling one turn
CHECKS = (
    "kind",
    "target",
    "anchor",
    "direction",
    "topic",
    "paper_types",
    "filters",
    "results",
    "results_min",
    "result_ids_exclude",
    "max_questions",
    "no_slots",
    "question_slot",
    "says",
)
ACTIONS = ("say", "choose", "choose_label", "clear")


class ConversationError(ValueError):
    """A malformed conversations file, said with its line number."""


def load_conversations(path: Path | str, split: str | None = None) -> list[dict]:
    out: list[dict] = []
    path = Path(path)
    if not path.is_file():
        raise ConversationError(f"conversations file not found: {path}")
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                conv = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConversationError(f"{path}:{n}: not JSON ({exc.msg})") from None
            turns = conv.get("turns") if isinstance(conv, dict) else None
            if not isinstance(turns, list) or not turns:
                raise ConversationError(f"{path}:{n}: a conversation needs a non-empty list of turns")
            for t in turns:
                acts = [a for a in ACTIONS if a in t]
                if len(acts) != 1:
                    raise ConversationError(f"{path}:{n}: each turn needs exactly one of {', '.join(ACTIONS)}")
                unknown = set(t.get("expect") or {}) - set(CHECKS)
                if unknown:
                    raise ConversationError(f"{path}:{n}: unknown checks {', '.join(sorted(unknown))}")
            conv.setdefault("id", f"line{n}")
            conv.setdefault("split", "dev")
            out.append(conv)
    if split and split != "all":
        out = [c for c in out if c["split"] == split]
    if not out:
        raise ConversationError(f"no conversations to run in {path}" + (f" (split {split})" if split else ""))
    return out


# --- what happened in one turn ------------------------------------------------------------------------


def _reply_text(reply: Any) -> str:
    parts = [getattr(reply, "message", "") or ""]
    q = getattr(reply, "question", None)
    if q is not None:
        parts += [q.text, *(o.label for o in q.options)]
    parts += list(getattr(reply, "notes", []) or [])
    parts.append(getattr(reply, "error", None) or "")
    answer = getattr(reply, "answer", None)
    if answer is not None:
        parts.append(answer.answer)
    return "\n".join(p for p in parts if p)


def _state(session: Any) -> dict[str, Any]:
    return {
        "anchor": session.anchor.id if session.anchor is not None else None,
        "direction": session.intent.direction,
        "versions": len(session.versions),
        "question": session.question.slot if session.question is not None else None,
        "intent": session.intent.model_dump(mode="json"),
    }


def _observed_kind(session: Any, before: dict[str, Any], reply: Any) -> tuple[str | None, str | None]:
    """How the session read the message: its own reading when it keeps one, else inferred from the
    state change (so the same script also scores a session that does not say how it read a message)."""
    msg = getattr(session, "last_message", None)
    if msg is not None:
        return msg.kind, getattr(msg, "target", None)
    after = _state(session)
    if getattr(reply, "answer", None) is not None:
        return "entity", None
    if after["versions"] < before["versions"] or (after["anchor"] != before["anchor"] and after["anchor"]):
        return "new_search", "paper"
    if before["question"] is not None and after["intent"] != before["intent"]:
        return "answer", None
    if after["versions"] > before["versions"]:
        return ("new_search" if after["direction"] != before["direction"] else "refine"), None
    return None, None


def _neutral_option(question: Any, expected_anchor: Any) -> int:
    if question.slot == "anchor":
        for i, o in enumerate(question.options):
            if expected_anchor and o.sets.get("anchor_id") == expected_anchor:
                return i
        return 0
    return len(question.options) - 1


async def _act(session: Any, turn: dict) -> Any:
    if "say" in turn:
        return await session.user_says(turn["say"])
    q = session.question
    if "choose" in turn:
        return await session.choose(int(turn["choose"]))
    want = str(turn["choose_label"]).lower()
    idx = next((i for i, o in enumerate(q.options) if want in o.label.lower()), None) if q is not None else None
    if idx is None:
        return await session.user_says(turn["choose_label"])
    return await session.choose(idx)


def _norm(text: Any) -> str:
    return " ".join(str(text or "").lower().split())


def check_turn(expect: dict, obs: dict) -> dict[str, bool]:
    """One boolean per expectation of the turn."""
    out: dict[str, bool] = {}
    intent = obs["intent"]
    for key, want in expect.items():
        if key == "kind":
            out[key] = obs["kind"] == want
        elif key == "target":
            out[key] = obs["target"] == want
        elif key == "anchor":
            out[key] = obs["anchor"] == want
        elif key == "direction":
            out[key] = intent.get("direction") == want
        elif key == "topic":
            out[key] = _norm(intent.get("topic")) == _norm(want)
        elif key == "paper_types":
            out[key] = sorted(intent.get("paper_types") or []) == sorted(want)
        elif key == "filters":
            ok = True
            for field, value in want.items():
                got = intent.get(field)
                if field == "venues":
                    ok &= sorted(_norm(v) for v in got or []) == sorted(_norm(v) for v in value)
                else:
                    ok &= got == value
            out[key] = bool(ok)
        elif key == "results":
            out[key] = (obs["n_results"] > 0) == bool(want)
        elif key == "results_min":
            out[key] = obs["n_results"] >= int(want)
        elif key == "result_ids_exclude":
            out[key] = not any(_norm(want) in _norm(i) for i in obs["result_ids"])
        elif key == "max_questions":
            out[key] = obs["results_seen"] and obs["questions_before_results"] <= int(want)
        elif key == "no_slots":
            out[key] = not set(want) & set(obs["asked"])
        elif key == "question_slot":
            out[key] = obs["open_question"] == want
        elif key == "says":
            text = _norm(obs["text"])
            out[key] = all(_norm(s) in text for s in want)
    return out


async def run_conversation(conv: dict, runtime: Runtime) -> dict:
    session = Session(runtime)
    turns: list[dict] = []
    for i, turn in enumerate(conv["turns"]):
        expect = dict(turn.get("expect") or {})
        if turn.get("clear"):
            session = Session(runtime)  # what the chat's clear button does (Controller.clear)
            turns.append({"turn": i, "action": "clear", "checks": {}, "passed": True})
            continue
        before = _state(session)
        t0 = time.perf_counter()
        error = None
        replies: list[Any] = []
        asked: list[str] = []
        questions = 0
        results_seen = False
        try:
            reply = await _act(session, turn)
            replies.append(reply)
            kind, target = _observed_kind(session, before, reply)
            open_question = reply.question.slot if reply.question is not None else None
            settle = expect.get("results") is True or "results_min" in expect or "max_questions" in expect
            while True:
                if reply.question is not None:
                    asked.append(reply.question.slot)
                if reply.results or reply.answer is not None:
                    results_seen = True
                    break
                if reply.question is None or not settle or questions >= SETTLE_LIMIT:
                    break
                questions += 1
                reply = await session.choose(_neutral_option(reply.question, expect.get("anchor")))
                replies.append(reply)
        except Exception as exc:  # a crash is a failed turn, recorded
            log.exception("conversation %s turn %d failed", conv["id"], i)
            error = f"{type(exc).__name__}: {exc}"
            kind = target = open_question = None
        results = list(getattr(session, "results", []) or [])
        obs = {
            "kind": kind,
            "target": target,
            "anchor": session.anchor.id if session.anchor is not None else None,
            "intent": session.intent.model_dump(mode="json"),
            "n_results": len(results),
            "result_ids": [r.paper.id for r in results],
            "questions_before_results": questions,
            "results_seen": results_seen,
            "asked": asked,
            "open_question": open_question,
            "text": "\n".join(_reply_text(r) for r in replies),
        }
        checks = check_turn(expect, obs) if error is None else {k: False for k in expect}
        intent = obs["intent"]
        assert isinstance(intent, dict)
        turns.append(
            {
                "turn": i,
                "action": {k: turn[k] for k in ACTIONS if k in turn},
                "expect": expect,
                "observed": {k: v for k, v in obs.items() if k not in ("intent", "result_ids")}
                | {"intent": {k: v for k, v in intent.items() if v not in (None, [], "", "any", 50, "papers")}},
                "checks": checks,
                "passed": error is None and all(checks.values()),
                "error": error,
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
    return {
        "id": conv["id"],
        "split": conv.get("split", "dev"),
        "about": conv.get("about", ""),
        "turns": turns,
        "passed": all(t["passed"] for t in turns),
    }


# --- scores and reports -------------------------------------------------------------------------------


def summarize(records: list[dict]) -> dict[str, Any]:
    turns = [t for r in records for t in r["turns"] if t["action"] != "clear"]
    out: dict[str, Any] = {
        "conversations": len(records),
        "turns": len(turns),
        "conversation_pass_rate": round(sum(r["passed"] for r in records) / len(records), 4) if records else 0.0,
        "turn_pass_rate": round(sum(t["passed"] for t in turns) / len(turns), 4) if turns else 0.0,
    }
    for key in CHECKS:
        vals = [t["checks"][key] for t in turns if key in t["checks"]]
        if vals:
            out[f"check_{key}"] = round(sum(vals) / len(vals), 4)
    settled = [t for t in turns if "max_questions" in t["expect"]]
    if settled:
        out["mean_questions_before_results"] = round(
            sum(t["observed"]["questions_before_results"] for t in settled) / len(settled), 3
        )
    out["mean_seconds_per_turn"] = round(sum(t["seconds"] for t in turns) / len(turns), 3) if turns else 0.0
    return out


def summarize_by_split(records: list[dict]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["split"], []).append(r)
    return {name: summarize(rs) for name, rs in sorted(groups.items())}


def report_markdown(summary: dict[str, Any], by_split: dict[str, dict[str, Any]], records: list[dict]) -> str:
    names = list(by_split)
    lines = [
        "# Scripted conversations",
        "",
        "| metric | all | " + " | ".join(names) + " |",
        "|" + "---|" * (2 + len(names)),
    ]
    for key, value in summary.items():
        lines.append(f"| {key} | {value} | " + " | ".join(str(by_split[n].get(key, "")) for n in names) + " |")
    lines += [
        "",
        "## Failed turns",
        "",
        "| conversation | split | turn | action | failed checks | observed |",
        "|---|---|---|---|---|---|",
    ]
    for r in records:
        for t in r["turns"]:
            if t["passed"]:
                continue
            failed = ", ".join(k for k, ok in t["checks"].items() if not ok) or (t.get("error") or "")
            o = t.get("observed", {})
            seen = (
                f"kind={o.get('kind')} anchor={o.get('anchor')} q={o.get('questions_before_results')} "
                f"slot={o.get('open_question')}"
            )
            act = json.dumps(t["action"], ensure_ascii=False).replace("|", "/")[:80]
            lines.append(f"| {r['id']} | {r['split']} | {t['turn']} | {act} | {failed} | {seen} |")
    return "\n".join(lines) + "\n\n![pass rates by split](report.png)\n"


def plot(by_split: dict[str, dict[str, Any]], path: Path) -> Path:
    keys = ["turn_pass_rate", "conversation_pass_rate", *(f"check_{k}" for k in CHECKS)]
    keys = [k for k in keys if any(k in s for s in by_split.values())]
    return rate_bars(
        by_split,
        keys,
        path,
        "scripted conversations: pass rate per check",
        lambda s: f"{s} ({by_split[s]['conversations']} conversations)",
    )


def write_outputs(out: Path, records: list[dict]) -> dict[str, Any]:
    summary, by_split = summarize(records), summarize_by_split(records)
    out.mkdir(parents=True, exist_ok=True)
    metrics = {"all": summary, "by_split": by_split}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    with (out / "runs.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    (out / "report.md").write_text(report_markdown(summary, by_split, records), encoding="utf-8")
    plot(by_split, out / "report.png")
    return metrics


async def run_all(conversations: list[dict], runtime: Runtime) -> list[dict]:
    return [await run_conversation(c, runtime) for c in conversations]


def run_cli(path: Path, corpus: Path | None, llm: str | None, split: str | None, out: Path | None) -> int:
    """The body of ``pilot eval conversations``: run, print the summary, write the outputs."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        conversations = load_conversations(path, split)
    except ConversationError as exc:
        print(f"pilot eval conversations: {exc}", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    if corpus:
        if not Path(corpus).is_file():
            print(f"pilot eval conversations: corpus file not found: {corpus}", file=sys.stderr)
            return 2
        overrides["corpus"] = corpus
        if "PILOT_SOURCES" not in os.environ:
            overrides["sources"] = "local"
    runtime = Runtime.from_settings(Settings(**overrides), llm_model=llm)
    records = asyncio.run(run_all(conversations, runtime))
    metrics = (
        write_outputs(out, records) if out else {"all": summarize(records), "by_split": summarize_by_split(records)}
    )
    print(json.dumps(metrics, indent=2))
    if out:
        print(f"wrote {out}/metrics.json, runs.jsonl, report.md, report.png", file=sys.stderr)
    return 0
