"""The HTML the UI shows: source text is escaped, matched terms are highlighted, only web links are links."""

from __future__ import annotations

from html.parser import HTMLParser

from pilot.models import Answer, Author, Evidence, Paper, RankedPaper
from pilot.ui import render
from workflows.model import Node, NodeTrace, RunTrace, Workflow


class _Tags(HTMLParser):
    """Collects start tags and visible text, as a browser would see the markup."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.marked: list[str] = []
        self._in_mark = 0
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_mark += tag == "mark"

    def handle_endtag(self, tag):
        self._in_mark -= tag == "mark"

    def handle_data(self, data):
        self.text.append(data)
        if self._in_mark:
            self.marked.append(data)

    def names(self) -> set[str]:
        return {t for t, _ in self.tags}


EVIL = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


def ranked(**kw) -> RankedPaper:
    p = {"id": "acl:P02-1040", "title": "BLEU", "year": 2002, "venue": "ACL", "citation_count": 12000,
             "authors": [Author(name="Kishore Papineni")], "url": "https://aclanthology.org/P02-1040"}  # fmt: skip
    ev = kw.pop("evidence", Evidence(nodes=["seed"], snippet="", matched_terms=[]))
    p.update(kw)
    return RankedPaper(paper=Paper(**p), score=0.5, evidence=ev)


def test_a_script_title_shows_as_text():
    evidence = Evidence(nodes=["<node>"], snippet=EVIL + " again", matched_terms=["script"], reason="<u>why</u>")
    r = ranked(title=EVIL, venue="<b>Venue</b>", authors=[Author(name="<i>Mallory</i>")], evidence=evidence)
    out = render.results_html([r])
    seen = _Tags(out)
    assert not seen.names() & {"script", "img", "b", "i", "u", "node"}
    assert EVIL in "".join(seen.text)  # the user reads the title exactly as the source wrote it
    assert "<mark>script</mark>" in out  # highlighting still works inside the escaped snippet


def test_result_shows_link_metadata_evidence_and_nodes():
    r = ranked(evidence=Evidence(nodes=["seed", "cites_of"], snippet="We propose BLEU, a method for evaluation.",
                                 matched_terms=["bleu", "evaluation"], reason="cites the anchor"))  # fmt: skip
    seen = _Tags(render.results_html([r], kept_ids=["acl:P02-1040"], ratings={"acl:P02-1040": True}))
    links = [a for t, a in seen.tags if t == "a"]
    assert links[0]["href"] == "https://aclanthology.org/P02-1040" and "noopener" in links[0]["rel"]
    text = "".join(seen.text)
    for shown in (
        "Kishore Papineni",
        "ACL",
        "2002",
        "12,000 citations",
        "seed",
        "cites_of",
        "in library",
        "relevant",
        "partial match",  # how well it matches, in words...
    ):
        assert shown in text
    assert "score 0.500" not in text
    assert any("score 0.500" in a.get("title", "") for t, a in seen.tags if t == "span")  # ...raw score on hover
    assert seen.marked == ["BLEU", "evaluation"]
    assert not [t for t, _ in seen.tags if t == "img"]  # icons are inline SVG, not emoji or images
    assert "👍" not in text and "svg" in seen.names()


def test_only_http_links_are_clickable():
    corpus = ranked(id="pc:x", url=None, source="paperlists")
    js = ranked(id="x:js", url="javascript:alert(1)")
    seen = _Tags(render.results_html([corpus, js]))
    assert [t for t, _ in seen.tags if t == "a"] == []
    assert render.safe_url("corpus://paper/pc:x") is None and render.safe_url("HTTPS://ok.org/a") == "HTTPS://ok.org/a"
    assert render.safe_url('https://x.org/"onmouseover=alert(1)') is None


def test_highlight_marks_whole_words_case_insensitively_and_never_inside_entities():
    out = render.highlight("Tom & Jerry: AMP amplifiers <lt> amp", ["amp", "lt"])
    assert out == "Tom &amp; Jerry: <mark>AMP</mark> amplifiers &lt;<mark>lt</mark>&gt; <mark>amp</mark>"
    assert render.highlight("a + b", ["+"]) == "a <mark>+</mark> b"
    assert render.highlight("neural machine translation", ["machine translation", "machine"]) == (
        "neural <mark>machine translation</mark>"
    )
    assert render.highlight("<x>", []) == "&lt;x&gt;"


def test_cited_answer_links_each_reference():
    ans = Answer(
        answer="Kishore Papineni [1] works at <IBM> [2]; unknown [9].",
        reference={"1": "https://www.semanticscholar.org/author/1", "[2]": "corpus://org/ibm"},
    )
    out = render.answer_html(ans)
    assert "[[" not in out and "[2] corpus://org/ibm" in "".join(_Tags(out).text)
    seen = _Tags(out)
    hrefs = [a["href"] for t, a in seen.tags if t == "a"]
    assert hrefs.count("https://www.semanticscholar.org/author/1") == 2  # the [1] in the text and the list
    assert "corpus://org/ibm" in "".join(seen.text) and "<IBM>" in "".join(seen.text)
    assert "ibm" not in seen.names()


def test_workflow_outline_and_inspector_escape_and_show_status():
    wf = Workflow(nodes=[Node(id="<n1>", op="filter", params={"year_min": 2008})], output="<n1>")
    trace = RunTrace(nodes=[NodeTrace(node_id="<n1>", op="filter", status="failed", seconds=0.25, error="<boom>")])
    from pilot.ui import dag

    outline = dag._workflow_outline(wf, trace)
    assert "&lt;n1&gt;" in outline and "failed" in outline and "<n1>" not in outline
    insp = render.inspector_html("<n1>", wf, trace, {"inputs": {"in": list(range(10))}, "output": ["<x>"]})
    text = "".join(_Tags(insp).text)
    assert "error: <boom>" in text and "cache hit: no" in text and "0.250s" in text and "… 5 more" in text
    assert "<boom>" not in insp


def test_chat_text_keeps_markdown_but_not_markup():
    assert render.chat_text("**Found** <script>x</script>") == "**Found** &lt;script&gt;x&lt;/script&gt;"


def test_paper_ids_stay_inside_their_attributes():
    evil_id = 'x:1" onclick="alert(1)'
    seen = _Tags(render.results_html([ranked(id=evil_id)], kept_ids=[evil_id]))
    buttons = [a for t, a in seen.tags if t == "button"]
    assert [b["data-act"] for b in buttons] == ["up", "down", "keep", "cite"]
    assert all(b["data-id"] == evil_id and "onclick" not in b for b in buttons)
    assert "in library" in "".join(seen.text)


def test_with_its_workflow_a_result_says_why_in_words_and_keeps_scores_on_hover():
    from workflows.templates import template

    wf = template("sibling", "acl:P02-1040")
    ev = Evidence(nodes=["coupled", "search_dense"], scores={"coupled.support": 3.0, "dense": 0.7123},
                  matched_terms=["bleu"], reason="coupled.support=3; dense=0.7123")  # fmt: skip
    seen = _Tags(render.results_html([ranked(evidence=ev)], workflow=wf))
    text = "".join(seen.text)
    assert "why: cites 3 of the anchor's references · close in meaning to the anchor (0.71) · mentions bleu" in text
    assert "coupled.support=3" not in text  # the raw scores are not in the reading line...
    assert any(
        a.get("title") == "coupled.support=3; dense=0.7123" for t, a in seen.tags if t == "div"
    )  # ...but on hover
    # a title or a node id from a source can never inject markup through the sentence
    evil_wf = wf.model_copy(deep=True)
    evil_wf.node("search_kw").label = EVIL
    ev2 = Evidence(nodes=["search_kw"], scores={})
    assert not _Tags(render.results_html([ranked(evidence=ev2)], workflow=evil_wf)).names() & {"script", "img"}


def test_the_list_says_what_a_rerun_changed_and_when_matches_are_weak():
    weak = ranked(evidence=Evidence(nodes=["seed"], scores={"dense": 0.12}))
    gone = Paper(id="x:gone", title="<b>Dropped</b> paper", year=1999)
    out = render.results_html([weak], new_ids=["acl:P02-1040"], removed=[gone], weak=True, about="<x>")
    seen = _Tags(out)
    text = "".join(seen.text)
    assert "These matches are weak" in text and "close to <x>" in text
    assert "1 new" in text and "1 no longer listed" in text and "<b>Dropped</b> paper (1999)" in text
    assert "weak match" in text and "&lt;b&gt;Dropped" in out and "x" not in seen.names()


def test_versions_mark_the_current_one_and_offer_the_others():
    from types import SimpleNamespace

    versions = [SimpleNamespace(version=i, reason=f"r{i}", diff=[f"d{i}"]) for i in (1, 2, 3)]
    seen = _Tags(render.versions_html(versions, current=0))  # after two undos
    items = [a for t, a in seen.tags if t == "li"]
    assert [i.get("data-v") for i in items] == ["3", "2", "1"] and items[2]["class"] == "current"
    assert [a["data-version"] for t, a in seen.tags if t == "button"] == ["3", "2"]


def test_the_workflow_tab_offers_the_picture_in_band_widths_and_lists_the_steps():
    from workflows.templates import template

    wf = template("sibling", "acl:P02-1040")
    html = render.workflow_html(wf, None, selected="score")
    seen = _Tags(html)
    variants = [a for t, a in seen.tags if t == "div" and "dag-variant" in a.get("class", "")]
    assert len(variants) >= 3 and all(int(a["data-w"]) > 0 for a in variants)
    assert sorted(int(a["data-w"]) for a in variants) == [int(a["data-w"]) for a in variants]  # 1, 2, 3… a band
    # the selected step is marked in every variant and in the step list
    assert {a["data-node"] for t, a in seen.tags if t == "g" and "selected" in a.get("class", "")} == {"score"}
    assert "selected" in next(a["class"] for t, a in seen.tags if t == "li" and "selected" in a.get("class", ""))
    listed = [a["data-node"] for t, a in seen.tags if t == "button" and "data-node" in a]
    assert sorted(listed) == sorted(n.id for n in wf.nodes)  # every step, grouped or not, is a click away
    assert {a.get("data-zoom") for t, a in seen.tags if t == "button"} >= {"in", "out", "fit"}
    text = " ".join(seen.text)
    assert "searches in parallel" in text and "Rank" in text and "keyword_search" not in text


def test_an_emptied_list_says_how_to_get_the_papers_back_not_that_there_are_none_yet():
    # "only the ones by X" leaving nothing showed "No results yet." beside a chat that had just listed 50 papers
    assert "No results yet" in render.results_html([])
    wf = Workflow(nodes=[Node(id="f", op="filter", params={"authors": ["Zyxwvut"]})], output="f")
    before = [Paper(id=f"p{i}", title=f"T{i}") for i in range(50)]
    out = render.results_html([], workflow=wf, removed=before)
    assert "No results yet" not in out and "The 50 papers listed before it are not lost" in out and "undo" in out
    assert "This search found no papers" in render.results_html([], workflow=wf)


def test_missing_authors_are_said_once_for_the_list_not_on_every_card():
    listed = [ranked(id=f"s2:{i}", title=f"Paper {i}", authors=[], venue=None) for i in range(3)]
    listed.append(ranked())  # BLEU, with its authors and venue
    markup = render.results_html(listed)
    text = " ".join(_Tags(markup).text)
    assert "not listed" not in text and "unknown" not in text
    assert text.count("no authors for 3") == 1 and "no venue for 3 of these 4 papers" in text
    card = render.card_html(listed[0])
    meta = card.split('class="meta">', 1)[1].split("</div>", 1)[0]
    assert meta == "2002 · 12,000 citations"  # what is known, nothing in place of what is not
    assert "no authors" not in render.results_html([ranked()])  # nothing missing: no note


def test_a_paper_no_index_counted_says_no_count_not_zero():
    """Unknown is not zero (issue 33): a card says "no count", and what the source's links do know."""
    uncounted = "".join(_Tags(render.results_html([ranked(citation_count=None)])).text)
    assert "no count" in uncounted and "0 citations" not in uncounted
    linked = "".join(_Tags(render.results_html([ranked(citation_count=None, in_corpus_citations=12)])).text)
    assert "no count (cited by 12 papers in the source)" in linked
