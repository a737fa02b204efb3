"""Where a paper appeared, as reference managers want it (and the filter's "only journal papers"): the kind of
publication, the full proceedings or journal name, the publisher, and the ACL Anthology page when the paper has an
Anthology id.

Sources name venues tersely ("NAACL" for a Findings paper, "NIPS") or in their own long spellings; the
names, aliases and ACL Anthology conventions live in the one lexicon, ``pilot/data/lexicon.json`` (a venue's
``export`` and the ``publication`` table), beside the names the reader knows the venue by, so they grow without
code. The Anthology id is the most precise witness: ``2021.findings-naacl.5`` is a Findings paper whatever
the venue field says, ``2021.naacl-demos.3`` a demo paper, ``J93-2004`` a journal article.

    pub = publication(paper)   # Publication(kind="conference", container="Proceedings of the 40th Annual …")
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from pilot.models import Paper
from pilot.text import data_json
from pilot.vocab import PublicationKind

ACL_ANTHOLOGY_URL = "https://aclanthology.org/{id}"
ARXIV_URL = "https://arxiv.org/abs/{id}"
DOI_URL = "https://doi.org/{doi}"
S2_CORPUS_URL = "https://api.semanticscholar.org/CorpusID:{id}"  # Semantic Scholar's stable redirect

_NEW_ACL_ID = re.compile(r"^(\d{4})\.([a-z0-9]+)-([a-z0-9]+)\.\d+$")
_OLD_ACL_ID = re.compile(r"^([A-Z])\d{2}-\d{4}$")


class Publication(BaseModel):
    kind: PublicationKind = "unknown"
    container: str | None = None  # full proceedings / journal title
    short: str | None = None  # the series' acronym (ACL, NAACL, NeurIPS)
    publisher: str | None = None
    acl_id: str | None = None
    arxiv_id: str | None = None
    url: str | None = None  # the best landing page: ACL Anthology, DOI, arXiv, else the source's page


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", text.lower()).strip()


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    lexicon = data_json("lexicon.json")
    data: dict[str, Any] = dict(lexicon["publication"])
    # an export's series name is the venue's label unless it says otherwise ("CoRL", which the corpus writes CORL)
    data["venues"] = {v["export"].get("short", v["label"]): v["export"] for v in lexicon["venues"] if "export" in v}
    by_key: dict[str, str] = {}
    for short, entry in data["venues"].items():
        for name in (short, *entry.get("aliases", [])):
            by_key.setdefault(_key(name), short)
    data["by_key"] = by_key
    return data


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _fill(short: str, year: int | None, volume_suffix: str = "") -> str:
    entry = _table()["venues"][short]
    name: str = entry["name"]
    rule = entry.get("ordinal")
    n = year - rule["base"] if rule and year and year >= rule["from"] else None
    name = name.replace("{ordinal_number}", str(n) if n else "")
    # with no trustworthy number or year the phrase reads on without it ("Proceedings of the Annual Meeting …")
    name = name.replace("{ordinal}", _ordinal(n) if n else "").replace("{year}", str(year) if year else "")
    name = name.replace("{volume_suffix}", volume_suffix)
    name = re.sub(r"\s+", " ", name).replace("( ", "(").replace(" )", ")")
    return re.sub(r"\s+([:,)])", r"\1", name).strip()


def acl_id(paper: Paper) -> str | None:
    """The ACL Anthology id, from the external ids or an ``acl:`` / ``pc:…:`` paper id."""
    found = paper.external_ids.get("ACL")
    if not found and paper.id.startswith("acl:"):
        found = paper.id.split(":", 1)[1]
    if not found:
        tail = paper.id.rsplit(":", 1)[-1]
        if _NEW_ACL_ID.match(tail) or _OLD_ACL_ID.match(tail):
            found = tail
    found = (found or "").strip()
    return found if (_NEW_ACL_ID.match(found) or _OLD_ACL_ID.match(found)) else None


_CORR_KEY = re.compile(r"^journals/corr/abs-(\d{4})-(\d{4,5})$")


def _arxiv_id(paper: Paper) -> str | None:
    """The arXiv id, from the external ids or from a DBLP CoRR key (``journals/corr/abs-1810-04805``)."""
    for key, value in paper.external_ids.items():
        if key.lower() == "arxiv" and value:
            return str(value).strip()
        if key.upper() == "DBLP" and isinstance(value, str) and (m := _CORR_KEY.match(value.strip())):
            return f"{m.group(1)}.{m.group(2)}"
    return None


def _from_acl_id(aid: str, year: int | None) -> tuple[str | None, str, str | None]:
    """(series short name, volume suffix, Findings container) that an Anthology id implies."""
    t = _table()
    m = _NEW_ACL_ID.match(aid)
    if m:
        code, volume = m.group(2), m.group(3)
        if code == "findings":
            short = t["acl_codes"].get(volume, volume.upper())
            return None, "", t["findings"].format(short=short, year=m.group(1))
        return t["acl_codes"].get(code), t["acl_volumes"].get(volume, ""), None
    m = _OLD_ACL_ID.match(aid)
    return (t["acl_letters"].get(m.group(1)) if m else None), "", None


_DBLP_KEY = re.compile(r"^(conf|journals)/([a-z0-9]+)/")


def _from_dblp(paper: Paper) -> tuple[PublicationKind, str | None]:
    """(kind, series) a DBLP key witnesses: ``conf/acl/…`` a conference paper of the ACL series, ``journals/corr/…``
    an arXiv preprint (CoRR), ``journals/tacl/…`` a journal article; ("unknown", None) without one."""
    key = next((str(v) for k, v in paper.external_ids.items() if k.upper() == "DBLP" and isinstance(v, str)), "")
    m = _DBLP_KEY.match(key.strip())
    if not m:
        return "unknown", None
    if m.group(1) == "conf":
        return "conference", m.group(2)
    return ("preprint", None) if m.group(2) == "corr" else ("journal", m.group(2))


def _kind_of_name(name: str) -> PublicationKind:
    words = set(_key(name).split())
    t = _table()
    if words & set(t["journal_words"]):
        return "journal"
    if "workshop" in words:
        return "workshop"
    if words & set(t["conference_words"]):
        return "conference"
    return "unknown"


def publication(paper: Paper) -> Publication:
    """The paper's publication venue, as fully as the data allows; never raises."""
    t = _table()
    year = paper.year
    aid = acl_id(paper)
    arxiv = _arxiv_id(paper)
    venue = (paper.venue or "").strip()
    short, suffix, findings = _from_acl_id(aid, year) if aid else (None, "", None)
    by_name = t["by_key"].get(_key(venue)) if venue else None
    # the venue field is trusted over a one-letter Anthology prefix (W = any workshop, P = also COLING-ACL)
    if by_name and not (aid and _NEW_ACL_ID.match(aid)):
        short = by_name
    short = short or by_name
    url: str | None
    if aid:
        url = ACL_ANTHOLOGY_URL.format(id=aid)
    elif paper.doi:
        url = DOI_URL.format(doi=paper.doi)
    elif arxiv:
        url = ARXIV_URL.format(id=arxiv)
    elif paper.canonical_url.startswith(("http://", "https://")):
        url = paper.canonical_url
    else:
        corpus_id = paper.external_ids.get("CorpusId")
        url = S2_CORPUS_URL.format(id=corpus_id) if corpus_id else None
    if findings:
        return Publication(
            kind="conference",
            container=findings,
            short="Findings",
            publisher="Association for Computational Linguistics",
            acl_id=aid,
            arxiv_id=arxiv,
            url=url,
        )
    if short and short in t["venues"]:
        entry = t["venues"][short]
        kind: PublicationKind = entry["kind"]
        if kind == "preprint" and arxiv is None and not venue:
            kind = "unknown"
        return Publication(
            kind=kind,
            container=_fill(short, year, suffix),
            short=short,
            publisher=entry.get("publisher"),
            acl_id=aid,
            arxiv_id=arxiv,
            url=url,
        )
    if venue:
        kind = named = _kind_of_name(venue)
        if kind == "unknown":
            # no telling word: an acronym ("INTERSPEECH", "CHI 2019") is a conference series, a name
            # ("Nature", "Pattern Recognition", "Bioinformatics") is most often a journal
            acronym = re.fullmatch(r"[A-Z0-9][A-Z0-9&@*'-]*(?:\s+'?\d{2,4})?", venue) is not None
            kind = "conference" if acronym else "journal"
        container = venue
        if named in ("conference", "workshop") and not _key(venue).startswith("proceedings"):
            # a series name ("SIGdial Workshop On Discourse And Dialogue") names its proceedings
            container = f"Proceedings of the {venue}"
        return Publication(
            kind=kind,
            container=container,
            short=None,
            acl_id=aid,
            arxiv_id=arxiv,
            url=url,
        )
    if arxiv:
        return Publication(
            kind="preprint", container=f"arXiv preprint arXiv:{arxiv}", short="arXiv", arxiv_id=arxiv, url=url
        )
    if aid:
        # an Anthology id outside the main series' table (``W09-0401``, ``2021.wmt-1.5``): a workshop's (or a
        # smaller event's) proceedings, published by the ACL; their name is not in the id, so it is left out
        return Publication(kind="workshop", publisher="Association for Computational Linguistics", acl_id=aid, url=url)
    # no venue name: a DBLP key still says what kind of publication it is (and often its series); a name
    # nobody gave is left out rather than made up
    kind, series = _from_dblp(paper)
    short = t["by_key"].get(_key(series)) if series else None
    if short and t["venues"][short]["kind"] == kind:
        entry = t["venues"][short]
        return Publication(
            kind=kind,
            container=_fill(short, year),
            short=short,
            publisher=entry.get("publisher"),
            acl_id=aid,
            url=url,
        )
    return Publication(kind=kind, acl_id=aid, url=url)
