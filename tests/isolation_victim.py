"""The second visitor of ``test_isolation.py``, in a process of its own (as a browser would be): it keeps
no Python work in the server's process, so what it measures is the server's delay, not two programs
sharing one interpreter lock.

    python tests/isolation_victim.py URL
    stdin:  "go" (start clicking)  "stop" (print the clicks and exit)
    stdout: "ready <baseline seconds>" after warming up, then one JSON line: [[start, end, answered], ...]

Times are ``time.monotonic()``, which is the same clock in every process of the machine.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from statistics import median

BLEU = "Bleu: A Method For Automatic Evaluation Of Machine Translation"


def main(url: str) -> None:
    from gradio_client import Client

    me = Client(url, verbose=False, download_files=False)
    # results on screen, then picking nodes of the workflow: a trivial action (a redraw of the panels)
    me.predict(f'papers that cite "{BLEU}"', api_name="/send")
    me.predict(api_name="/search_now")

    def click() -> tuple[float, float, bool]:
        """(start, end, answered): a click the server did not answer in time (the client gives up after
        its own timeout) is recorded as failed, and the clicking goes on."""
        started = time.monotonic()
        try:
            me.predict("anchor", api_name="/select_node")
        except Exception:  # noqa: BLE001 - a timed-out or refused call is the measurement, not a crash
            return started, time.monotonic(), False
        return started, time.monotonic(), True

    for _ in range(3):  # warm-up: the first calls pay for connections and caches
        click()
    baseline = median(end - start for start, end, _ in (click() for _ in range(7)))
    print(f"ready {baseline:.4f}", flush=True)

    if sys.stdin.readline().strip() != "go":
        return
    stop = threading.Event()

    def wait_for_stop() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=wait_for_stop, daemon=True).start()
    clicks = []
    while not stop.is_set():
        clicks.append(click())
        time.sleep(0.05)
    print(json.dumps(clicks), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
