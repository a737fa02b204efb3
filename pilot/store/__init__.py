"""The offline corpus store: built once per corpus file into the cache directory, then memory-mapped.

``build.build_store`` writes it, ``store.CorpusStore`` reads it; ``pilot.sources.local`` puts the
source protocol on top.
"""

from pilot.store.build import build_store, store_key
from pilot.store.store import CorpusStore

__all__ = ["CorpusStore", "build_store", "store_key"]
