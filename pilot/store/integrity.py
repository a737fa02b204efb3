"""A built store checks itself: at open (sizes, sampled checksums, structure) and at query time.

A store is a few hundred MB of files that anything can damage after the build — a full disk, a crash
while copying, a stray write. Opening a damaged store used to succeed and then fail every query (or,
with NaN vectors, serve wrong results silently), with no rebuild and no hint. Now:

* the build records, per file, its size and a digest of sampled blocks (``fingerprint``) in the manifest;
* ``check_files`` compares them at open (a few milliseconds: the first and last 64 KB and 16 blocks in
  between of each file) — a corrupted header, a truncated or overwritten file is caught;
* ``check_structure`` checks what the files say about each other (SQLite header and size, array lengths,
  graph and BM25 indices in range, finite vectors on a sample of rows) — this also covers stores built
  before the digests were recorded;
* at query time the store raises ``StoreDamaged`` for an SQLite error, a BM25 failure or a NaN score,
  and the source rebuilds the store in the background (``pilot.sources.local``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_EDGE = 64 * 1024
SAMPLE_BLOCK = 4096
SAMPLE_BLOCKS = 16
VECTOR_SAMPLE_ROWS = 2048
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreDamaged(ValueError):
    """The store's files are damaged; ``reason`` says which and how. Rebuilding from the corpus repairs it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _sampled_digest(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        spots = [0, max(0, size - SAMPLE_EDGE)]
        spots += [size * (i + 1) // (SAMPLE_BLOCKS + 1) for i in range(SAMPLE_BLOCKS)]
        for spot in sorted(set(spots)):
            fh.seek(spot)
            digest.update(fh.read(SAMPLE_EDGE if spot in (0, spots[1]) else SAMPLE_BLOCK))
    return digest.hexdigest()[:32]


def fingerprint(directory: Path) -> dict[str, dict[str, Any]]:
    """Relative path -> {size, sample digest} of every file of a built store (the manifest excluded)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != "manifest.json"):
        size = path.stat().st_size
        out[path.relative_to(directory).as_posix()] = {"size": size, "sample": _sampled_digest(path, size)}
    return out


def check_files(directory: Path, recorded: dict[str, dict[str, Any]] | None) -> None:
    """``StoreDamaged`` when a file the build recorded is missing, has another size or other sampled bytes."""
    for name, want in (recorded or {}).items():
        path = directory / name
        try:
            size = path.stat().st_size
        except OSError:
            raise StoreDamaged(f"{name} is missing") from None
        if size != want.get("size"):
            raise StoreDamaged(f"{name} has {size:,} bytes, the build wrote {want.get('size'):,}")
        if _sampled_digest(path, size) != want.get("sample"):
            raise StoreDamaged(f"{name} has changed since the build (checksum mismatch)")


def check_sqlite_file(path: Path) -> None:
    """The header says SQLite and the page count matches the file's size (a truncated or overwritten
    database fails here, before a query would)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise StoreDamaged(f"{path.name} cannot be read ({exc.strerror})") from None
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise StoreDamaged(f"{path.name} is not an SQLite database (damaged header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # the in-header page count is valid when its "version valid for" matches the change counter
    if header[24:28] == header[92:96] and pages and page_size * pages != size:
        raise StoreDamaged(f"{path.name} is {size:,} bytes but its header says {page_size * pages:,} (truncated?)")


def check_structure(store: Any) -> None:
    """The opened store's parts agree with each other (``store`` is a ``CorpusStore``)."""
    n = len(store.ids)
    for name in ("year", "citations", "in_corpus", "venue"):
        if len(getattr(store, name)) != n:
            raise StoreDamaged(f"arrays.npz: {name} has {len(getattr(store, name))} rows, the store has {n}")
    for ptr, idx, what in ((store.ref_ptr, store.ref_idx, "references"), (store.cit_ptr, store.cit_idx, "citations")):
        if len(ptr) != n + 1 or int(ptr[-1]) != len(idx) or (len(idx) and (idx.min() < 0 or idx.max() >= n)):
            raise StoreDamaged(f"arrays.npz: the {what} graph does not fit the store")
    vectors = store.vectors
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise StoreDamaged(f"vectors.npy has shape {vectors.shape}, expected ({n}, …)")
    rows = np.unique(np.linspace(0, n - 1, num=min(n, VECTOR_SAMPLE_ROWS)).astype(np.int64))
    if not np.isfinite(np.asarray(vectors[rows], dtype=np.float32)).all():
        raise StoreDamaged("vectors.npy holds NaN or infinite values")
    last = store._query("SELECT max(row) FROM papers")
    if not last or last[0][0] != n - 1:
        raise StoreDamaged(f"store.sqlite holds rows up to {last[0][0] if last else None}, the store has {n}")
    scores = getattr(store.bm25, "scores", None)
    if isinstance(scores, dict) and {"data", "indices", "indptr"} <= scores.keys():
        data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
        if (
            len(data) != len(indices)
            or int(indptr[-1]) != len(data)
            or (len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= n))
            or not np.isfinite(data).all()
        ):
            raise StoreDamaged("the BM25 index does not fit the store")


def describe(exc: BaseException) -> str:
    """A short reason for a query-time failure of the store's files."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__
