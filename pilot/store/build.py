"""Build the on-disk store of a corpus file: SQLite records + entities, bm25s index, dense vectors, graph.

Layout of ``<cache_dir>/corpus-<key>/`` (``key`` hashes the file's path, size and mtime, so a changed
file gets a new store):

- ``store.sqlite``   papers (Paper JSON), external ids, normalised titles, authors/venues/orgs + FTS5
- ``ids.json``       corpus id of every row (row order = file order, malformed lines left out)
- ``arrays.npz``     year, citation count, venue code, graph in CSR form (references and citations)
- ``bm25/``          bm25s index (memory-mapped on load)
- ``vectors.npy``    float32 (rows, 384) MiniLM vectors, unit length (memory-mapped on load)
- ``manifest.json``  counts, provenance and each file's size + sampled checksum; written last, so a store
                     without it is incomplete

The build writes into a temporary sibling directory and renames it into place, so a crash or a
concurrent build never leaves a half-built store that a later open would trust.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson

from pilot.embed import DIM, Embedder
from pilot.names import names_introduced
from pilot.store.entities import derive
from pilot.store.integrity import fingerprint
from pilot.store.progress import STEPS, report
from pilot.store.records import ParsedCorpus, read_corpus
from pilot.store.text import lexical_tokens
from pilot.text import normalize_title

log = logging.getLogger(__name__)

# 2: the intro_names table (which paper introduces which name: pilot.names)
STORE_VERSION = 2
MANIFEST = "manifest.json"


def file_identity(path: Path) -> dict:
    st = path.stat()
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def store_key(corpus: Path, vectors: Path | None) -> str:
    parts = {
        "v": STORE_VERSION,
        "corpus": file_identity(corpus),
        "vectors": file_identity(vectors) if vectors else None,
    }
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.zeros(len(lists) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((i for x in lists for i in x), dtype=np.int32, count=int(indptr[-1]))
    return indptr, flat


def check_vectors(vectors: Path, lines: int) -> tuple[np.ndarray | None, str | None]:
    """The vectors file memory-mapped when it fits the corpus, else (None, reason it was refused)."""
    try:
        arr = np.load(vectors, mmap_mode="r")
    except Exception as exc:  # not a .npy, truncated, pickled object array…
        return None, f"cannot read it ({exc})"
    if arr.ndim != 2 or arr.shape[1] != DIM:
        return None, f"it has shape {arr.shape}, expected ({lines}, {DIM}) (all-MiniLM-L6-v2)"
    if arr.shape[0] != lines:
        return None, f"it has {arr.shape[0]} rows but the corpus has {lines} lines (row i must be line i)"
    return arr, None


# A vectors file of the right shape can still come from another model; embedding a few of its papers
# again and comparing tells (the shipped float16 file agrees to > 0.99 cosine).
SPOT_CHECKS = 4
MIN_AGREEMENT = 0.9


def spot_check(arr: np.ndarray, parsed: ParsedCorpus, embedder: Embedder) -> str | None:
    """None when the file's vectors match the model on a few papers, else why they were refused."""
    rows = np.linspace(0, len(parsed.papers) - 1, num=min(SPOT_CHECKS, len(parsed.papers))).astype(int)
    mine = embedder.encode([parsed.papers[r].text for r in rows])
    theirs = np.asarray(arr[[parsed.line_of_row[r] for r in rows]], dtype=np.float32)
    theirs /= np.maximum(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12)
    agreement = float(np.mean(np.sum(mine * theirs, axis=1)))
    if agreement < MIN_AGREEMENT:
        return (
            "its vectors do not match all-MiniLM-L6-v2 on sample papers"
            f" (mean cosine {agreement:.2f} < {MIN_AGREEMENT})"
        )
    return None


def _vectors(
    parsed: ParsedCorpus, vectors: Path | None, embedder: Callable[[], Embedder], progress: bool
) -> tuple[np.ndarray, str]:
    if vectors is not None:
        arr, reason = check_vectors(vectors, parsed.lines)
        if arr is not None and reason is None:
            reason = spot_check(arr, parsed, embedder())
        if arr is not None and reason is None:
            out = np.asarray(arr[np.asarray(parsed.line_of_row, dtype=np.int64)], dtype=np.float32)
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)  # in place: 120 MB on the full corpus
            return out, f"file:{vectors}"
        log.warning("refusing vectors file %s: %s; computing embeddings with the MiniLM model instead", vectors, reason)
    log.info("embedding %d papers with all-MiniLM-L6-v2 (this takes a while on CPU)", len(parsed.papers))
    out = embedder().encode([p.text for p in parsed.papers], show_progress=progress)
    return out.astype(np.float32), "computed"


def _write_sqlite(db: Path, parsed: ParsedCorpus) -> None:
    papers = parsed.papers
    con = sqlite3.connect(db)
    con.executescript(
        """
        PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
        CREATE TABLE papers(row INTEGER PRIMARY KEY, id TEXT NOT NULL, title_norm TEXT, json BLOB NOT NULL);
        CREATE TABLE ext_ids(key TEXT, value TEXT, row INTEGER);
        CREATE TABLE authors(id TEXT PRIMARY KEY, name TEXT, paper_count INTEGER, json BLOB);
        CREATE TABLE author_papers(author_id TEXT, row INTEGER);
        CREATE TABLE venues(id TEXT PRIMARY KEY, name TEXT, paper_count INTEGER, json BLOB);
        CREATE TABLE orgs(id TEXT PRIMARY KEY, name TEXT, paper_count INTEGER, json BLOB);
        CREATE TABLE org_authors(org_id TEXT, author_id TEXT, n INTEGER);
        CREATE TABLE intro_names(name TEXT, row INTEGER);
        CREATE VIRTUAL TABLE names USING fts5(kind UNINDEXED, id UNINDEXED, name,
                                              tokenize='unicode61 remove_diacritics 2');
        """
    )
    con.executemany(
        "INSERT INTO papers VALUES (?,?,?,?)",
        ((i, p.id, normalize_title(p.title), p.model_dump_json(exclude_defaults=True)) for i, p in enumerate(papers)),
    )
    con.executemany(
        "INSERT INTO ext_ids VALUES (?,?,?)",
        ((k.lower(), str(v).strip().lower(), i) for i, p in enumerate(papers) for k, v in p.external_ids.items()),
    )
    con.executemany(
        "INSERT INTO intro_names VALUES (?,?)",
        ((name, i) for i, p in enumerate(papers) for name in names_introduced(p.title, p.abstract)),
    )
    ents = derive(papers)
    con.executemany(
        "INSERT INTO authors VALUES (?,?,?,?)",
        ((a.id, a.name, a.paper_count, a.model_dump_json()) for a, _ in ents.authors),
    )
    con.executemany("INSERT INTO author_papers VALUES (?,?)", ((a.id, r) for a, rows in ents.authors for r in rows))
    con.executemany(
        "INSERT INTO venues VALUES (?,?,?,?)", ((v.id, v.name, v.paper_count, v.model_dump_json()) for v in ents.venues)
    )
    con.executemany(
        "INSERT INTO orgs VALUES (?,?,?,?)", ((o.id, o.name, o.paper_count, o.model_dump_json()) for o, _ in ents.orgs)
    )
    con.executemany(
        "INSERT INTO org_authors VALUES (?,?,?)",
        ((o.id, aid, n) for o, people in ents.orgs for aid, n in people.items()),
    )
    con.executemany(
        "INSERT INTO names VALUES (?,?,?)",
        [("author", a.id, a.name) for a, _ in ents.authors]
        + [("venue", v.id, v.name) for v in ents.venues]
        + [("org", o.id, o.name) for o, _ in ents.orgs],
    )
    con.executescript(
        """
        CREATE INDEX papers_id ON papers(id); CREATE INDEX papers_title ON papers(title_norm);
        CREATE INDEX ext_kv ON ext_ids(key, value); CREATE INDEX ap_author ON author_papers(author_id);
        CREATE INDEX oa_org ON org_authors(org_id); CREATE INDEX intro_name ON intro_names(name);
        """
    )
    con.commit()
    con.close()


def _write_arrays(dest: Path, parsed: ParsedCorpus) -> None:
    papers = parsed.papers
    row_of = {p.id: i for i, p in enumerate(papers)}
    refs = [[row_of[r] for r in dict.fromkeys(p.references or []) if r in row_of and r != p.id] for p in papers]
    cites: list[list[int]] = [[] for _ in papers]
    for i, rs in enumerate(refs):
        for r in rs:
            cites[r].append(i)
    venues = sorted({p.venue for p in papers if p.venue})
    code = {v: i for i, v in enumerate(venues)}
    ref_ptr, ref_idx = _csr(refs)
    cit_ptr, cit_idx = _csr(cites)
    in_corpus = np.array(
        [p.in_corpus_citations if p.in_corpus_citations is not None else len(cites[i]) for i, p in enumerate(papers)],
        dtype=np.int32,
    )
    np.savez(
        dest / "arrays.npz",
        year=np.array([p.year or 0 for p in papers], dtype=np.int32),
        citations=np.array([p.citation_count if p.citation_count is not None else -1 for p in papers], dtype=np.int64),
        in_corpus=in_corpus,
        venue=np.array([code[p.venue] if p.venue else -1 for p in papers], dtype=np.int32),
        ref_ptr=ref_ptr,
        ref_idx=ref_idx,
        cit_ptr=cit_ptr,
        cit_idx=cit_idx,
    )
    (dest / "ids.json").write_bytes(orjson.dumps([p.id for p in papers]))
    (dest / "venues.json").write_bytes(orjson.dumps(venues))


def _write_bm25(dest: Path, parsed: ParsedCorpus, progress: bool) -> None:
    import bm25s

    tokens = lexical_tokens((p.text for p in parsed.papers), progress=progress)
    index = bm25s.BM25()
    index.index(tokens, show_progress=progress)
    index.save(str(dest / "bm25"), show_progress=False)


def build_store(
    corpus: Path, dest: Path, vectors: Path | None, embedder: Callable[[], Embedder], progress: bool = True
) -> dict:
    """Build the store of ``corpus`` at ``dest`` (atomically); returns its manifest."""
    t0 = time.perf_counter()
    tmp = dest.with_name(f"{dest.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        report(STEPS[0], 0.0, start=True)
        parsed = read_corpus(corpus, progress=progress)
        if not parsed.papers:
            raise ValueError(f"{corpus} holds no valid paper records ({parsed.malformed} malformed lines)")
        _write_arrays(tmp, parsed)
        report(STEPS[1])
        _write_bm25(tmp, parsed, progress)
        report(STEPS[2])
        _write_sqlite(tmp / "store.sqlite", parsed)
        gc.collect()
        # last: the model (loaded for the spot check or the embedding) stays resident, so nothing else
        # big should be alive next to it (peak RSS of a full build stays well under 2 GB)
        report(STEPS[3])
        vecs, vec_origin = _vectors(parsed, vectors, embedder, progress)
        np.save(tmp / "vectors.npy", vecs)
        del vecs
        manifest = {
            "version": STORE_VERSION,
            "corpus": file_identity(corpus),
            "papers": len(parsed.papers),
            "lines": parsed.lines,
            "malformed": parsed.malformed,
            "duplicates": parsed.duplicates,
            "vectors": vec_origin,
            "build_s": round(time.perf_counter() - t0, 2),
            "files": fingerprint(tmp),  # checked at every open (pilot.store.integrity)
        }
        (tmp / MANIFEST).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        try:
            tmp.rename(dest)
        except OSError:  # another process finished the same store first: theirs is as good as ours
            if not (dest / MANIFEST).exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def remove_stale(cache_dir: Path, corpus: Path, keep: Path) -> None:
    """Delete stores built from an older version of the same corpus file (its size or mtime differ).

    Stores of the current file built with other vectors stay: another caller may be using them.
    """
    current = file_identity(corpus)
    for d in cache_dir.glob("corpus-*"):
        if d == keep or not (d / MANIFEST).exists():
            continue
        try:
            built_from = orjson.loads((d / MANIFEST).read_bytes())["corpus"]
        except Exception:  # unreadable manifest of someone else's store: leave it alone
            continue
        if built_from["path"] == current["path"] and built_from != current:
            if d.is_symlink():  # a store shared from another checkout: drop the link, never its target
                d.unlink()
            else:
                shutil.rmtree(d, ignore_errors=True)
