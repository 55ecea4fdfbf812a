"""`pisyedili-bench`: one entry point for the project's benchmarks.

`engine` times the rules engine (pisyedili.server.bench.engine); `bots` runs a bot
tournament (pisyedili.server.bots.tournament); `load` runs the server in a subprocess
under many connections (pisyedili.server.bench.load); `soak` runs it for minutes with
clients dropping and resuming (pisyedili.server.bench.soak); `flood` runs it under a flood of
WebSocket frames and of requests over the rate (pisyedili.server.bench.flood); `takeover`
kills a cluster's table process again and again and times its members' return
(pisyedili.server.bench.takeover); `nemesis` plays on a cluster while faults are injected
and checks what was acknowledged against what was stored
(pisyedili.server.bench.nemesis). Figures are
printed, never asserted:
speed targets are judged from these numbers, not from timed tests.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: pisyedili-bench {engine,bots,load,soak,flood,takeover,nemesis} [options]

  engine   random legal play for N seconds; prints deals/s and moves/s as JSON
  bots     a tournament between two bot levels; prints win rates as a table and JSON
  load     the server under N tables of clients, against a bare echo server; prints JSON
  soak     N tables of bots for minutes, clients dropping and resuming; RSS and JSON
  flood    WebSocket frame and request floods: a canary's latency, refusals' CPU; JSON
  takeover kill -9 of a cluster's table process, N times: seconds until every member
           is seated again, p50/p99; JSON
  nemesis  a cluster played on under random faults, then checked: acknowledged moves
           stored once and in order, sessions back; exits 1 on a violation

Run `pisyedili-bench COMMAND --help` (engine, bots, load, soak, flood, takeover,
nemesis) for the options."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "engine":
        from pisyedili.server.bench import engine as bench

        return bench.main(rest, prog="pisyedili-bench engine")
    if command == "bots":
        from pisyedili.server.bots import tournament

        return tournament.main(rest)
    if command == "load":
        from pisyedili.server.bench import load as load_bench

        return load_bench.main(rest)
    if command == "soak":
        from pisyedili.server.bench import soak as soak_bench

        return soak_bench.main(rest)
    if command == "flood":
        from pisyedili.server.bench import flood as flood_bench

        return flood_bench.main(rest)
    if command == "takeover":
        from pisyedili.server.bench import takeover as takeover_bench

        return takeover_bench.main(rest)
    if command == "nemesis":
        from pisyedili.server.bench import nemesis as nemesis_bench

        return nemesis_bench.main(rest)
    print(f"pisyedili-bench: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
