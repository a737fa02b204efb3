"""Operator base class, its typed params and inputs, the run context operators receive, and the registry.

An operator is small, typed and pure over (params, inputs, context services): it declares its params as
a pydantic model (``Params``, an ``OperatorParams``) and its input ports as a dataclass (``Inputs``, an
``OperatorInputs``, one field per port, typed
with the value the port carries), names its one output type, and keeps no state. The port table the
validator and the executor read (``Operator.inputs``) is derived from ``Inputs``:

    @dataclass(kw_only=True)
    class ScoreInputs(OperatorInputs):
        papers: list[RankedPaper] = port(PortType.PAPERS, name="in")
        anchor: list[RankedPaper] | None = port(PortType.PAPERS, optional=True)

An optional port left unconnected is ``None``; a ``many`` port holds one value per incoming edge.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict

from pilot.embed import Embedder
from pilot.llm import LLM
from pilot.settings import Settings
from pilot.sources.base import Source
from workflows.ports import PortType

Family = Literal["sourcing", "sets", "filtering", "scoring", "reranking", "keywords", "output", "entities"]


class OperatorParams(BaseModel):
    """Base of every operator's params: an unknown key is an error, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class NoParams(OperatorParams):
    """The params of an operator that takes none."""


@dataclass(frozen=True)
class InputPort:
    type: PortType
    many: bool = False  # accepts several incoming edges (e.g. union); values arrive as a list, one per edge
    optional: bool = False
    description: str = ""


def port(
    type: PortType, *, many: bool = False, optional: bool = False, description: str = "", name: str | None = None
) -> Any:
    """A field of an operator's ``Inputs``: one input port. ``name`` is the port's name in edges when the
    field cannot carry it (``in`` is a Python keyword)."""
    meta = {"port": InputPort(type, many, optional, description), "name": name}
    return field(default=None, metadata=meta) if optional else field(metadata=meta)


@dataclass(kw_only=True)
class OperatorInputs:
    """Base of every operator's typed inputs; the fields are the ports (see ``port``)."""

    @classmethod
    def ports(cls) -> dict[str, InputPort]:
        """Port name -> port, in declaration order."""
        return {_port_name(f): f.metadata["port"] for f in dataclasses.fields(cls)}

    @classmethod
    def of(cls, values: dict[str, Any]) -> Self:
        """The typed inputs from port name -> value (ports without a value are left out, i.e. unconnected)."""
        unknown = set(values) - set(cls.ports())
        if unknown:
            raise TypeError(f"{cls.__name__} has no port(s) {sorted(unknown)}")
        return cls(**{f.name: values[_port_name(f)] for f in dataclasses.fields(cls) if _port_name(f) in values})


def _port_name(f: dataclasses.Field[Any]) -> str:
    return f.metadata["name"] or f.name


@dataclass(kw_only=True)
class NoInputs(OperatorInputs):
    """The inputs of an operator without input ports (a sourcing node)."""


@dataclass
class RunContext:
    """Services an operator may use. Nothing else is shared between operators."""

    source: Source
    embedder: Embedder | None = None
    llm: LLM | None = None
    settings: Settings = field(default_factory=Settings)
    # id of the node being run; operators stamp it into ``Evidence.nodes`` of the papers they bring in.
    # The executor gives each node its own context (``dataclasses.replace(ctx, node_id=node.id)``).
    node_id: str = ""
    # free-form notes an operator leaves for the trace (e.g. "LLM unavailable, used embedding fallback")
    notes: list[str] = field(default_factory=list)
    # where a long-running operator says how far it got ("expanding references: 12 of 40 seeds"); the
    # executor points it at the run's progress events (a UI shows it while the node runs)
    on_progress: Callable[[str], None] | None = None

    def skips_paid_graph(self, only_free_graph: bool) -> bool:
        """Whether a step that only refines an order must pass over its look-ups (noted in the run's trace).

        Over a rate-limited service each citation look-up is a request the user waits for; on the offline
        corpus (``Source.free_graph``) they cost nothing, so the step runs.
        """
        if not only_free_graph or self.source.free_graph():
            return False
        self.notes.append(f"{self.node_id}: skipped over {self.source.name} (each look-up is a request)")
        return True

    def report(self, text: str) -> None:
        if self.on_progress is not None:
            with contextlib.suppress(Exception):  # a broken progress display must not fail the operator
                self.on_progress(text)


P = TypeVar("P", bound=OperatorParams)
I = TypeVar("I", bound=OperatorInputs)  # noqa: E741


class Operator(Generic[P, I]):
    name: ClassVar[str]
    family: ClassVar[Family]
    description: ClassVar[str]  # one line: shown in the UI and in the LLM prompt
    Params: ClassVar[type[OperatorParams]] = NoParams
    Inputs: ClassVar[type[OperatorInputs]] = NoInputs
    inputs: ClassVar[dict[str, InputPort]] = {}  # derived from ``Inputs``; read by validation and the executor
    output: ClassVar[PortType]
    # a step that only re-orders its "in" list: when it fails or times out, the executor passes that list on
    # unchanged (with the failure in the trace) instead of sinking everything downstream of it
    reorders_only: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.inputs = cls.Inputs.ports()

    @classmethod
    def node_refs(cls, params: P) -> list[tuple[str, str]]:
        """(where in the params, node id) for every other node the params name — validation checks that
        each exists and feeds this node, since a reference to nothing silently reads nothing."""
        return []

    async def run(self, ctx: RunContext, params: P, inputs: I) -> Any:  # pragma: no cover
        raise NotImplementedError


class OperatorError(Exception):
    """The node cannot do its job with what it was given (no input of the kind it needs, an input without
    an id, nothing to search for): a problem of the workflow, said in words that name the fix — not a
    source failure. The executor records it as the node's error."""


AnyOperator = Operator[Any, Any]


class UnknownOperator(KeyError):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        known = ", ".join(sorted(REGISTRY)) or "(none registered)"
        return f"unknown operator {self.name!r}; known operators: {known}"


REGISTRY: dict[str, type[AnyOperator]] = {}


def register(cls: type[AnyOperator]) -> type[AnyOperator]:
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"operator {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls
