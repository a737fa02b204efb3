"""The command line's never-raise boundary: a failure below it is one line on stderr and exit status 1."""

from __future__ import annotations

from pilot import cli
from pilot.commands import eval as eval_cmd


def test_a_failing_command_says_so_in_one_line_and_exits_1(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("the corpus store is damaged")

    monkeypatch.setattr(eval_cmd, "run", broken)
    assert cli.main(["eval", "compare", "somewhere"]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == "pilot eval: RuntimeError: the corpus store is damaged"
    assert "Traceback" not in captured.err + captured.out
