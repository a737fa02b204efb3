"""The map of a result list (``pilot.ui.resultmap``) explains itself: each year is written once, and a
citation-direction search is drawn by citation links (how many papers on the map cite each) rather than by a
closeness in meaning that says little about why those papers are there."""

from __future__ import annotations

from pilot.models import Evidence, Paper, RankedPaper
from pilot.ui.resultmap import local_citations, result_map, year_ticks

ANCHOR = Paper(id="a", title="The anchor", year=2002, references=[])


def _r(pid: str, year: int, refs: list[str], dense: float = 0.5) -> RankedPaper:
    paper = Paper(id=pid, title=f"paper {pid} about evaluation", year=year, references=refs, citation_count=10)
    return RankedPaper(paper=paper, evidence=Evidence(nodes=["citers"], scores={"dense": dense}))


def test_year_ticks_name_each_year_once_and_stay_few():
    assert year_ticks([2021, 2022, 2022]) == [2021, 2022]  # was "2021, 2022, 2022"
    assert year_ticks([2021]) == [2021]
    assert year_ticks([1993, 2011]) == [1995, 2000, 2005, 2010]
    for years in ([1990, 1991], [2001, 2009], [1950, 2024], [2010, 2013]):
        ticks = year_ticks(years)
        assert len(ticks) == len(set(ticks)) <= 9 and all(isinstance(t, int) for t in ticks)
        assert min(years) <= ticks[0] and ticks[-1] <= max(years)


def test_a_citation_direction_puts_local_citations_on_y():
    results = [_r("b", 2005, ["a"]), _r("c", 2006, ["a", "b"]), _r("d", 2008, ["a", "b", "c"]), _r("e", 2009, ["a"])]
    assert local_citations([r.paper for r in results], ANCHOR) == {"b": 2, "c": 1, "d": 0, "e": 0}
    fig = result_map(results, ANCHOR, direction="successor")
    assert fig.layout.yaxis.title.text == "cited by how many papers on this map"
    assert "local citations" in fig.layout.title.text
    ys = {pid: y for t in fig.data if t.customdata is not None for pid, y in zip(t.customdata, t.y, strict=True)}
    assert round(ys["b"]) == 2 and round(ys["c"]) == 1 and round(ys["d"]) == 0
    assert list(fig.layout.xaxis.tickvals) == [2002, 2003, 2004, 2005, 2006, 2007, 2008, 2009]
    # a search by meaning keeps closeness on y
    similar = result_map(results, ANCHOR, direction="sibling")
    assert similar.layout.yaxis.title.text.startswith("closeness in meaning to the anchor")


def test_without_links_among_them_the_map_says_it_fell_back_to_closeness():
    results = [_r("b", 2005, []), _r("c", 2006, [])]
    fig = result_map(results, ANCHOR, direction="predecessor")
    assert fig.layout.yaxis.title.text.startswith("closeness")
    assert "no citation links among them" in fig.layout.title.text
