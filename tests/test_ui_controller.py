"""The UI's actions over a real ``Session`` on the corpus slice (no browser): what the user sees after
each click, that a bad edit explains itself and loses nothing, and that sessions never share state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pilot import export
from pilot.ui.controller import NO_SOURCE_HELP, Controller
from tests import bibparse

REQUEST = 'Find papers around "BLEU: a Method for Automatic Evaluation of Machine Translation"'


@pytest.fixture(scope="module")
def controller(local_source):
    from pilot.runtime import Runtime

    return Controller(Runtime.for_source(local_source))


async def _searched(controller: Controller):
    ui = controller.new_state()
    await controller.send(ui, REQUEST)
    assert ui.question is not None, ui.chat
    later = next(i for i, o in enumerate(ui.question.options) if o.label.startswith("Later work"))
    await controller.choose(ui, later)
    if not ui.results:
        await controller.search_now(ui)
    assert ui.results and ui.workflow is not None, ui.chat[-1]
    return ui


async def test_without_a_source_the_chat_says_what_to_set():
    c = Controller(None)
    ui = c.new_state()
    assert "PILOT_CORPUS" in ui.chat[0]["content"]
    await c.send(ui, "papers citing BLEU")
    assert ui.chat[-1]["content"] == NO_SOURCE_HELP and ui.results == []


async def test_search_then_bad_edits_keep_the_text_and_the_workflow(controller):
    ui = await _searched(controller)
    assert ui.chat[-1]["role"] == "assistant" and "Found" in ui.chat[-1]["content"]
    versions = len(ui.session.versions)
    controller.select_node(ui, "filter")
    assert json.loads(ui.params_text) == ui.workflow.node("filter").params
    assert "year_min" in controller.node_help(ui)

    for bad, says in [("{oops", "not valid JSON"), ('{"year_min": "soon"}', "year_min"), ('{"colour": 1}', "colour"),
                      ('{"year_min": 2010, "year_max": 2001}', "after year_max"), ("[1]", "JSON object")]:  # fmt: skip
        await controller.apply_params(ui, bad)
        assert says in ui.edit_message and "Nothing was changed" in ui.edit_message, ui.edit_message
        assert ui.params_text == bad  # the user's text survives
        assert len(ui.session.versions) == versions

    params = {**ui.workflow.node("filter").params, "year_min": 2009}
    await controller.apply_params(ui, json.dumps(params))
    assert ui.edit_message.startswith("Done"), ui.edit_message
    assert len(ui.session.versions) == versions + 1
    assert ui.results and all((r.paper.year or 0) >= 2009 for r in ui.results)
    assert ui.trace is not None and any(t.status == "cached" for t in ui.trace.nodes)  # only what changed re-ran

    await controller.undo(ui)
    assert ui.workflow.node("filter").params.get("year_min") != 2009

    # thumbs down on the top paper: the session refines and the paper leaves the list
    top = ui.results[0].paper.id
    await controller.rate(ui, top, up=False)
    assert ui.ratings[top] is False and top not in [r.paper.id for r in ui.results]
    await controller.rate(ui, "not-in-the-list", up=True)
    assert "Pick a paper" in ui.chat[-1]["content"]


async def test_add_remove_run_node_and_exports(controller, tmp_path):
    ui = await _searched(controller)
    controller.select_node(ui, "filter")
    await controller.add_node(ui, "top_k")
    assert ui.edit_message.startswith("Done"), ui.edit_message
    added = ui.selected
    assert added.startswith("top_k") and ui.workflow.has_node(added)
    await controller.remove_node(ui)
    assert not ui.workflow.has_node(added) and ui.edit_message.startswith("Done")

    # "Step" walks the DAG in execution order, one node at a time, each shown in the inspector
    from workflows.graph import topo_order

    walked = []
    for _ in ui.workflow.nodes:
        await controller.step(ui)
        assert ui.node_run is not None and ui.node_run.node_id == ui.selected and ui.node_run.status in ("ok", "cached")
        walked.append(ui.selected)
    order = topo_order(ui.workflow)
    assert sorted(walked) == sorted(order)
    for i, node_id in enumerate(walked):  # every step's inputs were produced by earlier steps
        assert {e.source for e in ui.workflow.inputs_of(node_id)} <= set(walked[:i])
    assert ui.edit_message.startswith(f"Step {len(order)} of {len(order)}")
    await controller.step(ui)
    assert "All" in ui.edit_message and ui.stepped == []

    # "Run all" runs the same version again from the cache: same list, no new version in the history
    versions, ids_before = len(ui.session.versions), [r.paper.id for r in ui.results]
    await controller.run_all(ui)
    assert ui.edit_message.startswith("Done") and len(ui.session.versions) == versions
    assert [r.paper.id for r in ui.results] == ids_before
    assert ui.trace is not None and all(t.status == "cached" for t in ui.trace.nodes)

    await controller.add_node(ui, "no_such_op")
    assert "unknown" in ui.edit_message

    controller.select_node(ui, "filter")
    await controller.run_node(ui)
    assert ui.node_run is not None and ui.node_run.node_id == "filter" and ui.node_run.n_out > 0

    ids = [r.paper.id for r in ui.results]
    controller.keep(ui, [ids[2], ids[0], "not-a-result"])
    files = controller.export_files(ui)
    kept = bibparse.parse(Path(files["library_bibtex"]).read_text(encoding="utf-8"))
    assert [e["note"].split(": ", 1)[1] for e in kept] == [ids[2], ids[0]]  # the library, in the order kept
    assert ui.library_changed  # the browser's copy is rewritten after this action
    results_bib = bibparse.parse(Path(files["bibtex"]).read_text(encoding="utf-8"))
    assert len(results_bib) == len(ids)  # "export these results" is the whole list, kept or not
    controller.keep(ui, [ids[1]])  # unticking replaces the selection among this list's papers
    assert ui.kept_ids == [ids[1]]
    controller.keep(ui, [])
    assert controller.export_files(ui)["library_bibtex"] is None and len(ui.library) == 0

    # the recipe loads back into a fresh session and reproduces the list
    recipe = tmp_path / "wf.json"
    recipe.write_text(Path(files["workflow"]).read_text(encoding="utf-8"), encoding="utf-8")
    other = controller.new_state()
    await controller.load_workflow(other, str(recipe))
    assert [r.paper.id for r in other.results] == [r.paper.id for r in ui.results]
    assert other.session is not ui.session and other.kept_ids == []

    broken = tmp_path / "broken.json"
    broken.write_text("{nope", encoding="utf-8")
    await controller.load_workflow(other, str(broken))
    assert "not valid JSON" in other.edit_message and other.results  # the loaded list is still there
    assert isinstance(export.load_recipe(recipe.read_text()), type(ui.workflow))


async def test_the_papers_of_an_answer_can_be_kept_and_exported(controller):
    """ "Which papers did X publish at Y?" is answered with citations, and the cited papers form a list
    that exports to BibTeX like any search result."""
    ui = controller.new_state()
    await controller.send(ui, "papers by Christopher D. Manning at ACL between 2005 and 2010")
    answer = ui.answer
    assert answer is not None and answer.reference, ui.chat[-1]
    cited = set(answer.reference.values())
    assert ui.results and all(r.paper.canonical_url in cited for r in ui.results)
    assert ui.results[0].evidence.reason.startswith("cited as [")
    from pilot.venues import at_venue

    assert all(2005 <= (r.paper.year or 0) <= 2010 and at_venue(r.paper, "ACL") for r in ui.results)
    entries = bibparse.parse(Path(controller.export_files(ui)["bibtex"]).read_text(encoding="utf-8"))
    assert [e["note"].split(": ", 1)[1] for e in entries] == [r.paper.id for r in ui.results]
    # rating is for paper searches; it says so instead of editing the question's plan
    await controller.rate(ui, ui.results[0].paper.id, up=False)
    assert "Ratings refine a paper search" in ui.chat[-1]["content"] and ui.results


async def test_the_clear_button_starts_a_fresh_conversation(controller):
    """After the trash button, a message that would have been feedback ("only after 2009") is read in a fresh
    session: there is nothing to narrow, so it is not applied to the search the user can no longer see."""
    ui = await _searched(controller)
    assert ui.session.versions
    kept = ui.results[0].paper.id
    controller.toggle_keep(ui, kept)
    controller.clear(ui)
    assert [m["role"] for m in ui.chat] == ["assistant"] and ui.results == [] and ui.workflow is None
    assert [p.id for p in ui.library.papers()] == [kept]  # the library is the user's, not the conversation's
    await controller.send(ui, "only after 2009")
    assert ui.workflow is None and ui.results == []
    assert ui.session.last_message.kind == "unclear" and "name a paper or a topic" in ui.chat[-1]["content"].lower()


async def test_the_workspace_library_filters_versions_map_and_citation(controller):
    """What a researcher does around a result list: keep papers from two searches (the library outlives
    both and a reload), filter by year (a new version with its diff, and the list says what changed),
    go back to an earlier version, open a card from the map, copy a citation."""
    ui = await _searched(controller)
    first = ui.results[0].paper.id
    controller.toggle_keep(ui, first)
    await controller.send(ui, 'papers similar to "Building a Large Annotated Corpus of English: The Penn Treebank"')
    if ui.question is not None:
        await controller.search_now(ui)
    assert ui.session.anchor.id == "acl:J93-2004" and ui.results
    second = ui.results[0].paper.id
    controller.toggle_keep(ui, second)
    assert [p.id for p in ui.library.papers()] == [first, second] and len(ui.library.searches()) == 2
    reloaded = controller.restore_library(controller.new_state(), ui.library.dump())
    assert [p.id for p in reloaded.library.papers()] == [first, second]

    versions, before = len(ui.session.versions), [r.paper.id for r in ui.results]
    await controller.apply_filters(ui, 2000, None, [], [], None)
    assert len(ui.session.versions) == versions + 1
    assert any("year_min" in line for line in ui.session.versions[-1].diff), ui.session.versions[-1].diff
    after = [r.paper.id for r in ui.results]
    assert after != before and all((r.paper.year or 0) >= 2000 for r in ui.results)
    assert set(ui.new_ids) == set(after) - set(before) and {p.id for p in ui.removed} == set(before) - set(after)
    assert controller.filter_choices(ui)["active"].year_min == 2000
    await controller.apply_filters(ui, 2000, None, [], [], None)  # the same filters again: nothing to do
    assert len(ui.session.versions) == versions + 1
    await controller.apply_filters(ui, 2010, 2001, [], [], None)
    assert "empty" in ui.chat[-1]["content"] and len(ui.session.versions) == versions + 1

    await controller.goto_version(ui, f"v{versions}")
    assert ui.session.current_version == versions - 1 and [r.paper.id for r in ui.results] == before
    assert "current" in render_versions(ui)

    fig = controller.map_figure(ui)
    placed = {pid for trace in fig.data for pid in (trace.customdata or [])}
    assert set(before) <= placed and ui.session.anchor.id in placed
    assert any(trace.name == "the anchor" and trace.marker.symbol == "star" for trace in fig.data)
    controller.map_pick(ui, before[3])
    assert ui.results[3].paper.title in controller.map_card(ui)
    controller.cite(ui, before[3])
    assert ui.citation[0] == before[3] and f"({ui.results[3].paper.year})" in ui.citation[1]


def render_versions(ui) -> str:
    from pilot.ui import render

    return render.versions_html(ui.session.versions, ui.session.current_version)


def test_the_welcome_has_no_configuration_but_the_status_line_does(controller):
    from pilot.settings import Settings
    from pilot.ui.app import make_controller

    assert "PILOT_" not in controller.welcome() and "LLM" not in controller.welcome()
    assert controller.about().startswith("Status: Sources:") and "no LLM" in controller.about()
    nothing = make_controller(Settings(sources="local"))  # no corpus, no network: the chat says what to set
    assert "PILOT_CORPUS" in nothing.welcome() and "PILOT_LLM_MODEL" not in nothing.welcome()


async def test_the_list_on_screen_answers_why_keeps_and_exports_from_the_chat(controller):
    """Typed in the chat about the numbered list: "why is #2 here?" tells that paper's card, "save #1 and #3"
    puts them in the library, "export as BibTeX" says where the exports are — and the list stays as it was."""
    ui = await _searched(controller)
    listed = [r.paper.id for r in ui.results]
    versions = len(ui.session.versions)
    await controller.send(ui, "why is #2 here?")
    card = ui.chat[-1]["content"]
    assert ui.results[1].paper.title in card and "Why it is here:" in card
    await controller.send(ui, "save #1 and #3")
    assert listed[0] in ui.library and listed[2] in ui.library and listed[1] not in ui.library
    await controller.send(ui, "export as bibtex")
    assert "BibTeX" in ui.chat[-1]["content"]
    await controller.send(ui, f"tell me more about #{len(listed) + 5}")
    assert f"There is no result #{len(listed) + 5}" in ui.chat[-1]["content"]
    assert [r.paper.id for r in ui.results] == listed and len(ui.session.versions) == versions


async def test_a_change_that_leaves_nothing_says_the_papers_are_not_lost(controller):
    # "only the ones by zyxwvut": the panel said "No results yet." beside a chat that had just listed them
    from pilot.ui import render

    ui = await _searched(controller)
    before = [r.paper.id for r in ui.results]
    await controller.send(ui, "only the ones by zyxwvut")
    assert ui.results == [] and [p.id for p in ui.removed] == before
    panel = render.results_html(ui.results, workflow=ui.workflow, removed=ui.removed)
    assert f"The {len(before)} papers listed before it are not lost" in panel
    await controller.send(ui, "undo")
    assert [r.paper.id for r in ui.results] == before


async def test_what_the_chat_left_out_is_shown_by_the_filters_kept_by_them_and_cleared_with_them(controller):
    ui = await _searched(controller)
    await controller.send(ui, "not from the 2000s")
    await controller.send(ui, "newest first")
    choices = controller.filter_choices(ui)
    assert choices["active"].exclude_years == [(2000, 2009)]
    assert "leaving out 2000–2009" in choices["also"] and "Shown newest first" in choices["also"]
    # the form's own controls applied: the chat's constraint stays (it was silently kept, and never shown)
    await controller.apply_filters(ui, None, 2015, [], [], None)
    assert all(not 2000 <= (r.paper.year or 0) <= 2009 for r in ui.results) and ui.results
    assert controller.filter_choices(ui)["active"].exclude_years == [(2000, 2009)]
    # "Clear filters" clears it too (it stayed: nothing in the form could remove it)
    await controller.clear_filters(ui)
    active = controller.filter_choices(ui)["active"]
    assert active == type(active)() and ui.session.intent.exclude_years == []
    assert "leaving out" not in controller.filter_choices(ui)["also"]


async def test_the_library_and_the_last_change_are_answered_in_the_chat(controller):
    ui = await _searched(controller)
    await controller.send(ui, "what's in my library?")  # was a topic search for "my library"
    assert ui.chat[-1]["content"].startswith("Your library is empty")
    await controller.send(ui, "keep #1 and #3 for later")  # ("keep #1 and #3" alone narrows the list to them)
    first, third = ui.results[0].paper, ui.results[2].paper
    assert ui.library.ids == {first.id, third.id}
    await controller.send(ui, "how many papers are in my library?")
    assert ui.chat[-1]["content"] == "Your library holds 2 papers, kept from 1 search."
    await controller.send(ui, "show my library")
    assert f"1. “{first.title[:40]}" in ui.chat[-1]["content"] and "2. “" in ui.chat[-1]["content"]
    await controller.send(ui, "remove #3 from my library")  # was a search
    assert ui.library.ids == {first.id} and "Removed #3" in ui.chat[-1]["content"]
    await controller.send(ui, "clear my library")  # asks first: a careless line must not wipe it
    assert ui.library.ids == {first.id} and "yes, clear my library" in ui.chat[-1]["content"]
    await controller.send(ui, "yes, clear my library")
    assert len(ui.library) == 0 and ui.library_changed
    await controller.send(ui, "what changed?")  # was a topic search for "changed"
    assert "first version" in ui.chat[-1]["content"]
    await controller.send(ui, "only after 2005")
    await controller.send(ui, "which ones are new?")
    said = ui.chat[-1]["content"]
    assert said.startswith(f"Version {len(ui.session.versions)} (") and "only papers from 2006 on" in said
    assert (f"{len(ui.new_ids)} paper" in said) if ui.new_ids or ui.removed else "left it" not in said


async def test_the_search_is_named_by_the_subject_read_not_by_the_whole_message(controller):
    # the weak-matches banner and the results panel say what was searched: a story before the subject is not it
    ui = controller.new_state()
    await controller.send(ui, "hi, second year student here, my thesis is on dependency parsing, what should I read")
    assert controller.about_search(ui) == "“dependency parsing”"
