"""CLI sub-commands. Each module exposes ``add(subparsers)``; ``add_all`` wires those that exist."""

from __future__ import annotations

import importlib

# module name under pilot.commands -> present once its issue lands
_MODULES = ("bench", "eval", "ask", "app")


def add_all(sub) -> None:
    for name in _MODULES:
        try:
            mod = importlib.import_module(f"pilot.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"pilot.commands.{name}":
                continue
            raise
        mod.add(sub)
