"""The library a researcher keeps in their browser: it survives new searches, and whatever a browser
sends back is untrusted (a hostile visitor can put anything in their own storage)."""

from __future__ import annotations

import json

from pilot.library import MAX_PAPERS, Library
from pilot.models import Author, Paper


def _p(i: int, **kw) -> Paper:
    return Paper(id=f"acl:X{i}", title=f"Paper {i}", year=2000 + i, authors=[Author(name="Ada Lovelace")], **kw)


def test_kept_papers_group_by_search_and_round_trip_through_storage():
    lib = Library()
    assert lib.add([_p(1), _p(2)], search="later work on BLEU", now=1.0) == 2
    assert lib.add([_p(2), _p(3)], search="surveys on parsing", now=2.0) == 1  # #2 stays where it was kept
    stored = json.loads(json.dumps(lib.dump()))  # what localStorage holds is plain JSON
    back = Library.load(stored)
    assert [p.id for p in back.papers()] == ["acl:X1", "acl:X2", "acl:X3"]
    (_, label1, n1), (s2, label2, n2) = back.searches()
    assert (label1, n1, label2, n2) == ("later work on BLEU", 2, "surveys on parsing", 1)
    assert [p.id for p in back.papers(s2)] == ["acl:X3"]
    assert back.remove(["acl:X1", "nope"]) == 1 and "acl:X1" not in back


def test_kept_papers_are_slimmed_to_what_cards_and_exports_need():
    big = _p(1, references=[f"r{i}" for i in range(5000)], abstract="x" * 50_000)
    lib = Library()
    lib.add([big], search="s")
    kept = lib.papers()[0]
    assert kept.references is None and len(kept.abstract) <= 2000 and kept.title == big.title


def test_junk_from_a_browser_becomes_an_empty_or_cleaned_library():
    for junk in (None, "test", 42, [], {"entries": "x"}, {"entries": [1, "a", None]}):
        assert len(Library.load(junk)) == 0
    good = Library()
    good.add([_p(1)], search="s")
    stored = good.dump()
    stored["entries"] += [
        {"paper": {"id": "", "title": "no id"}},  # unusable
        {"paper": {"title": "missing id"}},
        stored["entries"][0],  # a duplicate
        {"paper": {"id": "x:evil", "title": "<script>alert(1)</script>"}, "search": "s" * 10_000},
    ]
    lib = Library.load(stored)
    assert [p.id for p in lib.papers()] == ["acl:X1", "x:evil"]
    assert len(lib.entries[1].search) <= 500  # stored as text; the page escapes it when showing it


def test_a_flooded_library_is_capped():
    lib = Library()
    lib.add([_p(i) for i in range(MAX_PAPERS + 50)], search="s")
    assert len(lib) == MAX_PAPERS
    flood = {"entries": [{"paper": {"id": f"x:{i}", "title": "t"}} for i in range(MAX_PAPERS * 3)]}
    assert len(Library.load(flood)) == MAX_PAPERS
