"""``pilot eval``: run benchmark cases in one mode and write metrics, runs, a report and a plot;
``pilot eval compare DIR...``: the side-by-side table of several runs (and a comparison plot).

    pilot eval --cases ../shared/bench/dev/cases.jsonl --corpus ../shared/corpus/papers.jsonl.gz \\
        --mode multi --out runs/multi
    pilot eval compare runs/bm25 runs/fixed runs/single runs/multi
    pilot eval kg --corpus ../shared/corpus/papers.jsonl.gz --out runs/kg   # entity questions, gold plans
    pilot eval conversations --corpus ../shared/corpus/papers.jsonl.gz --out runs/conv  # scripted conversations
    pilot eval ablate runs/multi --cases … --corpus … --drop facet --drop paper_type --out runs/ablation
    pilot eval reading --cases ../shared/reading/dev.jsonl --out runs/reading      # how messages are read
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from pilot.eval.conversations import DEFAULT_CONVERSATIONS
from pilot.eval.conversations import run_cli as run_conversations
from pilot.eval.harness import MODES, EvalConfig, EvalError, run_eval
from pilot.eval.kg_gold import DEFAULT_QUESTIONS, run_cli
from pilot.eval.report import (
    compare_table,
    load_metrics,
    load_runs,
    markdown_report,
    mode_table,
    paired_table,
    plot,
    pool_plot,
    pool_table,
    run_name,
)
from pilot.sources.base import SourceError


def add(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate on benchmark cases (or: eval compare DIR1 DIR2 ..., eval kg, eval conversations, "
        "eval ablate DIR)",
        description="Run benchmark cases through pilot and score them; `pilot eval compare DIR...` compares runs; "
        "`pilot eval kg` scores the entity-question gold set (plans, cited answers); `pilot eval conversations` "
        "runs the scripted multi-search conversations and scores how each message was read; `pilot eval ablate "
        "DIR --drop SIGNAL...` re-runs an earlier run's final workflows without each signal.",
    )
    p.add_argument(
        "compare",
        nargs="*",
        metavar="compare DIR | kg | conversations | reading | ablate DIR",
        help="`compare` followed by --out folders of earlier runs, `kg` for the entity-question gold set, "
        "`conversations` for the scripted conversations, or `ablate` and one earlier run's folder",
    )
    p.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="SIGNAL",
        help="with `ablate`: a score feature or node id to leave out (repeatable, one ablation each; a+b together)",
    )
    p.add_argument("--cases", type=Path, help="benchmark cases (JSONL); with `reading`: reading cases")
    p.add_argument(
        "--scorer", type=Path, help="with `reading`: the reading cases' score.py (default: beside the cases)"
    )
    p.add_argument("--corpus", type=Path, help="offline corpus file (default: PILOT_CORPUS)")
    p.add_argument(
        "--sources",
        default="local",
        help="what the session searches: local (default, the corpus), s2, aminer or a comma list; a remote source "
        "is configured as in the app (PILOT_S2_BASE_URL, PILOT_S2_API_KEY; e.g. `pilot emulate s2` serving the "
        "corpus); "
        "the corpus still maps the results to the gold's ids",
    )
    p.add_argument(
        "--questions", type=Path, help="with `kg`: gold entity questions (default: tests/data/kg_questions.jsonl)"
    )
    p.add_argument(
        "--conversations",
        type=Path,
        help="with `conversations`: the scripted conversations (default: tests/data/conversations.jsonl)",
    )
    p.add_argument("--split", default="all", help="with `conversations`: only this split (dev, heldout; default all)")
    p.add_argument("--prefer-llm", action="store_true", help="with `kg`: let the LLM plan every question")
    p.add_argument(
        "--mode",
        choices=list(MODES),
        help="how pilot is driven: fixed | single | multi, or a baseline without a session: bm25 | dense | hybrid",
    )
    p.add_argument("--llm", default=None, help="litellm model name (default: none, deterministic)")
    p.add_argument(
        "--simulator-llm",
        default=None,
        help="model for the simulated user's leak check, separate from --llm (default: deterministic check only)",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N cases")
    p.add_argument("--case", action="append", default=[], dest="case_ids", help="only this case id (repeatable)")
    p.add_argument("--workers", type=int, default=2, help="cases run concurrently (default 2)")
    p.add_argument("--case-timeout", type=float, default=300.0, help="seconds before a case counts as failed")
    p.add_argument(
        "--reference",
        type=Path,
        default=None,
        help="reference workflows for workflow-level metrics: an earlier runs.jsonl or {case_id, workflow} lines",
    )
    p.add_argument("--out", type=Path, help="output folder (metrics.json, runs.jsonl, report.md, report.png)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"pilot eval: {message}", file=sys.stderr)
    return 2


def _compare(dirs: list[str], out: Path | None) -> int:
    if not dirs:
        return _fail("compare needs one or more --out folders of earlier runs")
    try:
        runs = [load_metrics(Path(d)) for d in dirs]
    except (FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    modes = [m["mode"] for m in runs]
    for m, d in zip(runs, dirs, strict=True):
        if modes.count(m["mode"]) > 1:  # four "multi" bars say nothing: name each run by its folder too
            m["label"] = f"{m['mode']} ({Path(d).name})"
    print(compare_table(runs))
    pool = pool_table(runs)
    if pool:
        print("\nCSFCube pool re-ranking\n" + pool)
    paired = paired_table([run_name(m) for m in runs], [load_runs(Path(d)) for d in dirs])
    if paired:
        print("\nper-case MRR, each run against the one before it\n" + paired)
    folder = out or Path(dirs[0]).parent
    plot(runs, folder / "compare.png")
    pool_png = pool_plot(runs, folder / "compare-pool.png")
    report = markdown_report(runs) + (
        f"\n## per-case MRR, each run against the one before it\n\n{paired}\n" if paired else ""
    )
    if pool_png:
        report += f"\n![CSFCube pool MAP and NDCG%20 per facet, with the published results]({pool_png.name})\n"
    (folder / "compare.md").write_text(report, encoding="utf-8")
    print(f"\nwrote {folder / 'compare.md'} and {folder / 'compare.png'}" + (f" and {pool_png}" if pool_png else ""))
    return 0


def _ablate(args: argparse.Namespace) -> int:
    if len(args.compare) != 2:
        return _fail("ablate needs exactly one folder of an earlier run: `pilot eval ablate DIR --drop SIGNAL ...`")
    missing = [flag for flag, v in (("--cases", args.cases), ("--out", args.out), ("--drop", args.drop)) if not v]
    if missing:
        return _fail(f"ablate needs {', '.join(missing)}")
    from pilot.eval.ablation import run_ablation
    from pilot.eval.harness import EvalConfig, EvalError
    from pilot.sources.base import SourceError

    config = EvalConfig(
        cases=args.cases,
        mode="multi",
        out=args.out,
        corpus=args.corpus,
        limit=args.limit,
        workers=args.workers,
        progress=False,
        case_ids=args.case_ids,
    )
    try:
        print(run_ablation(Path(args.compare[1]), config, args.drop))
    except (EvalError, SourceError) as exc:
        return _fail(str(exc))
    print(f"\nwrote {args.out}/ablation.md and ablation.json")
    return 0


def _reading(args: argparse.Namespace) -> int:
    """`pilot eval reading --cases FILE --out DIR`: the neutral readings of reading cases, and their table."""
    from pilot.eval import reading

    if args.cases is None or args.out is None:
        return _fail("`pilot eval reading` needs --cases FILE and --out DIR")
    if not args.cases.is_file():
        return _fail(f"no reading cases at {args.cases}")
    summary = reading.run(args.cases, args.out, args.scorer)
    print(reading.table(summary))
    print(f"\nwrote {args.out}/readings.jsonl (score it: python ../shared/reading/score.py {args.cases} "
          f"{args.out}/readings.jsonl)")  # fmt: skip
    return 0


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.compare and args.compare[0] == "kg":
        if len(args.compare) > 1:
            return _fail(f"unexpected argument {args.compare[1]!r} after `kg`")

        return run_cli(args.questions or DEFAULT_QUESTIONS, args.corpus, args.llm, args.prefer_llm, args.out)
    if args.compare and args.compare[0] == "conversations":
        if len(args.compare) > 1:
            return _fail(f"unexpected argument {args.compare[1]!r} after `conversations`")
        return run_conversations(
            args.conversations or DEFAULT_CONVERSATIONS, args.corpus, args.llm, args.split, args.out
        )
    if args.compare and args.compare[0] == "ablate":
        return _ablate(args)
    if args.compare and args.compare[0] == "reading":
        return _reading(args)
    if args.compare:
        if args.compare[0] != "compare":
            return _fail(
                f"unexpected argument {args.compare[0]!r} (did you mean `pilot eval compare DIR ...`, "
                "`pilot eval kg`, `pilot eval conversations`, `pilot eval reading` or `pilot eval ablate DIR`?)"
            )
        return _compare(args.compare[1:], args.out)
    missing = [flag for flag, v in (("--cases", args.cases), ("--mode", args.mode), ("--out", args.out)) if v is None]
    if missing:
        return _fail(f"missing {', '.join(missing)}")
    if args.workers < 1:
        return _fail("--workers must be at least 1")

    config = EvalConfig(
        cases=args.cases,
        mode=args.mode,
        out=args.out,
        corpus=args.corpus,
        llm=args.llm,
        limit=args.limit,
        workers=args.workers,
        case_timeout_s=args.case_timeout,
        progress=not args.no_progress,
        case_ids=args.case_ids,
        reference=args.reference,
        simulator_llm=args.simulator_llm,
        sources=args.sources,
    )
    try:
        metrics = run_eval(config)
    except (EvalError, SourceError) as exc:
        return _fail(str(exc))
    print(mode_table(metrics))
    if metrics.get("source_usage"):
        print("\nsource usage per search: " + json.dumps(metrics["source_usage"]))
    print(
        f"\n{metrics['n_cases']} cases in {metrics['wall_s']:.1f} s;"
        f" wrote {args.out}/metrics.json, runs.jsonl, report.md, report.png"
    )
    return 0
