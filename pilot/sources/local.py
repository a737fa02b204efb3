"""The offline corpus as a source: lexical (bm25s), dense (MiniLM) and hybrid search, the citation
graph both ways, and author / venue / organisation entities derived from the metadata.

    source = LocalCorpusSource.open(settings.corpus, settings.cache_dir)   # builds once, then reuses
    hits = await source.search_papers("statistical parsing with treebanks", mode="hybrid")
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import re
import shutil
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from cache import private_dir
from pilot.embed import Embedder, default_embedder
from pilot.models import Author, Org, Paper, SearchFilters, SearchHit, Venue
from pilot.names import impact, introduces
from pilot.settings import get_settings
from pilot.sources.base import BadRequest, NotFound, SearchMode, Source, SourceUnavailable, clean_query
from pilot.store.build import MANIFEST, build_store, remove_stale, store_key
from pilot.store.integrity import StoreDamaged
from pilot.store.store import CorpusStore

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger(__name__)

VECTORS_BESIDE = "minilm-l6-v2.f16.npy"
# Hybrid = min-max-normalised lexical and dense scores over each mode's top FUSION_DEPTH, mixed with
# these weights. On the 91 dev cases (anchor text as query) it beat reciprocal-rank fusion (k=10, 60)
# and the 0.3/0.7 mixes on nDCG@10 and Recall@50: 0.156 / 0.285 vs 0.144 / 0.279 for RRF k=60.
LEXICAL_WEIGHT = 0.5
FUSION_DEPTH = 200
# a word of a key phrase of the query counts this much more in a phrase-weighted BM25 (lexical_scores)
PHRASE_WEIGHT = 0.5

_ACL_ID = re.compile(
    r"^(?:https?://(?:www\.)?aclanthology\.org/|https?://aclweb\.org/anthology/)?([A-Z]\d{2}-\d{4})(?:\.pdf|/)?$", re.I
)
_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.I)
_CORPUS_ID = re.compile(r"^(?:corpusid:|s2:)\s*(\d+)$", re.I)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run one query's model and BLAS work on a single thread.

    A single query is too small to gain from a second thread, and on a busy 2-core machine the
    spinning OpenMP/OpenBLAS workers make it far slower (measured under load: 368 ms vs 40 ms per
    query embedding, 33 ms vs 22 ms per 78k-row dot product).
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _blas_controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


@lru_cache(maxsize=1)
def _blas_controller():
    # finding the BLAS libraries takes ~2 ms; do it once, not per query
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@dataclass(frozen=True)
class _Origin:
    """What a store was built from: enough to build it again when it is found damaged."""

    corpus: Path
    cache: Path
    dest: Path
    vectors: Path | None
    embedder: Embedder | None


def _reads_store(fn: F) -> F:
    """A source method that reads the store: while the store is being rebuilt it says so at once, and a
    damaged store found during the call (``StoreDamaged``) starts the rebuild and becomes a
    ``SourceUnavailable`` that says what is happening and what to do."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def guarded(self: LocalCorpusSource, *args: Any, **kwargs: Any) -> Any:
            self._refuse_while_repairing()
            try:
                return await fn(self, *args, **kwargs)
            except StoreDamaged as exc:
                raise self._damaged(exc) from None

        return guarded  # type: ignore[return-value]

    @functools.wraps(fn)
    def guarded_sync(self: LocalCorpusSource, *args: Any, **kwargs: Any) -> Any:
        self._refuse_while_repairing()
        try:
            return fn(self, *args, **kwargs)
        except StoreDamaged as exc:
            raise self._damaged(exc) from None

    return guarded_sync  # type: ignore[return-value]


class LocalCorpusSource(Source):
    name = "local"

    def __init__(
        self,
        store: CorpusStore,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        stats: dict | None = None,
        origin: _Origin | None = None,
    ):
        self.store = store
        self._embedder = embedder
        self.stats: dict = dict(stats or {})
        # node caches key on this: another corpus file (or vectors) means another store directory
        self.cache_key = f"local|{store.dir.name}"
        self._origin = origin
        self._repair: threading.Thread | None = None
        self._repair_error: str | None = None
        self._repair_lock = threading.Lock()

    # --- self-repair ----------------------------------------------------------------------------
    def _refuse_while_repairing(self) -> None:
        if self._repair is not None and self._repair.is_alive():
            raise SourceUnavailable(
                self.name,
                "the offline corpus store was found damaged and is being rebuilt from the corpus file",
                "search again in a few minutes (a full corpus takes 2–3 minutes to rebuild)",
            )
        if self._repair_error is not None:
            raise SourceUnavailable(
                self.name,
                f"the offline corpus store is damaged and could not be rebuilt ({self._repair_error})",
                f"delete {self.store.dir} and restart pilot; check that PILOT_CORPUS points at a readable file",
            )

    def _damaged(self, exc: StoreDamaged) -> SourceUnavailable:
        """Start rebuilding the store (once) and say so."""
        with self._repair_lock:
            if self._repair is None or (not self._repair.is_alive() and self._repair_error is None):
                log.warning("corpus store %s is damaged (%s); rebuilding it", self.store.dir, exc.reason)
                if self._origin is None:
                    self._repair_error = f"{exc.reason}; this source was not opened from a corpus file"
                else:
                    self._repair = threading.Thread(
                        target=self._rebuild, args=(self._origin,), name="pilot-store-repair", daemon=True
                    )
                    self._repair.start()
        try:
            self._refuse_while_repairing()
        except SourceUnavailable as err:
            err.message = f"{err.message} — found: {exc.reason}"
            return err
        return SourceUnavailable(self.name, f"the offline corpus store was damaged ({exc.reason}) and is rebuilt")

    def _rebuild(self, origin: _Origin) -> None:
        dest = origin.dest
        aside = dest.with_name(f"{dest.name}.damaged-{os.getpid()}-{time.monotonic_ns()}")
        try:
            dest.rename(aside)  # out of the way (open files keep working); a symlinked store moves the link
            self._build(origin.corpus, origin.cache, dest, origin.vectors, origin.embedder, progress=False)
            fresh = CorpusStore(dest)
        except Exception as exc:  # noqa: BLE001 - the reason is shown to every later caller
            log.exception("rebuilding the corpus store %s failed", dest)
            self._repair_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            return
        old, self.store = self.store, fresh
        old.close()
        if aside.is_symlink():
            aside.unlink()
        else:
            shutil.rmtree(aside, ignore_errors=True)
        self.stats["repaired"] = self.stats.get("repaired", 0) + 1
        log.warning("corpus store %s rebuilt", dest)

    def wait_for_repair(self, timeout_s: float | None = None) -> bool:
        """Wait for a running rebuild; True when none is running (any more) and none failed."""
        repair = self._repair
        if repair is not None:
            repair.join(timeout_s)
        return (repair is None or not repair.is_alive()) and self._repair_error is None

    # --- opening ------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: Path | str | None,
        cache_dir: Path | str,
        vectors: Path | str | None = None,
        embedder: Embedder | None = None,
        progress: bool = True,
    ) -> LocalCorpusSource:
        """Open the store of a corpus file, building it first when the file is new or has changed."""
        if path is None or not Path(path).is_file():
            raise SourceUnavailable(
                "local",
                f"corpus file not found: {path}" if path else "no corpus file is configured",
                "set PILOT_CORPUS (or --corpus) to a papers.jsonl(.gz) file in the shared corpus schema",
            )
        corpus = Path(path)
        cache = Path(cache_dir)
        if vectors is None and (corpus.parent / VECTORS_BESIDE).is_file():
            vectors = corpus.parent / VECTORS_BESIDE
        vec_path = Path(vectors) if vectors is not None else None
        if vec_path is not None and not vec_path.is_file():
            log.warning("vectors file %s does not exist; embeddings will be computed", vec_path)
            vec_path = None
        dest = cache / f"corpus-{store_key(corpus, vec_path)}"
        t0 = time.perf_counter()
        built = not (dest / MANIFEST).exists()
        try:
            if built:
                cls._build(corpus, cache, dest, vec_path, embedder, progress)
            try:
                store = CorpusStore(dest)
            except (OSError, ValueError, KeyError, sqlite3.Error) as exc:  # StoreDamaged is a ValueError
                if built:
                    raise
                # a damaged store (files deleted, truncated or overwritten): build it again, once
                log.warning("corpus store %s is unreadable (%s); rebuilding it", dest, exc)
                if dest.is_symlink():
                    dest.unlink()
                else:
                    shutil.rmtree(dest, ignore_errors=True)
                built = True
                cls._build(corpus, cache, dest, vec_path, embedder, progress)
                store = CorpusStore(dest)
        except (OSError, ValueError, EOFError, zlib.error, sqlite3.Error) as exc:
            raise SourceUnavailable(
                "local",
                f"cannot import the corpus file {corpus}: {exc}",
                "check PILOT_CORPUS points at a papers.jsonl(.gz) file",
            ) from exc
        m = store.manifest
        stats = {
            "store": str(dest),
            "built": built,
            "open_s": round(time.perf_counter() - t0, 3),
            **{k: m.get(k) for k in ("papers", "lines", "malformed", "duplicates", "vectors", "build_s")},
        }
        return cls(store, embedder, stats, _Origin(corpus, cache, dest, vec_path, embedder))

    @staticmethod
    def _build(
        corpus: Path, cache: Path, dest: Path, vectors: Path | None, embedder: Embedder | None, progress: bool
    ) -> None:
        private_dir(cache)
        log.info("building the corpus store for %s in %s", corpus, dest)
        build_store(corpus, dest, vectors, (lambda: embedder) if embedder else default_embedder, progress)
        remove_stale(cache, corpus, keep=dest)

    @classmethod
    def from_settings(cls, settings=None, progress: bool = True) -> LocalCorpusSource:
        s = settings or get_settings()
        return cls.open(s.corpus, s.cache_dir, s.corpus_vectors, progress=progress)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_embedder()
        elif not isinstance(self._embedder, Embedder):  # a factory: make the embedder on first use
            self._embedder = self._embedder()
        return self._embedder

    async def aclose(self) -> None:
        self.store.close()

    # --- helpers ------------------------------------------------------------------------------
    def _row(self, paper_id: str) -> int:
        row = self.store.row_of.get((paper_id or "").strip())
        if row is None:
            raise NotFound(
                self.name, f"no paper with id {paper_id!r} in the corpus", "ids look like acl:P02-1040, s2:123, pc:…"
            )
        return row

    def _hits(self, ranked: list[tuple[int, float]]) -> list[SearchHit]:
        papers = self.store.papers(r for r, _ in ranked)
        return [SearchHit(paper=p, score=s) for p, (_, s) in zip(papers, ranked, strict=False)]

    def _rank(self, query: str, filters: SearchFilters | None, limit: int, mode: str) -> list[tuple[int, float]]:
        mask = self.store.mask(filters)
        if mode == "lexical":
            return self.store.top(self.store.lexical_scores(query), limit, mask, positive_only=True)
        with one_thread():
            dense = self.store.dense_scores(self.embedder.encode_one(query))
        if mode == "dense":
            return self.store.top(dense, limit, mask)
        depth = max(FUSION_DEPTH, limit)
        lexical = self.store.top(self.store.lexical_scores(query), depth, mask, positive_only=True)
        fused: dict[int, float] = {}
        for weight, ranked in ((LEXICAL_WEIGHT, lexical), (1 - LEXICAL_WEIGHT, self.store.top(dense, depth, mask))):
            if not ranked:
                continue
            hi, lo = ranked[0][1], ranked[-1][1]
            for row, score in ranked:
                fused[row] = fused.get(row, 0.0) + weight * ((score - lo) / (hi - lo) if hi > lo else 1.0)
        return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    # --- papers -------------------------------------------------------------------------------
    @_reads_store
    async def search_papers(
        self, query: str, filters: SearchFilters | None = None, limit: int = 50, mode: SearchMode = "hybrid"
    ) -> list[SearchHit]:
        text = clean_query(self.name, query)
        if mode not in ("lexical", "dense", "hybrid"):
            raise BadRequest(self.name, f"unknown search mode {mode!r}", "use lexical, dense or hybrid")
        if limit <= 0:
            return []
        ranked = await asyncio.to_thread(self._rank, text, filters, limit, mode)
        return self._hits(ranked)

    @_reads_store
    async def get_papers(self, ids: list[str]) -> list[Paper]:
        rows = [self.store.row_of.get((i or "").strip()) for i in ids]
        return self.store.papers(r for r in rows if r is not None)

    @_reads_store
    async def match_paper(self, text: str, limit: int = 5) -> list[Paper]:
        """Corpus id, ACL id/URL, DOI, CorpusId, exact title — then search fills up the rest."""
        query = clean_query(self.name, text)
        rows: list[int] = []
        if query in self.store.row_of:
            rows.append(self.store.row_of[query])
        if m := _ACL_ID.match(query):
            rows += [r for r in [self.store.row_of.get(f"acl:{m.group(1).upper()}")] if r is not None]
            rows += self.store.rows_by_external_id("ACL", m.group(1))
        if m := _DOI.match(query):
            rows += self.store.rows_by_external_id("DOI", m.group(1))
        if m := _CORPUS_ID.match(query):
            rows += self.store.rows_by_external_id("CorpusId", m.group(1))
        rows += self.store.rows_by_title(query)
        rows = list(dict.fromkeys(rows))
        if len(rows) < limit:
            hits = [h.paper for h in await self.search_papers(query, limit=limit * 8)]
            if len(query.split()) <= _NAME_WORDS:  # a short query may be a paper's name: "BLEU", "ResNet"
                hits += self.store.papers(self.store.rows_by_title_prefix(query))
            rows += [self.store.row_of[p.id] for p in _names_first(query, hits) if self.store.row_of[p.id] not in rows]
            rows = list(dict.fromkeys(rows))
        return self.store.papers(rows[:limit])

    @_reads_store
    async def named_papers(self, name: str, limit: int = 10) -> list[Paper]:
        text = clean_query(self.name, name)

        def rows() -> list[int]:
            # the build-time index, and titles that open with the name ("WordNet::Similarity - …", "The X 2.0")
            found = self.store.rows_introducing(text) + self.store.rows_by_title(text)
            for prefix in (text, f"the {text}"):
                found += self.store.rows_by_title_prefix(prefix, limit=50)
            return list(dict.fromkeys(found))

        found = [p for p in self.store.papers(await asyncio.to_thread(rows)) if introduces(p, text)]
        return sorted(found, key=lambda p: (-introduces(p, text), -impact(p)))[:limit]

    def word_frequency(self, word: str) -> int | None:
        return self.store.document_frequency(word)

    @_reads_store
    def lexical_scores(self, query: str, ids: list[str], phrases: Sequence[str] = ()) -> dict[str, float] | None:
        rows = {pid: row for pid in ids if (row := self.store.row_of.get(pid)) is not None}
        if not rows:
            return {}
        with one_thread():
            scores = self.store.lexical_scores(query, phrases=phrases, phrase_weight=PHRASE_WEIGHT if phrases else 0.0)
        return {pid: float(scores[row]) for pid, row in rows.items()}

    def coverage(self) -> str:
        """Counts by collection and the years, from the store ("78,036 papers from 1969–2025: …")."""
        if "coverage" not in self.stats:
            self.stats["coverage"] = _describe(self.store)
        return self.stats["coverage"]

    @_reads_store
    async def references(self, paper_id: str, limit: int = 100) -> list[Paper]:
        rows = self.store.by_in_corpus_citations(self.store.references(self._row(paper_id)))
        return self.store.papers(rows[:limit])

    @_reads_store
    async def citations(self, paper_id: str, limit: int = 100) -> list[Paper]:
        rows = self.store.by_in_corpus_citations(self.store.citing(self._row(paper_id)))
        return self.store.papers(rows[:limit])

    @_reads_store
    async def recommend(
        self, positive_ids: list[str], negative_ids: list[str] | None = None, limit: int = 50
    ) -> list[Paper]:
        pos = [r for r in (self.store.row_of.get(i) for i in positive_ids) if r is not None]
        neg = [r for r in (self.store.row_of.get(i) for i in negative_ids or []) if r is not None]
        if not pos:
            raise NotFound(self.name, "none of the seed papers is in the corpus", "pick seeds from the corpus")

        def rank() -> list[tuple[int, float]]:
            vecs = self.store.vectors
            centroid = np.asarray(vecs[pos], dtype=np.float32).mean(axis=0)
            if neg:
                centroid -= 0.5 * np.asarray(vecs[neg], dtype=np.float32).mean(axis=0)
            mask = np.ones(len(self.store), dtype=bool)
            mask[pos + neg] = False
            with one_thread():
                scores = self.store.dense_scores(centroid)
            return self.store.top(scores, limit, mask)

        ranked = await asyncio.to_thread(rank)
        return self.store.papers(r for r, _ in ranked)

    @_reads_store
    def paper_vectors(self, ids: list[str]) -> np.ndarray:
        """The stored MiniLM vectors (unit length) of papers, shape (len(ids), 384); NaN rows for unknown ids.

        Not part of the source protocol: scoring operators use it to skip re-embedding corpus papers.
        """
        out = np.full((len(ids), self.store.vectors.shape[1]), np.nan, dtype=np.float32)
        found = [(i, r) for i, r in enumerate(self.store.row_of.get(pid) for pid in ids) if r is not None]
        if found:
            out[[i for i, _ in found]] = self.store.vectors[[r for _, r in found]]
        return out

    # --- entities -----------------------------------------------------------------------------
    def _entity(self, kind: str, entity_id: str):
        found = self.store.entity(kind, (entity_id or "").strip())
        if found is None:
            raise NotFound(
                self.name, f"no {kind} with id {entity_id!r} in the corpus", f"ids look like {kind}:<name-slug>"
            )
        return found

    @_reads_store
    async def search_authors(self, query: str, limit: int = 10) -> list[Author]:
        return self.store.search_entities("author", clean_query(self.name, query), limit)

    @_reads_store
    async def get_author(self, author_id: str) -> Author:
        return self._entity("author", author_id)

    @_reads_store
    async def author_papers(self, author_id: str, limit: int = 100) -> list[Paper]:
        self._entity("author", author_id)
        rows = np.array(self.store.author_rows(author_id), dtype=np.int64)
        # newest first, then most cited: what a profile page shows
        order = sorted(
            rows.tolist(), key=lambda r: (-int(self.store.year[r]), -int(self.store.in_corpus[r]), self.store.ids[r])
        )
        return self.store.papers(order[:limit])

    @_reads_store
    async def search_venues(self, query: str, limit: int = 10) -> list[Venue]:
        return self.store.search_entities("venue", clean_query(self.name, query), limit)

    @_reads_store
    async def get_venue(self, venue_id: str) -> Venue:
        return self._entity("venue", venue_id)

    @_reads_store
    async def search_orgs(self, query: str, limit: int = 10) -> list[Org]:
        return self.store.search_entities("org", clean_query(self.name, query), limit)

    @_reads_store
    async def get_org(self, org_id: str) -> Org:
        return self._entity("org", org_id)

    @_reads_store
    async def org_authors(self, org_id: str, limit: int = 50) -> list[Author]:
        self._entity("org", org_id)
        return self.store.authors(self.store.org_author_ids(org_id, limit))


_COLLECTIONS = {"acl": "the ACL Anthology", "pc": "conference paper lists", "s2": "Semantic Scholar records"}


def _describe(store: CorpusStore) -> str:
    from collections import Counter

    prefixes = Counter(i.split(":", 1)[0] for i in store.ids)
    years = np.sort(store.year[store.year > 0])
    # the 0.1% quantile: one mis-dated record ("801") should not stretch the span
    span = f" from {int(years[len(years) // 1000])}–{int(years[-1])}" if len(years) else ""
    parts = [f"{_COLLECTIONS.get(p, p)} ({n:,})" for p, n in prefixes.most_common()]
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else ""
    return f"{len(store):,} papers{span}" + (f": {listed}" if listed else "")


_NAME_WORDS = 4  # longer queries are descriptions or titles, not a system's name


def _names_first(query: str, papers: list[Paper]) -> list[Paper]:
    """Papers whose title *names* the query first ("BLEU" -> "Bleu: A Method for …"), the most cited of
    them on top; then the rest in search order. Researchers call papers by their system's name, and
    text search alone ranks a later paper that merely mentions the name ("BLEU+: a Tool for …") higher."""
    name = re.escape(" ".join(query.split()))
    if not name or len(query.split()) > _NAME_WORDS:
        return papers
    # "BLEU: a Method …", "GloVe - Global Vectors …", "Building a Large Annotated Corpus of English: The Penn Treebank";
    # not "BERT-based …", which only uses the name
    pattern = re.compile(rf"^\s*{name}\s*(?::|\s[-–—]\s|$)|:\s*(?:the\s+)?{name}\s*$", re.I)
    named = list({p.id: p for p in papers if pattern.search(p.title or "")}.values())
    named.sort(key=lambda p: -((p.citation_count or 0) + (p.in_corpus_citations or 0)))
    first = {p.id for p in named}
    return named + [p for p in papers if p.id not in first]
