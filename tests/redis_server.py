"""Debian's ``redis-server`` on a free loopback port for the tests that share a cache through Redis (``make test``
installs it, see ``scripts/ensure-redis.sh``); skipped with a clear reason where it cannot run.

    with RedisServer(tmp_path) as server:
        server.url          # redis://127.0.0.1:<port>/0
        server.freeze()     # SIGSTOP: it accepts connections and never answers (a frozen host, a full swap)
        server.thaw()       # SIGCONT
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Self

from tests.emulator_process import free_port
from tests.prereq import missing


class RedisServer:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> Self:
        exe = shutil.which("redis-server")
        if exe is None:
            missing("redis-server is not installed and scripts/ensure-redis.sh could not install it")
        import redis

        port = free_port()
        self.proc = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
             str(self.workdir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.proc.kill()
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.1)

    def freeze(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None:
            self.thaw()
            self.proc.terminate()
            self.proc.wait(timeout=10)
