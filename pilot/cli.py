"""``pilot`` command line. Sub-commands live in their own modules and register here.

``main`` is the command line's one never-raise boundary: below it typed errors propagate; here a failure
becomes one line on stderr and exit status 1 (the traceback goes to the log at debug level).
"""

from __future__ import annotations

import argparse
import logging
import sys

from pilot import commands

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pilot", description="interactive literature search")
    sub = parser.add_subparsers(dest="command", required=True)
    commands.add_all(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"pilot {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the boundary: a sentence and an exit status, not a traceback
        log.debug("pilot %s failed", args.command, exc_info=True)
        print(f"pilot {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
