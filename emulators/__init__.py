"""Loopback emulators of the remote paper APIs pilot uses, serving any corpus in the shared schema.

    pilot emulate s2 --corpus ../shared/corpus/papers.jsonl.gz --port 8765 --rps 1 --latency-ms 300
    PILOT_S2_BASE_URL=http://127.0.0.1:8765/graph/v1 \\
    PILOT_S2_RECOMMENDATIONS_URL=http://127.0.0.1:8765/recommendations/v1 PILOT_SOURCES=s2 make run

A development and test tool, not part of the product: nothing under ``pilot/``, ``workflows/``,
``clarifier/`` or ``cache/`` imports it (the ``pilot emulate`` command loads it lazily). It answers with
the published response shapes (checked against recorded real responses by ``tests/test_emulator_shapes.py``),
enforces the documented limits (rate, batch and page sizes, result caps), and can add latency and faults,
so the source layer's request budget, batching, rate limiting and recovery can be measured offline.

- ``emulators.s2``: Semantic Scholar Graph API + Recommendations API.
- ``emulators.aminer``: the AMiner open-platform endpoints pilot calls (no recorded AMiner responses exist:
  the shapes follow the platform's documentation, like ``tests/fixtures/aminer/``).
- ``emulators.server``: what both share — rate windows, faults, latency, ``GET /_stats``, serving.
"""
