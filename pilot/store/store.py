"""A built corpus store, opened read-only: records, lexical/dense scoring, graph and entity lookups.

Opening loads only small arrays (ids, years, venues, graph) and memory-maps the rest, so a warm start
takes about a second; it checks the files first and every query checks what it reads, raising
``StoreDamaged`` (see ``pilot.store.integrity``) instead of failing obscurely or serving NaN scores.
All methods are safe to call from several threads: SQLite reads share one connection behind a lock;
numpy scoring works on read-only arrays.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import orjson
from pydantic import BaseModel

from pilot.models import Author, Org, Paper, SearchFilters, Venue
from pilot.store.build import MANIFEST
from pilot.store.integrity import StoreDamaged, check_files, check_sqlite_file, check_structure, describe
from pilot.store.text import lexical_tokens
from pilot.text import fold, normalize_title, root


class CorpusStore:
    def __init__(self, directory: Path):
        """Open and check the store (``pilot.store.integrity``): ``StoreDamaged`` says what is wrong."""
        self.dir = directory
        self.manifest: dict = orjson.loads((directory / MANIFEST).read_bytes())
        check_files(directory, self.manifest.get("files"))
        check_sqlite_file(directory / "store.sqlite")
        try:
            self._load(directory)
        except StoreDamaged:
            raise
        except Exception as exc:  # a garbage .npz / .npy / bm25 file fails in numpy, zipfile or json
            raise StoreDamaged(f"cannot load the store's files ({describe(exc)})") from None
        check_structure(self)

    def _load(self, directory: Path) -> None:
        import bm25s

        self.ids: list[str] = orjson.loads((directory / "ids.json").read_bytes())
        self.row_of: dict[str, int] = {pid: i for i, pid in enumerate(self.ids)}
        self.venue_names: list[str] = orjson.loads((directory / "venues.json").read_bytes())
        with np.load(directory / "arrays.npz") as arrays:
            self.year = arrays["year"]
            self.citations = arrays["citations"]
            self.in_corpus = arrays["in_corpus"]
            self.venue = arrays["venue"]
            self.ref_ptr, self.ref_idx = arrays["ref_ptr"], arrays["ref_idx"]
            self.cit_ptr, self.cit_idx = arrays["cit_ptr"], arrays["cit_idx"]
        self.vectors: np.ndarray = np.load(directory / "vectors.npy", mmap_mode="r")
        self.bm25 = bm25s.BM25.load(str(directory / "bm25"), mmap=True, show_progress=False)
        self._db = sqlite3.connect(f"file:{directory / 'store.sqlite'}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.ids)

    def document_frequency(self, word: str) -> int:
        """How many papers' titles and abstracts hold ``word`` or a word of its stem (the lexical index's count)."""
        token = root(fold(word))
        tid = self.bm25.vocab_dict.get(token)
        indptr = self.bm25.scores["indptr"]
        if tid is None or tid + 1 >= len(indptr):
            return 0
        return int(indptr[tid + 1] - indptr[tid])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _query(self, sql: str, params: Iterable = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:  # "database disk image is malformed", "file is not a database"
                raise StoreDamaged(f"store.sqlite: {describe(exc)}") from None

    @staticmethod
    def _record(model: type[BaseModel], blob: bytes) -> Any:
        try:
            return model.model_validate_json(blob)
        except ValueError as exc:  # a record the build wrote always parses
            raise StoreDamaged(f"store.sqlite holds a damaged record ({describe(exc)})") from None

    # --- papers -------------------------------------------------------------------------------
    def papers(self, rows: Iterable[int]) -> list[Paper]:
        """Papers for store rows, in the given order."""
        rows = [int(r) for r in rows]
        if not rows:
            return []
        found: dict[int, bytes] = {}
        for start in range(0, len(rows), 900):  # SQLite's bound-parameter limit
            chunk = rows[start : start + 900]
            marks = ",".join("?" * len(chunk))
            found.update(self._query(f"SELECT row, json FROM papers WHERE row IN ({marks})", chunk))
        return [self._record(Paper, found[r]) for r in rows if r in found]

    def rows_by_title(self, title: str) -> list[int]:
        norm = normalize_title(title)
        return [r for (r,) in self._query("SELECT row FROM papers WHERE title_norm = ?", [norm])] if norm else []

    def rows_by_title_prefix(self, prefix: str, limit: int = 200) -> list[int]:
        """Rows whose normalised title starts with the words of ``prefix`` and goes on (an index range
        scan); the exact title is ``rows_by_title``."""
        norm = normalize_title(prefix)
        if not norm:
            return []
        sql = "SELECT row FROM papers WHERE title_norm >= ? AND title_norm < ? LIMIT ?"
        return [r for (r,) in self._query(sql, [norm + " ", norm + "!", limit])]

    def rows_introducing(self, name: str) -> list[int]:
        """Rows of the papers whose title or abstract introduces ``name`` ("GloVe", "Penn Treebank"), from the
        ``intro_names`` table written at build time (``pilot.names.names_introduced``)."""
        key = normalize_title(name)
        return [r for (r,) in self._query("SELECT row FROM intro_names WHERE name = ?", [key])] if key else []

    def rows_by_external_id(self, key: str, value: str) -> list[int]:
        return [
            r
            for (r,) in self._query(
                "SELECT row FROM ext_ids WHERE key = ? AND value = ?", [key.lower(), value.strip().lower()]
            )
        ]

    def references(self, row: int) -> np.ndarray:
        return self.ref_idx[self.ref_ptr[row] : self.ref_ptr[row + 1]]

    def citing(self, row: int) -> np.ndarray:
        return self.cit_idx[self.cit_ptr[row] : self.cit_ptr[row + 1]]

    def by_in_corpus_citations(self, rows: np.ndarray) -> np.ndarray:
        """Rows sorted by in-corpus citations (most first), ties by id for a stable order."""
        return np.array(sorted(rows.tolist(), key=lambda r: (-int(self.in_corpus[r]), self.ids[r])), dtype=np.int64)

    # --- scoring ------------------------------------------------------------------------------
    def mask(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Boolean row mask for the filters; None when nothing is filtered. (The corpus has no fields of study.)"""
        if filters is None:
            return None
        keep = np.ones(len(self.ids), dtype=bool)
        filtered = False
        if filters.year_min is not None:
            keep &= self.year >= filters.year_min
            filtered = True
        if filters.year_max is not None:
            keep &= (self.year <= filters.year_max) & (self.year > 0)
            filtered = True
        if filters.venue:
            needle = fold(filters.venue)
            codes = [i for i, v in enumerate(self.venue_names) if needle in fold(v)]
            keep &= np.isin(self.venue, np.array(codes, dtype=np.int32))
            filtered = True
        if filters.min_citations is not None:
            keep &= self.citations >= filters.min_citations
            filtered = True
        return keep if filtered else None

    def lexical_scores(self, query: str, phrases: Sequence[str] = (), phrase_weight: float = 0.0) -> np.ndarray:
        """BM25 of ``query`` for every paper; with ``phrase_weight``, each word of ``phrases`` counts that much more."""
        tokens = lexical_tokens([query])[0]
        try:
            if phrase_weight and phrases:
                scores = self._weighted_scores(tokens, lexical_tokens(list(phrases)), phrase_weight)
            else:
                ids = self.bm25.get_tokens_ids(tokens)
                if not ids:
                    return np.zeros(len(self.ids), dtype=np.float32)
                scores = np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float32)
        except (IndexError, ValueError, KeyError, TypeError, OSError) as exc:
            raise StoreDamaged(f"the BM25 index failed ({describe(exc)})") from None
        if scores.shape != (len(self.ids),) or not np.isfinite(scores).all():
            raise StoreDamaged("the BM25 index gives scores that are not numbers")
        return scores

    def _weighted_scores(self, tokens: list[str], phrase_tokens: list[list[str]], weight: float) -> np.ndarray:
        weights = dict.fromkeys(tokens, 1.0)
        for token in {t for phrase in phrase_tokens for t in phrase}:
            weights[token] = weights.get(token, 1.0) + weight
        scores = np.zeros(len(self.ids), dtype=np.float32)
        for token, w in weights.items():
            ids = self.bm25.get_tokens_ids([token])
            if ids:
                scores += w * np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float32)
        return scores

    def dense_scores(self, vector: np.ndarray) -> np.ndarray:
        scores = self.vectors @ np.asarray(vector, dtype=np.float32)
        if np.isnan(scores).any():  # a NaN row would be dropped from every ranking without a word
            raise StoreDamaged("vectors.npy holds NaN values")
        return scores

    @staticmethod
    def top(
        scores: np.ndarray, k: int, mask: np.ndarray | None = None, positive_only: bool = False
    ) -> list[tuple[int, float]]:
        """Top-k (row, score), best first; rows outside the mask (and zero scores if asked) left out."""
        scores = np.array(scores, dtype=np.float32, copy=True)
        if mask is not None:
            scores[~mask] = -np.inf
        if positive_only:
            scores[scores <= 0] = -np.inf
        k = min(k, len(scores))
        if k <= 0:
            return []
        kth = scores[np.argpartition(-scores, k - 1)[:k]].min()
        # ties by row, the k-th paper's included (a paper recorded twice has one vector): the first k of a
        # longer list are the k papers, in the same order
        idx = np.flatnonzero((scores >= kth) & np.isfinite(scores))  # not every masked-out row when k > found
        idx = idx[np.lexsort((idx, -scores[idx]))][:k]
        return [(int(i), float(scores[i])) for i in idx]

    # --- entities -----------------------------------------------------------------------------
    _TABLE: ClassVar[dict[str, tuple[str, type[Author] | type[Venue] | type[Org]]]] = {
        "author": ("authors", Author),
        "venue": ("venues", Venue),
        "org": ("orgs", Org),
    }

    def entity(self, kind: str, entity_id: str):
        table, model = self._TABLE[kind]
        found = self._query(f"SELECT json FROM {table} WHERE id = ?", [entity_id])
        return self._record(model, found[0][0]) if found else None

    def search_entities(self, kind: str, query: str, limit: int) -> list:
        """Name search (accents, case and word order ignored); exact names first, then by paper count."""
        words = re.findall(r"\w+", fold(query))
        if not words:
            return []
        table, model = self._TABLE[kind]
        wanted = " ".join(sorted(words))
        # every word first; then any word, or any word's beginning (a misspelt name still finds its neighbours,
        # so the caller can ask "did you mean …?")
        stems = [f'"{w[:4]}"*' for w in words if len(w) >= 5]
        for match in (
            " AND ".join(f'"{w}"' for w in words),
            " OR ".join([*(f'"{w}"' for w in words), *stems]),
        ):
            rows = self._query(
                f"SELECT t.json, t.name, t.paper_count FROM names JOIN {table} t ON t.id = names.id "
                f"WHERE names MATCH ? AND names.kind = ? ORDER BY names.rank LIMIT ?",
                [match, kind, max(limit * 20, 200)],
            )
            if rows:
                break
        rows.sort(key=lambda r: (" ".join(sorted(re.findall(r"\w+", fold(r[1])))) != wanted, -(r[2] or 0)))
        return [self._record(model, r[0]) for r in rows[:limit]]

    def author_rows(self, author_id: str) -> list[int]:
        return [r for (r,) in self._query("SELECT row FROM author_papers WHERE author_id = ?", [author_id])]

    def org_author_ids(self, org_id: str, limit: int) -> list[str]:
        return [
            a
            for (a,) in self._query(
                "SELECT author_id FROM org_authors WHERE org_id = ? ORDER BY n DESC, author_id LIMIT ?", [org_id, limit]
            )
        ]

    def authors(self, ids: list[str]) -> list[Author]:
        found = {a.id: a for a in (self.entity("author", i) for i in ids) if a is not None}
        return [found[i] for i in ids if i in found]
