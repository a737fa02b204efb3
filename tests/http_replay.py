"""A real HTTP server on 127.0.0.1 that replays recorded (or hand-written) responses.

Clients under test talk real HTTP to it, so their whole stack (URL building, headers, retries,
timeouts, JSON decoding) runs; only the remote service is replaced. It reads vcrpy cassettes (both
the ``body.string``/``status.code`` and the ``content``/``status_code`` layouts) and can be given
scripted replies (e.g. two 429s) that are served before the recording.

Matching: method + path (URL-decoded, case-insensitive, since S2 ids such as ``CorpusID:1`` are).
Among several recordings of one path, the one agreeing on the most query parameters (``offset``,
``id``…; a parameter recorded with another value counts against) and on the JSON body wins, so
paginated recordings replay page by page. A request nothing matches gets a 404 with an S2-style
``{"error": ...}`` body.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import yaml

# Headers worth replaying; hop-by-hop and length headers are recomputed for the new body.
_KEEP_HEADERS = {"content-type", "retry-after"}


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
        return cls(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})


@dataclass
class Interaction:
    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any
    reply: Reply


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


def _norm_path(path: str) -> str:
    return unquote(path).rstrip("/").lower() or "/"


def _json_or_none(raw: Any) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def load_cassette(path: Path | str) -> list[Interaction]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parses the big cassettes ~10x faster
    doc = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)
    out = []
    for it in doc.get("interactions", []):
        req, resp = it["request"], it["response"]
        parts = urlsplit(req["uri"])
        if "status" in resp:
            status = int(resp["status"]["code"])
            body = (resp.get("body") or {}).get("string", "")
        else:
            status = int(resp["status_code"])
            body = resp.get("content", "")
        headers = {
            k: (v[0] if isinstance(v, list) else str(v))
            for k, v in (resp.get("headers") or {}).items()
            if k.lower() in _KEEP_HEADERS
        }
        raw = body.encode() if isinstance(body, str) else bytes(body)
        out.append(
            Interaction(
                method=req["method"].upper(),
                path=parts.path,
                query=parse_qsl(parts.query, keep_blank_values=True),
                body=_json_or_none(req.get("body")),
                reply=Reply(status, raw, headers),
            )
        )
    return out


class ReplayServer:
    """Serve interactions on an ephemeral loopback port; use as a context manager."""

    def __init__(self, interactions: list[Interaction] | None = None):
        self.interactions: list[Interaction] = list(interactions or [])
        self.scripted: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- configuration ------------------------------------------------------------------------
    def add_cassette(self, path: Path | str) -> ReplayServer:
        self.interactions.extend(load_cassette(path))
        return self

    def add(self, method: str, path: str, reply: Reply, query: dict[str, str] | None = None, body: Any = None) -> None:
        self.interactions.append(Interaction(method.upper(), path, list((query or {}).items()), body, reply))

    def script(self, method: str, path: str, replies: list[Reply]) -> None:
        """Replies served (in order, once each) before any recording of that path."""
        self.scripted.setdefault((method.upper(), _norm_path(path)), []).extend(replies)

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ReplayServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                reply = server._respond(self.command, self.path, dict(self.headers.items()), raw)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = do_POST = _handle

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # --- serving ------------------------------------------------------------------------------
    def _respond(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Reply:
        parts = urlsplit(target)
        query = parse_qsl(parts.query, keep_blank_values=True)
        body = _json_or_none(raw.decode("utf-8", "replace"))
        key = (method.upper(), _norm_path(parts.path))
        with self._lock:
            self.requests.append(
                Received(
                    method.upper(), unquote(parts.path), dict(query), {k.lower(): v for k, v in headers.items()}, body
                )
            )
            queue = self.scripted.get(key)
            if queue:
                return queue.pop(0)
        candidates = [i for i in self.interactions if (i.method, _norm_path(i.path)) == key]
        if not candidates:
            return Reply.json(404, {"error": f"no recorded response for {method} {unquote(parts.path)}"})
        wanted = dict(query)

        def score(i: Interaction) -> int:
            # +1 per shared parameter, -1 per parameter recorded with another value (another page, another id).
            agree = sum(1 if wanted.get(k) == v else -1 for k, v in i.query if k in wanted)
            return agree + (5 if body is not None and i.body == body else 0)

        return max(candidates, key=score).reply  # max keeps the first of equal scores


class SilentServer:
    """A loopback port that accepts connections and never answers: a hung remote service."""

    def __enter__(self) -> SilentServer:
        import socket

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)  # the kernel completes handshakes from the backlog; nobody reads
        host, port = self._sock.getsockname()
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc: Any) -> None:
        self._sock.close()
