"""The structure the code promises, checked: imports follow the layers of DESIGN.md and form no circle.

``make test`` also runs ``lint-imports`` (and ruff, mypy) before pytest; this test keeps the layering
enforced for anyone who runs pytest alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.prereq import shared_dir

ROOT = Path(__file__).resolve().parents[1]


def test_imports_follow_the_layers_and_form_no_circle():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_missing_shared_folder_fails_in_ci_and_skips_elsewhere(monkeypatch, tmp_path):
    monkeypatch.setenv("PILOT_SHARED", str(tmp_path / "nowhere"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="set PILOT_SHARED=/path/to/shared"):
        shared_dir(tmp_path / "checkout")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="set PILOT_SHARED"):
        shared_dir(tmp_path / "checkout")
