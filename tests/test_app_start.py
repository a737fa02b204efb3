"""The app starts on a busy machine: its start-up check waits for the page instead of giving up."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from gradio import networking

from pilot.ui.app import serving

SLOW_S = 4.0  # longer than gradio's own 3 s check, as a first page render on a loaded machine can be


class _SlowFirstAnswer(BaseHTTPRequestHandler):
    answered = 0

    def do_HEAD(self):
        if type(self).answered == 0:
            time.sleep(SLOW_S)
        type(self).answered += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_slow_first_page_counts_as_a_running_app():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowFirstAnswer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        # what made the UI tests error at start-up on a loaded CI machine
        assert networking.url_ok(url) is False
        assert serving(url, patience_s=20) is True
    finally:
        server.shutdown()


def test_nothing_listening_is_not_a_running_app():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowFirstAnswer)
    port = server.server_address[1]
    server.server_close()
    assert serving(f"http://127.0.0.1:{port}/", patience_s=1.5) is False
