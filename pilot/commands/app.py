"""``pilot app``: serve the web UI (same as ``python app.py``), with the corpus and address as flags."""

from __future__ import annotations

import argparse
import logging
import os

from pilot.settings import Settings


def add(sub) -> None:
    p = sub.add_parser("app", help="serve the Gradio web app")
    p.add_argument("--corpus", help="offline corpus file (overrides PILOT_CORPUS)")
    p.add_argument("--host", default=None, help="listen address (default GRADIO_SERVER_NAME or 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default GRADIO_SERVER_PORT or 7860)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # the operator's log: warnings and errors with their time and source (keys are redacted: pilot.redact)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from pilot.ui import launch

    settings = Settings(corpus=args.corpus) if args.corpus else Settings()
    launch(settings, host=args.host, port=args.port)
    return 0
