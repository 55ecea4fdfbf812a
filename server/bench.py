"""`pisyedili-bench`: one entry point for the project's benchmarks.

`engine` times the rules engine (pisyedili.server.rules.bench); `bots` runs a bot
tournament (pisyedili.server.bots.tournament). Figures are printed, never asserted:
speed targets are judged from these numbers, not from timed tests.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: pisyedili-bench {engine,bots} [options]

  engine   random legal play for N seconds; prints deals/s and moves/s as JSON
  bots     a tournament between two bot levels; prints win rates as a table and JSON

Run `pisyedili-bench engine --help` or `pisyedili-bench bots --help` for the options."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "engine":
        from pisyedili.server.rules import bench

        return bench.main(rest, prog="pisyedili-bench engine")
    if command == "bots":
        from pisyedili.server.bots import tournament

        return tournament.main(rest)
    print(f"pisyedili-bench: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
