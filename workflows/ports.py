"""Port types: what flows along a workflow edge, and which producer types fit which inputs.

Runtime values per type:
  papers    list[RankedPaper] (order not meaningful)   ranked    list[RankedPaper] (best first)
  evidence  list[RankedPaper] with evidence filled     keywords  list[str]
  text      str                                        entities  list[Author | Venue | Org]
  graph     RelationGraph                              answer    Answer
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field


class PortType(str, Enum):  # noqa: UP042 - members print as PortType.X in messages and reprs; keep it so
    PAPERS = "papers"
    RANKED = "ranked"
    EVIDENCE = "evidence"
    KEYWORDS = "keywords"
    TEXT = "text"
    ENTITIES = "entities"
    GRAPH = "graph"
    ANSWER = "answer"


# producer type -> the consumer types it may feed. A ranked list is a paper set; evidence is a ranked list.
_FITS: dict[PortType, set[PortType]] = {
    PortType.PAPERS: {PortType.PAPERS},
    PortType.RANKED: {PortType.RANKED, PortType.PAPERS},
    PortType.EVIDENCE: {PortType.EVIDENCE, PortType.RANKED, PortType.PAPERS},
    PortType.KEYWORDS: {PortType.KEYWORDS},
    PortType.TEXT: {PortType.TEXT},
    PortType.ENTITIES: {PortType.ENTITIES},
    PortType.GRAPH: {PortType.GRAPH},
    PortType.ANSWER: {PortType.ANSWER},
}


def fits(produced: PortType, expected: PortType) -> bool:
    return expected in _FITS[produced]


class RelationEdge(BaseModel):
    source: str
    target: str
    kind: str = Field(description="cites | co-cited | coupled | similar")
    weight: float = 1.0


class RelationGraph(BaseModel):
    nodes: list[str] = Field(default_factory=list)
    edges: list[RelationEdge] = Field(default_factory=list)
