"""The operator registry with the whole library loaded: look an operator up by name, or list them all.

Importing ``workflows.ops`` registers every operator (each module registers its own on import), so a
caller of this module never depends on which operator modules happen to be imported already.
"""

from __future__ import annotations

import workflows.ops  # noqa: F401  (registers the library)
from workflows.operator import REGISTRY, AnyOperator, UnknownOperator


def get_operator(name: str) -> type[AnyOperator]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownOperator(name) from None


def operator_or_none(name: str) -> type[AnyOperator] | None:
    return REGISTRY.get(name)


def all_operators() -> dict[str, type[AnyOperator]]:
    return dict(REGISTRY)
