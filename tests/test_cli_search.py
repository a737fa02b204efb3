"""``pilot search``: one non-interactive paper search, questions answered by ``--answer`` or defaults,
the list printed as a table, JSON or a reference file that parses back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import bibtexparser
import rispy

from pilot.commands.search import render, search
from pilot.runtime import Runtime

ROOT = Path(__file__).resolve().parents[1]
BLEU = "BLEU: a Method for Automatic Evaluation of Machine Translation"


async def test_answers_go_to_their_questions_and_the_rest_are_defaults(local_source):
    rt = Runtime.for_source(local_source)
    reply, dialogue = await search(f'papers around "{BLEU}"', rt, ["direction=later work", "since 2005"])
    asked = [line for line in dialogue if line.startswith("asked")]
    assert asked and asked[0].startswith("asked (direction)"), dialogue
    assert "answered: later work" in dialogue
    assert reply.results and all((r.paper.year or 0) >= 2002 for r in reply.results)
    assert "answered: since 2005" in dialogue
    assert any("(defaults)" in line for line in dialogue) or not reply.question


async def test_every_format_parses_back(local_source):
    reply, _ = await search(f'later work that builds on "{BLEU}"', Runtime.for_source(local_source), [])
    ids = [r.paper.id for r in reply.results]
    assert len(ids) >= 10
    rows = json.loads(render(reply, "json"))
    assert [r["id"] for r in rows] == ids and rows[0]["match"].endswith("match") and rows[0]["why"]
    entries = bibtexparser.parse_string(render(reply, "bibtex")).entries
    assert [e.fields_dict["note"].value.removeprefix("pilot id: ") for e in entries] == ids
    assert [r["notes"][0].removeprefix("pilot id: ") for r in rispy.loads(render(reply, "ris"))] == ids
    assert [i["note"].removeprefix("pilot id: ") for i in json.loads(render(reply, "csljson"))] == ids
    table = render(reply, "table").splitlines()
    assert table[0].split()[:4] == ["#", "year", "venue", "match"] and len(table) == len(ids) + 1
    empty, _ = await search("", Runtime.for_source(local_source), [])
    assert not empty.results and "Please type a request" in (empty.error or "")


def test_the_command_line_keeps_stdout_for_the_list(corpus_slice, slice_vectors, tmp_path):
    env = {**os.environ, "PILOT_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    env["PILOT_CORPUS_VECTORS"] = str(slice_vectors)
    env.pop("PILOT_LLM_MODEL", None)
    bib = tmp_path / "out.bib"
    request = f'later work that builds on "{BLEU}"'
    argv = ["search", request, "--corpus", str(corpus_slice), "--format", "bibtex", "--out", str(bib)]
    argv += ["--answer", "venue=any venue"]
    cmd = [sys.executable, "-m", "pilot.cli", *argv]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0 and out.stdout == "", out.stderr[-2000:]
    assert "asked (venue)" in out.stderr and "answered: any venue" in out.stderr
    assert len(bibtexparser.parse_file(str(bib)).entries) >= 10
