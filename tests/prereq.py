"""What the tests need from outside the checkout, and what happens when it is not there.

On a developer's machine a missing prerequisite (the shared data folder, chromium) skips the tests that
need it; in CI (``CI=true``) it fails them, so a green run cannot hide that most of the suite did not run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    """Skip here; fail in CI, saying what to set."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing prerequisite fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


def shared_dir(root: Path = ROOT) -> Path:
    """The shared data folder: ``PILOT_SHARED``, else ``shared/`` beside the checkout."""
    for cand in (os.environ.get("PILOT_SHARED"), root.parent / "shared"):
        if cand and (Path(cand) / "corpus" / "papers.jsonl.gz").exists():
            return Path(cand)
    missing(
        "the shared data folder (corpus, bench, fixtures) is not beside the project; set PILOT_SHARED=/path/to/shared"
    )
