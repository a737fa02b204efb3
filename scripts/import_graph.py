"""Count the import edges between pilot's packages and find import circles.

    python scripts/import_graph.py            # summary: edges between packages, circles, lazy imports
    python scripts/import_graph.py --edges    # also every package-to-package edge with its count
    python scripts/import_graph.py --root DIR # measure another checkout (e.g. an older commit)

Reads the source with ``ast`` (nothing is imported), so it sees the imports inside functions too. A
"package" is a top-level package (``workflows``, ``clarifier``, ``cache``) or one of ``pilot``'s
subpackages / modules (``pilot.sources``, ``pilot.models``, …): the units the layering in DESIGN.md
speaks of. Imports under ``if TYPE_CHECKING:`` are counted apart (they never run).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
from workflows.graph import cycles  # noqa: E402  (the project's own strongly-connected components)

ROOT = HERE
PACKAGES = ("pilot", "workflows", "clarifier", "cache")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def unit(module: str) -> str:
    """The package a module belongs to: ``pilot.sources.s2`` -> ``pilot.sources``; ``workflows.x`` -> ``workflows``."""
    parts = module.split(".")
    if parts[0] == "pilot" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


class Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.is_package = is_package
        self.found: list[tuple[str, int, bool, bool]] = []  # (target, line, lazy, type_checking)
        self._depth = 0
        self._type_checking = 0

    def _add(self, target: str, line: int) -> None:
        if target.split(".")[0] in PACKAGES:
            self.found.append((target, line, self._depth > 0, self._type_checking > 0))

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        is_tc = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        if is_tc:
            self._type_checking += 1
            for child in node.body:
                self.visit(child)
            self._type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.module.split(".")
            base = base[: len(base) - node.level + (1 if self.is_package else 0)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        self._add(mod, node.lineno)


def scan() -> dict[str, list[tuple[str, int, bool, bool]]]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = module_name(path)
            visitor = Imports(module, path.name == "__init__.py")
            visitor.visit(ast.parse(path.read_text(), str(path)))
            out[module] = visitor.found
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules (or packages) that import each other, directly or through others."""
    nodes = sorted(set(graph) | {m for targets in graph.values() for m in targets})
    return cycles(nodes, {n: sorted(graph.get(n, ())) for n in nodes})


def layer_of() -> dict[str, int]:
    """Package -> layer index (0 = top) from this checkout's import contract in pyproject.toml."""
    config = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in config if c["type"] == "layers")
    return {name: i for i, layer in enumerate(layers) for name in re.split(r"\s*[:|]\s*", layer.strip())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", action="store_true", help="list every package-to-package edge")
    ap.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    args = ap.parse_args()
    global ROOT
    ROOT = args.root.resolve()
    found = scan()
    modules = set(found)

    def resolve(target: str) -> str:
        # "from pilot.sources.base import X" -> pilot.sources.base; "from pilot import commands" -> pilot
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or "?"

    edges: Counter[tuple[str, str]] = Counter()
    top_edges: set[tuple[str, str]] = set()
    module_graph: dict[str, set[str]] = {}
    unit_graph: dict[str, set[str]] = {}
    lazy = type_only = 0
    for module, imports in found.items():
        for target, _line, is_lazy, is_tc in imports:
            lazy += is_lazy and not is_tc
            type_only += is_tc
            if is_tc:
                continue
            dst = resolve(target)
            if dst == module:
                continue
            module_graph.setdefault(module, set()).add(dst)
            a, b = unit(module), unit(dst)
            if a != b and not (a == "pilot" or b == "pilot"):
                edges[(a, b)] += 1
                unit_graph.setdefault(a, set()).add(b)
            ta, tb = module.split(".")[0], dst.split(".")[0]
            if ta != tb:
                top_edges.add((ta, tb))
    module_cycles = circles(module_graph)
    unit_cycles = circles(unit_graph)
    print(f"top-level package edges: {len(top_edges)}  " + " ".join(f"{a}->{b}" for a, b in sorted(top_edges)))
    print(f"package edges (distinct): {len(edges)}  (imports behind them: {sum(edges.values())})")
    print(f"module-level circles: {len(module_cycles)}")
    for c in module_cycles:
        print("   ", " <-> ".join(c))
    print(f"package-level circles: {len(unit_cycles)}")
    for c in unit_cycles:
        print("   ", " <-> ".join(c))
    layers = layer_of()
    upward = sorted((a, b) for a, b in edges if a in layers and b in layers and layers[b] < layers[a])
    print(f"package edges against the layers (a lower layer importing a higher one): {len(upward)}")
    for a, b in upward:
        print(f"    {a} -> {b}")
    print(f"project imports inside functions: {lazy}; under TYPE_CHECKING: {type_only}")
    if args.edges:
        for (a, b), n in sorted(edges.items()):
            print(f"  {a} -> {b}  ({n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
