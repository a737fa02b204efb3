"""Operator base class, the run context operators receive, and the registry by name.

An operator is small, typed and pure over (params, inputs, context services): it declares its input
ports and its one output type, validates its params with a pydantic model, and keeps no state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from workflows.ports import PortType

if TYPE_CHECKING:
    from pilot.embed import Embedder
    from pilot.llm import LLM
    from pilot.settings import Settings
    from pilot.sources.base import Source


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class InputPort:
    type: PortType
    many: bool = False  # accepts several incoming edges (e.g. union); values arrive as a list
    optional: bool = False
    description: str = ""


@dataclass
class RunContext:
    """Services an operator may use. Nothing else is shared between operators."""

    source: "Source"
    embedder: "Embedder | None" = None
    llm: "LLM | None" = None
    settings: "Settings | None" = None
    # id of the node being run; operators stamp it into ``Evidence.nodes`` of the papers they bring in.
    # The executor gives each node its own context (``dataclasses.replace(ctx, node_id=node.id)``).
    node_id: str = ""
    # free-form notes an operator leaves for the trace (e.g. "LLM unavailable, used embedding fallback")
    notes: list[str] = field(default_factory=list)


class Operator:
    name: ClassVar[str]
    family: ClassVar[str]  # sourcing | sets | filtering | scoring | reranking | keywords | output | entities
    description: ClassVar[str]  # one line: shown in the UI and in the LLM prompt
    Params: ClassVar[type[BaseModel]] = NoParams
    inputs: ClassVar[dict[str, InputPort]] = {}
    output: ClassVar[PortType]

    async def run(self, ctx: RunContext, params: BaseModel, inputs: dict[str, Any]) -> Any:  # pragma: no cover
        raise NotImplementedError


class UnknownOperator(KeyError):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        known = ", ".join(sorted(REGISTRY)) or "(none registered)"
        return f"unknown operator {self.name!r}; known operators: {known}"


REGISTRY: dict[str, type[Operator]] = {}


def register(cls: type[Operator]) -> type[Operator]:
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"operator {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls
