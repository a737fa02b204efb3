"""Build the app from settings and serve it. The runtime (source, caches, embedder) is shared by all
browser sessions; each session gets its own ``pilot.session.Session`` inside a ``gr.State``."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

import gradio as gr

from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.ui.controller import Controller
from pilot.ui.layout import CSS, build_ui

log = logging.getLogger(__name__)


def make_controller(settings: Settings | None = None) -> Controller:
    """A controller over the runtime the settings describe; with no usable source the app still starts
    and the chat says what to set."""
    settings = settings or Settings()
    try:
        runtime = Runtime.from_settings(settings)
    except Exception as exc:  # noqa: BLE001 - a missing corpus or dead network must not stop the app starting
        log.warning("no runtime: %s", exc)
        return Controller(None, [f"Could not open a paper source: {exc}"])
    return Controller(runtime)


def storage_secret(cache_dir: Path) -> str | None:
    """The key the browser-stored libraries are sealed with, kept in the cache directory so that a
    restarted server still reads the libraries it wrote. Not a security boundary — the browser holds it
    too; it keeps the stored value opaque to other scripts. None (a fresh key) if the directory is unusable."""
    path = Path(cache_dir) / "ui-storage-secret"
    try:
        if path.exists():
            return path.read_text(encoding="utf-8").strip() or None
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(24)
        path.write_text(key, encoding="utf-8")
        path.chmod(0o600)
        return key
    except OSError:
        log.warning("no stable storage secret in %s; libraries will not survive a restart", cache_dir)
        return None


def build_app(settings: Settings | None = None, controller: Controller | None = None) -> gr.Blocks:
    settings = settings or Settings()
    # actions share one FIFO queue with settings.ui_concurrency workers (see layout); sessions stay
    # separate per browser and each session's own actions run in order
    demo = build_ui(
        controller or make_controller(settings),
        concurrency=settings.ui_concurrency,
        storage_secret=storage_secret(settings.cache_dir),
    )
    demo.queue()
    return demo


def launch(settings: Settings | None = None, host: str | None = None, port: int | None = None, **kwargs) -> None:
    demo = build_app(settings)
    demo.launch(
        server_name=host or os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=port or int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        css=CSS,
        **kwargs,
    )
