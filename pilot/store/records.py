"""Reading a corpus file (shared corpus JSONL schema, plain or gzip) into ``Paper`` models.

A line that is not a JSON object with a string ``id`` and ``title`` is malformed: it is skipped and
counted, and the import goes on. Optional fields of the wrong type are treated as missing.
"""

from __future__ import annotations

import gzip
import io
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from pilot.models import LOCAL_URL, Author, Paper
from pilot.store.progress import STEPS, report
from pilot.store.text import author_id, display_name
from pilot.text import unescape

log = logging.getLogger(__name__)

SOURCE = "local"


def open_text(path: Path) -> io.BufferedIOBase:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(path, "rb")
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _authors(value: Any) -> list[Author]:
    out: list[Author] = []
    for a in value if isinstance(value, list) else []:
        raw = a.get("name") if isinstance(a, dict) else a if isinstance(a, str) else None
        name = display_name(raw) if isinstance(raw, str) else ""
        if not name:
            continue
        aff = a.get("affiliation") if isinstance(a, dict) else None
        aid = author_id(name)
        out.append(
            Author(
                id=aid,
                name=name,
                affiliation=unescape(aff) or None if isinstance(aff, str) else None,
                url=LOCAL_URL.format(kind="author", id=aid),
                source=SOURCE,
            )
        )
    return out


def to_paper(rec: dict) -> Paper | None:
    """A corpus record as a Paper, or None when it lacks a usable id or title."""
    pid, title = rec.get("id"), rec.get("title")
    if not isinstance(pid, str) or not pid.strip() or not isinstance(title, str) or not unescape(title):
        return None
    refs = rec.get("references")
    cites = _int(rec.get("citation_count"))
    in_corpus = _int(rec.get("in_corpus_citations"))
    ext = rec.get("external_ids")
    venue = rec.get("venue")
    abstract = rec.get("abstract")
    url = rec.get("url")
    return Paper(
        id=pid.strip(),
        title=unescape(title),
        abstract=unescape(abstract) or None if isinstance(abstract, str) else None,
        year=_int(rec.get("year")),
        venue=unescape(venue) or None if isinstance(venue, str) else None,
        authors=_authors(rec.get("authors")),
        references=[r for r in refs if isinstance(r, str)] if isinstance(refs, list) else [],
        # paper lists use -1 for "unknown"
        citation_count=cites if cites is not None and cites >= 0 else None,
        in_corpus_citations=in_corpus if in_corpus is not None and in_corpus >= 0 else None,
        external_ids={str(k): str(v) for k, v in ext.items() if v is not None} if isinstance(ext, dict) else {},
        url=url if isinstance(url, str) and url else None,
        source=SOURCE,
    )


@dataclass
class ParsedCorpus:
    papers: list[Paper] = field(default_factory=list)
    line_of_row: list[int] = field(default_factory=list)  # row i of the store came from this file line
    lines: int = 0
    malformed: int = 0
    duplicates: int = 0


def iter_lines(path: Path, read: Callable[[float], None] | None = None) -> Iterator[bytes]:
    """The file's lines; ``read`` is told now and then which fraction of the file (as stored) is read."""
    size = max(1, path.stat().st_size)
    with open_text(path) as fh:
        raw = getattr(fh, "fileobj", fh)  # a gzip file's compressed stream: its position is in stored bytes
        for i, line in enumerate(fh):
            if read is not None and i % 5000 == 0:
                read(raw.tell() / size)
            yield line


def read_corpus(path: Path, progress: bool = False) -> ParsedCorpus:
    from tqdm import tqdm

    out = ParsedCorpus()
    seen: set[str] = set()

    def read(fraction: float) -> None:
        report(STEPS[0], fraction)

    lines = tqdm(iter_lines(path, read), desc="reading corpus", unit=" papers", disable=not progress)
    for lineno, line in enumerate(lines):
        out.lines += 1
        if not line.strip():
            out.malformed += 1
            continue
        try:
            rec = orjson.loads(line)
            paper = to_paper(rec) if isinstance(rec, dict) else None
        except (orjson.JSONDecodeError, ValueError) as exc:
            log.debug("corpus line %d malformed: %s", lineno + 1, exc)
            paper = None
        if paper is None:
            out.malformed += 1
            continue
        if paper.id in seen:
            out.duplicates += 1
            continue
        seen.add(paper.id)
        out.papers.append(paper)
        out.line_of_row.append(lineno)
    if out.malformed:
        log.warning("corpus %s: skipped %d malformed line(s) of %d", path, out.malformed, out.lines)
    return out
