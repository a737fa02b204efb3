"""Shared test fixtures: where the shared data lives, and a small, deterministic slice of the corpus.

The slice keeps the citation neighbourhood of a few benchmark anchors (so graph operators have
something to walk) plus an even sample of the rest, so it builds in seconds.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from tests.prereq import shared_dir

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


# Anchors whose neighbourhoods the slice keeps (all appear in the dev benchmark).
SLICE_ANCHORS = ("acl:D08-1048", "acl:P02-1040", "acl:J93-2004", "acl:N03-1033", "acl:P03-1054")
SLICE_EVERY = 40


def _build_slice(src: Path, dest: Path) -> list[dict]:
    rows = []
    with gzip.open(src, "rt", encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line))
    by_id = {r["id"]: r for r in rows}
    keep: set[str] = set()
    for a in SLICE_ANCHORS:
        if a not in by_id:
            continue
        keep.add(a)
        keep.update(x for x in by_id[a]["references"] if x in by_id)
    citing = [r["id"] for r in rows if set(r["references"]) & set(SLICE_ANCHORS)]
    keep.update(citing)
    keep.update(r["id"] for i, r in enumerate(rows) if i % SLICE_EVERY == 0)
    out = [r for r in rows if r["id"] in keep]
    with gzip.open(dest, "wt", encoding="utf-8") as fh:
        for r in out:
            fh.write(json.dumps(r) + "\n")
    return out


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_dir()


@pytest.fixture(scope="session")
def corpus_slice(shared: Path, tmp_path_factory) -> Path:
    """Path to a ~2.5k-paper slice of the shared corpus, in the same schema (gzip JSONL)."""
    dest = tmp_path_factory.mktemp("corpus") / "slice.jsonl.gz"
    _build_slice(shared / "corpus" / "papers.jsonl.gz", dest)
    return dest


@pytest.fixture(scope="session")
def corpus_slice_rows(corpus_slice: Path) -> list[dict]:
    with gzip.open(corpus_slice, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="session")
def bench_cases(shared: Path) -> list[dict]:
    with open(shared / "bench" / "dev" / "cases.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def shared_vectors(shared: Path, ids: list[str], dest: Path, name: str = "corpus.f16.npy") -> Path:
    """The shared precomputed MiniLM vectors of these papers, in this order, as a ``.npy`` file — embedding
    thousands of texts in a test would take longer than the test."""
    import numpy as np

    line_of: dict[str, int] = {}
    with gzip.open(shared / "corpus" / "papers.jsonl.gz", "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):  # ids lead every line; json only for an odd one
            line_of[line[8 : line.index('"', 8)] if line.startswith('{"id": "') else json.loads(line)["id"]] = i
    full = np.load(shared / "corpus" / "minilm-l6-v2.f16.npy", mmap_mode="r")
    vectors = dest / name
    np.save(vectors, np.asarray(full[[line_of[i] for i in ids]]))
    return vectors


def corpus_with_vectors(
    shared: Path, rows: list[dict], dest: Path, vector_ids: list[str] | None = None
) -> tuple[Path, Path]:
    """``rows`` as a corpus file in ``dest`` and their vectors (``vector_ids``: whose vector each row borrows)."""
    corpus = dest / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return corpus, shared_vectors(shared, vector_ids or [r["id"] for r in rows], dest)


@pytest.fixture(scope="session")
def slice_vectors(shared: Path, corpus_slice_rows: list[dict], tmp_path_factory) -> Path:
    """The shared precomputed MiniLM vectors of the slice's papers, re-ordered to the slice's lines
    (embedding 3.5k texts would add ~40 s to every session); ``test_local_source`` covers the
    compute-it-yourself path on a small file."""
    ids = [r["id"] for r in corpus_slice_rows]
    return shared_vectors(shared, ids, tmp_path_factory.mktemp("slice-vectors"), "slice.f16.npy")


@pytest.fixture(scope="session")
def local_source(corpus_slice: Path, slice_vectors: Path, tmp_path_factory):
    """An opened ``LocalCorpusSource`` over the slice, built into a temporary cache directory."""
    from pilot.sources.local import LocalCorpusSource

    return LocalCorpusSource.open(
        corpus_slice, tmp_path_factory.mktemp("pilot-cache"), vectors=slice_vectors, progress=False
    )


@pytest.fixture(scope="session")
def by_id(corpus_slice_rows) -> dict[str, dict]:
    """The slice's raw rows by id: what operator results are checked against."""
    return {r["id"]: r for r in corpus_slice_rows}


@pytest.fixture()
def ctx(local_source):
    """A fresh operator run context over the local slice source (operators append notes to it)."""
    from workflows.operator import RunContext

    return RunContext(source=local_source)


@pytest.fixture(scope="module")
def s2_upstream(local_source):
    """The S2 emulator over the slice, warmed up (its search index loaded), in a process of its own."""
    from tests.emulator_process import EmulatorProcess

    with EmulatorProcess(local_source.store.dir, warm=True) as url:
        yield url


@pytest.fixture
def fault_proxy(s2_upstream):
    """The fault proxy (``emulators.faultproxy``) in front of the S2 emulator; ``fault_proxy.url`` is its address."""
    from emulators.faultproxy import FaultProxy
    from emulators.server import Running

    proxy = FaultProxy(s2_upstream)
    with Running(proxy) as running:
        proxy.url = running.url  # type: ignore[attr-defined]
        yield proxy
