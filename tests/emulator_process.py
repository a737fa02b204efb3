"""An S2 emulator in its own process, over an already-built corpus store.

Rate tests measure when requests *arrive*; an emulator thread inside the test process shares its GIL
and event-loop stalls with the clients under test, which skews those arrival times on a busy machine.
A separate process keeps the service's clock its own, like the real API's.

    with EmulatorProcess(local_source.store.dir, rps=2) as url: ...
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]

_SERVE = """
import sys
from pathlib import Path
from emulators.s2 import S2Emulator
from emulators.server import Limits, serve
from pilot.sources.local import LocalCorpusSource
from pilot.store.store import CorpusStore
store, port, rps, pool, latency, faults = sys.argv[1:7]
source = LocalCorpusSource(CorpusStore(Path(store)))
limits = Limits.from_args(float(rps) if rps else None, pool or None)
serve(S2Emulator(source, limits=limits, latency_ms=float(latency), faults=faults or None), "127.0.0.1", int(port))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EmulatorProcess:
    def __init__(self, store_dir: Path, rps: float | None = None, pool: str | None = None, latency_ms: float = 0,
                 faults: str | None = None, warm: bool = False):  # fmt: skip
        self.args = [str(store_dir), "", str(rps or ""), pool or "", str(latency_ms), faults or ""]
        # The emulator loads its search index on the first search, which takes seconds on a loaded machine;
        # clients that probe the service at start-up with a short read timeout would then call it dead.
        # ``warm`` sends one search before handing out the URL (it counts in ``/_stats``).
        self.warm = warm
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> str:
        port = free_port()
        self.args[1] = str(port)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE, *self.args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"emulator exited: {self.proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                httpx.get(f"{self.url}/_stats", timeout=1)
            except httpx.HTTPError:
                time.sleep(0.2)
                continue
            if self.warm:
                params: dict[str, str | int] = {"query": "warm up", "limit": 1, "fields": "title"}
                httpx.get(
                    f"{self.url}/graph/v1/paper/search", params=params, timeout=max(1.0, deadline - time.monotonic())
                )
            return self.url
        raise RuntimeError("emulator did not start within 120 s")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
