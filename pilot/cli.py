"""``pilot`` command line. Sub-commands live in their own modules and register here."""

from __future__ import annotations

import argparse
import sys

from pilot import commands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pilot", description="interactive literature search")
    sub = parser.add_subparsers(dest="command", required=True)

    commands.add_all(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
