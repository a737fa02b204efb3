"""Shared helpers for the paper operators: tokens, BM25 over a candidate set, vectors, merging.

Kept free of operator classes so scoring, reading, keywords and output share one definition of
"a term", "lexical overlap" and "the vector of a paper".
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from pilot.models import Evidence, Paper, RankedPaper
from pilot.sources.base import NotSupported, SourceError
from pilot.text import QUERY_STOPWORDS, contains_run
from workflows.operator import RunContext

_TOKEN = re.compile(r"[a-z0-9]+")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")


def tokens(text: str | None, keep_stop: bool = False) -> list[str]:
    """Lower-case alphanumeric tokens; stopwords and 1-letter tokens dropped unless ``keep_stop``."""
    toks = _TOKEN.findall((text or "").lower())
    if keep_stop:
        return toks
    return [t for t in toks if len(t) > 1 and t not in QUERY_STOPWORDS and not t.isdigit()]


def phrases_in(text: str | None, phrases: Iterable[str]) -> list[str]:
    """The phrases that occur in ``text`` as whole-word runs ("data set" in "A New Data Set for …"),
    in the order given; the score op's ``title_match`` counts them and ``workflows.explain`` names them."""
    words = tokens(text, keep_stop=True)
    return [phrase for phrase in phrases if contains_run(words, tokens(phrase, keep_stop=True))]


def terms_of(text: str | Iterable[str] | None) -> list[str]:
    """Query terms from a text or a keyword list (phrases split into their words), order kept, unique."""
    if text is None:
        return []
    parts = [text] if isinstance(text, str) else list(text)
    out: list[str] = []
    for part in parts:
        for t in tokens(part):
            if t not in out:
                out.append(t)
    return out


def sentences(paper: Paper) -> list[str]:
    """The title and the abstract's sentences: the units evidence snippets are cut from."""
    out = [paper.title.strip()] if paper.title else []
    if paper.abstract:
        out.extend(s.strip() for s in _SENT.split(paper.abstract) if len(s.strip()) > 3)
    return out


def bm25(query: list[str], docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of one bag-of-terms query against tokenised docs; IDF from the docs themselves.

    The candidate set is the collection here: an operator scores what flowed into it, not the corpus.
    """
    n = len(docs)
    if n == 0 or not query:
        return np.zeros(n, dtype=np.float32)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    avgdl = (sum(len(d) for d in docs) / n) or 1.0
    qterms = set(query)
    out = np.zeros(n, dtype=np.float32)
    for i, d in enumerate(docs):
        if not d:
            continue
        tf = Counter(t for t in d if t in qterms)
        s = 0.0
        for t, f in tf.items():
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / avgdl))
        out[i] = s
    return out


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] within the set; a constant feature becomes all zeros (it ranks nothing)."""
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-12:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - lo) / (hi - lo)).astype(np.float32)


def citation_value(paper: Paper) -> int:
    return max(paper.citation_count or 0, paper.in_corpus_citations or 0)


# Papers of one era and one kind of count are compared with each other: a count from a source's citation links
# (in_corpus_citations) and a count from a citation index (citation_count) differ by orders of magnitude, and a
# 2008 paper has had a decade more than a 2021 one to be cited.
ERA_YEARS = 2  # the years on either side that make a paper's cohort when its own year has too few papers
MIN_COHORT = 5


def _count_kind(paper: Paper) -> tuple[str, int] | None:
    """The paper's citation count and where it comes from; None when no source counted its citations."""
    if paper.citation_count is not None:
        return "index", paper.citation_count
    if paper.references is not None or paper.in_corpus_citations:
        # a record with known citation links: its in-source count is a count (possibly 0), not an unknown
        return "links", paper.in_corpus_citations or 0
    return None


def cited_for_era(papers: Sequence[Paper]) -> np.ndarray:
    """Each paper's citation count as a percentile (0-1) among the papers of its era with the same kind of count
    (±``ERA_YEARS`` years when its year alone has fewer than ``MIN_COHORT``); an unknown count, or a paper with
    no cohort, is 0.5 — unknown is not zero, and not a reward either."""
    known = [_count_kind(p) for p in papers]
    cohorts: dict[tuple[str, int], list[int]] = {}
    for p, k in zip(papers, known, strict=True):
        if k is not None and p.year:
            cohorts.setdefault((k[0], p.year), []).append(k[1])
    out = np.full(len(papers), 0.5, dtype=np.float32)
    for i, (p, k) in enumerate(zip(papers, known, strict=True)):
        if k is None or not p.year:
            continue
        counts = list(cohorts.get((k[0], p.year), []))
        if len(counts) < MIN_COHORT:
            counts = [c for y in range(p.year - ERA_YEARS, p.year + ERA_YEARS + 1) for c in cohorts.get((k[0], y), [])]
        if len(counts) < MIN_COHORT:
            continue
        below = sum(c < k[1] for c in counts)
        ties = sum(c == k[1] for c in counts)
        out[i] = (below + 0.5 * ties) / len(counts)
    return out


# What newer work on a request builds on, where no citation links say so (a field newer than the source's links):
# the paper that many of the strongest candidates resemble and came after is the one they would cite (LitSearch dev
# questions: SimCSE below its 2022 follow-ups, Prefix-Tuning below P-Tuning v2 and Visual Prompt Tuning).
PRECEDENCE_POOL = 50  # the strongest candidates by the rest of the formula that may count as later work
PRECEDENCE_FLOOR = 0.6  # cosine (MiniLM) below which a later paper is no follow-up of this one


def precedence(papers: Sequence[Paper], vectors: np.ndarray, strongest: Sequence[int]) -> np.ndarray:
    """For each paper, how close in meaning the later papers among ``strongest`` (indices, best first) are to it:
    the sum over those published after it of the cosine above ``PRECEDENCE_FLOOR`` (0 without a year or a vector)."""
    pool = [i for i in list(strongest)[:PRECEDENCE_POOL] if np.isfinite(vectors[i]).all()]
    if not pool:
        return np.zeros(len(papers), dtype=np.float32)
    v = np.nan_to_num(vectors)
    close = np.clip(v @ v[pool].T - PRECEDENCE_FLOOR, 0.0, None)
    years = np.array([p.year or 0 for p in papers])
    later = (years[pool][None, :] > years[:, None]) & (years[:, None] > 0)
    return (close * later).sum(axis=1).astype(np.float32)


# --- vectors ------------------------------------------------------------------------------------


def text_vector(ctx: RunContext, text: str) -> np.ndarray | None:
    """The embedding of a query text, or None when no embedder is configured."""
    if ctx.embedder is None or not text.strip():
        return None
    return ctx.embedder.encode_one(text)


def _vector_lookup(source: Any, depth: int = 0):
    """A function ids -> array (NaN rows for unknown ids) when the source ships precomputed vectors.

    Sources may offer ``paper_vectors(ids)``; the offline corpus store keeps them as ``store.vectors``;
    wrappers (e.g. a source hiding benchmark edges) are looked through via ``inner``.
    """
    fn = getattr(source, "paper_vectors", None)
    if callable(fn):
        return fn
    store = getattr(source, "store", None)
    vectors, row_of = getattr(store, "vectors", None), getattr(store, "row_of", None)
    if vectors is not None and isinstance(row_of, dict):

        def lookup(ids: list[str]) -> np.ndarray:
            out = np.full((len(ids), vectors.shape[1]), np.nan, dtype=np.float32)
            rows = [(i, row_of.get(pid)) for i, pid in enumerate(ids)]
            known = [(i, r) for i, r in rows if r is not None]
            if known:
                out[[i for i, _ in known]] = np.asarray(vectors[[r for _, r in known]], dtype=np.float32)
            return out

        return lookup
    inner = getattr(source, "inner", None)
    if inner is not None and depth < 3:
        return _vector_lookup(inner, depth + 1)
    return None


EMBED_CHUNK = 32


def encode(embedder: Any, texts: list[str]) -> np.ndarray:
    """Embed in chunks: the embedder's per-text cache keeps them (batches over 256 are not cached), and another
    caller waiting for the model (a run's scoring step behind its preview) gets its turn between chunks."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.concatenate([embedder.encode(texts[i : i + EMBED_CHUNK]) for i in range(0, len(texts), EMBED_CHUNK)])


def paper_vectors(
    ctx: RunContext, papers: list[Paper], at_most: int | None = None, order: Sequence[int] | None = None,
    within_s: float | None = None,
) -> np.ndarray | None:  # fmt: skip
    """Unit vectors of the papers' title+abstract, shape (n, dim); None when nothing can embed.

    Precomputed vectors of the source answer first; the embedder fills the rest — only the first ``at_most``
    of them in ``order`` (default: the papers' order) when given, and only while ``within_s`` seconds last:
    the others are NaN rows. Embedding is the slow part of ranking papers from a remote source, which ships
    no vectors, and on a busy machine it must not take a step past its timeout.
    """
    if not papers:
        return np.zeros((0, 384), dtype=np.float32)
    out: np.ndarray | None = None
    missing = list(range(len(papers)))
    lookup = _vector_lookup(ctx.source)
    if lookup is not None:
        try:
            got = lookup([p.id for p in papers])
        except (OSError, ValueError, IndexError, KeyError):  # a damaged vector file must not sink a scoring step
            got = None
        if got is not None and len(got) == len(papers):
            out = np.asarray(got, dtype=np.float32)
            missing = [i for i in range(len(papers)) if not np.isfinite(out[i]).all() or not out[i].any()]
    if missing:
        if ctx.embedder is None:
            if out is None:
                return None
            out[missing] = 0.0
            return out
        left: list[int] = []
        if at_most is not None and len(missing) > at_most:
            rank = {i: r for r, i in enumerate(order if order is not None else range(len(papers)))}
            missing = sorted(missing, key=lambda i: rank.get(i, len(rank)))
            missing, left = missing[: max(0, at_most)], missing[max(0, at_most) :]
            ctx.notes.append(
                f"{len(left)} of {len(papers)} papers without stored vectors were not embedded (at most {at_most}"
                " per step, the best by the other signals first); they get the lowest similarity"
            )
        if out is None:
            out = np.zeros((len(papers), 384), dtype=np.float32)
        deadline = None if within_s is None else time.perf_counter() + within_s
        for lo in range(0, len(missing), EMBED_CHUNK):
            if deadline is not None and time.perf_counter() > deadline:
                late = missing[lo:]
                left += late
                ctx.notes.append(f"{len(late)} papers not embedded: embedding reached its {within_s:g} s budget")
                break
            chunk = missing[lo : lo + EMBED_CHUNK]
            out[chunk] = ctx.embedder.encode([papers[i].text for i in chunk])
        out[left] = np.nan
    return out


def query_vector(ctx: RunContext, text: str, anchors: list[Paper]) -> np.ndarray | None:
    """The dense query: the text when given, else the mean of the anchors' vectors."""
    if text.strip():
        return text_vector(ctx, text)
    if anchors:
        vecs = paper_vectors(ctx, anchors)
        if vecs is None or not vecs.any():
            return None
        v = vecs.mean(axis=0)
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else None
    return None


def cosine_to(
    ctx: RunContext, papers: list[Paper], text: str, anchors: list[Paper], at_most: int | None = None,
    order: Sequence[int] | None = None, within_s: float | None = None,
) -> np.ndarray | None:  # fmt: skip
    """Cosine of each paper to the text (else the anchors); the papers ``paper_vectors`` leaves unembedded
    (``at_most``, ``within_s``) get the lowest cosine of the others, so they are neither helped nor sunk below all."""
    q = query_vector(ctx, text, anchors)
    if q is None:
        return None
    vecs = paper_vectors(ctx, papers, at_most, order, within_s)
    if vecs is None:
        return None
    sims = (vecs @ q).astype(np.float32)
    unknown = ~np.isfinite(sims)
    if unknown.any():
        sims[unknown] = float(sims[~unknown].min()) if (~unknown).any() else 0.0
    return sims


# Papers per step compared by the source's own embeddings: one batch request (Semantic Scholar takes 500 ids).
SOURCE_VECTORS_AT_MOST = 500


def ships_embeddings(source: Any) -> bool:
    """Whether the source (or the source a wrapper stands for) ships its own paper embeddings, kept per paper once
    fetched (``cached_embeddings``): closeness to the anchor is then never computed with the model here."""
    return callable(getattr(source, "cached_embeddings", None))


async def closeness_at_source(
    ctx: RunContext, papers: list[Paper], anchors: list[Paper], order: Sequence[int] | None = None,
    at_most: int = SOURCE_VECTORS_AT_MOST,
) -> np.ndarray | None:  # fmt: skip
    """Cosine of each paper to the anchors in the source's own embedding space, or None when the source has no
    embedding of the anchors (the caller embeds here then).

    A remote source that ships paper embeddings (Semantic Scholar's SPECTER) answers the closeness of a few
    hundred papers in one request, where embedding their abstracts on a CPU takes many seconds. Its vectors
    are not the local embedder's, so nothing is mixed: the best ``at_most`` papers by ``order`` are compared,
    a paper left out or without a vector gets the lowest cosine of the others. A preview sends no request: it
    uses what the run fetched already, and until the anchor's vector is in, dense closeness is flat (0) rather
    than embedded here for a ranking the run's own step will not use."""
    if not anchors or not papers:
        return None
    first = list(order if order is not None else range(len(papers)))[: max(0, at_most - len(anchors))]
    ids = list(dict.fromkeys([a.id for a in anchors] + [papers[i].id for i in first]))
    try:
        vecs = await ctx.source.paper_embeddings(ids)
    except NotSupported:
        if not ships_embeddings(ctx.source):
            return None
        vecs = ctx.source.cached_embeddings(ids)  # type: ignore[attr-defined]  # a preview: what the run fetched
        if not any(a.id in vecs for a in anchors):
            return np.zeros(len(papers), dtype=np.float32)
    except SourceError as exc:
        ctx.notes.append(f"the source's embeddings are unavailable ({exc.message}); papers embedded here instead")
        return None
    mine = [vecs[a.id] for a in anchors if a.id in vecs]
    if not mine:
        return None
    q = np.mean(mine, axis=0)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    sims = np.full(len(papers), np.nan, dtype=np.float32)
    for i, p in enumerate(papers):
        v = vecs.get(p.id)
        if v is not None and v.shape == q.shape:
            sims[i] = float(v @ q)
    unknown = ~np.isfinite(sims)
    if unknown.any():
        ctx.notes.append(
            f"{int(unknown.sum())} of {len(papers)} papers without the source's embedding (beyond the {at_most} "
            "best by the other signals, or none at the source) get the lowest similarity"
        )
        sims[unknown] = float(sims[~unknown].min()) if (~unknown).any() else 0.0
    return sims


# --- evidence scores a node writes under its own id ---------------------------------------------------

SUPPORT = ".support"


def support_key(node_id: str) -> str:
    """The evidence score a graph-expansion node writes: how many of its seeds link to the paper."""
    return f"{node_id}{SUPPORT}" if node_id else SUPPORT.lstrip(".")


# What a ``neighbourhood`` node writes about each paper relative to its seeds (centrality = rank-weighted votes).
NEIGHBOURHOOD_SCORES = ("centrality", "seeds_citing", "cocitation", "coupling")
# ... and, given the pool the seeds came from, the share of it with citation links (the graph's coverage)
COVERAGE = "coverage"


def node_score_key(node_id: str, name: str) -> str:
    """The evidence score ``name`` as a node writes it under its own id ("graph.centrality")."""
    return f"{node_id}.{name}" if node_id else name


def support_node(score_name: str) -> str | None:
    """The node that wrote an evidence score under its own id ("cocited.support" -> "cocited", "graph.coupling"
    -> "graph"), else None."""
    node, dot, rest = score_name.rpartition(".")
    return node if dot and rest in (SUPPORT.lstrip("."), *NEIGHBOURHOOD_SCORES, COVERAGE) and node else None


# --- ranked lists -------------------------------------------------------------------------------


def ranked(paper: Paper, node_id: str, score: float = 0.0, **scores: float) -> RankedPaper:
    """A paper brought in by ``node_id``, with its features."""
    return RankedPaper(
        paper=paper,
        score=float(score),
        evidence=Evidence(nodes=[node_id] if node_id else [], scores={k: float(v) for k, v in scores.items()}),
    )


def merge_evidence(a: Evidence, b: Evidence) -> Evidence:
    """Union of nodes (order kept) and of scores (the larger value when both have a feature)."""
    nodes = list(a.nodes) + [n for n in b.nodes if n not in a.nodes]
    scores = dict(a.scores)
    for k, v in b.scores.items():
        scores[k] = max(scores.get(k, v), v)
    terms = list(a.matched_terms) + [t for t in b.matched_terms if t not in a.matched_terms]
    return Evidence(
        nodes=nodes,
        scores=scores,
        snippet=a.snippet or b.snippet,
        matched_terms=terms,
        reason=a.reason or b.reason,
    )


def blend(
    head: list[RankedPaper],
    sims: np.ndarray,
    alpha: float,
    name: str,
    snippets: list[str | None] | None = None,
    extra: Mapping[str, tuple[float, np.ndarray]] | None = None,
    ranked_by: np.ndarray | None = None,
) -> list[RankedPaper]:
    """``head`` re-ordered by ``alpha`` x its upstream score + (1 - ``alpha``) x ``sims`` (both min-max
    scaled) + each ``extra`` signal's weight x its min-max scaled values; each paper's similarity is written
    to its evidence as ``name`` (the extras under their own names; a snippet, when given). ``ranked_by``, when
    given, ranks in place of ``sims`` (which the evidence still shows)."""
    prior = minmax(np.array([it.score for it in head], dtype=np.float32))
    own = sims if ranked_by is None else ranked_by
    total = alpha * prior + (1 - alpha) * minmax(np.asarray(own, dtype=np.float32))
    for weight, values in (extra or {}).values():
        total = total + weight * minmax(np.asarray(values, dtype=np.float32))
    out = []
    for i in sorted(range(len(head)), key=lambda i: -float(total[i])):
        ev = head[i].evidence.model_copy(deep=True)
        ev.scores[name] = round(float(sims[i]), 4)
        for key, (_, values) in (extra or {}).items():
            ev.scores[key] = round(float(values[i]), 4)
        if snippets is not None and snippets[i]:
            ev.snippet = snippets[i]
        out.append(head[i].model_copy(update={"score": round(float(total[i]), 6), "evidence": ev}))
    return out


def papers_of(value: Any) -> list[Paper]:
    """Papers of an optional anchor-like input (a ranked list, or nothing)."""
    if not value:
        return []
    return [it.paper if isinstance(it, RankedPaper) else it for it in value]


def best_sentences(
    ctx: RunContext,
    papers: list[Paper],
    query: str,
    anchors: list[Paper],
    per_paper: int = 1,
    dense: bool = True,
    dense_pool: int = 3,
) -> list[list[tuple[str, float, list[str]]]]:
    """For each paper, its ``per_paper`` sentences (title counts as one) that best match the query.

    Each match is (sentence, score, matched query terms). Score = share of query terms present plus,
    when embeddings are available, the cosine to the query (or to the anchors when there is no text).
    Only each paper's ``dense_pool`` best sentences by term overlap are embedded: embedding whole
    abstracts costs seconds on a CPU and rarely changes the pick.
    """
    qterms = set(terms_of(query) or terms_of(" ".join(a.title for a in anchors)))
    scored: list[list[tuple[str, float, list[str]]]] = []
    for p in papers:
        rows = []
        for sent in sentences(p) or [p.title or ""]:
            words = set(tokens(sent))
            matched = sorted(t for t in qterms if t in words)
            rows.append((sent, len(matched) / max(1, len(qterms)), matched))
        rows.sort(key=lambda r: -r[1])  # stable: ties keep the text order (title first)
        scored.append(rows)
    q = query_vector(ctx, query, anchors) if dense and ctx.embedder is not None and papers else None
    if q is not None:
        pools = [rows[:dense_pool] for rows in scored]
        sims = encode(ctx.embedder, [r[0] for pool in pools for r in pool]) @ q
        pos = 0
        for i, pool in enumerate(pools):
            rescored = [(sent, lex + float(sims[pos + j]), matched) for j, (sent, lex, matched) in enumerate(pool)]
            pos += len(pool)
            scored[i] = sorted(rescored, key=lambda r: -r[1]) + scored[i][dense_pool:]
    return [[(sent, round(v, 4), matched) for sent, v, matched in rows[:per_paper]] for rows in scored]


# --- how well a paper matches, in words -----------------------------------------------------------
# Raw scores are sums of differently scaled features and mean nothing across searches; the two signals
# that do are the cosine of the paper to the anchor (or query) and a citation relation to the search's
# seeds (a ``<node>.support`` count from a citation step, or ``graph.seeds_citing`` from the topic search's
# neighbourhood). The thresholds are MiniLM cosines: ~0.6 is
# the same problem, ~0.45 a related one, ~0.3 a shared word or two.
STRENGTHS = ("strong match", "good match", "partial match", "weak match")
WEAK = STRENGTHS[-1]


def _related(scores: Mapping[str, float]) -> bool:
    """A citation step's support, or the topic search's seeds citing it (neighbourhood)."""
    return any(k.endswith((".support", ".seeds_citing")) and v > 0 for k, v in scores.items())


def strength_inputs(item: RankedPaper) -> dict[str, Any]:
    """What a result's match label is read from, and the label: recorded by evaluations to calibrate the labels."""
    scores = item.evidence.scores
    return {"label": match_strength(item), "dense": scores.get("dense"), "related": _related(scores)}


# (strong, strong when citation-linked, good, good when citation-linked): MiniLM cosines. Calibrated on the dev runs
# (docs/label-calibration.md, scripts/label_calibration.py): a citation link alone no longer makes a .65 paper
# "strong"; on CSFCube's graded pools 58% of "strong" results are relevant (41% at .65, 28% at the first setting).
STRENGTH_THRESHOLDS = (0.8, 0.75, 0.65, 0.5)


def strength_of(dense: float | None, related: bool, thresholds: tuple[float, float, float, float]) -> str:
    strong, strong_linked, good, good_linked = thresholds
    if dense is None:
        return "good match" if related else "partial match"
    if dense >= strong or (related and dense >= strong_linked):
        return "strong match"
    if dense >= good or (related and dense >= good_linked):
        return "good match"
    if dense >= 0.3 or related:
        return "partial match"
    return WEAK


def match_strength(item: RankedPaper) -> str:
    scores = item.evidence.scores
    return strength_of(scores.get("dense"), _related(scores), STRENGTH_THRESHOLDS)
