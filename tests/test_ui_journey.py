"""The researcher's journey of issue 30 in a real browser at 1280×720 and at 390×844 (``tests/journey.py``): two
searches, a refinement said in words, a reload that loses nothing, the first search reopened from the recent
list as it was left, a step of the workflow picture edited through its form, the map's card in view, an export
that parses back. The screenshots go to ``artifacts/journey/<size>/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import journey
from tests.browsing import ROOT, chromium, serve_corpus

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app_url(shared: Path, corpus_slice_rows: list[dict], tmp_path_factory):
    with serve_corpus(shared, corpus_slice_rows, tmp_path_factory, "journey") as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.mark.parametrize("size", list(journey.SIZES))
def test_a_researchers_day_at_desktop_and_phone_size(app_url, browser, size):
    w, h = journey.SIZES[size]
    context = browser.new_context(viewport={"width": w, "height": h}, accept_downloads=True)
    errors: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        j = journey.run(page, app_url, ROOT / "artifacts" / "journey" / size)
    finally:
        context.close()
    assert "What changed: Only papers from 2006 on" in j.changed and "year_min" not in j.changed.split("details")[0]
    assert j.first and j.second and j.first != j.second
    assert j.reopened == j.first  # reopened as it was left: refined, same order
    assert len(j.edited) == 12 and j.edited == j.first[:12]  # the edited step keeps the best 12
    keys = [e["ID"] for e in j.bibtex]
    assert len(keys) == 12 == len(set(keys)) and not [k for k in keys if k.startswith("anon")]
    assert [e["note"].removeprefix("pilot id: ") for e in j.bibtex] == j.edited
    assert len(j.shots) == 12 and all(p.stat().st_size > 10_000 for p in j.shots)
    assert not errors, errors
