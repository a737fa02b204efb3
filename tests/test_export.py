"""Exports: BibTeX that a BibTeX reader accepts and that says what the papers say, CSV, workflow recipes."""

from __future__ import annotations

import csv
import html
import io
import random
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pilot import export
from pilot.models import Author, Evidence, Paper, RankedPaper
from tests import bibparse
from workflows.model import Edge, Node, Workflow


def paper(pid: str, title: str, authors=("Kishore Papineni",), year=2002, venue="ACL", **kw) -> Paper:
    return Paper(id=pid, title=title, authors=[Author(name=a) for a in authors], year=year, venue=venue, **kw)


def test_bibtex_round_trips_through_a_bibtex_reader():
    papers = [
        paper("acl:P02-1040", "BLEU: a Method for Automatic Evaluation of Machine Translation",
              authors=("Kishore Papineni", "Salim Roukos", "Todd Ward", "Wei-Jing Zhu"),
              url="https://aclanthology.org/P02-1040", external_ids={"DOI": "10.3115/1073083.1073135"}),
        paper("acl:J93-2004", "Building a Large Annotated Corpus of English: The Penn Treebank",
              authors=("Marcus, Mitchell P.", "Santorini, Beatrice"), year=1993, venue="Computational Linguistics"),
        paper("pc:x", "A paper with no venue", authors=(), year=None, venue=None),
    ]  # fmt: skip
    entries = bibparse.parse(export.to_bibtex(papers))
    # with no author the title leads the key
    assert [e["ID"] for e in entries] == ["papineni2002bleu", "marcus1993building", "paperno"]
    bleu, ptb, bare = entries
    assert bleu["ENTRYTYPE"] == "inproceedings" and bleu["year"] == "2002"
    assert (
        bleu["booktitle"] == "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics"
    )
    assert bibparse.to_text(bleu["title"]) == papers[0].title
    assert "{BLEU}" in bleu["title"]  # the acronym keeps its capitals under any bibliography style
    assert bleu["author"] == "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing"
    assert bleu["url"] == "https://aclanthology.org/P02-1040" and bleu["doi"] == "10.3115/1073083.1073135"
    assert ptb["ENTRYTYPE"] == "article" and ptb["journal"] == "Computational Linguistics"
    assert ptb["author"] == "Marcus, Mitchell P. and Santorini, Beatrice"
    assert bare["ENTRYTYPE"] == "misc" and "author" not in bare and "year" not in bare
    assert "url" not in bare  # corpus:// ids are not web pages


def test_keys_are_unique_and_stable_whatever_the_order():
    twins = [
        paper("acl:A", "Learning to rank", authors=("Tie-Yan Liu",), year=2008),
        paper("acl:B", "Learning to rank, again", authors=("Liu, Tie-Yan",), year=2008),
        paper("acl:C", "Learning from clicks", authors=("T. Liu",), year=2008),
        paper("acl:D", "On the learning of everything", authors=("Jörg Müller",), year=2008),
    ]
    keys = export.bibtex_keys(twins)
    assert keys == {"acl:A": "liu2008learning", "acl:B": "liu2008learninga", "acl:C": "liu2008learningb",
                    "acl:D": "muller2008learning"}  # fmt: skip
    for seed in range(5):
        shuffled = twins[:]
        random.Random(seed).shuffle(shuffled)
        assert export.bibtex_keys(shuffled) == keys
    ids = [e["ID"] for e in bibparse.parse(export.to_bibtex(twins))]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[a-z0-9]+", k) for k in ids)


def test_latex_specials_are_escaped_and_braces_stay_balanced():
    title = r"100% of $5 & #1 {data_set} ~ ^ \ back"
    entry = bibparse.parse(export.to_bibtex([paper("x:1", title)]))[0]
    raw = entry["title"]
    unescaped = re.findall(r"(?<!\\)[%$&#_~^]", raw)
    assert not unescaped, f"{unescaped} reached the .bib unescaped: {raw}"
    assert r"\%" in raw and r"\$" in raw and r"\&" in raw and r"\#" in raw and r"\_" in raw
    assert r"\textasciitilde{}" in raw and r"\textasciicircum{}" in raw and r"\textbackslash{}" in raw
    assert bibparse.to_text(raw) == title
    # a lone brace would end the field early for BibTeX (it counts \{ too); the entry must still parse whole
    lone = bibparse.parse(export.to_bibtex([paper("x:2", "Sets {a, b and c")]))[0]
    assert bibparse.to_text(lone["title"]) == "Sets {a, b and c" and lone["year"] == "2002"


def test_html_in_a_title_becomes_text_not_markup():
    title = "<script>alert('x')</script> Q&amp;A over <i>E. coli</i>"
    entry = bibparse.parse(export.to_bibtex([paper("x:3", title)]))[0]
    assert "<" not in entry["title"] and ">" not in entry["title"]
    assert bibparse.to_text(entry["title"]) == "<script>alert('x')</script> Q&A over <i>E. coli</i>"


def test_non_ascii_names_and_titles():
    p = paper("x:4", "Über naïve Bayes für Ça va — 中文分词", authors=("José Müller-Łukasz", "Søren Åberg"), year=2010)
    bib = export.to_bibtex([p])
    entry = bibparse.parse(bib)[0]
    assert entry["ID"] == "mullerlukasz2010uber"
    assert r"{\"U}ber" in entry["title"] and r"na{\"{\i}}ve" in entry["title"] and "中文分词" in entry["title"]
    assert bibparse.to_text(entry["title"]) == p.title
    assert bibparse.to_text(entry["author"]) == "Müller-Łukasz, José and Åberg, Søren"


def test_a_consortium_name_with_and_is_one_author():
    entry = bibparse.parse(export.to_bibtex([paper("x:5", "Report", authors=("Research and Development Team",))]))[0]
    assert entry["author"] == "{Research and Development Team}"


_TEXT = st.text(
    alphabet=st.characters(
        categories=("Lu", "Ll", "Nd", "Po", "Ps", "Pe", "Sm", "Sc", "Sk", "Zs"),
        max_codepoint=0x4FFF,
        exclude_characters="-\u2018\u2019\u201c\u201d",
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_any_title_survives_escaping(title):
    expected = re.sub(r"\s+", " ", unicodedata.normalize("NFC", html.unescape(title))).strip()
    if not expected:
        return
    entry = bibparse.parse(export.to_bibtex([paper("x:p", title)]))[0]
    assert bibparse.to_text(entry["title"]) == expected


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_one_row_per_result_with_evidence_and_kept_flag():
    results = [
        RankedPaper(
            paper=paper("acl:P02-1040", 'BLEU, "quoted", and commas', authors=("A B", "C D")),
            score=0.91,
            evidence=Evidence(nodes=["seed", "cites"], snippet="we propose BLEU", matched_terms=["BLEU"]),
        ),
        RankedPaper(paper=paper("x:2", '=HYPERLINK("http://evil")', authors=("E F",)), score=0.5),
    ]
    rows = _rows(export.to_csv(results, kept_ids=["x:2"]))
    assert [r["rank"] for r in rows] == ["1", "2"]
    assert rows[0]["title"] == 'BLEU, "quoted", and commas' and rows[0]["authors"] == "A B; C D"
    assert rows[0]["nodes"] == "seed cites" and rows[0]["snippet"] == "we propose BLEU" and rows[0]["score"] == "0.9100"
    assert rows[0]["kept"] == "" and rows[1]["kept"] == "yes"
    assert rows[1]["title"].startswith("'=")  # a spreadsheet must not run it as a formula
    assert rows[0]["why"] == ""  # no workflow given: nothing to explain with


def test_csv_says_why_each_paper_is_there_when_given_the_workflow():
    from workflows.templates import template

    item = RankedPaper(paper=paper("x:1", "T"), evidence=Evidence(nodes=["citers"], scores={"citers.support": 1.0}))
    rows = _rows(export.to_csv([item], workflow=template("successor", "acl:P02-1040")))
    assert rows[0]["why"] == "cites the anchor"


def test_export_covers_kept_papers_in_rank_order_or_everything():
    results = [RankedPaper(paper=paper(f"x:{i}", f"T{i}")) for i in range(4)]
    assert [r.paper.id for r in export.export_targets(results, ["x:3", "x:1"])] == ["x:1", "x:3"]
    assert [r.paper.id for r in export.export_targets(results, [])] == ["x:0", "x:1", "x:2", "x:3"]
    assert [r.paper.id for r in export.export_targets(results, ["gone"])] == ["x:0", "x:1", "x:2", "x:3"]


def test_workflow_recipe_loads_back_identical():
    wf = Workflow(
        name="successors of BLEU",
        nodes=[Node(id="seed", op="anchor", params={"paper_id": "acl:P02-1040"}),
               Node(id="f", op="filter", params={"year_min": 2008})],
        edges=[Edge(source="seed", target="f")],
        output="f",
    )  # fmt: skip
    assert export.load_recipe(export.workflow_recipe(wf)) == wf
    assert export.load_recipe(export.workflow_recipe(wf).encode()) == wf


@pytest.mark.parametrize(
    "text, says",
    [
        ("{not json", "not valid JSON"),
        ('{"nodes": [{"id": "a"}]}', "nodes.0.op"),
        ("[1, 2]", "not a pilot workflow"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_a_bad_recipe_is_a_readable_error(text, says):
    with pytest.raises(export.RecipeError, match=re.escape(says)):
        export.load_recipe(text)
