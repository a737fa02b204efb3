"""Conversations kept across reloads, in a real browser against ``python app.py`` (issue 30): a reload brings
back a conversation with three workflow versions and an open question, the recent-searches list reopens an
earlier search, tabs of one browser keep their own conversations (a duplicated tab forks), and another visitor
sees none of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browsing import TIMEOUT_MS, chromium, result_ids, say, search, serve_corpus, wait_idle

pytestmark = pytest.mark.browser

TOPIC = "what should I read on machine translation evaluation?"
BLEU_LATER = 'later work that builds on "BLEU: a Method for Automatic Evaluation of Machine Translation"'
PTB_LIKE = 'papers similar to "Building a Large Annotated Corpus of English: The Penn Treebank"'


@pytest.fixture(scope="module")
def app_url(shared: Path, corpus_slice_rows: list[dict], tmp_path_factory):
    # one answer before the results: the next question comes with them, and stays open
    with serve_corpus(
        shared, corpus_slice_rows, tmp_path_factory, "kept", env={"PILOT_QUESTIONS_BEFORE_RESULTS": "1"}
    ) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _options(page) -> list[str]:
    return page.locator("[id^=pilot-option-]:visible").all_inner_texts()


def _apply_filters(page, year: str | None = None, citations: str | None = None) -> None:
    from playwright.sync_api import expect

    wait_idle(page)
    box = page.locator("#pilot-filters")
    if not page.locator("#pilot-f-apply").is_visible():
        box.get_by_text("Filter the results").click()
    wanted = [(s, v) for s, v in (("#pilot-f-year-min input", year), ("#pilot-f-min-cit input", citations)) if v]
    for _ in range(3):  # a redraw still arriving from the last action can reset a field just typed into (a loaded CI)
        for selector, value in wanted:
            field = page.locator(selector)
            expect(field).to_be_editable(timeout=TIMEOUT_MS)
            field.fill(value)
            field.press("Tab")
        if all(page.locator(selector).input_value() == value for selector, value in wanted):
            break
        wait_idle(page)
    before = page.locator("#pilot-chat .message").count()
    page.locator("#pilot-f-apply").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('#pilot-chat .message').length > {before + 1}", timeout=TIMEOUT_MS
    )
    wait_idle(page)


def test_a_reload_restores_three_versions_an_open_question_and_the_filters(app_url, browser):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(app_url)
    expect(page.locator("#pilot-chat")).to_contain_text("anchor paper", timeout=TIMEOUT_MS)
    wait_idle(page)
    say(page, TOPIC)
    while _options(page) and not result_ids(page):  # answer the first question by clicking its first option
        before = page.locator("#pilot-chat .message").count()
        page.locator("#pilot-option-0").click()
        page.wait_for_function(
            f"() => document.querySelectorAll('#pilot-chat .message').length > {before + 1}", timeout=TIMEOUT_MS
        )
        wait_idle(page)
    assert result_ids(page) and _options(page), "the results should come with the next question open"
    _apply_filters(page, year="1995")
    _apply_filters(page, citations="2")
    page.get_by_role("tab", name="Workflow").click()
    expect(page.locator("#pilot-versions li.current")).to_have_attribute("data-v", "3", timeout=TIMEOUT_MS)
    page.get_by_role("tab", name="Results").click()
    before = {
        "chat": page.locator("#pilot-chat").inner_text(),
        "ids": result_ids(page),
        "why": page.locator("#pilot-results .why").all_inner_texts(),
        "options": _options(page),
    }
    assert len(before["options"]) >= 2

    page.reload()
    expect(page.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(page)
    assert page.locator("#pilot-chat").inner_text() == before["chat"]
    assert result_ids(page) == before["ids"]
    assert page.locator("#pilot-results .why").all_inner_texts() == before["why"]  # the evidence too
    assert _options(page) == before["options"]  # the open question, its options as buttons
    expect(page.locator("#pilot-status")).to_contain_text("from the cache", timeout=TIMEOUT_MS)
    page.locator("#pilot-filters").get_by_text("Filter the results").click()
    expect(page.locator("#pilot-f-year-min input")).to_have_value("1995", timeout=TIMEOUT_MS)
    expect(page.locator("#pilot-f-min-cit input")).to_have_value("2")
    page.get_by_role("tab", name="Workflow").click()
    versions = page.locator("#pilot-versions li[data-v]")
    assert versions.evaluate_all("els => els.map(e => e.dataset.v)") == ["3", "2", "1"]
    expect(page.locator("#pilot-versions li.current")).to_have_attribute("data-v", "3")
    # restored, the workflow re-ran from the cache: every step says so
    expect(page.locator("#pilot-dag .dag-steps li.s-cached")).to_have_count(
        page.locator("#pilot-dag .dag-steps li.step").count(), timeout=TIMEOUT_MS
    )
    # and the conversation goes on: the open question is answered by a click
    page.get_by_role("tab", name="Results").click()
    before_n = page.locator("#pilot-chat .message").count()
    page.locator("#pilot-option-0").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('#pilot-chat .message').length > {before_n + 1}", timeout=TIMEOUT_MS
    )
    wait_idle(page)
    assert not errors, errors
    context.close()


def test_recent_searches_reopen_and_tabs_and_visitors_keep_their_own(app_url, browser):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 720})
    a = context.new_page()
    a.goto(app_url)
    expect(a.locator("#pilot-chat")).to_contain_text("anchor paper", timeout=TIMEOUT_MS)
    wait_idle(a)
    first = search(a, BLEU_LATER)
    second = search(a, PTB_LIKE)
    labels = a.locator("#pilot-recent li").all_inner_texts()
    assert "Penn Treebank" in labels[0] and "(on screen)" not in labels[0]  # marked by style, not text
    assert a.locator("#pilot-recent li.current").inner_text().startswith(PTB_LIKE[:20])
    assert "BLEU" in labels[1] and "results" in labels[1]

    # the older search reopens as it was left
    a.locator("#pilot-recent button[data-recent]").filter(has_text="BLEU").click()
    expect(a.locator("#pilot-recent li.current")).to_contain_text("BLEU", timeout=TIMEOUT_MS)
    wait_idle(a)
    assert result_ids(a) == first

    # a second tab of the same browser: its own conversation, the same recent list
    b = context.new_page()
    b.goto(app_url)
    expect(b.locator("#pilot-recent li")).to_have_count(2, timeout=TIMEOUT_MS)
    wait_idle(b)
    assert not result_ids(b)
    third = search(b, "what should I read on word alignment?")
    a.reload()
    expect(a.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(a)
    assert result_ids(a) == first  # tab a still shows its own conversation, not tab b's search
    b.reload()
    expect(b.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(b)
    assert result_ids(b) == third and "word alignment" in b.locator("#pilot-recent li").first.inner_text()

    # a duplicated tab (its sessionStorage copied from tab a) gets a copy; its edits stay its own
    tab_a = a.evaluate("sessionStorage.getItem('pilot-tab')")
    c = context.new_page()
    c.add_init_script(f"sessionStorage.setItem('pilot-tab', {tab_a!r})")
    c.goto(app_url)
    expect(c.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(c)
    assert result_ids(c) == first and c.evaluate("sessionStorage.getItem('pilot-tab')") != tab_a
    say(c, "give me 10")
    assert len(result_ids(c)) == 10
    a.reload()
    expect(a.locator("#pilot-status")).to_contain_text("back as you left it", timeout=TIMEOUT_MS)
    wait_idle(a)
    assert result_ids(a) == first  # the copy's edit did not reach the original
    assert second  # (the second search stays in the list)

    # another visitor (another browser) sees nothing of this
    other = browser.new_context().new_page()
    other.goto(app_url)
    expect(other.locator("#pilot-recent")).to_contain_text("Your searches will be listed here", timeout=TIMEOUT_MS)
    assert not result_ids(other)
    other.context.close()
    context.close()
