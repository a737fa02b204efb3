"""A screen in the researcher's language, in a real browser against ``python app.py`` (issue 30): a 25-step
workflow readable at "fit" (every label >= 11 px at 1280×720 and at 390×844), its group box opening and its steps
opening their forms; changes and "found by" lines in words with the operator names under "details"; a map whose
years are written once and whose clicked card is in view; no request to any outside host and no web font;
missing authors said once; the start-up's progress on the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import bibparse
from tests.browsing import (
    TIMEOUT_MS,
    chromium,
    download,
    outside_requests,
    say,
    search,
    serve_corpus,
    wait_idle,
)

pytestmark = pytest.mark.browser

BLEU = "BLEU: a Method for Automatic Evaluation of Machine Translation"
NOBODY = "test:no-authors"  # cites BLEU; the source gives no authors and no venue
LABEL_SIZES = """() => {
  const v = [...document.querySelectorAll('#pilot-dag .dag-variant')].find((d) => !d.hidden);
  const svg = v.querySelector('svg');
  const k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * k);
  return {min: Math.min(...sizes), labels: sizes.length, boxes: svg.querySelectorAll('g.node, g.group').length};
}"""

# the earlier-work template with "more like #3": 26 steps since it reads what the anchor's abstract names
STEPS = 26


@pytest.fixture(scope="module")
def served(shared: Path, corpus_slice_rows: list[dict], tmp_path_factory):
    bleu = next(r for r in corpus_slice_rows if r["id"] == "acl:P02-1040")
    nobody = {
        "id": NOBODY, "title": "Revisiting BLEU for translation evaluation", "year": 2010, "venue": None,
        "abstract": "We revisit BLEU, the n-gram precision metric for machine translation evaluation.",
        "authors": [], "references": ["acl:P02-1040"], "citation_count": 900, "in_corpus_citations": 0,
        "external_ids": {}, "url": None, "source": "test",
    }  # fmt: skip
    rows = corpus_slice_rows + [nobody]  # it borrows BLEU's vector: the tests are about what the page shows
    ids = [r["id"] for r in corpus_slice_rows] + [bleu["id"]]
    with serve_corpus(shared, rows, tmp_path_factory, "readable", vector_ids=ids) as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _open(browser, url: str, size: tuple[int, int] = (1280, 720)):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, accept_downloads=True)
    page = context.new_page()
    blocked = outside_requests(page)
    page.goto(url)
    expect(page.locator("#pilot-chat")).to_contain_text("anchor paper", timeout=TIMEOUT_MS)
    wait_idle(page)
    return context, page, blocked


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)])
def test_a_25_step_workflow_is_legible_at_fit_and_its_steps_open_their_forms(served, browser, size):
    from playwright.sync_api import expect

    context, page, _ = _open(browser, served[0], size)
    search(page, f'papers that came before "{BLEU}"')
    say(page, "more like #3")
    page.get_by_role("tab", name="Workflow").click()
    expect(page.locator("#pilot-dag .dag-steps li.step")).to_have_count(STEPS, timeout=TIMEOUT_MS)  # at least 25 steps
    page.wait_for_timeout(500)
    closed = page.evaluate(LABEL_SIZES)
    assert closed["min"] >= 11, closed  # at "fit", as the page first shows it
    assert closed["boxes"] < STEPS  # the parallel searches are one box
    page.locator("#pilot-dag [data-zoom=in]").click()
    page.locator("#pilot-dag [data-zoom=fit]").click()
    assert page.evaluate(LABEL_SIZES)["min"] >= 11
    # the group box opens: every step drawn, still legible
    page.locator("#pilot-dag .dag-variant:not([hidden]) g[data-group]").click()
    expect(page.locator("#pilot-dag .dag-variant:not([hidden]) g.node")).to_have_count(STEPS, timeout=TIMEOUT_MS)
    wait_idle(page)
    opened = page.evaluate(LABEL_SIZES)
    assert opened["min"] >= 11 and opened["boxes"] == STEPS, opened
    # a click on a step, in the picture or in the list, opens its form
    page.locator('#pilot-dag .dag-variant:not([hidden]) g[data-node="top"]').click()
    expect(page.locator('#pilot-params-form input[name="k"]')).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    page.locator('#pilot-dag .dag-steps button[data-node="filter"]').click()
    expect(page.locator('#pilot-params-form input[name="year_max"]')).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#pilot-dag .dag-steps li.selected")).to_contain_text("Filter")
    context.close()


def test_changes_and_found_by_lines_are_in_words_with_details_a_click_away(served, browser):
    from playwright.sync_api import expect

    context, page, _ = _open(browser, served[0])
    search(page, f'later work that builds on "{BLEU}"')
    found = page.locator("#pilot-results .nodes .found").first.inner_text()
    assert found.startswith("found by ") and "citers" not in found and "_" not in found, found
    details = page.locator("#pilot-results .nodes details").first
    details.locator("summary").click()
    expect(details).to_contain_text("citation_expand")  # the step ids and operators, one click away
    say(page, "recent work please")
    last = page.locator("#pilot-chat .message").last
    expect(last).to_contain_text("What changed: Now favouring recent work")
    assert "features" not in last.inner_text().split("details")[0]
    last.locator("details summary").click()
    expect(last.locator("details")).to_contain_text("features.recency")
    page.get_by_role("tab", name="Workflow").click()
    expect(page.locator("#pilot-versions li.current .changes")).to_contain_text("Now favouring recent work")
    context.close()


def test_the_map_writes_each_year_once_and_shows_the_clicked_card_in_view(served, browser):
    from playwright.sync_api import expect

    context, page, _ = _open(browser, served[0])
    search(page, f'later work that builds on "{BLEU}"')
    page.get_by_role("tab", name="Map").click()
    points = page.locator("#pilot-map .scatterlayer .trace .point")
    expect(points.first).to_be_visible(timeout=TIMEOUT_MS)
    ticks = page.locator("#pilot-map .xtick text").all_text_contents()
    assert ticks and len(ticks) == len(set(ticks)) and all(t.isdigit() for t in ticks), ticks
    # a citation direction: the height is the local citation count
    assert page.locator("#pilot-map .ytitle").text_content() == "cited by how many papers on this map"
    box = points.nth(points.count() // 2).bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    card = page.locator("#pilot-map-card [data-paper-id]")
    expect(card).to_have_count(1, timeout=TIMEOUT_MS)
    wait_idle(page)
    placed = card.bounding_box()
    assert placed["y"] >= 0 and placed["y"] + 40 <= 720, placed  # beside the map, in view without scrolling
    context.close()


def test_the_page_loads_nothing_from_outside_and_uses_the_system_fonts(served, browser):
    from playwright.sync_api import expect

    context, page, blocked = _open(browser, served[0])
    search(page, f'later work that builds on "{BLEU}"')
    for tab in ("Map", "Library", "Workflow", "Results"):
        page.get_by_role("tab", name=tab).click()
        page.wait_for_timeout(700)
    expect(page.locator("#pilot-map .scatterlayer .trace .point").first).to_be_attached()
    assert blocked == [], blocked
    fonts = page.evaluate(
        "() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /\\.(woff2?|ttf|otf)/.test(n))"
    )
    assert fonts == [], fonts  # no web font, local or remote: the system's own
    families = page.evaluate(
        "() => ['.gradio-container', '#pilot-chat .message', '#pilot-results .title', '#pilot-input textarea']"
        ".map((s) => getComputedStyle(document.querySelector(s)).fontFamily)"
    )
    assert all(f.startswith("system-ui") for f in families), families
    context.close()


def test_missing_authors_are_said_once_and_not_invented_in_the_export(served, browser):
    context, page, _ = _open(browser, served[0])
    ids = search(page, f'later work that builds on "{BLEU}"')
    assert NOBODY in ids
    card = page.locator(f'#pilot-results li[data-paper-id="{NOBODY}"]')
    meta = card.locator(".meta").inner_text()
    assert meta.startswith("2010") and "not listed" not in meta and "unknown" not in meta, meta
    assert "not listed" not in page.locator("#pilot-results").inner_text()
    assert page.locator("#pilot-results .pilot-missing").count() == 1
    assert "no authors for" in page.locator("#pilot-results .pilot-missing").inner_text()
    entry = next(e for e in bibparse.parse(download(page, "#pilot-dl-bib")) if e["note"].endswith(NOBODY))
    assert entry["ID"] == "revisiting2010bleu" and "author" not in entry and "booktitle" not in entry
    context.close()


def test_the_terminal_said_how_the_first_start_built_its_index(served):
    import time

    deadline = time.monotonic() + TIMEOUT_MS / 1000  # the page serves before the build is done
    while "index is built" not in (log := served[1].read_text(errors="replace")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert "pilot: building the search index, step 1 of 4: reading the corpus" in log
    assert "step 2 of 4: building the keyword index" in log
    assert "pilot: the search index is built" in log and "later starts reuse it" in log
