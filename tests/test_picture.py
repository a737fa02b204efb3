"""The workflow picture the UI shows (``workflows.picture``): parallel searches folded into one box that opens, the
layers wrapped into bands, labels in words at a size that stays legible, nothing drawn over a box."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from pilot.message import Context, read
from pilot.models import Intent, Paper, RankedPaper
from workflows import templates
from workflows.model import NodeTrace, RunTrace
from workflows.picture import BOX_W, FIT_SCALE_MIN, MIN_FONT, groups, picture, steps_in_order
from workflows.refine import refine

RESULTS = [RankedPaper(paper=Paper(id=f"p{i}", title=f"T{i}")) for i in range(5)]


def _big() -> object:
    """At least 25 steps: the earlier-work template and a "more like #3"."""
    liked = read("more like #3", Context(phase="results", has_results=True, has_search=True, listed=len(RESULTS)))
    assert liked.feedback is not None
    wf = refine(templates.template("predecessor", "acl:P02-1040"), Intent(), liked.feedback, RESULTS).workflow
    assert len(wf.nodes) >= 25
    return wf


class _Svg(HTMLParser):
    def __init__(self, markup: str):
        super().__init__()
        self.rects: list[tuple[float, float, float, float, str]] = []
        self.texts: list[float] = []
        self.paths: list[str] = []
        self._g: str | None = None
        self.feed(markup)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g":
            self._g = a.get("data-node") or a.get("data-group")
        elif tag == "rect" and self._g and a.get("width") == str(BOX_W) and a.get("class") != "stack":
            self.rects.append((float(a["x"]), float(a["y"]), float(a["width"]), float(a["height"]), self._g))
        elif tag == "text":
            self.texts.append(float(a["font-size"]))
        elif tag == "path" and "edge" in a.get("class", ""):
            self.paths.append(a["d"])


def test_the_searches_feeding_one_merge_are_one_box_that_opens():
    wf = _big()
    found = groups(wf)
    assert list(found) == ["merge"]
    members = set(found["merge"])
    assert {"search_kw", "refs", "cocited", "author_refs", "kw"} <= members
    # the anchor feeds more than the merge, the dense search also feeds the graph step: they stay boxes of their own
    assert not members & {"anchor", "search_dense", "merge", "filter"}
    closed = _Svg(picture(wf)[0].svg)
    opened = _Svg(picture(wf, open_groups=["merge"])[0].svg)
    n = len(wf.nodes)
    assert len(closed.rects) == n - len(members) + 1 and len(opened.rects) == n
    topic = templates.topic_search(Intent(topic="word alignment"))
    assert set(groups(topic)["hits"]) == {"kw", "phrases", "search_kw", "search_phrases", "search_dense"}
    assert [g for g, _ in steps_in_order(wf) if g] == ["merge"]


@pytest.mark.parametrize("open_groups", [[], ["merge"]])
def test_every_variant_keeps_labels_legible_and_boxes_apart(open_groups):
    wf = _big()
    variants = picture(wf, RunTrace(nodes=[NodeTrace(node_id="top", op="top_k", status="ok", n_out=50)]),
                       selected="filter", open_groups=open_groups)  # fmt: skip
    assert [v.per_row for v in variants][:3] == [1, 2, 3]
    assert min(MIN_FONT * FIT_SCALE_MIN for _ in variants) >= 11  # the page never shows a variant smaller
    for v in variants:
        drawn = _Svg(v.svg)
        assert min(drawn.texts) >= MIN_FONT
        for i, (x, y, w, h, a) in enumerate(drawn.rects):  # no two boxes overlap
            for x2, y2, w2, h2, b in drawn.rects[i + 1 :]:
                assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, (v.per_row, a, b)
            assert x >= 0 and x + w <= v.width and y >= 0 and y + h <= v.height
        for d in drawn.paths:  # every line stays inside the picture
            xs = [float(n) for n in re.findall(r"[-\d.]+", d)[0::2]]
            assert min(xs) >= 0 and max(xs) <= v.width, (v.per_row, d)
    # wider bands: fewer and shorter
    assert variants[1].height < variants[0].height and variants[2].width > variants[1].width


def test_a_25_step_plan_fits_a_wide_panel_at_full_size():
    """At 1280 x 720 the picture gets ~460 px beside its step list: two layers a band fit it unscaled."""
    two = next(v for v in picture(_big()) if v.per_row == 2)
    assert two.width <= 460


def test_labels_are_words_and_escaped():
    wf = _big()
    wf.node("filter").label = "<script>alert(1)</script>"
    svg = picture(wf)[1].svg
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "top_k" not in re.sub(r"<title>.*?</title>", "", svg, flags=re.S)  # operator names only on hover
    assert "Keep the best 50" in svg and "searches in" in svg
