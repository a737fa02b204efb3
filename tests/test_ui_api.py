"""Every UI action can be scripted: the served app exposes each one under a stable ``api_name``, and a
``gradio_client`` session drives a whole search (request, search now, keep, filter, cite, export) with
the same results a browser would show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.ui.controller import Controller
from tests.serving import served_app

DOCUMENTED = {
    "/open_page", "/send", "/choose_0", "/search_now", "/rate_up", "/rate_down", "/keep", "/keep_all",
    "/toggle_keep", "/remove_from_library", "/cite", "/filter_results", "/clear_filters", "/library_scope",
    "/show_card", "/select_node", "/edit_node", "/edit_node_form", "/add_node", "/remove_node", "/undo", "/step",
    "/run_node", "/run_all", "/load_workflow", "/goto_version", "/clear_chat", "/reopen",
}  # fmt: skip


@pytest.fixture(scope="module")
def served(local_source, tmp_path_factory):
    settings = Settings(ui_concurrency=2, cache_dir=tmp_path_factory.mktemp("ui-api-cache"))
    with served_app(settings, Controller(Runtime.for_source(local_source))) as demo:
        yield demo.local_url


def _html(outputs: tuple, elem: str) -> str:
    """The HTML panel whose markup carries ``elem`` (e.g. the results list's class)."""
    return next(o for o in outputs if isinstance(o, str) and elem in o)


def _ids(outputs: tuple) -> list[str]:
    return re.findall(r'<li class="card" data-paper-id="([^"]+)"', _html(outputs, 'class="pilot-results"'))


def test_every_action_has_a_stable_api_name(served):
    from gradio_client import Client

    api = Client(served, verbose=False).view_api(return_format="dict", print_info=False)
    names = set(api["named_endpoints"])
    assert names >= DOCUMENTED, DOCUMENTED - names


def test_a_scripted_search_keeps_filters_cites_and_exports(served):
    from gradio_client import Client

    c = Client(served, verbose=False)
    c.predict('later work that builds on "BLEU: a Method for Automatic Evaluation of Machine Translation"',
              api_name="/send")  # fmt: skip
    out = c.predict(api_name="/search_now")
    ids = _ids(out)
    assert len(ids) >= 10
    out = c.predict(ids[1], api_name="/toggle_keep")
    assert f'data-paper-id="{ids[1]}"' in _html(out, "pilot-library")
    out = c.predict(ids[1], api_name="/cite")
    assert "cite-box" in _html(out, 'class="pilot-results"')
    out = c.predict(2008, None, [], [], None, api_name="/filter_results")
    after = _ids(out)
    assert after and after != ids
    assert "filters: years from 2008" in _html(out, "pilot-versions")
    files = [o["value"] for o in out if isinstance(o, dict) and str(o.get("value") or "").endswith((".bib", ".json"))]
    library_csl = next(Path(f) for f in files if Path(f).name == "pilot-library.json")
    assert [i["note"] for i in json.loads(library_csl.read_text())] == [f"pilot id: {ids[1]}"]
