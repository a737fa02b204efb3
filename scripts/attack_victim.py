"""The adversarial review's measurement (issue 11): one pilot server, an attacker and a victim visitor.

    python scripts/attack_victim.py --corpus ../shared/corpus/papers.jsonl.gz [--tree DIR] [--json]

The server (``pilot app`` on 127.0.0.1, the offline corpus) runs the code of ``--tree`` (default: this
checkout; another checkout, e.g. a worktree of an older main, to measure "before"). The victim, a
process of its own (``tests/isolation_victim.py``), makes a trivial call (``select_node``) in a loop.
For each attack, run alone, the script reports how long the attacker's call took and the victim's worst
latency while it ran (and its median before the attacks, for comparison):

1. a 50 KB chat message
2. a 190 KB recipe: a filter with 20,000 venues
3. a recipe with 20,000 include_terms
4. 5,000 searches into one union
5. a 6,000-node recipe, then three clicks on it by the attacker

An attack still running after ``--timeout`` seconds is abandoned (its row says so; the victim's worst
latency is then at least that long).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from statistics import median
from typing import Any

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from tests.abuse_inputs import chain, filter_recipe, terms, union_of_searches  # noqa: E402

REPEAT_WHILE_S = 20.0  # an attack is repeated (up to --rounds) while it has run for less than this in all
BLEU = "Bleu: A Method For Automatic Evaluation Of Machine Translation"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server(tree: Path, corpus: Path, store_cache: Path, tmp: Path) -> tuple[subprocess.Popen, str]:
    cache = tmp / "cache"
    cache.mkdir(mode=0o700)
    for store in store_cache.glob("corpus-*"):
        (cache / store.name).symlink_to(store.resolve())
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PILOT_CORPUS": str(corpus.resolve()),
        "PILOT_CACHE_DIR": str(cache),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("PILOT_AUTH", None)
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - lives as long as the server
    cmd = [sys.executable, "-c", "from pilot.cli import main; main()", "app", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited; see {tmp / 'server.log'}")
        try:
            with urllib.request.urlopen(url + "config", timeout=5):
                return proc, url
        except OSError:
            time.sleep(1.0)
    raise TimeoutError("the server did not start")


class Victim:
    """``tests/isolation_victim.py`` in its own process: warm-up, then clicks until told to stop."""

    def __init__(self, url: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "tests" / "isolation_victim.py"), url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        ready = self.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError(f"the victim did not start: {ready}")
        self.baseline = float(ready[1])
        self.stdin.write("go\n")
        self.stdin.flush()

    def stop(self) -> list[tuple[float, float, bool]]:
        self.stdin.write("stop\n")
        self.stdin.flush()
        clicks = [(float(s), float(e), bool(ok)) for s, e, ok in json.loads(self.stdout.readline())]
        self.proc.wait(30)
        return clicks


def _attacks(tmp: Path) -> list[tuple[str, list[tuple[tuple, str]]]]:
    def recipe_file(name: str, data: dict) -> str:
        path = tmp / f"{name}.json"
        path.write_text(json.dumps(data))
        return str(path)

    from gradio_client import handle_file

    paste = f'papers that cite "{BLEU}" ' + "Aaa Bbb Ccc University " * 2_200
    return [
        ("50 KB chat message", [((paste,), "/send")]),
        ("20,000 venues in a filter", [((handle_file(recipe_file("venues", _venues())),), "/load_workflow")]),
        (
            "20,000 include_terms",
            [((handle_file(recipe_file("terms", filter_recipe(include_terms=terms(20_000)))),), "/load_workflow")],
        ),
        (
            "5,000 searches into one union",
            [((handle_file(recipe_file("union", union_of_searches(5_000))),), "/load_workflow")],
        ),
        (
            "6,000-node recipe + 3 clicks",
            [((handle_file(recipe_file("chain", chain(6_000))),), "/load_workflow")]
            + [((f"n{i}",), "/select_node") for i in (1, 2, 3)],
        ),
    ]


def _venues() -> dict:
    return filter_recipe(venues=[f"Venue {i}" for i in range(20_000)])


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gradio_client import Client

    with tempfile.TemporaryDirectory(prefix="pilot-attack-") as name:
        tmp = Path(name)
        proc, url = _server(args.tree.resolve(), args.corpus, args.cache_dir, tmp)
        rows: list[dict[str, Any]] = []
        try:
            victim = Victim(url)
            spans: list[tuple[str, float, float, bool]] = []
            quiet: list[tuple[float, float]] = []  # windows with no attack running: the victim's normal
            for label, calls in _attacks(tmp):
                # short attacks are repeated (a fresh visitor each time) so that several clicks overlap them
                spent, rounds, done = 0.0, 0, True
                while done and rounds < args.rounds and (rounds == 0 or spent < REPEAT_WHILE_S):
                    try:
                        attacker = Client(url, verbose=False, download_files=False)
                    except Exception as exc:  # noqa: BLE001 - the server is still stalled by the last attack
                        print(f"  (no new visitor could connect: {type(exc).__name__})", file=sys.stderr)
                        done = False
                        break
                    pause = time.monotonic()
                    time.sleep(2.0)
                    quiet.append((pause, time.monotonic()))
                    started = time.monotonic()
                    finished = threading.Event()

                    def attack(
                        calls: list[tuple[tuple, str]] = calls,
                        attacker: Any = attacker,
                        label: str = label,
                        finished: threading.Event = finished,
                    ) -> None:
                        try:
                            for call_args, api in calls:
                                attacker.submit(*call_args, api_name=api).result(timeout=args.timeout)
                        except Exception as exc:  # noqa: BLE001 - an abandoned or refused attack is still measured
                            print(f"  ({label}: {type(exc).__name__}: {str(exc)[:100]})", file=sys.stderr)
                            if isinstance(exc, TimeoutError):
                                return  # abandoned: never "finished"
                        finished.set()

                    threading.Thread(target=attack, daemon=True).start()
                    done = finished.wait(args.timeout + 5)
                    spans.append((label, started, time.monotonic(), done))
                    spent += time.monotonic() - started
                    rounds += 1
                    print(f"  {label}: {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
                if not done:
                    break  # the server is still busy with it: later attacks would measure this one
            clicks = victim.stop()
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        idle = [e - s for s, e, _ in clicks if any(qs <= s and e <= qe for qs, qe in quiet)]
        for label in dict.fromkeys(span[0] for span in spans):
            mine = [span for span in spans if span[0] == label]
            # a click counts for an attack when it was waiting at any moment while the attack ran
            during = [(e - s, ok) for s, e, ok in clicks if any(s < end and e > start for _, start, end, _ in mine)]
            rows.append(
                {
                    "attack": label,
                    "rounds": len(mine),
                    "attack_s_max": round(max(end - start for _, start, end, _ in mine), 1),
                    "finished": all(done for *_, done in mine),
                    "victim_clicks": len(during),
                    "victim_worst_s": round(max(d for d, _ in during), 2) if during else None,
                    "victim_unanswered": sum(1 for _, ok in during if not ok),
                }
            )
        return {
            "tree": str(args.tree),
            "victim_idle_median_s": round(median(idle), 2) if idle else None,
            "victim_idle_worst_s": round(max(idle), 2) if idle else None,
            "victim_baseline_s": round(victim.baseline, 2),
            "attacks": rows,
        }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--cache-dir", type=Path, default=Path(".pilot-cache"), help="holds the built corpus store")
    p.add_argument("--tree", type=Path, default=HERE, help="the checkout whose code the server runs")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before an attack is abandoned")
    p.add_argument("--rounds", type=int, default=5, help="times a short attack is repeated (default 5)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"\nserver code: {report['tree']}")
    print(
        f"victim's click with no attack running: median {report['victim_idle_median_s']} s, "
        f"worst {report['victim_idle_worst_s']} s"
    )
    print(f"{'attack':<32} {'rounds':>6} {'attack s (max)':>15} {'victim worst s':>15} {'clicks':>7} {'failed':>7}")
    for r in report["attacks"]:
        flag = "" if r["finished"] else " (abandoned)"
        print(
            f"{r['attack']:<32} {r['rounds']:>6} {r['attack_s_max']:>15} {r['victim_worst_s']!s:>15} "
            f"{r['victim_clicks']:>7} {r['victim_unanswered']:>7}{flag}"
        )


if __name__ == "__main__":
    main()
