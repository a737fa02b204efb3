"""Entity question → plan: a DAG of entity operators whose later steps take ids from earlier outputs.

Deterministic path: ``parse`` reads the question's shape and slots, and each shape has one fixed
plan. LLM path (when a model is configured): the model proposes a workflow JSON, which must pass
``workflows.validate`` and end in ``synthesize_answer``; one repair round with the problems listed,
else the deterministic plan is used and the reason is noted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from pilot.kg.classify import KGQuery, classify, parse
from pilot.llm import LLM, LLMError
from workflows.model import Edge, Node, Workflow
from workflows.registry import all_operators
from workflows.validate import errors

ENTITY_OPS = (
    "search_author",
    "author_detail",
    "author_papers",
    "search_venue",
    "venue_detail",
    "venue_papers",
    "search_org",
    "org_detail",
    "org_authors",
    "paper_authors",
    "paper_groups",
    "filter",
    "anchor",
    "keyword_search",
    "synthesize_answer",
)


@dataclass
class Plan:
    kind: str  # "entity" | "papers"
    workflow: Workflow
    query: KGQuery | None = None
    notes: list[str] = field(default_factory=list)


def _scope(q: KGQuery, with_venue: bool = True, with_topic: bool = True) -> str:
    parts = [f"with {q.coauthor}"] if q.coauthor else []
    if with_topic and q.topic:
        parts.append(f"on {q.topic}")
    if with_venue and q.venue:
        parts.append(f"at {q.venue}")
    if q.year_min is not None and q.year_max is not None:
        parts.append(f"in {q.year_min}" if q.year_min == q.year_max else f"in {q.year_min}–{q.year_max}")
    elif q.year_min is not None:
        parts.append(f"since {q.year_min}")
    elif q.year_max is not None:
        parts.append(f"until {q.year_max}")
    return " ".join(parts)


def _clean(params: dict[str, Any]) -> dict[str, Any]:
    """Only the params the question set: defaults stay implicit so gold plans compare on what matters."""
    return {k: v for k, v in params.items() if v is not None and v != ""}


class _Builder:
    def __init__(self, question: str):
        self.question = question
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []

    def node(self, node_id: str, op: str, label: str, **params: Any) -> str:
        self.nodes.append(Node(id=node_id, op=op, params=_clean(params), label=label.strip()))
        return node_id

    def wire(self, source: str, target: str, port: str) -> None:
        self.edges.append(Edge(source=source, target=target, port=port))

    def answer(
        self, template: str, scope: str = "", entities: tuple[str, ...] = (), papers: tuple[str, ...] = ()
    ) -> Workflow:
        self.node("answer", "synthesize_answer", "answer", question=self.question, template=template, scope=scope)
        for src in entities:
            self.wire(src, "answer", "entities")
        for src in papers:
            self.wire(src, "answer", "papers")
        return Workflow(
            name=f"entity question: {template.replace('_', ' ')}",
            description=self.question[:300],
            nodes=self.nodes,
            edges=self.edges,
            output="answer",
        )


# "what did Stanford publish on parsing?": this many of the topic's papers are searched for the organisation's
_ORG_SEARCH = 500
# "what else did the authors of X write?": the papers of its first few authors (a 20-author paper would flood it)
_THEIR_AUTHORS = 5


def plan_for(q: KGQuery, question: str) -> Workflow:
    """The fixed plan of each question shape."""
    b = _Builder(question)
    if q.shape == "paper_authors":
        paper = b.node("paper", "anchor", "find the paper", query=q.paper)
        b.node("people", "paper_authors", "its authors", limit=50)
        b.wire(paper, "people", "papers")
        return b.answer("authorship", entities=("people",), papers=(paper,))
    if q.shape == "paper_orgs":
        paper = b.node("paper", "anchor", "find the paper", query=q.paper)
        b.node("groups", "paper_groups", "its authors' institutions", by="org")
        b.wire(paper, "groups", "papers")
        return b.answer("ranking", scope="of the paper's authors", entities=("groups",), papers=(paper,))
    if q.shape == "paper_authors_papers":
        paper = b.node("paper", "anchor", "find the paper", query=q.paper)
        b.node("people", "paper_authors", "its authors", limit=_THEIR_AUTHORS)
        b.wire(paper, "people", "papers")
        b.node("papers", "author_papers", "their papers", top=_THEIR_AUTHORS)
        b.wire("people", "papers", "authors")
        return b.answer("their_papers", scope="(other work of the paper's authors)", entities=("people",),
                        papers=("papers",))  # fmt: skip
    # "the most cited paper at ACL 2010" names no person: the venue's plan, ranked by citations
    person_shapes = ("author_papers", "author_profile", "author_topics", "most_cited", "coauthors")
    if q.shape in person_shapes and (q.person or q.shape != "most_cited"):
        author = b.node("author", "search_author", f"find {q.person}", name=q.person, org=q.org)
        if q.shape == "author_profile":
            b.node("profile", "author_detail", "profile")
            b.wire(author, "profile", "authors")
            return b.answer("author_profile", entities=("profile",))
        if q.shape == "author_topics":
            b.node("profile", "author_detail", "profile")
            b.wire(author, "profile", "authors")
            b.node("papers", "author_papers", "their papers")
            b.wire(author, "papers", "authors")
            return b.answer("author_topics", entities=("profile",), papers=("papers",))
        filters = dict(venue=q.venue, year_min=q.year_min, year_max=q.year_max, coauthor=q.coauthor)
        if q.shape in ("author_papers", "most_cited"):
            filters["topic"] = q.topic
        b.node("papers", "author_papers", "their papers " + _scope(q), **filters)
        b.wire(author, "papers", "authors")
        template = {"author_papers": "paper_list", "most_cited": "most_cited", "coauthors": "coauthors"}[q.shape]
        return b.answer(template, scope=_scope(q), entities=(author,), papers=("papers",))
    if q.shape in ("org_researchers", "org_profile"):
        # researchers: a wide search, so org_authors also sees the org's departments
        org = b.node(
            "org", "search_org", f"find {q.org}", name=q.org, limit=50 if q.shape == "org_researchers" else None
        )
        if q.shape == "org_profile":
            b.node("profile", "org_detail", "profile")
            b.wire(org, "profile", "orgs")
            return b.answer("org_profile", entities=("profile",))
        b.node("people", "org_authors", "researchers" + (f" on {q.topic}" if q.topic else ""), topic=q.topic)
        b.wire(org, "people", "orgs")
        return b.answer("org_researchers", scope=f"working on {q.topic}" if q.topic else "", entities=(org, "people"))
    if q.shape == "org_papers":
        # the topic's papers with an author at the organisation (as the papers name it)
        b.node("search", "keyword_search", f"papers on {q.topic}", query=q.topic, limit=_ORG_SEARCH,
               year_min=q.year_min, year_max=q.year_max)  # fmt: skip
        b.node("papers", "filter", f"by authors at {q.org}", orgs=[q.org])
        b.wire("search", "papers", "in")
        return b.answer("paper_list", scope=f"from {q.org} on {q.topic}", papers=("papers",))
    if q.shape in ("topic_venues", "topic_orgs"):
        by = "venue" if q.shape == "topic_venues" else "org"
        b.node("search", "keyword_search", f"papers on {q.topic}", query=q.topic, limit=200,
               year_min=q.year_min, year_max=q.year_max)  # fmt: skip
        b.node("groups", "paper_groups", "their venues" if by == "venue" else "their institutions", by=by)
        b.wire("search", "groups", "papers")
        scope = f"{'publishing' if by == 'venue' else 'working'} on {q.topic}"
        return b.answer("ranking", scope=scope, entities=("groups",), papers=("search",))
    if q.shape == "topic_researchers":
        b.node(
            "search",
            "keyword_search",
            f"papers on {q.topic}",
            query=q.topic,
            limit=200,
            year_min=q.year_min,
            year_max=q.year_max,
        )
        b.node("people", "paper_authors", "their authors")
        b.wire("search", "people", "papers")
        return b.answer("org_researchers", scope=f"working on {q.topic}", entities=("people",))
    venue = b.node("venue", "search_venue", f"find {q.venue}", name=q.venue)
    if q.shape == "venue_profile":
        b.node("profile", "venue_detail", "profile")
        b.wire(venue, "profile", "venues")
        return b.answer("venue_profile", entities=("profile",))
    b.node(
        "papers",
        "venue_papers",
        "papers " + _scope(q, with_venue=False),
        topic=q.topic,
        year_min=q.year_min,
        year_max=q.year_max,
    )
    b.wire(venue, "papers", "venues")
    template = "most_cited" if q.shape == "most_cited" else "paper_list"
    return b.answer(template, scope=_scope(q, with_venue=False), entities=(venue,), papers=("papers",))


_REQUEST_WORDS = re.compile(
    r"^\s*(?:please\s+)?(?:find|search(?:\s+for)?|show(?:\s+me)?|list|give\s+me|get|any|i\s+need|looking\s+for)?\s*"
    r"(?:some|recent|the|good)?\s*(?:papers?|articles?|publications?|work|literature)\s+"
    r"(?:on|about|regarding|related\s+to|in)\s+|^\s*关于(?=.+的(?:论文|文章|研究))|的(?:论文|文章|研究)\s*[?？]?\s*$",
    re.I,
)


def search_text(question: str) -> str:
    """The topic of a paper request without its request words ("find papers on X" -> "X")."""
    text = " ".join(question.split())
    stripped = _REQUEST_WORDS.sub("", text).strip(" ?？.。")
    return (stripped or text)[:1000]


def papers_plan(question: str, limit: int = 10) -> Workflow:
    """A plain paper search whose top hits are listed with citations (for questions that are not about entities)."""
    b = _Builder(question)
    b.node("search", "keyword_search", "search papers", query=search_text(question), limit=limit)
    wf = b.answer("paper_list", scope=f"matching “{search_text(question)[:80]}”", papers=("search",))
    wf.name = "paper search"
    return wf


# --- LLM path ---------------------------------------------------------------------------------------


class _LLMNode(BaseModel):
    id: str
    op: str
    params: dict[str, Any] = Field(default_factory=dict)


class _LLMEdge(BaseModel):
    source: str
    target: str
    port: str


class _LLMPlan(BaseModel):
    nodes: list[_LLMNode]
    edges: list[_LLMEdge] = Field(default_factory=list)
    output: str


def operator_catalogue() -> str:
    ops = all_operators()
    lines = []
    for name in ENTITY_OPS:
        op = ops[name]
        params = ", ".join(f"{k}{'' if f.is_required() else '?'}" for k, f in op.Params.model_fields.items())
        ports = ", ".join(f"{p}:{port.type.value}" for p, port in op.inputs.items()) or "none"
        lines.append(f"- {name}({params}) inputs[{ports}] -> {op.output.value}: {op.description}")
    return "\n".join(lines)


SYSTEM = (
    "You plan academic knowledge-graph questions as a workflow of operators. Reply with a JSON object "
    '{"nodes": [{"id", "op", "params"}], "edges": [{"source", "target", "port"}], "output": id}. '
    "Use only these operators; later steps take entities from earlier ones through edges (port names as "
    "listed); the output node must be synthesize_answer. Copy names and organisations exactly as written "
    "in the question (any language).\nOperators:\n"
)


def check_llm_plan(wf: Workflow) -> list[str]:
    """Problems that make an LLM plan unusable (validation errors, foreign operators, wrong output)."""
    problems = [p.message for p in errors(wf)]
    foreign = sorted({n.op for n in wf.nodes} - set(ENTITY_OPS))
    if foreign:
        problems.append(f"only entity operators may be used, not: {', '.join(foreign)}")
    if wf.output and wf.has_node(wf.output) and wf.node(wf.output).op != "synthesize_answer":
        problems.append("the output node must be synthesize_answer")
    return problems


async def llm_plan(llm: LLM, question: str, notes: list[str]) -> Workflow | None:
    system = SYSTEM + operator_catalogue()
    user = f"Question: {question}"
    for attempt in range(2):
        try:
            reply = await llm.json(system, user, _LLMPlan, repair=0)
        except LLMError as exc:
            notes.append(f"LLM planner unavailable ({exc}); used the pattern planner")
            return None
        try:
            wf = Workflow(
                name="entity question (LLM plan)",
                description=question[:300],
                nodes=[Node(id=n.id, op=n.op, params=n.params) for n in reply.nodes],
                edges=[Edge(source=e.source, target=e.target, port=e.port) for e in reply.edges],
                output=reply.output,
            )
            problems = check_llm_plan(wf)
        except ValidationError as exc:
            problems = [str(exc)[:500]]
        if not problems:
            for n in wf.nodes:
                if n.op == "synthesize_answer":
                    n.params.setdefault("question", question)
            return wf
        if attempt == 0:
            user = (
                f"Question: {question}\nYour plan was invalid:\n- "
                + "\n- ".join(problems[:10])
                + "\nReply with a corrected plan."
            )
    notes.append("LLM plan invalid after one repair (" + "; ".join(problems[:3]) + "); used the pattern planner")
    return None


async def make_plan(
    question: str, llm: LLM | None = None, prefer_llm: bool = False, query: KGQuery | None = None
) -> Plan:
    """The plan for ``question``: an entity plan or, for anything else, a paper search.

    A question the patterns read gets the pattern plan (exact and free); the LLM plans the entity
    questions they cannot read, or every entity question with ``prefer_llm`` (to evaluate the LLM
    planner). An LLM plan that stays invalid after one repair falls back to the pattern plan.
    """
    text = " ".join((question or "").split())
    q = query if query is not None else parse(text)
    notes: list[str] = []
    if q is not None:
        wf = plan_for(q, text)
        if llm is not None and prefer_llm:
            proposed = await llm_plan(llm, text, notes)
            wf = proposed or wf
        return Plan("entity", wf, q, notes)
    if llm is not None and classify(text) in ("entity", "unsure"):
        proposed = await llm_plan(llm, text, notes)
        if proposed is not None:
            return Plan("entity", proposed, None, notes)
    return Plan("papers", papers_plan(text), None, notes)
