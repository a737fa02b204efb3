"""Workflow templates: one per search direction, plus the fixed generic workflow.

They are the no-LLM inducer and the evaluation baseline. Node ids are stable, readable names (``anchor``,
``refs``, ``search_kw``, ``merge``, ``filter``, ``score``, ``evidence``) so edits and diffs between a
template and a user's edited version read naturally. Every intent field that is set becomes a param of
the filter / score / top_k nodes; nothing is read from the benchmark beyond what a user could say.

    wf = template("predecessor", "Automatic induction of FrameNet lexical units", intent)
    result = await execute(wf, ctx)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pilot.domain import profile
from pilot.models import Intent
from pilot.query import key_phrases
from pilot.vocab import DIRECTIONS
from workflows.model import Edge, Node, Workflow
from workflows.ops.features import terms_of

# Share of the chosen facet's sentences in the anchor's sentence weights (facet_match): the rest spreads
# over all sentences, because cue words misread some sentences and the whole abstract still says a lot.
FACET_WEIGHT = 0.3
# Weight of the words of the anchor's facet sentences in the candidate (facet_match's ``lexical``), added to the
# sentence-vector blend, and the sentence matches standardised per anchor sentence (``calibrate``). Dev CSFCube
# pools, multi: MAP/NDCG%20 .418/.596 -> .431/.603 with the words, .437/.603 with both (even cases .477/.652 ->
# .485/.650, odd .359/.544 -> .390/.556); weights .25 and .35 gained less in a replay of the final workflows.
FACET_LEXICAL = 0.15
# Weight of the closeness to the nearest paper the anchor cites (facet_match's ``near_refs``). Dev CSFCube pools,
# multi (replay of the final workflows): .438/.607 -> .459/.625; chosen on either half of the cases (even .483/.651
# -> .500/.661, odd .392/.563 -> .419/.590; .2 and .3 gain less on both).
FACET_NEAR_REFS = 0.25
# The rank scale of the anchor's neighbours' votes (neighbourhood's / citation_expand's rank_decay): the
# 21st closest neighbour's vote counts half the closest's. On the dev predecessor cases (multi, odd and even
# halves apart) 20 beat 10 and 50 on recall@50 in both halves.
NEIGHBOUR_RANK_DECAY = 20.0
# Benchmark direction: the share of the score step's ranking kept when facet_match re-ranks its top 50 by
# sentence-level likeness to the anchor. With it (and dense 0.7 -> 1.5) dev benchmark multi nDCG@10 went .527 ->
# .591 (even half .526 -> .598, odd .529 -> .583); alpha .5 over the top 30 gave .579, .7 over the top 30 .563.
BENCHMARK_MATCH_ALPHA = 0.7
# Predecessors: how many best-ranked candidates seed the citation-graph feedback (and stay on top), and the
# weight of "cited alongside them" below them. Dev predecessor multi R@50 .693 -> .710 (even half .752 -> .759,
# odd .634 -> .662), nDCG@10 unchanged by construction; 10 seeds beat 5, 15 and 20, weights above .25 lose.
PREDECESSOR_FEEDBACK_SEEDS = 10
PREDECESSOR_FEEDBACK_WEIGHT = 0.25
# Predecessors: the weight of "introduces a method or resource the anchor's abstract names" (named_in)
PREDECESSOR_NAMED = 0.5
SURVEY_TERMS = ["survey", "overview", "review", "tutorial", "state of the art", "introduction to"]


class TemplateError(ValueError):
    """The template cannot be built from what was given (unknown direction, no anchor)."""


class _Builder:
    def __init__(self, name: str, description: str):
        self.wf = Workflow(name=name, description=description)

    def add(
        self,
        node_id: str,
        op: str,
        params: dict[str, Any] | None = None,
        label: str | None = None,
        /,
        **inputs: str | Sequence[str],
    ) -> str:
        """Add a node; ``inputs`` maps a port name to a producer id or a list of producer ids (the four
        named arguments are positional-only, so any port name — ``in`` too — can be a keyword)."""
        self.wf.nodes.append(
            Node(id=node_id, op=op, params={k: v for k, v in (params or {}).items() if v is not None}, label=label)
        )
        for port, producers in inputs.items():
            for src in [producers] if isinstance(producers, str) else producers:
                self.wf.edges.append(Edge(source=src, target=node_id, port=port))
        return node_id

    def done(self, output: str) -> Workflow:
        self.wf.output = output
        return self.wf


def _filter_params(intent: Intent | None, **base: Any) -> dict[str, Any]:
    """Hard constraints the user stated: years, venues, excluded terms and papers."""
    p: dict[str, Any] = dict(base)
    if intent is None:
        return p
    if intent.year_min is not None:
        p["year_min"] = intent.year_min
    if intent.year_max is not None:
        p["year_max"] = intent.year_max
    if intent.year_min is not None or intent.year_max is not None:
        p.pop("relative_to_anchor", None)  # the user's own range wins over "older/newer than the anchor"
    if intent.exclude_years:
        p["exclude_years"] = [list(period) for period in intent.exclude_years]
    if intent.venues:
        p["venues"] = list(intent.venues)
    if intent.exclude_terms:
        p["exclude_terms"] = list(intent.exclude_terms)
    if intent.exclude_venues:
        p["exclude_venues"] = list(intent.exclude_venues)
    if intent.publication_kinds:
        p["publication_kinds"] = list(intent.publication_kinds)
    if intent.min_citations:
        p["min_citations"] = intent.min_citations
    if intent.disliked_ids:
        p["exclude_ids"] = list(intent.disliked_ids)
    return p


RECENT_YEARS = 5  # "recent work on X" in a topic search: the newest five years the source holds on it


def _preferred(intent: Intent | None, features: dict[str, float]) -> dict[str, float]:
    """A formula adjusted by the soft preferences: topic terms, recency."""
    f = dict(features)
    if intent is not None:
        if intent.topic_terms:
            f["lexical"] = max(f.get("lexical", 0.0), 1.0)
        if intent.recency == "recent":
            f["recency"] = f.get("recency", 0.0) + 0.5
        elif intent.recency == "seminal":
            f["citations"] = f.get("citations", 0.0) + 0.5
            f["recency"] = f.get("recency", 0.0) - 0.3
    return f


def _score_params(intent: Intent | None, features: dict[str, float], **extra: Any) -> dict[str, Any]:
    """The direction's formula, adjusted by soft preferences: topic terms, recency, facet."""
    p: dict[str, Any] = {"dense_to": "anchor", **extra}
    if intent is not None and intent.topic_terms:
        p["text"] = " ".join(intent.topic_terms)
    p["features"] = _preferred(intent, features)
    if p.get("blend_features"):
        p["blend_features"] = _preferred(intent, p["blend_features"])
    return p


def _liked(b: _Builder, intent: Intent | None) -> list[str]:
    """Papers the user marked as good, and more like them: extra inputs of the merge node."""
    if intent is None or not intent.liked_ids:
        return []
    b.add("liked", "fetch", {"ids": list(intent.liked_ids)}, "papers you liked")
    b.add("more_like_liked", "recommend", {"limit": 50}, **{"in": "liked"})
    return ["liked", "more_like_liked"]


def _k(intent: Intent | None) -> int:
    return intent.k if intent is not None else 50


def _top(intent: Intent | None, **extra: Any) -> dict[str, Any]:
    """The final cut: how many results, and their order when the user asked for one ("newest first")."""
    order = {"order": intent.order} if intent is not None and intent.order != "score" else {}
    return {"k": _k(intent), **extra, **order}


def _finish(b: _Builder, intent: Intent | None, ranked_from: str) -> Workflow:
    b.add("top", "top_k", _top(intent), **{"in": ranked_from})
    text = " ".join(intent.topic_terms) if intent is not None and intent.topic_terms else ""
    b.add("evidence", "extract_evidence", {"text": text}, **{"in": "top", "anchor": "anchor"})
    return b.done("evidence")


def _anchor(b: _Builder, anchor_query: str) -> None:
    if not anchor_query or not anchor_query.strip():
        raise TemplateError("a direction template needs an anchor paper (title, DOI or id)")
    b.add("anchor", "anchor", {"query": anchor_query.strip()}, "anchor paper")


def _authors_earlier_refs(b: _Builder) -> list[str]:
    """What the anchor's authors cited in their earlier papers, and those papers themselves: researchers
    build on what they built on before, and a draft's reference list is never visible. Counted per
    paper as ``ev:author_refs.support`` (how many of the authors' earlier papers cite it)."""
    b.add("authors", "paper_authors", {"limit": 10}, "the anchor's authors", papers="anchor")
    b.add("authors_papers", "author_papers", {"top": 10}, authors="authors")
    b.add(
        "authors_earlier",
        "filter",
        {"relative_to_anchor": "before"},
        "the anchor's authors' earlier papers",
        **{"in": "authors_papers", "anchor": "anchor"},
    )
    b.add("author_refs", "citation_expand", {"direction": "references", "max_seeds": 60}, **{"in": "authors_earlier"})
    return ["author_refs", "authors_earlier"]


def predecessor(anchor_query: str, intent: Intent | None = None) -> Workflow:
    """Older work the anchor builds on. Its references may be unknown (a draft), so candidates come from
    what is similar to it, what its citers cite with it, what its field (its 200 closest papers) cites and
    what its authors cited in their earlier papers, scored by how often, closeness and citation count;
    each result names the evidence it rests on (workflows.explain)."""
    b = _Builder("predecessor", "older papers the anchor builds on")
    _anchor(b, anchor_query)
    b.add("kw", "keywords_from", {"k": 8}, **{"in": "anchor"})
    b.add("search_dense", "semantic_search", {"limit": 200}, anchor="anchor")
    b.add("search_kw", "keyword_search", {"limit": 100}, keywords="kw")
    b.add("refs", "citation_expand", {"direction": "references"}, **{"in": "anchor"})
    b.add("citers", "citation_expand", {"direction": "citations", "per_paper_limit": 300}, **{"in": "anchor"})
    b.add("cocited", "citation_expand", {"direction": "references", "max_seeds": 100}, **{"in": "citers"})
    # what the anchor's 200 closest papers cite: citations within its field, the foundations as its neighbours
    # see them (one reference look-up per neighbour)
    b.add("similar_refs", "citation_expand", {"direction": "references", "max_seeds": 200}, **{"in": "search_dense"})
    authored = _authors_earlier_refs(b)
    # what its text says it builds on: the papers introducing the methods and resources its abstract names
    b.add("named", "named_in", {"years_before": 15, "max_names": 5}, "what its abstract names", **{"in": "anchor"})
    merged = ["refs", "cocited", "similar_refs", "search_dense", "search_kw", "named", *authored, *_liked(b, intent)]
    b.add("merge", "union", **{"in": merged})
    b.add(
        "filter", "filter", _filter_params(intent, relative_to_anchor="before"), **{"in": "merge", "anchor": "anchor"}
    )
    # ev:graph.centrality = how many of the anchor's 200 closest papers cite the candidate, each vote weighed
    # by the neighbour's rank (what the closest ones cite counts most; a far neighbour is often another
    # subfield), and counting candidates that are neighbours themselves: an older close neighbour that the
    # other neighbours cite is a foundation the anchor likely shares. Reuses similar_refs' look-ups.
    b.add(
        "graph",
        "neighbourhood",
        {"max_seeds": 200, "rank_decay": NEIGHBOUR_RANK_DECAY, "max_lookups": 200},
        "place in the anchor's neighbours' citations",
        seeds="search_dense",
        **{"in": "filter"},
    )
    # ev:cocited.support = how many of the anchor's citers cite the paper (co-citation), counted while
    # expanding, so scoring needs no further source calls (a remote API would pay one per candidate).
    features = {
        "dense": 1.0, "ev:graph.centrality": 1.0, "ev:cocited.support": 1.0, "ev:author_refs.support": 1.0,
        "citations": 0.3, "lexical": 0.3, "ev:refs.support": 3.0, "ev:named.support": PREDECESSOR_NAMED,
    }  # fmt: skip
    b.add("score", "score", _score_params(intent, features), **{"in": "graph", "anchor": "anchor"})
    # Feedback from the citation graph: the best-ranked candidates are most likely the anchor's foundations,
    # and the papers later work cites alongside them are likely foundations too. That vote re-orders only
    # the list below them (keep_top): it lifts what the anchor-centred signals left just out of reach
    # without touching the head of the list.
    seeds = PREDECESSOR_FEEDBACK_SEEDS
    b.add("best", "top_k", {"k": seeds}, f"the {seeds} best-ranked candidates", **{"in": "score"})
    # over a rate-limited service these look-ups cost about 4 requests and 8-10 s of a 1-request-per-second turn
    # for a re-order below the top 10 (measured through `pilot emulate s2`): they run on a free graph only
    graph = {"only_free_graph": True}
    b.add(
        "best_citers", "citation_expand", {"direction": "citations", "per_paper_limit": 300, **graph}, **{"in": "best"}
    )
    b.add(
        "feedback",
        "neighbourhood",
        {"max_seeds": seeds, "max_lookups": 500, **graph},
        "cited alongside the best-ranked candidates",
        seeds="best",
        citers="best_citers",
        **{"in": "score"},
    )
    tail = {"prior": 1.0, "ev:feedback.cocitation": PREDECESSOR_FEEDBACK_WEIGHT}
    b.add("rescore", "score", {"features": tail, "keep_top": seeds}, **{"in": "feedback"})
    return _finish(b, intent, "rescore")


def successor(anchor_query: str, intent: Intent | None = None) -> Workflow:
    """Later work that cites the anchor, narrowed by the user's years / venues, most similar first."""
    b = _Builder("successor", "later papers that cite or extend the anchor")
    _anchor(b, anchor_query)
    b.add("citers", "citation_expand", {"direction": "citations", "per_paper_limit": 1000}, **{"in": "anchor"})
    if intent is not None and intent.also_cites:
        # "papers citing both X and Y": the papers in every citer list, nothing merely close in text
        lists = ["citers"]
        for i, pid in enumerate(intent.also_cites, 1):
            b.add(f"also_{i}", "anchor", {"query": pid}, "also cited")
            b.add(f"citers_{i}", "citation_expand", {"direction": "citations", "per_paper_limit": 1000},
                  "papers citing it too", **{"in": f"also_{i}"})  # fmt: skip
            lists.append(f"citers_{i}")
        b.add("merge", "intersect", None, "papers citing all of them", **{"in": lists})
    else:
        b.add("search_dense", "semantic_search", {"limit": 50}, anchor="anchor")
        b.add("merge", "union", **{"in": ["citers", "search_dense", *_liked(b, intent)]})
    b.add("filter", "filter", _filter_params(intent, relative_to_anchor="after"), **{"in": "merge", "anchor": "anchor"})
    features = {"ev:citers.support": 3.0, "dense": 1.0, "citations": 0.2}
    b.add("score", "score", _score_params(intent, features), **{"in": "filter", "anchor": "anchor"})
    return _finish(b, intent, "score")


def sibling(anchor_query: str, intent: Intent | None = None) -> Workflow:
    """Papers like the anchor: sharing its references (coupling), cited alongside it, or close in text —
    but neither citing it nor cited by it.

    With a facet ("similar in its method / problem / results") the relation is about content, not about
    the citation graph: the anchor's references stay candidates (it cites work with the same method or
    problem), and text similarity outweighs coupling, which says "same literature", not "same aspect"."""
    b = _Builder("sibling", "papers like the anchor")
    _anchor(b, anchor_query)
    faceted = intent is not None and intent.facet is not None
    b.add("kw", "keywords_from", {"k": 8}, **{"in": "anchor"})
    b.add("refs", "citation_expand", {"direction": "references"}, **{"in": "anchor"})
    # bounded for remote sources: one paginated citations call per reference
    b.add(
        "coupled",
        "citation_expand",
        {"direction": "citations", "per_paper_limit": 300, "max_seeds": 40},
        **{"in": "refs"},
    )
    b.add("citers", "citation_expand", {"direction": "citations", "per_paper_limit": 300}, **{"in": "anchor"})
    b.add("cocited", "citation_expand", {"direction": "references", "max_seeds": 100}, **{"in": "citers"})
    b.add("search_dense", "semantic_search", {"limit": 100}, anchor="anchor")
    b.add("search_kw", "keyword_search", {"limit": 100}, keywords="kw")
    merged = ["coupled", "cocited", "search_dense", "search_kw", *(["refs"] if faceted else []), *_liked(b, intent)]
    b.add("merge", "union", **{"in": merged})
    b.add("not_linked", "difference", **{"in": "merge", "minus": ["citers"] if faceted else ["refs", "citers"]})
    b.add("filter", "filter", _filter_params(intent), **{"in": "not_linked", "anchor": "anchor"})
    # Sharing one or two references is common between any two papers of a field; from the third on it
    # says "same literature behind them" (absolute scale: floor 2, saturating at 5).
    # ev:coupled.support = how many of the anchor's references the paper cites: bibliographic coupling.
    # rrf: found by several of the searches and expansions at once (text, keywords, coupling, co-citation,
    # the anchor's references) — agreement between signals that each see a different side of the paper
    if faceted:
        features = {"ev:coupled.support": 0.5, "dense": 1.5, "lexical": 0.5, "rrf": 0.5}
    else:
        features = {"ev:coupled.support": 2.0, "dense": 1.0}
    params = _score_params(intent, features, caps={"ev:coupled.support": 5}, floors={"ev:coupled.support": 2})
    b.add("score", "score", params, **{"in": "filter", "anchor": "anchor"})
    if not faceted:
        return _finish(b, intent, "score")
    # Likeness on one aspect is read sentence by sentence (facet_match): the anchor's sentences about its
    # problem / method / results weigh more, each looking for its best match in the candidate's abstract.
    facet = intent.facet if intent is not None else None
    b.add(
        "facet",
        "facet_match",
        {
            "facet": facet,
            "facet_weight": FACET_WEIGHT,
            "alpha": 0.5,
            "calibrate": True,
            "lexical": FACET_LEXICAL,
            "near_refs": FACET_NEAR_REFS,
            "top_n": 30,
        },
        f"sentence by sentence, on the anchor's {facet}",
        **{"in": "score", "anchor": "anchor", "refs": "refs"},
    )
    return _finish(b, intent, "facet")


def _resource_terms(intent: Intent | None) -> list[str]:
    domain = profile()
    terms = list(domain.resource_terms)
    for rt in intent.resource_types if intent is not None else []:
        terms += [t for t in domain.resource_type_terms.get(rt.lower(), [rt]) if t not in terms]
    return terms


def benchmark(anchor_query: str, intent: Intent | None = None) -> Workflow:
    """Datasets, corpora, lexical resources and shared tasks the anchor's problem is evaluated on:
    what its look-alikes and its citers cite, preferring resource-like titles and widely used (cited) ones."""
    b = _Builder("benchmark", "data resources and evaluation campaigns for the anchor's problem")
    _anchor(b, anchor_query)
    b.add("kw", "keywords_from", {"k": 6}, **{"in": "anchor"})
    b.add("refs", "citation_expand", {"direction": "references"}, **{"in": "anchor"})
    b.add("search_dense", "semantic_search", {"limit": 60}, anchor="anchor")
    # ev:similar_refs.centrality: the resources the anchor's look-alikes evaluate on, the closest ones' votes
    # weighing most (a neighbour's seeds are methods, not resources, so only their references are counted)
    b.add(
        "similar_refs",
        "citation_expand",
        {"direction": "references", "max_seeds": 60, "rank_decay": NEIGHBOUR_RANK_DECAY},
        **{"in": "search_dense"},
    )
    b.add("citers", "citation_expand", {"direction": "citations", "per_paper_limit": 300}, **{"in": "anchor"})
    b.add("cocited", "citation_expand", {"direction": "references", "max_seeds": 100}, **{"in": "citers"})
    b.add(
        "search_resources",
        "keyword_search",
        {"query": profile().resource_query, "limit": 100},
        keywords="kw",
    )
    authored = _authors_earlier_refs(b)
    merged = ["refs", "similar_refs", "cocited", "search_resources", *authored, *_liked(b, intent)]
    b.add("merge", "union", **{"in": merged})
    b.add(
        "filter", "filter", _filter_params(intent, relative_to_anchor="before"), **{"in": "merge", "anchor": "anchor"}
    )
    # Resources first, methods after: paper_type (1 for a dataset, corpus, treebank, lexical resource or
    # shared task, by pilot.papertype) outweighs every relevance signal together, so a parser the anchor's
    # neighbours all cite ranks below the treebank they were evaluated on; among resources, how many of
    # the anchor's neighbours, citers and authors used it decides. Being cited by the anchor counts (it used
    # the resource) but no more than the others: an anchor cites far more methods than datasets.
    features = {
        "paper_type": 8.0, "title_match": 0.5, "ev:similar_refs.centrality": 1.0, "ev:cocited.support": 1.0,
        "ev:author_refs.support": 1.0, "dense": 1.5, "citations": 0.7, "ev:refs.support": 1.0,
    }  # fmt: skip
    b.add(
        "score",
        "score",
        _score_params(intent, features, title_terms=_resource_terms(intent), paper_types=["resource"]),
        **{"in": "filter", "anchor": "anchor"},
    )
    # Among the resources the field uses, the ones made for the anchor's problem: a treebank every parser paper
    # cites gathers as many votes as the treebank of the anchor's language or task, but only the latter's
    # sentences say what the anchor's sentences say (each anchor sentence's best match, facet_match).
    b.add(
        "match",
        "facet_match",
        {"alpha": BENCHMARK_MATCH_ALPHA, "top_n": 50},
        "sentence by sentence, on the anchor's problem",
        **{"in": "score", "anchor": "anchor"},
    )
    return _finish(b, intent, "match")


def survey(anchor_query: str, intent: Intent | None = None) -> Workflow:
    """Surveys, overviews, reviews and tutorials whose titles share the anchor's distinctive terms."""
    b = _Builder("survey", "surveys and overviews covering the anchor's topic")
    _anchor(b, anchor_query)
    b.add("kw", "keywords_from", {"k": 6, "bigrams": False}, **{"in": "anchor"})
    b.add(
        "search_kw",
        "keyword_search",
        {"query": "survey overview review tutorial", "limit": 300, "per_keyword": True},
        keywords="kw",
    )
    b.add("search_dense", "semantic_search", {"query": "a survey of", "limit": 200}, anchor="anchor")
    b.add("merge", "union", **{"in": ["search_kw", "search_dense", *_liked(b, intent)]})
    filt = _filter_params(intent, include_terms=SURVEY_TERMS, terms_in="title")
    b.add("filter", "filter", filt, **{"in": "merge", "anchor": "anchor"})
    features = {"lexical": 1.0, "dense": 0.7}
    b.add(
        "score", "score", _score_params(intent, features, lexical_field="title"), **{"in": "filter", "anchor": "anchor"}
    )
    return _finish(b, intent, "score")


def _type_query(kind: str) -> str | None:
    """The words papers of a type name in their titles: a topic request's type words add a search for them."""
    return {"survey": " ".join(SURVEY_TERMS[:4]), "resource": profile().resource_query}.get(kind)


# how many of the three searches' best hits may seed the graph walk (dev topic cases: 60 or 100 left R@50 at .509)
STRONGEST_HITS = 30
# Below this cosine (MiniLM) a dense hit for a topic is noise: a short name the encoder does not know ("ELMo",
# "XLNet": best hit .41/.47) only finds unrelated papers, which then seed the graph walk. The dev topic cases'
# best hits are .70–1.00; at .5 their metrics move by ≤ .003 (nDCG@10 .471 → .474, R@50 .527 → .525).
TOPIC_DENSE_FLOOR = 0.5
TOPIC_CITATIONS = 0.6
# where the graph does not cover the request, what the strongest later matches resemble stands in for what they cite
# (weight and features.PRECEDENCE_FLOOR chosen on the LitSearch tune half: nDCG@10 .412 -> .510; held half .503 ->
# .513; the graph-covered topic dev cases unchanged, single .339, multi .448)
TOPIC_PRECEDENCE = 0.5
TOPIC_TITLE_PHRASES = 0.3
# graph.coverage from the rank-weighted share of the strongest matches with citation links: none up to 10%, full from
# 30% (dev: topic cases' shares are 8-98% unfiltered, 40-100% with a period; LitSearch questions' mostly under 15%)
GRAPH_COVERAGE = (0.1, 0.3)
# a preferred type (Intent.prefer_types) counts like a good share of the text match, not like a filter
PREFERRED_TYPE = 0.5


# a long request's own words weigh as much as its meaning where the citation graph covers it (LitSearch tune nDCG@10
# .413 -> .429); a short topic keeps the graph's say (at 1.0 for every request, topic cases fell .335 -> .319)
LONG_REQUEST_LEXICAL = 1.0
# a request that says this many words more than its topic is searched whole too ("papers on X since 2015" is X)
QUERY_EXTRA_WORDS = 3
QUERY_TOPIC_SHARE = 0.75


def _query_of(intent: Intent) -> str | None:
    """The request as a search query (``Intent.query``) when it adds to the topic and still describes this search:
    a topic whose words the query lacks came later (a swapped topic, "make that Chinese"), and the query then
    describes the search before it."""
    query = " ".join((intent.query or "").split())[:1000]
    topic_words = set(terms_of(intent.topic or ""))
    query_words = set(terms_of(query))
    # most of the topic's words, not all: a word the reader kept at the topic's edge ("discusses …") and the query
    # dropped must not cost the long request its whole-text search
    shared = len(topic_words & query_words) / max(1, len(topic_words))
    if not topic_words or shared < QUERY_TOPIC_SHARE or len(query_words - topic_words) < QUERY_EXTRA_WORDS:
        return None
    return query


def topic_search(intent: Intent) -> Workflow:
    """A field's literature from a topic alone (no anchor paper): several phrasings of the topic searched
    (its keywords, the request's noun phrases, dense), the strongest hits taken as seeds, the citation graph
    followed both ways from them, and every candidate scored by its place in the seeds' neighbourhood
    (cited by many seeds, cited alongside them, sharing their references) and by closeness to the topic.
    Type words of the request ("surveys on …") add a search for that type and keep only papers of it."""
    topic = " ".join((intent.topic or "").split())[:1000]
    if not topic:
        raise TemplateError("a topic search needs a topic (what the papers should be about)")
    b = _Builder("topic", f"the literature on {topic}")
    period = {"year_min": intent.year_min, "year_max": intent.year_max}
    b.add("kw", "keywords_from", {"text": topic, "k": 8}, "topic keywords")
    b.add("phrases", "noun_phrases", {"text": topic}, "the request's noun phrases")
    b.add("search_kw", "keyword_search", {"limit": 100, **period}, keywords="kw")
    b.add("search_phrases", "keyword_search", {"limit": 100, "per_keyword": True, **period}, keywords="phrases")
    dense = {"query": topic, "limit": 100, "min_similarity": TOPIC_DENSE_FLOOR, **period}
    b.add("search_dense", "semantic_search", dense)
    searches = ["search_kw", "search_phrases", "search_dense"]
    query = _query_of(intent)
    if query:
        # a long request is searched whole too, never only the topic the reader cut from it
        b.add("search_query", "keyword_search", {"query": query, "limit": 100, **period}, "the request as written")
        b.add(
            "search_query_dense",
            "semantic_search",
            {"query": query, "limit": 100, "min_similarity": TOPIC_DENSE_FLOOR, **period},
            "the request as written, by meaning",
        )
        searches += ["search_query", "search_query_dense"]
    matches = list(searches)  # what the words find; a type search below finds papers of the type
    for kind in intent.paper_types:  # a preferred type re-orders what the request finds, it brings in no more
        if type_query := _type_query(kind):
            node = f"search_{kind}s"
            params = {"query": type_query, "limit": 100, "per_keyword": True, **period}
            b.add(node, "keyword_search", params, f"{kind} papers on the topic", keywords="kw")
            searches.append(node)
    b.add("hits", "union", **{"in": searches})
    # a hit that cites nothing in the source leads nowhere in the graph: the seeds are the linked ones among the
    # strongest matches only, for where the graph does not reach the topic (a field newer than the source's
    # links) the best linked hits are off-topic, and their neighbourhood would bury the real matches
    b.add("strongest", "top_k", {"k": STRONGEST_HITS}, "the strongest matches", **{"in": "hits"})
    b.add("linked", "filter", {"has_references": True}, "strong matches that cite something", **{"in": "strongest"})
    b.add("seeds", "top_k", {"k": 30}, "the best matches", **{"in": "linked"})
    b.add("refs", "citation_expand", {"direction": "references", "max_seeds": 30}, **{"in": "seeds"})
    b.add(
        "citers",
        "citation_expand",
        {"direction": "citations", "max_seeds": 30, "per_paper_limit": 100},
        **{"in": "seeds"},
    )
    b.add("merge", "union", **{"in": ["hits", "refs", "citers", *_liked(b, intent)]})
    filt = _filter_params(intent, paper_types=list(intent.paper_types) or None)
    if intent.recency == "recent" and intent.year_min is None and intent.year_max is None:
        filt["newest_years"] = RECENT_YEARS  # "the latest work on X": a field's core is old, the newest is wanted
    b.add("filter", "filter", filt, **{"in": "merge"})
    # how much of what the words find carries citation links (a type search's papers of the type are no measure)
    pool = "strongest"
    if len(matches) < len(searches):
        b.add("matches", "union", None, "what the words find", **{"in": matches})
        pool = b.add("closest", "top_k", {"k": STRONGEST_HITS}, "the strongest text matches", **{"in": "matches"})
    lo, hi = GRAPH_COVERAGE
    b.add(
        "graph",
        "neighbourhood",
        {"max_seeds": 30, "no_coverage": lo, "full_coverage": hi},
        "place in the seeds' neighbourhood",
        seeds="seeds",
        citers="citers",
        pool=pool,
        **{"in": "filter"},
    )
    # Two formulas, blended by how much of what the words find carries citation links (graph.coverage). Where the
    # graph covers the request, a field's core is what many seeds cite (ev:graph.centrality, the best matches
    # weighing most) and cite alongside; where it does not (a field newer than the source's links), the few linked
    # matches are not the field's core, and the request's words decide, with citations counted against the paper's
    # era and kind of count (cited_for_era), and its key phrases named in a title.
    graph_formula = {
        "ev:graph.centrality": 1.0, "ev:graph.cocitation": 0.5, "dense": 1.0, "citations": 0.3,
        "lexical": LONG_REQUEST_LEXICAL if query else 0.3,
    }  # fmt: skip
    words_formula = {
        "dense": 1.0, "lexical_source": 1.0, "cited_for_era": TOPIC_CITATIONS, "precedence": TOPIC_PRECEDENCE,
    }  # fmt: skip
    text = " ".join([query or topic, *(intent.topic_terms if intent.topic_terms else [])])
    phrases = key_phrases(query) if query else []  # a short request's only phrase is its topic
    if phrases:
        words_formula["title_match"] = TOPIC_TITLE_PHRASES
    preferred = [t for t in intent.prefer_types if t not in intent.paper_types]
    if preferred:  # "what benchmarks have been used to assess …": that kind first, the others still there
        graph_formula["paper_type"] = words_formula["paper_type"] = PREFERRED_TYPE
    params = _score_params(
        intent,
        graph_formula,
        dense_to="text",
        blend_features=words_formula,
        blend_by="graph.coverage",
        title_terms=phrases or None,
        paper_types=preferred or None,
    )
    params["text"] = text  # the topic, and any sub-area the user added
    b.add("score", "score", params, **{"in": "graph"})
    # the type search brings every overview of the period: one that hardly touches the topic is no survey of it
    top = _top(intent, **({"drop_weak": True} if intent.paper_types else {}))
    b.add("top", "top_k", top, **{"in": "score"})
    b.add("evidence", "extract_evidence", {"text": text}, **{"in": "top"})
    return b.done("evidence")


_TEMPLATES = {
    "predecessor": predecessor,
    "successor": successor,
    "sibling": sibling,
    "benchmark": benchmark,
    "survey": survey,
}
assert set(_TEMPLATES) == set(DIRECTIONS)


def template(direction: str, anchor_query: str, intent: Intent | None = None) -> Workflow:
    """The workflow for a search direction around an anchor paper, shaped by what the intent pins down."""
    try:
        build = _TEMPLATES[direction]
    except KeyError:
        raise TemplateError(f"unknown direction {direction!r}; choose one of {', '.join(DIRECTIONS)}") from None
    return build(anchor_query or (intent.anchor_id if intent is not None else None) or "", intent)


def generic_workflow(anchor_query: str, request_text: str, intent: Intent | None = None) -> Workflow:
    """keywords -> search + citation expansion -> union/dedupe -> filter -> score -> rerank -> evidence.

    Works with an anchor, with only a request text, or both."""
    anchor_query = anchor_query or (intent.anchor_id if intent is not None else None) or ""
    has_anchor = bool(anchor_query.strip())
    if not has_anchor and not (request_text or "").strip():
        raise TemplateError("give an anchor paper or a request text")
    b = _Builder("generic", "keyword and dense search plus citation expansion, scored and reranked")
    anchor_in: dict[str, str] = {}
    if has_anchor:
        _anchor(b, anchor_query)
        anchor_in = {"anchor": "anchor"}
    text = (request_text or "").strip()[:1000] if not has_anchor else ""
    kw_in = {"in": "anchor"} if has_anchor else {}
    b.add("kw", "keywords_from", {"k": 8, "text": text}, **kw_in)
    b.add("search_kw", "keyword_search", {"limit": 100}, keywords="kw")
    b.add("search_dense", "semantic_search", {"limit": 100, "query": text}, **anchor_in)
    sources = ["search_kw", "search_dense"]
    if has_anchor:
        b.add("expand", "citation_expand", {"direction": "both", "per_paper_limit": 300}, **{"in": "anchor"})
        sources.append("expand")
    b.add("merge", "union", **{"in": [*sources, *_liked(b, intent)]})
    b.add("dedupe", "dedupe", **{"in": "merge"})
    b.add("filter", "filter", _filter_params(intent), **{"in": "dedupe", **anchor_in})
    features = {"dense": 1.0, "lexical": 0.5, "citations": 0.2, "rrf": 0.5}
    dense_to = "anchor" if has_anchor else "auto"
    b.add(
        "score",
        "score",
        _score_params(intent, features, text=text or None, dense_to=dense_to),
        **{"in": "filter", **anchor_in},
    )
    b.add("rerank", "rerank", {"text": text, "top_n": 50}, **{"in": "score", **anchor_in})
    b.add("top", "top_k", _top(intent), **{"in": "rerank"})
    evidence_text = " ".join(intent.topic_terms) if intent is not None and intent.topic_terms else text
    b.add("evidence", "extract_evidence", {"text": evidence_text}, **{"in": "top", **anchor_in})
    return b.done("evidence")
