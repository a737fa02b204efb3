"""The Gradio Blocks: components and event wiring, nothing else.

Every event runs one ``Controller`` action on the per-browser ``UIState`` (a ``gr.State``) and then
redraws all panels from that state with ``_view`` — one place decides what the screen shows. The
library also lives in the browser (``gr.BrowserState``): it is read once when the page loads and
written back only by the actions that change it.

Every action has a stable ``api_name`` (see the README's "Scripting the app"); clicks inside the HTML
panels (a card's buttons, a DAG node, a version, a map marker, the params form) carry their data in
the event and have an API twin that takes the same data as plain inputs.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import gradio as gr

from pilot.ui import render
from pilot.ui.controller import Controller, UIState, short_error
from pilot.ui.paramform import FORM_JS
from pilot.ui.worker import Workers
from workflows.registry import all_operators

log = logging.getLogger(__name__)

MAX_OPTIONS = 5
LIBRARY_KEY = "pilot-library"
VISITOR_KEY = "pilot-visitor"
PAPER_TYPES = [
    ("surveys", "survey"),
    ("datasets & benchmarks", "resource"),
    ("methods", "method"),
    ("position papers", "position"),
]

CSS = (
    render.CSS
    + """
#pilot-options button { white-space: normal; }
#pilot-map-box { width: 100%; }
"""
)

# The machine's own fonts only: a theme font is a file the page must fetch (Gradio's default serves one, older
# releases fetched Google Fonts), and a page that cannot fetch it draws some letters in a fallback glyph.
SYSTEM_FONTS = (
    "system-ui", "-apple-system", "Segoe UI", "Roboto", "Noto Sans", "Liberation Sans", "Arial", "sans-serif",
)  # fmt: skip
SYSTEM_MONO = ("ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", "monospace")


def theme() -> gr.themes.Base:
    """Gradio's default look with the system font stack: nothing to download, the same on and off line."""
    return gr.themes.Default(font=list(SYSTEM_FONTS), font_mono=list(SYSTEM_MONO))


def _operator_choices() -> list[tuple[str, str]]:
    return [(f"{name} — {cls.description}"[:90], name) for name, cls in sorted(all_operators().items())]


# Threads the actions of all visitors run on. A search waits for one of the runtime's search slots
# (``pilot.gate``, PILOT_UI_CONCURRENCY) on its thread, so threads are many: a greeting, a click on the library,
# the clear button find a free one while searches queue, and never wait behind another visitor's search.
ACTION_THREADS = 48
# Gradio's copies of the files it served: removed hourly once an hour old, and all of them when the server stops
DELETE_CACHE = (3600, 3600)


def build_ui(controller: Controller, storage_secret: str | None = None, threads: int = ACTION_THREADS) -> gr.Blocks:
    """``storage_secret``: what the browser-stored library is sealed with; keep it stable across restarts
    (``pilot.ui.app`` keeps one in the cache directory) or libraries saved before a restart are not read.
    ``threads``: actions of different visitors that may run at once (one visitor's run in order)."""
    workers = Workers(threads)
    with gr.Blocks(title="pilot — literature search", delete_cache=DELETE_CACHE, analytics_enabled=False) as demo:
        # a callable initial value: Gradio calls it once per browser session, so nobody shares a UIState
        state = gr.State(
            lambda: controller.new_state(), delete_callback=lambda ui: ui.close() if isinstance(ui, UIState) else None
        )
        library_store = gr.BrowserState(None, storage_key=LIBRARY_KEY, secret=storage_secret)
        # the visitor's token for the kept conversations (pilot.ui.conversations), sealed like the library
        visitor_store = gr.BrowserState(None, storage_key=VISITOR_KEY, secret=storage_secret)
        with gr.Row(equal_height=False):
            gr.Markdown("## pilot — find papers around a paper or a topic")
            about = gr.Markdown(controller.about(), elem_id="pilot-about", elem_classes=["pilot-about"])
        # while the sources open (a first start builds the search index), the status line says how far it is
        start_clock = gr.Timer(1.0, active=controller.is_starting)
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=360):
                chatbot = gr.Chatbot(
                    value=[{"role": "assistant", "content": render.chat_text(controller.welcome())}],
                    label="Chat",
                    height=460,
                    elem_id="pilot-chat",
                )
                with gr.Row(elem_id="pilot-options"):
                    options = [
                        gr.Button(visible=False, size="sm", elem_id=f"pilot-option-{i}") for i in range(MAX_OPTIONS)
                    ]
                with gr.Row():
                    text = gr.Textbox(
                        placeholder="Name a paper or a topic and what you need, or answer the question…",
                        show_label=False,
                        scale=5,
                        elem_id="pilot-input",
                    )
                    send = gr.Button("Send", variant="primary", scale=1, elem_id="pilot-send")
                search_now = gr.Button("Search now", elem_id="pilot-search-now")
                with gr.Accordion("Recent searches", open=True, elem_id="pilot-recent-box"):
                    recent = gr.HTML(render.recent_html([]), elem_id="pilot-recent", js_on_load=render.RECENT_JS)
            with gr.Column(scale=7, min_width=480), gr.Tabs(elem_id="pilot-tabs"):
                with gr.Tab("Results", id="results", elem_id="pilot-tab-results"):
                    status = gr.Markdown("", elem_id="pilot-status")
                    with gr.Accordion("Filter the results", open=False, elem_id="pilot-filters"):
                        with gr.Row():
                            f_year_min = gr.Number(label="from year", precision=0, elem_id="pilot-f-year-min")
                            f_year_max = gr.Number(label="to year", precision=0, elem_id="pilot-f-year-max")
                            f_min_cit = gr.Number(
                                label="at least N citations", precision=0, minimum=0, elem_id="pilot-f-min-cit"
                            )
                        with gr.Row():
                            f_venues = gr.Dropdown(
                                choices=[],
                                multiselect=True,
                                label="venues",
                                allow_custom_value=True,
                                scale=3,
                                elem_id="pilot-f-venues",
                            )
                            f_types = gr.CheckboxGroup(
                                choices=PAPER_TYPES, label="paper type", scale=2, elem_id="pilot-f-types"
                            )
                        f_also = gr.Markdown("", elem_id="pilot-f-also")
                        with gr.Row():
                            f_apply = gr.Button("Apply filters", variant="primary", elem_id="pilot-f-apply")
                            f_clear = gr.Button("Clear filters", elem_id="pilot-f-clear")
                    results = gr.HTML(
                        render.results_html([]),
                        elem_id="pilot-results",
                        max_height=720,
                        js_on_load=render.RESULTS_JS,
                    )
                    with gr.Row():
                        rate_pick = gr.Dropdown(choices=[], label="Rate a paper", scale=4, elem_id="pilot-rate-pick")
                        thumbs_up = gr.Button("Relevant", scale=1, elem_id="pilot-thumbs-up")
                        thumbs_down = gr.Button("Not relevant", scale=1, elem_id="pilot-thumbs-down")
                    with gr.Accordion("Keep several papers at once", open=False, elem_id="pilot-keep-box"):
                        keep = gr.CheckboxGroup(
                            choices=[], label="Ticked papers of this list are in your library", elem_id="pilot-keep"
                        )
                        keep_all = gr.Button("Keep every paper of this list", size="sm", elem_id="pilot-keep-all")
                    gr.Markdown("**Export these results**", elem_classes=["pilot-about"])
                    with gr.Row():
                        dl_bib = gr.DownloadButton(
                            "BibTeX", interactive=False, size="sm", min_width=80, elem_id="pilot-dl-bib"
                        )
                        dl_ris = gr.DownloadButton(
                            "RIS", interactive=False, size="sm", min_width=80, elem_id="pilot-dl-ris"
                        )
                        dl_csl = gr.DownloadButton(
                            "CSL-JSON", interactive=False, size="sm", min_width=80, elem_id="pilot-dl-csl"
                        )
                        dl_csv = gr.DownloadButton(
                            "CSV", interactive=False, size="sm", min_width=80, elem_id="pilot-dl-csv"
                        )
                        dl_wf = gr.DownloadButton(
                            "Workflow JSON", interactive=False, size="sm", min_width=110, elem_id="pilot-dl-workflow"
                        )
                # the card of a clicked paper sits beside the map (under it on a narrow screen, scrolled into view)
                with gr.Tab("Map", id="map", elem_id="pilot-tab-map"), gr.Row(equal_height=False):
                    with (
                        gr.Column(scale=7, min_width=360),
                        gr.HTML(
                            html_template="@children", js_on_load=render.MAP_JS, elem_id="pilot-map-box"
                        ) as map_box,
                    ):
                        result_map = gr.Plot(show_label=False, elem_id="pilot-map")
                    with gr.Column(scale=3, min_width=230):
                        map_card = gr.HTML(
                            '<p class="pilot-empty">Click a paper on the map to see its card here.</p>',
                            elem_id="pilot-map-card",
                            elem_classes=["pilot-card-panel"],
                            js_on_load=render.RESULTS_JS + render.CARD_IN_VIEW_JS,
                        )
                with gr.Tab("Library", id="library", elem_id="pilot-tab-library"):
                    with gr.Row():
                        lib_scope = gr.Dropdown(
                            choices=[("the whole library", "")],
                            value="",
                            label="Export",
                            scale=3,
                            elem_id="pilot-lib-scope",
                        )
                        lib_bib = gr.DownloadButton("BibTeX", interactive=False, size="sm", elem_id="pilot-lib-bib")
                        lib_ris = gr.DownloadButton("RIS", interactive=False, size="sm", elem_id="pilot-lib-ris")
                        lib_csl = gr.DownloadButton("CSL-JSON", interactive=False, size="sm", elem_id="pilot-lib-csl")
                    library = gr.HTML(
                        render.library_html([], []), elem_id="pilot-library", js_on_load=render.RESULTS_JS
                    )
                with gr.Tab("Workflow", id="workflow", elem_id="pilot-tab-workflow"):
                    dag = gr.HTML(render.workflow_html(None), elem_id="pilot-dag", js_on_load=render.DAG_JS)
                    with gr.Row():
                        node_pick = gr.Dropdown(choices=[], label="Step", scale=3, elem_id="pilot-node-pick")
                        op_pick = gr.Dropdown(
                            choices=_operator_choices(), label="Operator to add", scale=3, elem_id="pilot-op-pick"
                        )
                    params_form = gr.HTML(
                        '<p class="pilot-empty">Select a step of the workflow to edit its parameters.</p>',
                        elem_id="pilot-params-form",
                        js_on_load=FORM_JS,
                    )
                    edit_msg = gr.Markdown(elem_id="pilot-edit-msg")
                    with gr.Accordion("About this step", open=False):
                        node_help = gr.Markdown(elem_id="pilot-node-help")
                    with gr.Accordion("Advanced: the params as JSON", open=False, elem_id="pilot-params-json"):
                        params = gr.Code(
                            value="", language="json", label="Params (JSON)", lines=6, elem_id="pilot-params"
                        )
                        apply_btn = gr.Button("Apply JSON & re-run", variant="primary", elem_id="pilot-apply")
                    with gr.Row():
                        add_btn = gr.Button("Add after selected", elem_id="pilot-add")
                        remove_btn = gr.Button("Remove step", elem_id="pilot-remove")
                        undo_btn = gr.Button("Undo", elem_id="pilot-undo")
                    with gr.Row():
                        step_btn = gr.Button("Step", elem_id="pilot-step")
                        run_node_btn = gr.Button("Run this step", elem_id="pilot-run-node")
                        run_all_btn = gr.Button("Run all", elem_id="pilot-run-all")
                    inspector = gr.HTML(render.inspector_html(None, None, None), elem_id="pilot-inspector")
                    with gr.Accordion("Versions", open=True):
                        versions = gr.HTML(
                            render.versions_html([]), elem_id="pilot-versions", js_on_load=render.VERSIONS_JS
                        )
                    with gr.Row():
                        upload = gr.File(
                            label="Load a workflow JSON",
                            file_types=[".json"],
                            type="filepath",
                            elem_id="pilot-upload",
                        )
                        load_btn = gr.Button("Load & run", elem_id="pilot-load")
        # API twins of the clicks inside HTML panels: the same actions, with their data as plain inputs
        with gr.Row(visible=False):
            api_paper = gr.Textbox()
            api_version = gr.Textbox()
            api_values = gr.JSON()
            api_cite, api_remove, api_toggle, api_show = (gr.Button() for _ in range(4))
            api_version_btn, api_form_btn = gr.Button(), gr.Button()
            api_recent, api_reopen_btn = gr.Textbox(), gr.Button()
            # this tab's conversation id: the page reads it from sessionStorage on load (OPEN_JS) and keeps what
            # the server settles on (TAB_JS)
            tab_box = gr.Textbox(elem_id="pilot-tab-id")

        view_outputs = [
            state,
            library_store,
            chatbot,
            *options,
            status,
            results,
            rate_pick,
            keep,
            dl_bib,
            dl_ris,
            dl_csl,
            dl_csv,
            dl_wf,
            f_year_min,
            f_year_max,
            f_min_cit,
            f_venues,
            f_types,
            f_also,
            result_map,
            map_card,
            lib_scope,
            lib_bib,
            lib_ris,
            lib_csl,
            library,
            dag,
            node_pick,
            params_form,
            node_help,
            params,
            edit_msg,
            inspector,
            versions,
            recent,
            about,  # last: scripts that read the panels by position keep their order
        ]

        def _view(ui: UIState) -> list[Any]:
            q = ui.question
            opts = list(q.options) if q is not None else []
            option_updates = [
                gr.update(value=opts[i].label, visible=True) if i < len(opts) else gr.update(visible=False)
                for i in range(MAX_OPTIONS)
            ]
            res = ui.shown_results
            labelled = [(render.paper_label(i, r), r.paper.id) for i, r in enumerate(res, start=1)]
            files = controller.export_files(ui)
            wf = ui.workflow
            node_choices = [(render.step_choice(wf, n.id), n.id) for n in wf.nodes] if wf else []
            kept = ui.kept_ids
            panel = render.answer_html(ui.answer)
            if res or ui.answer is None:
                weak = controller.weak(ui)
                panel += render.results_html(
                    res,
                    kept,
                    ui.ratings,
                    wf,
                    new_ids=ui.new_ids,
                    removed=ui.removed,
                    citation=ui.citation,
                    weak=weak,
                    about=controller.about_search(ui),
                )
            filters = controller.filter_choices(ui)
            active = filters["active"]
            searches = ui.library.searches()
            scopes = [("the whole library", "")] + [
                (f"kept from: {label[:60] or '—'} ({n})", sid) for sid, label, n in searches
            ]
            filter_boxes: list[Any] = [gr.skip()] * 6
            filters_key = (repr(active), tuple(filters["venues"]), filters["also"])
            if filters_key != ui.filters_key:
                ui.filters_key = filters_key
                filter_boxes = [
                    active.year_min,
                    active.year_max,
                    active.min_citations,
                    gr.update(choices=filters["venues"], value=active.venues),
                    active.paper_types,
                    render.chat_text(filters["also"]),
                ]
            store = gr.skip()
            if ui.library_changed:
                store, ui.library_changed = ui.library.dump(), False

            def download(path: str | None) -> Any:
                return gr.update(value=path, interactive=path is not None)

            return [
                ui,
                store,
                [{"role": m["role"], "content": render.chat_message(m["content"], m.get("details"))} for m in ui.chat],
                *option_updates,
                render.chat_text(ui.live_status or ui.notice),
                panel,
                gr.update(choices=labelled, value=None),
                gr.update(choices=labelled, value=kept),
                *(download(files[k]) for k in ("bibtex", "ris", "csljson", "csv", "workflow")),
                *filter_boxes,
                _or_skip(controller.map_view(ui)),
                controller.map_card(ui),
                gr.update(choices=scopes, value=ui.library_scope),
                *(download(files[f"library_{k}"]) for k in ("bibtex", "ris", "csljson")),
                render.library_html(ui.library.entries, searches, ui.citation),
                render.workflow_html(wf, ui.trace, ui.selected, ui.open_groups),
                gr.update(choices=node_choices, value=ui.selected if wf is not None else None),
                controller.node_form(ui),
                controller.node_help(ui),
                ui.params_text,
                render.chat_text(ui.edit_message),
                render.inspector_html(ui.selected, wf, ui.trace, ui.node_run),
                render.versions_html(
                    ui.session.versions if ui.session is not None else [],
                    ui.session.current_version if ui.session is not None else None,
                ),
                render.recent_html(ui.recent, controller.current_search_key(ui)),
                controller.about(),  # a source that came back, a cache repaired: said on the next action
            ]

        def _ensure(ui: UIState | None) -> UIState:
            if isinstance(ui, UIState):
                return ui
            return controller.new_state()

        def action(fn, desc: str):
            """Wrap a controller action: lazily create the state, stream what a running search has so far
            (status line, preview of the results), never leak a traceback."""

            async def handler(ui, *args):
                async for view in _apply(ui, fn, *args, working=desc):
                    yield view

            return handler

        async def _apply(ui, fn, *args, working: str = "working…"):
            ui = _ensure(ui)
            async with ui.lock:  # on Gradio's loop: a visitor's actions apply one at a time, in order
                async for view in workers.iterate(_stream, ui, fn, args, working):
                    yield view

        async def _stream(ui: UIState, fn, args: tuple, working: str):
            """One action and the redraw of every panel as its results arrive, on a worker thread
            (``pilot.ui.worker``): none of it runs on Gradio's loop."""
            ui.edit_message = ""
            async for _ in controller.stream(ui, _guarded, fn, *args, working=working):
                yield _view(ui)

        async def _guarded(ui: UIState, fn, *args) -> None:
            try:
                result = fn(ui, *args)
                if hasattr(result, "__await__"):
                    await result
            except Exception as exc:  # noqa: BLE001 - last line of defence: a sentence, not a traceback
                log.exception("UI action failed")
                ui.say("assistant", f"Something went wrong: {short_error(exc)}")
            try:
                controller.save(ui)  # before the last redraw, so the recent list on screen includes this search
            except Exception:  # noqa: BLE001 - keeping the conversation must never cost the action
                log.exception("keeping the conversation failed")

        # clicks inside the HTML panels carry their data in the event (see render.RESULTS_JS / DAG_JS / …)
        def _data(evt: gr.EventData) -> dict[str, Any]:
            data = getattr(evt, "_data", None)
            return data if isinstance(data, dict) else {}

        async def on_result_click(ui, evt: gr.EventData):
            data = _data(evt)
            async for view in _apply(ui, controller.paper_action, data.get("act"), data.get("id")):
                yield view

        async def on_dag_click(ui, evt: gr.EventData):
            data = _data(evt)
            if data.get("group"):  # a group box (or its name in the step list) opens or closes
                async for view in _apply(ui, controller.toggle_group, data.get("group")):
                    yield view
                return
            async for view in _apply(ui, controller.select_node, data.get("node")):
                yield view

        async def on_version_click(ui, evt: gr.EventData):
            async for view in _apply(ui, controller.goto_version, _data(evt).get("version")):
                yield view

        async def on_recent_click(ui, evt: gr.EventData):
            async for view in _apply(ui, controller.reopen, _data(evt).get("recent"), working="reopening…"):
                yield view

        async def on_open(ui, library_value, token, tab_info):
            async for view in _apply(ui, controller.open_page, library_value, token, tab_info, working="opening…"):
                kept: UIState = view[0]
                yield [*view, kept.token, kept.tab, controller.about()]

        async def on_map_click(ui, evt: gr.EventData):
            async for view in _apply(ui, controller.map_pick, _data(evt).get("paper")):
                yield view

        async def on_form_submit(ui, evt: gr.EventData):
            data = _data(evt)
            async for view in _apply(ui, controller.apply_form, data.get("node"), data.get("values")):
                yield view

        # Gradio starts every event at once (no queue slot to wait for: a visitor with many clicks in
        # flight cannot take them all); the work itself runs on ``concurrency`` worker threads, in arrival
        # order. A visitor's own actions still run one after another, in the order they were made, because
        # each takes its session's lock (FIFO) before touching it: "Search now" clicked while a message is
        # being read applies after it. Different visitors run side by side, so one slow or heavy action
        # holds up nobody else.
        queue: dict[str, Any] = dict(concurrency_id="pilot-actions", concurrency_limit=None)

        def on(trigger, fn, desc: str, inputs: list, api_name: str, **kw: Any) -> Any:
            return trigger(action(fn, desc), [state, *inputs], view_outputs, api_name=api_name, **queue, **kw)

        private: dict[str, Any] = dict(api_visibility="private")
        # the page opens: the library and this tab's conversation come back (a reload), then its workflow
        # re-runs from the cache
        demo.load(
            on_open,
            [state, library_store, visitor_store, tab_box],
            [*view_outputs, visitor_store, tab_box, about],
            js=render.OPEN_JS,
            api_name="open_page",
            **queue,
        ).then(None, [tab_box], None, js=render.TAB_JS).then(
            action(controller.rewarm, "running the workflow again from the cache…"),
            [state],
            view_outputs,
            **queue,
            **private,
        )
        recent.click(on_recent_click, [state], view_outputs, **queue, **private)
        on(api_reopen_btn.click, controller.reopen, "reopening…", [api_recent], "reopen")

        def on_clock() -> tuple[str, Any]:
            return controller.about(), gr.Timer(active=controller.is_starting)

        start_clock.tick(on_clock, None, [about, start_clock], queue=False, show_progress="hidden", **private)
        on(send.click, controller.send, "thinking…", [text], "send").then(lambda: "", None, text)
        on(text.submit, controller.send, "thinking…", [text], "send_enter", api_visibility="undocumented").then(
            lambda: "", None, text
        )
        for i, btn in enumerate(options):
            on(btn.click, functools.partial(_choose, controller, index=i), "applying your choice…", [], f"choose_{i}")
        on(search_now.click, controller.search_now, "searching…", [], "search_now")
        # the trash icon clears the chat in the browser; the conversation behind it must go too
        on(chatbot.clear, controller.clear, "starting afresh…", [], "clear_chat")
        results.click(on_result_click, [state], view_outputs, **queue, **private)
        library.click(on_result_click, [state], view_outputs, **queue, **private)
        map_card.click(on_result_click, [state], view_outputs, **queue, **private)
        dag.click(on_dag_click, [state], view_outputs, **queue, **private)
        versions.click(on_version_click, [state], view_outputs, **queue, **private)
        map_box.click(on_map_click, [state], view_outputs, **queue, **private)
        params_form.submit(on_form_submit, [state], view_outputs, **queue, **private)
        on(thumbs_up.click, functools.partial(_rate, controller, up=True), "refining…", [rate_pick], "rate_up")
        on(thumbs_down.click, functools.partial(_rate, controller, up=False), "refining…", [rate_pick], "rate_down")
        on(keep.input, controller.keep, "updating your library…", [keep], "keep")
        on(keep_all.click, controller.keep_all, "updating your library…", [], "keep_all")
        filter_inputs = [f_year_min, f_year_max, f_venues, f_types, f_min_cit]
        on(f_apply.click, controller.apply_filters, "filtering…", filter_inputs, "filter_results")
        on(f_clear.click, controller.clear_filters, "clearing the filters…", [], "clear_filters")
        on(lib_scope.input, controller.set_library_scope, "…", [lib_scope], "library_scope")
        on(node_pick.input, controller.select_node, "…", [node_pick], "select_node")
        on(apply_btn.click, controller.apply_params, "re-running…", [params], "edit_node")
        on(add_btn.click, controller.add_node, "re-running…", [op_pick], "add_node")
        on(remove_btn.click, controller.remove_node, "re-running…", [], "remove_node")
        on(undo_btn.click, controller.undo, "re-running…", [], "undo")
        on(step_btn.click, controller.step, "running the next step…", [], "step")
        on(run_node_btn.click, controller.run_node, "running the step…", [], "run_node")
        on(run_all_btn.click, controller.run_all, "running the workflow…", [], "run_all")
        on(load_btn.click, controller.load_workflow, "running the loaded workflow…", [upload], "load_workflow")
        on(api_cite.click, controller.cite, "…", [api_paper], "cite")
        on(
            api_remove.click,
            lambda ui, pid: controller.remove_from_library(ui, [pid]),
            "…",
            [api_paper],
            "remove_from_library",
        )
        on(api_toggle.click, controller.toggle_keep, "…", [api_paper], "toggle_keep")
        on(api_show.click, controller.map_pick, "…", [api_paper], "show_card")
        on(api_version_btn.click, controller.goto_version, "re-running…", [api_version], "goto_version")
        on(
            api_form_btn.click,
            lambda ui, v: controller.apply_form(ui, ui.selected, v),
            "re-running…",
            [api_values],
            "edit_node_form",
        )
    return demo


def _or_skip(value: Any) -> Any:
    return gr.skip() if value is None else value


async def _choose(controller: Controller, ui: UIState, *, index: int) -> UIState:
    return await controller.choose(ui, index)


async def _rate(controller: Controller, ui: UIState, paper_id: str | None, *, up: bool) -> UIState:
    return await controller.rate(ui, paper_id, up)
