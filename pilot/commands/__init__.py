"""CLI sub-commands. Each module exposes ``add(subparsers)``; ``add_all`` wires them in menu order."""

from __future__ import annotations

from pilot.commands import app, ask, bench, emulate, search
from pilot.commands import eval as eval_cmd


def add_all(sub) -> None:
    for mod in (bench, eval_cmd, ask, search, app, emulate):
        mod.add(sub)
