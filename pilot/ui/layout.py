"""The Gradio Blocks: components and event wiring, nothing else.

Every event runs one ``Controller`` action on the per-browser ``UIState`` (a ``gr.State``) and then
redraws all panels from that state with ``_view`` — one place decides what the screen shows.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import gradio as gr

from pilot.ui import render
from pilot.ui.controller import Controller, UIState
from workflows.registry import all_operators

log = logging.getLogger(__name__)

MAX_OPTIONS = 5

CSS = (
    render.CSS
    + """
#pilot-options button { white-space: normal; }
"""
)


def _operator_choices() -> list[tuple[str, str]]:
    return [(f"{name} — {cls.description}"[:90], name) for name, cls in sorted(all_operators().items())]


def build_ui(controller: Controller, concurrency: int = 4) -> gr.Blocks:
    """``concurrency``: actions of different visitors that may run at once (one visitor's run in order)."""
    with gr.Blocks(title="pilot — literature search") as demo:
        # a callable initial value: Gradio calls it once per browser session, so nobody shares a UIState
        state = gr.State(
            lambda: controller.new_state(), delete_callback=lambda ui: ui.close() if isinstance(ui, UIState) else None
        )
        gr.Markdown("## pilot — find papers around an anchor paper")
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
                        placeholder="Name an anchor paper and what you need, or answer the question…",
                        show_label=False,
                        scale=5,
                        elem_id="pilot-input",
                    )
                    send = gr.Button("Send", variant="primary", scale=1, elem_id="pilot-send")
                search_now = gr.Button("Search now", elem_id="pilot-search-now")
            with gr.Column(scale=7, min_width=480), gr.Tabs():
                with gr.Tab("Results", id="results"):
                    status = gr.Markdown("", elem_id="pilot-status")
                    results = gr.HTML(
                        render.results_html([]),
                        elem_id="pilot-results",
                        max_height=640,
                        js_on_load=render.RESULTS_JS,
                    )
                    with gr.Row():
                        rate_pick = gr.Dropdown(choices=[], label="Rate a paper", scale=4, elem_id="pilot-rate-pick")
                        thumbs_up = gr.Button("👍 relevant", scale=1, elem_id="pilot-thumbs-up")
                        thumbs_down = gr.Button("👎 not relevant", scale=1, elem_id="pilot-thumbs-down")
                    with gr.Accordion("Select papers to keep", open=False, elem_id="pilot-keep-box"):
                        keep = gr.CheckboxGroup(
                            choices=[],
                            label="Kept papers are exported (none kept = the whole list)",
                            elem_id="pilot-keep",
                        )
                    with gr.Row():
                        dl_bib = gr.DownloadButton("BibTeX", value=None, interactive=False, elem_id="pilot-dl-bib")
                        dl_csv = gr.DownloadButton("CSV", value=None, interactive=False, elem_id="pilot-dl-csv")
                        dl_wf = gr.DownloadButton(
                            "Workflow JSON", value=None, interactive=False, elem_id="pilot-dl-workflow"
                        )
                with gr.Tab("Workflow", id="workflow"):
                    dag = gr.HTML(render.workflow_html(None), elem_id="pilot-dag", js_on_load=render.DAG_JS)
                    with gr.Row():
                        node_pick = gr.Dropdown(choices=[], label="Node", scale=3, elem_id="pilot-node-pick")
                        op_pick = gr.Dropdown(
                            choices=_operator_choices(), label="Operator to add", scale=3, elem_id="pilot-op-pick"
                        )
                    node_help = gr.Markdown(elem_id="pilot-node-help")
                    params = gr.Code(value="", language="json", label="Params (JSON)", lines=6, elem_id="pilot-params")
                    edit_msg = gr.Markdown(elem_id="pilot-edit-msg")
                    with gr.Row():
                        apply_btn = gr.Button("Apply & re-run", variant="primary", elem_id="pilot-apply")
                        add_btn = gr.Button("Add after selected", elem_id="pilot-add")
                        remove_btn = gr.Button("Remove node", elem_id="pilot-remove")
                        undo_btn = gr.Button("Undo", elem_id="pilot-undo")
                    with gr.Row():
                        step_btn = gr.Button("Step ▶", elem_id="pilot-step")
                        run_node_btn = gr.Button("Run this node", elem_id="pilot-run-node")
                        run_all_btn = gr.Button("Run all", elem_id="pilot-run-all")
                    inspector = gr.HTML(render.inspector_html(None, None, None), elem_id="pilot-inspector")
                    with gr.Accordion("Versions", open=True):
                        versions = gr.HTML(render.versions_html([]), elem_id="pilot-versions")
                    with gr.Row():
                        upload = gr.File(
                            label="Load a workflow JSON",
                            file_types=[".json"],
                            type="filepath",
                            elem_id="pilot-upload",
                        )
                        load_btn = gr.Button("Load & run", elem_id="pilot-load")

        view_outputs = [
            state, chatbot, *options, status, results, rate_pick, keep, dl_bib, dl_csv, dl_wf,
            dag, node_pick, node_help, params, edit_msg, inspector, versions,
        ]  # fmt: skip

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
            node_choices = [(f"{n.id} — {n.op}", n.id) for n in wf.nodes] if wf else []
            kept = [p for p in ui.kept_ids if any(p == pid for _, pid in labelled)]
            panel = render.answer_html(ui.answer)
            if res or ui.answer is None:
                panel += render.results_html(res, ui.kept_ids, ui.ratings, wf)
            return [
                ui,
                [{"role": m["role"], "content": render.chat_text(m["content"])} for m in ui.chat],
                *option_updates,
                render.chat_text(ui.live_status),
                panel,
                gr.update(choices=labelled, value=None),
                gr.update(choices=labelled, value=kept),
                gr.update(value=files["bibtex"], interactive=files["bibtex"] is not None),
                gr.update(value=files["csv"], interactive=files["csv"] is not None),
                gr.update(value=files["workflow"], interactive=files["workflow"] is not None),
                render.workflow_html(wf, ui.trace),
                gr.update(choices=node_choices, value=ui.selected if wf is not None else None),
                controller.node_help(ui),
                ui.params_text,
                ui.edit_message,
                render.inspector_html(ui.selected, wf, ui.trace, ui.node_run),
                render.versions_html(ui.session.versions if ui.session is not None else []),
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
            async with ui.lock:
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
                ui.say("assistant", f"⚠️ Something went wrong: {exc}")

        # clicks inside the HTML panels carry their data in the event (see render.RESULTS_JS / DAG_JS)
        async def on_result_click(ui, evt: gr.EventData):
            data = getattr(evt, "_data", None) or {}
            async for view in _apply(ui, controller.paper_action, data.get("act"), data.get("id")):
                yield view

        async def on_dag_click(ui, evt: gr.EventData):
            data = getattr(evt, "_data", None) or {}
            async for view in _apply(ui, controller.select_node, data.get("node")):
                yield view

        # One queue for every action, served in arrival order by ``concurrency`` workers. A visitor's own
        # actions still run one after another, in the order they were made, because each takes its
        # session's lock (FIFO) before touching it: "Search now" clicked while a message is being read
        # applies after it. Different visitors run side by side, so one slow search holds up nobody else.
        queue: dict[str, Any] = dict(concurrency_id="pilot-actions", concurrency_limit=concurrency)

        def on(trigger, fn, desc: str, inputs: list, api_name: str | None = None) -> Any:
            return trigger(action(fn, desc), [state, *inputs], view_outputs, api_name=api_name, **queue)

        for trigger, api in ((send.click, "send"), (text.submit, None)):
            on(trigger, controller.send, "thinking…", [text], api).then(lambda: "", None, text)
        for i, btn in enumerate(options):
            on(btn.click, functools.partial(_choose, controller, index=i), "applying your choice…", [])
        on(search_now.click, controller.search_now, "searching…", [], "search_now")
        for panel, click in ((results, on_result_click), (dag, on_dag_click)):
            panel.click(click, [state], view_outputs, **queue)
        on(thumbs_up.click, functools.partial(_rate, controller, up=True), "refining…", [rate_pick])
        on(thumbs_down.click, functools.partial(_rate, controller, up=False), "refining…", [rate_pick])
        on(keep.input, controller.keep, "updating exports…", [keep])
        on(node_pick.input, controller.select_node, "…", [node_pick])
        on(apply_btn.click, controller.apply_params, "re-running…", [params])
        on(add_btn.click, controller.add_node, "re-running…", [op_pick])
        on(remove_btn.click, controller.remove_node, "re-running…", [])
        on(undo_btn.click, controller.undo, "re-running…", [])
        on(step_btn.click, controller.step, "running the next step…", [])
        on(run_node_btn.click, controller.run_node, "running the node…", [])
        on(run_all_btn.click, controller.run_all, "running the workflow…", [])
        on(load_btn.click, controller.load_workflow, "running the loaded workflow…", [upload])
    return demo


async def _choose(controller: Controller, ui: UIState, *, index: int) -> UIState:
    return await controller.choose(ui, index)


async def _rate(controller: Controller, ui: UIState, paper_id: str | None, *, up: bool) -> UIState:
    return await controller.rate(ui, paper_id, up)
