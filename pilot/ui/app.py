"""Build the app from settings and serve it. The runtime (source, caches, embedder) is shared by all
browser sessions; each session gets its own ``pilot.session.Session`` inside a ``gr.State``."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import sys
import threading
import time
from pathlib import Path

import gradio as gr
import httpx
from starlette.middleware import Middleware

from cache import private_dir
from pilot import limits
from pilot.keyfile import looks_like_token, read_or_create
from pilot.runtime import Runtime
from pilot.settings import Settings
from pilot.ui import tempdirs
from pilot.ui.controller import Controller
from pilot.ui.conversations import ConversationStore
from pilot.ui.layout import CSS, build_ui, theme
from pilot.ui.sessions import HeartbeatWatch, SessionReaper
from pilot.ui.worker import tune_for_serving

log = logging.getLogger(__name__)


def make_controller(settings: Settings | None = None) -> Controller:
    """A controller over the runtime the settings describe; with no usable source the app still starts
    and the chat says what to set."""
    settings = settings or Settings()
    store = ConversationStore.open(settings)
    try:
        runtime = Runtime.from_settings(settings)
    except Exception as exc:  # noqa: BLE001 - a missing corpus or dead network must not stop the app starting
        log.warning("no runtime: %s", exc)
        return Controller(None, [f"Could not open a paper source: {exc}"], store=store)
    return Controller(runtime, store=store)


def storage_secret(cache_dir: Path) -> str | None:
    """The key the browser-stored libraries are sealed with, kept in the cache directory so that a
    restarted server still reads the libraries it wrote. Not a security boundary — the browser holds it
    too; it keeps the stored value opaque to other scripts. Written whole or not at all, and an empty or
    damaged file is replaced with a warning (``pilot.keyfile``). None (a fresh key for this run) when the
    directory cannot keep one — a full disk, a read-only mount: the next start tries again."""
    path = Path(cache_dir) / "ui-storage-secret"
    try:
        private_dir(path.parent)
        return read_or_create(path, lambda: secrets.token_urlsafe(24), looks_like_token)
    except OSError as exc:
        log.warning(
            "no stable storage secret in %s (%s); libraries saved in this run will not survive a restart",
            cache_dir,
            exc,
        )
        return None


def build_app(settings: Settings | None = None, controller: Controller | None = None) -> gr.Blocks:
    """The app; without a ``controller`` its sources open in the background while the page already serves."""
    settings = settings or Settings()
    # temporary files: this process's own folder (Gradio's copies in it too), and what killed runs left goes
    tempdirs.clean_stale()
    os.environ.setdefault("GRADIO_TEMP_DIR", str(tempdirs.gradio_dir()))
    controller = controller or Controller.start(settings, ConversationStore.open(settings))
    if controller.runtime is not None:
        controller.runtime.start_recovery()  # services unreachable at start are re-probed and taken back
    # sessions stay separate per browser and each session's own actions run in order; searches take one of
    # the runtime's slots (PILOT_UI_CONCURRENCY), other actions never wait for them (see layout)
    demo = build_ui(controller, storage_secret=storage_secret(settings.cache_dir))
    demo.queue()
    tune_for_serving()
    return demo


LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def exposure_warning(host: str, logins: list[tuple[str, str]]) -> str | None:
    """What to tell the operator when the app is reachable beyond this machine without a login."""
    if logins or host in LOOPBACK or host.startswith("127."):
        return None
    return (
        f"pilot listens on {host} without a login: anyone who can reach this port can search (and spend "
        "your API keys and LLM). Set PILOT_AUTH=user:password, or listen on 127.0.0.1."
    )


def launch(
    settings: Settings | None = None,
    host: str | None = None,
    port: int | None = None,
    controller: Controller | None = None,
    **kwargs,
) -> gr.Blocks:
    """Serve the app; with ``PILOT_AUTH`` every page and API call asks for the login first."""
    settings = settings or Settings()
    host = host or os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1")
    logins = settings.logins()
    warning = exposure_warning(host, logins)
    if warning:
        log.warning(warning)
        print(f"WARNING: {warning}", file=sys.stderr, flush=True)
    demo = build_app(settings, controller)
    block = not kwargs.pop("prevent_thread_lock", False)
    # gradio's own start-up check gives up after one 3 s timeout and then demands a public share link,
    # so a busy machine (a long search in another thread, a loaded CI runner) kept the app from starting;
    # the server is started without it and checked here, patiently
    demo.launch(
        server_name=host,
        server_port=port or int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        css=CSS,
        theme=theme(),
        auth=logins or None,
        max_file_size=limits.MAX_RECIPE_BYTES,
        app_kwargs={"middleware": [Middleware(HeartbeatWatch)]},
        prevent_thread_lock=True,
        _frontend=False,
        **kwargs,
    )
    if not serving(demo.local_url):
        demo.close()
        raise RuntimeError(
            f"pilot started but does not answer on {demo.local_url} within {START_PATIENCE_S:.0f} s; "
            "is another program using the port?"
        )
    reaper = SessionReaper(demo, settings.session_idle_s)
    reaper.start()
    demo.pilot_reaper = reaper  # type: ignore[attr-defined]  # tests and the load benchmark look at it
    if block:
        _stop_on_sigterm()
        demo.block_thread()
    return demo


def _stop_on_sigterm() -> None:
    """SIGTERM (a service manager, ``docker stop``) ends the server as Ctrl-C does: Gradio closes, deleting the
    files it served, and the process's temporary folder goes at exit (``pilot.ui.tempdirs``)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


START_PATIENCE_S = 60.0
OK_AT_START = {200, 301, 302, 303, 307, 308, 401}  # a login page or a redirect is a running app too


def serving(url: str | None, patience_s: float = START_PATIENCE_S) -> bool:
    """Whether the page at ``url`` answers (a login page or redirect counts) before ``patience_s`` run out."""
    if not url:
        return False
    deadline = time.monotonic() + patience_s
    while True:
        try:
            # our own loopback server: no proxy in between
            if httpx.head(url, timeout=10, trust_env=False).status_code in OK_AT_START:
                return True
        except httpx.HTTPError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
