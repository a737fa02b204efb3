"""A workflow is data: nodes (operator + params) and edges (data flow into named input ports).

JSON-serialisable with a schema version, so the same object is drawn, executed, cached, stored with an
evaluation run, diffed between versions and exported as a reusable recipe.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="unique within the workflow; stable across edits so caches and diffs line up")
    op: str = Field(description="operator name in the registry")
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="producer node id")
    target: str = Field(description="consumer node id")
    port: str = Field("in", description="the consumer's input port name")


class Workflow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    name: str = ""
    description: str = ""
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    output: str | None = Field(None, description="id of the node whose value is the workflow's result")

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def has_node(self, node_id: str) -> bool:
        return any(n.id == node_id for n in self.nodes)

    def inputs_of(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.target == node_id]

    def consumers_of(self, node_id: str) -> list[Edge]:
        return [e for e in self.edges if e.source == node_id]

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str) -> Workflow:
        return cls.model_validate_json(text)


# --- edits --------------------------------------------------------------------------------------
# An edit is data too (the UI, the refiner and the LLM all emit these); ``workflows.edit.apply_edit``
# turns one into a new valid workflow or raises ``WorkflowError`` naming the problem.


class AddNode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["add"] = "add"
    node: Node
    inputs: list[Edge] = Field(default_factory=list, description="edges into the new node")
    after: str | None = Field(None, description="insert between this node and its consumers")


class ModifyNode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["modify"] = "modify"
    node_id: str
    params: dict[str, Any] = Field(default_factory=dict, description="merged into the node's params")
    replace: bool = Field(False, description="replace the params instead of merging")
    op: str | None = None


class RemoveNode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["remove"] = "remove"
    node_id: str
    bridge: bool = Field(True, description="connect its inputs to its consumers where the types fit")


class Rewire(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["rewire"] = "rewire"
    add: list[Edge] = Field(default_factory=list)
    remove: list[Edge] = Field(default_factory=list)
    output: str | None = None


Edit = Annotated[AddNode | ModifyNode | RemoveNode | Rewire, Field(discriminator="action")]


# --- execution records --------------------------------------------------------------------------


class NodeTrace(BaseModel):
    node_id: str
    op: str
    status: Literal["ok", "failed", "skipped", "cached"] = "ok"
    seconds: float = 0.0
    n_in: int = 0
    n_out: int = 0
    error: str | None = None
    note: str | None = None


class RunTrace(BaseModel):
    nodes: list[NodeTrace] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(n.status in ("ok", "cached") for n in self.nodes)

    @property
    def failed_nodes(self) -> list[str]:
        return [n.node_id for n in self.nodes if n.status == "failed"]
