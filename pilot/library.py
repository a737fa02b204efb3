"""The researcher's library: papers kept across searches, grouped by the search they were kept from.

The library is stored in the researcher's own browser (``gr.BrowserState``, i.e. localStorage), not on
the server: several researchers share one server, and a library that never leaves its owner's browser
cannot be read or filled by anyone else, survives new searches and page reloads, and costs the server no
disk. The price is that whatever comes back from a browser is untrusted input — :meth:`Library.load`
validates it, drops what does not parse, and caps its size — and that two tabs of one browser keep the
library that was saved last.

    lib = Library.load(stored_value)              # never raises; junk becomes an empty library
    lib.add(papers, search="later work on BLEU")  # a new search label starts a new group
    lib.remove(["acl:P02-1040"])
    value = lib.dump()                            # what the browser stores
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from pilot.models import Author, Paper

log = logging.getLogger(__name__)

MAX_PAPERS = 1000
MAX_STORED_CHARS = 2_000_000  # localStorage holds ~5 MB per site; a library stays well inside it
_MAX_ABSTRACT = 2000
_MAX_AUTHORS = 60
_MAX_TEXT = 500
LIBRARY_VERSION = 1


class LibraryEntry(BaseModel):
    paper: Paper
    search: str = Field("", description="the request the paper was kept from, as the researcher typed it")
    search_id: str = ""
    kept_at: float = 0.0


class Library(BaseModel):
    version: int = LIBRARY_VERSION
    entries: list[LibraryEntry] = Field(default_factory=list)

    # --- reading --------------------------------------------------------------------------------
    @property
    def ids(self) -> set[str]:
        return {e.paper.id for e in self.entries}

    def __contains__(self, paper_id: object) -> bool:
        return any(e.paper.id == paper_id for e in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def papers(self, search_id: str | None = None) -> list[Paper]:
        """Kept papers, oldest first; with ``search_id`` only those kept from that search."""
        return [e.paper for e in self.entries if search_id is None or e.search_id == search_id]

    def searches(self) -> list[tuple[str, str, int]]:
        """(search id, label, number of papers) per search, in the order they were first kept from."""
        out: dict[str, tuple[str, int]] = {}
        for e in self.entries:
            label, n = out.get(e.search_id, (e.search, 0))
            out[e.search_id] = (label, n + 1)
        return [(sid, label, n) for sid, (label, n) in out.items()]

    # --- changing -------------------------------------------------------------------------------
    def add(self, papers: Iterable[Paper], search: str = "", now: float | None = None) -> int:
        """Keep ``papers`` (already kept ones stay where they are); returns how many were new."""
        have = self.ids
        label = " ".join((search or "").split())[:_MAX_TEXT]
        sid = search_id(label)
        added = 0
        for p in papers:
            if p.id in have or len(self.entries) >= MAX_PAPERS:
                continue
            self.entries.append(
                LibraryEntry(
                    paper=slim(p), search=label, search_id=sid, kept_at=now if now is not None else time.time()
                )
            )
            have.add(p.id)
            added += 1
        return added

    def remove(self, paper_ids: Iterable[str]) -> int:
        drop = set(paper_ids)
        before = len(self.entries)
        self.entries = [e for e in self.entries if e.paper.id not in drop]
        return before - len(self.entries)

    # --- storage --------------------------------------------------------------------------------
    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def load(cls, value: Any) -> Library:
        """A library from what a browser sent back: anything malformed is dropped, never raised."""
        if not isinstance(value, dict) or not isinstance(value.get("entries"), list):
            return cls()
        if len(repr(value)) > MAX_STORED_CHARS * 2:
            log.warning("stored library too large (%d chars); starting empty", len(repr(value)))
            return cls()
        lib = cls()
        seen: set[str] = set()
        for raw in value["entries"][:MAX_PAPERS]:
            try:
                entry = LibraryEntry.model_validate(raw)
            except ValidationError:
                continue
            if entry.paper.id in seen or not entry.paper.id.strip():
                continue
            seen.add(entry.paper.id)
            entry.paper = slim(entry.paper)
            entry.search = entry.search[:_MAX_TEXT]
            entry.search_id = entry.search_id[:64] or search_id(entry.search)
            lib.entries.append(entry)
        return lib


def search_id(label: str) -> str:
    return hashlib.sha1(label.encode("utf-8")).hexdigest()[:12]


def slim(paper: Paper) -> Paper:
    """What a kept paper needs for its card and its exports, within size limits: no reference list."""
    return paper.model_copy(
        update={
            "id": paper.id[:_MAX_TEXT],
            "title": paper.title[: _MAX_TEXT * 2],
            "abstract": paper.abstract[:_MAX_ABSTRACT] if paper.abstract else None,
            "venue": paper.venue[:_MAX_TEXT] if paper.venue else None,
            "authors": [Author(name=a.name[:200]) for a in paper.authors[:_MAX_AUTHORS]],
            "references": None,
            "external_ids": {str(k)[:40]: str(v)[:200] for k, v in list(paper.external_ids.items())[:12]},
            "fields_of_study": [f[:80] for f in paper.fields_of_study[:12]],
            "url": paper.url[:1000] if paper.url else None,
        }
    )
