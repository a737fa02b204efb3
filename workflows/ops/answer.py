"""The ``synthesize_answer`` operator: what a plan's nodes returned, as a short answer whose every claim
cites an entity URL.

Output contract (``pilot.models.Answer``): ``reference`` keys are ``[1]``..``[n]`` without gaps, every
``[n]`` in the text is a key and every key is cited, and every URL is the canonical URL of an entity
present in the execution results. Without an LLM a template states the facts; an LLM's answer is
checked against the contract, repaired when the fix is mechanical (renumbering, dropping citations of
URLs that were never returned) and replaced by the template otherwise.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, get_args

from pydantic import BaseModel, Field

from pilot.citations import no_count_note
from pilot.llm import LLM, LLMError
from pilot.models import Answer, Author, Org, Paper, RankedPaper, Venue
from pilot.text import words
from pilot.venues import venue_of
from workflows.operator import Operator, OperatorInputs, OperatorParams, RunContext, port, register
from workflows.ops.entities import MATCHES, Entity, author_on_paper
from workflows.ports import PortType

log = logging.getLogger(__name__)

Template = Literal[
    "auto",
    "paper_list",
    "their_papers",
    "author_profile",
    "author_topics",
    "most_cited",
    "coauthors",
    "org_researchers",
    "org_profile",
    "venue_profile",
    "ranking",
    "authorship",
    "entity_list",
]
TEMPLATES: tuple[Template, ...] = get_args(Template)

_MARK = re.compile(r"\[(\d+)\]")
_GROUP = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)+)\]")
_KEY = re.compile(r"^\[(\d+)\]$")


# --- the facts a plan produced ---------------------------------------------------------------------


@dataclass
class Facts:
    """Entities and papers from the execution results, de-duplicated, in the order they arrived."""

    authors: list[Author] = field(default_factory=list)
    venues: list[Venue] = field(default_factory=list)
    orgs: list[Org] = field(default_factory=list)
    papers: list[Paper] = field(default_factory=list)
    papers_given: bool = False  # a paper input was connected (so "no papers" is a finding, not a gap)
    paper_total: int = 0  # papers that matched before a step cut the list (0 = the list is complete)

    @classmethod
    def collect(
        cls, entities: list[Entity], papers: list[Paper], papers_given: bool = False, paper_total: int = 0
    ) -> Facts:
        facts = cls(papers_given=papers_given, paper_total=paper_total)
        seen: set[tuple[str, str]] = set()
        for e in entities:
            key = (e.kind, e.id or e.name)
            if key in seen:
                continue
            seen.add(key)
            if isinstance(e, Author):
                facts.authors.append(e)
            elif isinstance(e, Venue):
                facts.venues.append(e)
            else:
                facts.orgs.append(e)
        ids: set[str] = set()
        for p in papers:
            if p.id not in ids:
                ids.add(p.id)
                facts.papers.append(p)
        return facts

    def urls(self) -> set[str]:
        """Every URL an answer may cite: canonical URLs of the entities and papers returned."""
        entities: list[Entity] = [*self.authors, *self.venues, *self.orgs]
        out = {e.canonical_url for e in entities if e.canonical_url}
        out |= {p.canonical_url for p in self.papers}
        # the authors listed on a returned paper came back from the source too
        out |= {a.canonical_url for p in self.papers for a in p.authors if a.canonical_url}
        return out


def urls_in_results(values: dict) -> set[str]:
    """What an answer may cite, given every node value of a run: canonical URLs of all entities and papers."""
    ents, papers = [], []
    for value in values.values():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, RankedPaper):
                papers.append(item.paper)
            elif isinstance(item, (Author, Venue, Org)):
                ents.append(item)
    return Facts.collect(ents, papers).urls()


class Refs:
    """Numbers citations in order of first use; citing the same URL twice reuses its number."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def cite(self, url: str | None) -> str:
        if not url:
            return ""
        if url not in self.urls:
            self.urls.append(url)
        return f" [{self.urls.index(url) + 1}]"

    def reference(self) -> dict[str, str]:
        return {f"[{i}]": u for i, u in enumerate(self.urls, 1)}


# --- templates -------------------------------------------------------------------------------------


def _impact(p: Paper) -> int:
    return p.citation_count if p.citation_count is not None else (p.in_corpus_citations or 0)


def _cites(p: Paper) -> str:
    if p.citation_count is not None:
        return f"with {p.citation_count} citations"
    if p.in_corpus_citations:
        return f"cited by {p.in_corpus_citations} papers of this source"
    return "with no citation count known"


def _paper_line(p: Paper, refs: Refs) -> str:
    # the venue as researchers name it, not the record's spelling
    where = ", ".join(str(x) for x in (venue_of(p) or p.venue, p.year) if x)
    return f"“{p.title}”" + (f" ({where})" if where else "") + refs.cite(p.canonical_url)


def _name(e, refs: Refs) -> str:
    return f"{e.name}{refs.cite(e.canonical_url)}"


def _join(items: list[str]) -> str:
    return "; ".join(items)


def _list(items: list[str], total: int, shown: int) -> str:
    more = f"; and {total - shown} more" if total > shown else ""
    return _join(items) + more + "."


def _subject(facts: Facts, refs: Refs, every_author: bool = False) -> str:
    if facts.authors and every_author:  # "what else did the authors of X write?": all of them are the subject
        names = [_name(a, refs) for a in facts.authors]
        return "by " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])
    if facts.authors:
        return f"by {_name(facts.authors[0], refs)}"
    if facts.venues:
        return f"at {_name(facts.venues[0], refs)}"
    if facts.orgs:
        return f"from {_name(facts.orgs[0], refs)}"
    return ""


def _paper_list(facts: Facts, refs: Refs, max_items: int, scope: str, every_author: bool = False) -> str:
    subject = _subject(facts, refs, every_author)
    head = " ".join(x for x in ["Papers", subject, scope] if x)
    if not facts.papers:
        return f"{head}: none found in this source."
    papers = sorted(facts.papers, key=lambda p: (-(p.year or 0), p.title))
    shown = papers[:max_items]
    n = max(len(papers), facts.paper_total)
    found = f"{n} paper{'s' if n != 1 else ''} found" + (
        f" (the {len(papers)} most cited were read)" if n > len(papers) else ""
    )
    return f"{head}: {found}. " + _list([_paper_line(p, refs) for p in shown], n, len(shown))


def _author_profile(a: Author, refs: Refs) -> str:
    parts = [f"{_name(a, refs)}"]
    if a.affiliation:
        parts.append(f"affiliation: {a.affiliation}")
    counts = []
    if a.paper_count is not None:
        counts.append(f"{a.paper_count} papers")
    if a.citation_count is not None:
        counts.append(f"{a.citation_count} citations")
    if a.h_index is not None:
        counts.append(f"h-index {a.h_index}")
    if counts:
        parts.append(", ".join(counts) + " in this source")
    if a.venues:
        parts.append("main venues: " + ", ".join(a.venues[:5]))
    if a.topics:
        parts.append("frequent topics: " + ", ".join(a.topics[:8]))
    if a.coauthors:
        parts.append("frequent coauthors: " + ", ".join(a.coauthors[:5]))
    return " — ".join(parts[:1]) + (" — " + "; ".join(parts[1:]) if parts[1:] else "") + "."


def _author_topics(facts: Facts, refs: Refs, max_items: int) -> str:
    a = facts.authors[0] if facts.authors else None
    if a is None:
        return ""
    text = f"{_name(a, refs)}"
    topics = list(a.topics)
    if not topics and facts.papers:
        counts = Counter(w for p in facts.papers for w in set(words(p.title)) if len(w) > 3)
        topics = [w for w, _ in counts.most_common(8)]
    text += (" works mainly on: " + ", ".join(topics[:8]) + ".") if topics else ": no topics are known in this source."
    if facts.papers:
        best = sorted(facts.papers, key=lambda p: (-_impact(p), -(p.year or 0)))[: min(3, max_items)]
        text += " Representative papers: " + _join([_paper_line(p, refs) for p in best]) + "."
    return text


def _most_cited(facts: Facts, refs: Refs) -> str:
    who = _subject(facts, refs)
    if not facts.papers:
        return f"No papers {who} were found in this source." if who else "No papers were found in this source."
    best = max(facts.papers, key=lambda p: (_impact(p), p.year or 0))
    text = f"The most cited paper {who} in this source is “{best.title}”{refs.cite(best.canonical_url)}, {_cites(best)}"
    if best.venue:
        text += f"; it was published at {best.venue}" + (f" in {best.year}" if best.year else "")
    elif best.year:
        text += f"; it appeared in {best.year}"
    text += "."
    if _impact(best) == 0:
        text += " (No citation counts are known for these papers, so this is only the most recent one.)"
    elif unknown := no_count_note(facts.papers):
        text += f" {unknown}"
    return text


def _coauthors(facts: Facts, refs: Refs, max_items: int) -> str:
    a = facts.authors[0] if facts.authors else None
    if a is None:
        return ""
    me = words(a.name)
    counts: Counter = Counter()
    example: dict[str, Paper] = {}
    person: dict[str, Author] = {}
    for p in sorted(facts.papers, key=lambda p: (-_impact(p), p.title)):
        if author_on_paper(a, p) is None:
            continue
        for co in p.authors:
            key = " ".join(words(co.name))
            # the person under another record merged into this one ("Jason Eisner" of "Jason M. Eisner")
            alias = (co.id is not None and co.id in a.aliases) or co.name in a.alias_names
            if not key or words(co.name) == me or (a.id and co.id == a.id) or alias:
                continue
            counts[key] += 1
            example.setdefault(key, p)
            person.setdefault(key, co)
    head = f"Frequent coauthors of {_name(a, refs)}"  # cite the author first so it is [1]
    if not counts:
        names = ", ".join(a.coauthors[:max_items])
        if names:
            return f"{head}: {names}."
        return f"{head}: none found in this source."
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    # "frequent" means at least two joint papers; when nobody qualifies, the single collaborations are listed
    frequent = [kv for kv in ranked if kv[1] >= 2] or ranked
    top = frequent[:max_items]

    def cite(k: str) -> str:
        # the coauthor is an entity the source returned (on the paper); without a URL, cite the joint paper
        return refs.cite(person[k].canonical_url) if person[k].canonical_url else refs.cite(example[k].canonical_url)

    items = [f"{person[k].name}{cite(k)} ({n} joint paper{'s' if n != 1 else ''})" for k, n in top]
    return f"{head}: " + _list(items, len(frequent), len(top))


def _org_researchers(facts: Facts, refs: Refs, max_items: int, scope: str) -> str:
    org = facts.orgs[0] if facts.orgs else None
    head = "Researchers" + (f" at {_name(org, refs)}" if org else "") + (f" {scope}" if scope else "")
    if not facts.authors:
        return f"{head}: none found in this source."
    shown = facts.authors[:max_items]
    # with a topic the counts are of the papers on it ("working on X" -> "papers on X"), not of all papers
    on = f" on {scope[len('working on ') :]}" if scope.startswith("working on ") else ""
    items = [
        _name(a, refs) + (f" ({a.paper_count} paper{'s' if a.paper_count != 1 else ''}{on})" if a.paper_count else "")
        for a in shown
    ]
    return f"{head}: " + _list(items, len(facts.authors), len(shown))


def _ranking(facts: Facts, refs: Refs, max_items: int, scope: str) -> str:
    """ "Where is X published?" / "Which institutions work on X?": groups with their paper counts on X."""
    groups: list[Venue] | list[Org] = facts.venues or facts.orgs
    head = ("Venues" if facts.venues else "Institutions") + (f" {scope}" if scope else "")
    if not groups:
        return f"{head}: none found in this source."
    shown = groups[:max_items]
    items = [_name(g, refs) + (f" ({g.paper_count} paper{'s' if g.paper_count != 1 else ''})" if g.paper_count else "")
             for g in shown]  # fmt: skip
    counted = f" (counted over the {len(facts.papers)} papers that match it best)" if facts.papers else ""
    return f"{head}{counted}: " + _list(items, len(groups), len(shown))


def _venue_profile(v: Venue, refs: Refs) -> str:
    parts = []
    if v.paper_count is not None:
        parts.append(f"{v.paper_count} papers in this source")
    if v.year_min and v.year_max:
        parts.append(f"from {v.year_min} to {v.year_max}")
    if v.top_authors:
        parts.append("most frequent authors: " + ", ".join(v.top_authors[:5]))
    if v.topics:
        parts.append("frequent topics: " + ", ".join(v.topics[:8]))
    return f"{_name(v, refs)}" + (" — " + "; ".join(parts) if parts else "") + "."


def _org_profile(o: Org, refs: Refs) -> str:
    parts = []
    counts = [
        f"{o.paper_count} papers" if o.paper_count is not None else "",
        f"{o.author_count} researchers" if o.author_count is not None else "",
    ]
    if any(counts):
        parts.append(", ".join(c for c in counts if c) + " in this source")
    if o.top_authors:
        parts.append("most frequent authors: " + ", ".join(o.top_authors[:5]))
    if o.topics:
        parts.append("frequent topics: " + ", ".join(o.topics[:8]))
    return f"{_name(o, refs)}" + (" — " + "; ".join(parts) if parts else "") + "."


def _entity_list(facts: Facts, refs: Refs, max_items: int) -> str:
    ents = [*facts.authors, *facts.venues, *facts.orgs]
    if not ents:
        return "Nothing was found in this source."
    shown = ents[:max_items]
    return "Found: " + _list([_name(e, refs) for e in shown], len(ents), len(shown))


def _authorship(facts: Facts, refs: Refs) -> str:
    """ "Who wrote X?": the paper, then its authors in the paper's order, with the affiliation it gives."""
    if not facts.papers:
        return "That paper is not in this source."
    line = _paper_line(facts.papers[0], refs)
    if not facts.authors:
        return f"{line}: this source lists no authors for it."
    names = [_name(a, refs) + (f" ({a.affiliation})" if a.affiliation else "") for a in facts.authors]
    by = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{line} is by {by}."


def resolve_template(template: str, facts: Facts) -> str:
    if template != "auto":
        return template
    if facts.papers or facts.papers_given:
        return "paper_list"
    if len(facts.authors) == 1 and not facts.venues and not facts.orgs:
        return "author_profile"
    if facts.orgs and facts.authors:
        return "org_researchers"
    if len(facts.venues) == 1 and not facts.authors and not facts.orgs:
        return "venue_profile"
    if len(facts.orgs) == 1 and not facts.authors and not facts.venues:
        return "org_profile"
    return "entity_list"


def template_answer(facts: Facts, template: str = "auto", max_items: int = 10, scope: str = "") -> Answer:
    """The deterministic answer: the facts, each citing the entity it came from."""
    refs = Refs()
    kind = resolve_template(template, facts)
    if kind in ("paper_list", "their_papers"):
        text = _paper_list(facts, refs, max_items, scope, every_author=kind == "their_papers")
    elif kind == "author_profile":
        text = "\n".join(_author_profile(a, refs) for a in facts.authors[:1]) or _entity_list(facts, refs, max_items)
    elif kind == "author_topics":
        text = _author_topics(facts, refs, max_items) or _entity_list(facts, refs, max_items)
    elif kind == "most_cited":
        text = _most_cited(facts, refs)
    elif kind == "coauthors":
        text = _coauthors(facts, refs, max_items) or _entity_list(facts, refs, max_items)
    elif kind == "org_researchers":
        text = _org_researchers(facts, refs, max_items, scope)
    elif kind == "ranking":
        text = _ranking(facts, refs, max_items, scope)
    elif kind == "authorship":
        text = _authorship(facts, refs)
    elif kind == "venue_profile":
        text = "\n".join(_venue_profile(v, refs) for v in facts.venues[:1]) or _entity_list(facts, refs, max_items)
    elif kind == "org_profile":
        text = "\n".join(_org_profile(o, refs) for o in facts.orgs[:1]) or _entity_list(facts, refs, max_items)
    else:
        text = _entity_list(facts, refs, max_items)
    return Answer(answer=text, reference=refs.reference())


# --- the contract: check and repair ----------------------------------------------------------------


def answer_problems(answer: Answer, allowed: set[str]) -> list[str]:
    """Every way ``answer`` breaks the citation contract (empty list = valid)."""
    problems: list[str] = []
    numbers: list[int] = []
    for key, url in answer.reference.items():
        m = _KEY.match(key)
        if not m:
            problems.append(f"reference key {key!r} is not of the form [n]")
            continue
        numbers.append(int(m.group(1)))
        if url not in allowed:
            problems.append(f"reference {key} cites {url!r}, which no executed step returned")
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        problems.append(f"reference keys are not numbered 1..{len(numbers)} without gaps")
    cited = {int(n) for n in _MARK.findall(answer.answer)}
    if missing := sorted(cited - set(numbers)):
        problems.append("cited but not in reference: " + ", ".join(f"[{n}]" for n in missing))
    if unused := sorted(set(numbers) - cited):
        problems.append("in reference but never cited: " + ", ".join(f"[{n}]" for n in unused))
    if not answer.answer.strip():
        problems.append("the answer is empty")
    elif allowed and not numbers:
        # found against SmolLM2: {"answer": "None", "reference": {}} broke no rule above but grounds nothing
        problems.append("the answer cites nothing although the executed steps returned sources to cite")
    return problems


def repair_answer(answer: Answer, allowed: set[str]) -> Answer | None:
    """Mechanical repair: split grouped citations, drop citations of unknown URLs, renumber by first use.

    Returns None when nothing citable is left although the facts had something to cite — then the
    template must replace the answer, because an uncited answer is not grounded.
    """
    text = _GROUP.sub(lambda m: "".join(f"[{n.strip()}]" for n in re.split(r"[,;]", m.group(1))), answer.answer)
    old: dict[int, str] = {}
    for key, url in answer.reference.items():
        m = _KEY.match(str(key).strip()) or re.match(r"^(\d+)$", str(key).strip())
        if m and isinstance(url, str) and url in allowed:
            old[int(m.group(1))] = url
    refs = Refs()

    def renumber(m: re.Match) -> str:
        url = old.get(int(m.group(1)))
        return refs.cite(url).strip() if url else ""

    text = _MARK.sub(renumber, text)
    text = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()
    if not text or (allowed and not refs.urls):
        return None
    fixed = Answer(answer=text, reference=refs.reference())
    return fixed if not answer_problems(fixed, allowed) else None


# --- the LLM path ----------------------------------------------------------------------------------


class _LLMAnswer(BaseModel):
    answer: str = Field(description="2-6 sentences; every claim followed by [n] citing a source below")
    reference: dict[str, str] = Field(default_factory=dict, description='{"[1]": url, ...} only URLs listed below')


SYSTEM = (
    "You answer questions about researchers, venues and institutions using ONLY the facts given. "
    'Cite every claim with [n] markers. Reply with a JSON object {"answer": str, "reference": '
    '{"[1]": url, ...}}: number references from 1 without gaps, cite every reference, and use only '
    "the URLs listed in the facts. If the facts do not answer the question, say so."
)


def facts_prompt(question: str, draft: Answer) -> str:
    sources = "\n".join(f"{k} {u}" for k, u in draft.reference.items()) or "(none)"
    return (
        f"Question: {question}\n\nFacts (already cited):\n{draft.answer}\n\nSources:\n{sources}\n\n"
        "Write the answer to the question from these facts, with citations."
    )


async def llm_answer(llm: LLM, question: str, facts: Facts, draft: Answer, notes: list[str]) -> Answer:
    """The LLM's answer if it keeps (or can be repaired to keep) the contract, else the template draft."""
    allowed = facts.urls()
    try:
        reply = await llm.json(SYSTEM, facts_prompt(question, draft), _LLMAnswer)
    except LLMError as exc:
        notes.append(f"LLM unavailable for the answer ({exc}); used the template")
        return draft
    candidate = Answer(answer=reply.answer, reference=reply.reference)
    problems = answer_problems(candidate, allowed)
    if not problems:
        return candidate
    fixed = repair_answer(candidate, allowed)
    if fixed is not None:
        notes.append("LLM answer repaired: " + "; ".join(problems))
        return fixed
    notes.append("LLM answer rejected (" + "; ".join(problems) + "); used the template")
    return draft


# --- the operator ------------------------------------------------------------------------------------


class SynthesizeParams(OperatorParams):
    question: str = Field("", description="the user's question (the LLM answers it; the template ignores it)")
    template: Template = Field("auto", description="answer shape; auto picks one from what the inputs hold")
    scope: str = Field("", description="what the listed items are restricted to, e.g. 'at ACL in 2005–2008'")
    max_items: int = Field(10, ge=1, le=100)
    use_llm: bool = Field(True, description="let a configured LLM write the answer (checked, else the template)")


@dataclass(kw_only=True)
class AnswerInputs(OperatorInputs):
    entities: list[list[Entity]] | None = port(
        PortType.ENTITIES, many=True, optional=True, description="authors, venues, orgs"
    )
    papers: list[list[RankedPaper]] | None = port(PortType.PAPERS, many=True, optional=True, description="papers")


@register
class SynthesizeAnswer(Operator[SynthesizeParams, AnswerInputs]):
    name = "synthesize_answer"
    family = "entities"
    description = "Short answer {answer, reference} whose [n] citations are URLs of the input entities/papers."
    Params = SynthesizeParams
    Inputs = AnswerInputs
    output = PortType.ANSWER

    async def run(self, ctx: RunContext, params: SynthesizeParams, inputs: AnswerInputs) -> Answer:
        ranked = [it for items in inputs.papers or [] for it in items]
        matched = (it.evidence.scores.get(MATCHES, 0.0) for it in ranked)
        facts = Facts.collect(
            [e for items in inputs.entities or [] for e in items],
            [it.paper for it in ranked],
            papers_given=inputs.papers is not None,
            paper_total=int(max(matched, default=0.0)),
        )
        draft = template_answer(facts, params.template, params.max_items, params.scope)
        if ctx.llm is None or not params.use_llm:
            return draft
        return await llm_answer(ctx.llm, params.question, facts, draft, ctx.notes)
