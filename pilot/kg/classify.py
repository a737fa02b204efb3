"""An academic knowledge-graph question, as the entity planner takes it: the ``KGQuery`` a reading asks.

The words are read once, by ``pilot.reading``; this module only turns an entity reading (who, which venue,
which organisation, what about them) into the planner's query, and says whether a text is an entity question at
all. Names and organisations are passed through as the user wrote them (any script).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from pilot.reading import Reading, read

Kind = Literal["entity", "papers", "unsure"]
Shape = Literal[
    "author_papers",
    "author_profile",
    "author_topics",
    "most_cited",
    "coauthors",
    "org_researchers",
    "org_profile",
    "venue_papers",
    "venue_profile",
    "topic_researchers",
    "topic_venues",
    "topic_orgs",
    "paper_authors",
    "paper_authors_papers",
    "paper_orgs",
    "org_papers",
]


class KGQuery(BaseModel):
    """The slots of an entity question."""

    shape: Shape
    person: str | None = None
    org: str | None = None
    venue: str | None = None
    topic: str | None = None
    year_min: int | None = None
    year_max: int | None = None
    coauthor: str | None = None  # "papers by X with Y": joint papers
    paper: str | None = None  # "who wrote the Penn Treebank paper?": the paper, as the user named it


# (what is asked, whom it is about) -> the planner's shape
_PAPERS_OF: dict[str, Shape] = {"person": "author_papers", "org": "org_papers", "venue": "venue_papers"}
_SHAPES: dict[tuple[str, str | None], Shape] = {
    ("papers", "person"): "author_papers", ("papers", "venue"): "venue_papers", ("papers", "org"): "org_papers",
    ("count", "person"): "author_papers", ("count", "venue"): "venue_papers", ("count", "org"): "org_papers",
    ("most_cited", None): "most_cited", ("coauthors", None): "coauthors", ("topics", "person"): "author_topics",
    ("topics", "venue"): "venue_profile", ("venues", None): "topic_venues", ("institutions", None): "topic_orgs",
    ("researchers", None): "topic_researchers", ("researchers", "org"): "org_researchers",
    ("researchers", "venue"): "venue_profile", ("authors", None): "paper_authors",
    ("authors_papers", None): "paper_authors_papers", ("profile", "person"): "author_profile",
    ("profile", "venue"): "venue_profile", ("profile", "org"): "org_profile",
    ("venues", "person"): "author_profile", ("venues", "org"): "org_profile",  # a profile lists where they publish
    ("topics", "org"): "org_profile",  # and what they work on
}  # fmt: skip


def query_of(r: Reading) -> KGQuery | None:
    """The entity question a reading asks; for the knowledge-graph path (``pilot ask``) a topic search at one venue
    is that venue's papers on it ("papers on question answering at ACL in 2010"). None for anything else."""
    if r.act == "search" and r.anchor is None and r.topic and len(r.constraints.venues) == 1:
        c = r.constraints
        return KGQuery(shape="venue_papers", venue=c.venues[0], topic=r.topic, year_min=c.year_min, year_max=c.year_max)
    e = r.entity
    if r.act != "entity" or e is None:
        return None
    who = "person" if e.person else "org" if e.org else "venue" if e.venue else None
    # "which organisations are the Faster R-CNN authors from?": one paper's institutions
    of_paper = "paper_orgs" if e.ask == "institutions" and e.paper and not (who or e.topic) else None
    shape = of_paper or _SHAPES.get((e.ask, who)) or _SHAPES.get((e.ask, None)) or _PAPERS_OF.get(who or "")
    if shape is None:
        return None
    topic = None if shape in ("author_profile", "author_topics", "coauthors", "org_profile") else e.topic
    if shape.startswith("topic_") and not topic:
        return None  # "who are the most prolific authors around here?": about no topic the words name
    return KGQuery(
        shape=shape, person=e.person, org=e.org, venue=e.venue, topic=topic, year_min=e.year_min,
        year_max=e.year_max, coauthor=e.coauthor, paper=e.paper,
    )  # fmt: skip


def parse(text: str) -> KGQuery | None:
    """The entity question in ``text`` (read by ``pilot.reading``), or None when it is not one."""
    return query_of(read(text))


def classify(text: str) -> Kind:
    """ "entity" for questions about people, venues or institutions, "papers" for paper searches, "unsure" when the
    reader asks back."""
    r = read(text)
    if query_of(r) is not None:
        return "entity"
    return "papers" if r.act == "search" else "unsure"
