"""`pisyedili-bench soak`: the real server, in its own process, for minutes on end.

Each table has one scripted client (its host, who answers each decision after a think
time) and three of the server's bots, playing at the server's own bot delay. Clients
drop at random (the connection aborted, as a lost network does) and come back a few
seconds later with their resume token. Every interval the bench prints the server's
resident memory, the tables that moved, drops and resumes, and moves; at the end one
JSON line. What it watches for is a slow leak (memory that climbs after the warm-up)
and a table lost: one the lobby no longer lists, or a resume that did not bring its
player back to it.

The server process, the load client and the measuring helpers are `load_bench`'s.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pisyedili.server.bench.load import (
    MATCH_END,
    Child,
    Counters,
    Load,
    Table,
    raise_fd_limit,
    rss_kib,
    run_on_reactor,
    server_argv,
)

LOBBY_PAGE = 200
RSS_TOLERANCE = 0.10
"""RSS at the end may be at most this much above RSS after the warm-up."""


@dataclass
class Seat:
    """One table's human: its connection (None while away), token and table."""

    n: int
    table_id: int
    token: str
    client: Any = None
    moves_seen: int = 0
    away_since: float | None = None


@dataclass
class Figures:
    drops: int = 0
    resumes: int = 0
    refused_rematches: int = 0
    failed_resumes: list[str] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)


class Soak:
    """The async half: open the tables, drop and resume, sample, check the end."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.load = Load(argparse.Namespace(rules="classic", server_bots=True,
                                            bot_level=args.bot_level))
        self.rng = random.Random(args.seed)
        self.c = Counters(think=args.think / 1000, rng=random.Random(args.seed + 1))
        self.c.measuring = True  # every move counts, every error is kept
        self.seats: list[Seat] = []
        self.figures = Figures()

    async def open_table(self, port: int, n: int) -> Seat:
        host = await self.load.connect(port, self.c)
        welcome = await host.request("hello", protocol=2, name=f"S{n}", features=["rematch"])
        if welcome["type"] != "welcome":
            raise RuntimeError(f"hello refused: {welcome}")
        host.host = True
        reply = await host.request("create_table", rules="classic", seats=4, options={
            "turn_seconds": 0, "match_end": self.args.match_end})
        if reply["type"] != "table":
            raise RuntimeError(f"create_table refused: {reply}")
        for seat in (1, 2, 3):
            added = await host.request("add_bot", seat=seat, level=self.args.bot_level)
            if added["type"] != "ok":
                raise RuntimeError(f"add_bot refused: {added}")
        host.table = Table(humans=1)
        return Seat(n, reply["table"]["id"], welcome["token"], host)

    async def resume(self, port: int, seat: Seat) -> None:
        """Back with the token: welcomed as the same session, at the same table."""
        try:
            client = await self.load.connect(port, self.c)
            welcome = await client.request("hello", protocol=2, name=f"S{seat.n}",
                                           token=seat.token, features=["rematch"])
        except Exception as e:  # refused, timed out, reset: a resume that failed
            self.figures.failed_resumes.append(f"table {seat.table_id}: {e!r}")
            seat.away_since = None
            return
        if welcome.get("type") != "welcome" or not welcome.get("resumed") \
                or welcome.get("table") != seat.table_id:
            self.figures.failed_resumes.append(f"table {seat.table_id}: {welcome}")
            client.transport.abortConnection()
            seat.away_since = None
            return
        client.host = True
        client.table = Table(humans=1)
        seat.client, seat.away_since = client, None
        self.figures.resumes += 1
        # A match that ended while its player was away waits for a rematch: agree.
        # Mid-match this is refused with `match_not_over`, which is not an error here.
        try:
            agreed = await client.request("rematch", agree=True)
        except Exception:  # dropped again before the answer: the next resume asks
            return
        if agreed.get("code") == "match_not_over":
            self.figures.refused_rematches += 1

    def errors(self) -> int:
        """Error replies, but for the rematches asked for after a resume mid-match."""
        return self.c.errors - self.figures.refused_rematches

    def drop(self, seat: Seat) -> None:
        seat.moves_seen += seat.client.updates  # what the dropped connection saw
        seat.client.transport.abortConnection()
        seat.client = None
        seat.away_since = time.monotonic()
        self.figures.drops += 1

    async def churn(self, port: int, until: float) -> None:
        """Once a second each present client drops with probability rate/60; each one
        away comes back after 0.5-`--away` seconds."""
        p = self.args.drop_rate / 60
        while time.monotonic() < until:
            now = time.monotonic()
            for seat in self.seats:
                if seat.client is not None and self.rng.random() < p:
                    self.drop(seat)
                    delay = self.rng.uniform(0.5, self.args.away)
                    self.load.reactor.callLater(delay, self._back, port, seat)
            await self.load.sleep(max(0.0, 1.0 - (time.monotonic() - now)))

    def _back(self, port: int, seat: Seat) -> None:
        from twisted.internet.defer import ensureDeferred

        ensureDeferred(self.resume(port, seat))

    async def listed(self, port: int) -> set[int]:
        """Every table id the lobby lists, page by page, on a connection of its own."""
        client = await self.load.hello(port, self.c, "soak-lobby")
        ids: set[int] = set()
        offset = 0
        try:
            while True:
                page = await client.request("lobby_subscribe", offset=offset,
                                            limit=LOBBY_PAGE)
                rows = page.get("tables", [])
                ids.update(row["id"] for row in rows)
                offset += len(rows)
                if not rows or offset >= page.get("total", offset):
                    return ids
        finally:
            client.transport.abortConnection()

    def sample(self, pid: int, started: float, moved: set[int]) -> dict[str, Any]:
        row = {"t_s": round(time.monotonic() - started, 1), "rss_kib": rss_kib(pid),
               "tables_moved": len(moved), "away": sum(s.client is None
                                                       for s in self.seats),
               "drops": self.figures.drops, "resumes": self.figures.resumes,
               "moves": self.c.moves, "errors": self.errors()}
        self.figures.samples.append(row)
        print(f"soak t={row['t_s']:>6}s rss={row['rss_kib']} KiB "
              f"moved={row['tables_moved']}/{len(self.seats)} away={row['away']} "
              f"drops={row['drops']} resumes={row['resumes']} moves={row['moves']} "
              f"errors={row['errors']}", flush=True)
        return row

    def moved_since(self, before: dict[int, int]) -> set[int]:
        """Tables whose client saw an update since `before` (per table id)."""
        now = self.updates_now()
        return {t for t, seen in now.items() if seen > before.get(t, 0)}

    def updates_now(self) -> dict[int, int]:
        return {s.table_id: s.moves_seen + (s.client.updates if s.client else 0)
                for s in self.seats}

    async def run(self) -> dict[str, Any]:
        a = self.args
        with tempfile.TemporaryDirectory(prefix="pisyedili-soak-") as scratch:
            db = ":memory:" if a.db == "memory" else os.path.join(scratch, "soak.sqlite3")
            argv = server_argv(a.seed, a.deal_pause, None, db)
            child = Child([*argv, "--bot-delay", str(a.bot_delay)])
            try:
                return await self._run(child, child.port)
            finally:
                child.stop()

    async def _run(self, child: Child, port: int) -> dict[str, Any]:
        a = self.args
        self.seats = list(await self.load.bounded(
            [functools.partial(self.open_table, port, n) for n in range(a.tables)]))
        for seat in self.seats:  # started before anyone drops: an abort loses unsent bytes
            started_ok = await seat.client.request("start")
            if started_ok["type"] != "ok":
                raise RuntimeError(f"start refused: {started_ok}")
        from twisted.internet.defer import ensureDeferred

        started = time.monotonic()
        end = started + a.minutes * 60

        churning = ensureDeferred(self.churn(port, end))
        before = self.updates_now()
        self.sample(child.pid, started, set())
        warm_at = started + a.warmup
        warm_rss: int | None = None
        while time.monotonic() < end:
            await self.load.sleep(min(a.every, max(0.0, end - time.monotonic())))
            if child.proc.poll() is not None:
                raise RuntimeError(f"the server died: {child.stderr()}")
            row = self.sample(child.pid, started, self.moved_since(before))
            before = self.updates_now()
            if warm_rss is None and time.monotonic() >= warm_at:
                warm_rss = row["rss_kib"]
        await churning
        # Everyone back (a resume in flight lands within --away seconds), then a last
        # interval in which every table must move.
        deadline = time.monotonic() + a.away + 30
        while any(s.client is None and s.away_since is not None for s in self.seats) \
                and time.monotonic() < deadline:
            await self.load.sleep(0.2)
        before = self.updates_now()
        await self.load.sleep(max(5.0, 4 * a.bot_delay + 2 * a.think / 1000))
        moved = self.moved_since(before)
        last = self.sample(child.pid, started, moved)
        listed = await self.listed(port)
        ids = {s.table_id for s in self.seats}
        lost = sorted(ids - listed)
        stalled = sorted(ids - moved)
        rss = [r["rss_kib"] for r in self.figures.samples if r["rss_kib"] is not None]
        end_rss = last["rss_kib"]
        growth = None if warm_rss is None or end_rss is None \
            else round(end_rss / warm_rss - 1, 4)
        for seat in self.seats:
            if seat.client is not None:
                seat.client.transport.abortConnection()
        return {
            "bench": "soak", "tables": a.tables, "minutes": a.minutes,
            "drop_rate_per_min": a.drop_rate, "bot_delay": a.bot_delay,
            "think_ms": a.think, "store": a.db, "match_end": a.match_end,
            "rss_start_kib": rss[0] if rss else None, "rss_warm_kib": warm_rss,
            "rss_end_kib": end_rss, "rss_max_kib": max(rss) if rss else None,
            "rss_growth_after_warmup": growth,
            "rss_flat": None if growth is None else growth <= RSS_TOLERANCE,
            "tables_listed": len(ids & listed), "tables_lost": lost,
            "tables_stalled": stalled, "drops": self.figures.drops,
            "resumes": self.figures.resumes,
            "failed_resumes": self.figures.failed_resumes[:20],
            "moves": self.c.moves, "errors": self.errors(),
            "samples": len(self.figures.samples),
        }


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="The server in a subprocess for "
                                "minutes: tables of bots, one scripted client each, "
                                "clients dropping and resuming by token; prints RSS, "
                                "tables, drops and moves at intervals, then one JSON line.")
    p.add_argument("--tables", type=int, default=200, help="tables (default 200)")
    p.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    p.add_argument("--drop-rate", type=float, default=1.0, metavar="PER_MIN",
                   help="drops per client per minute, at random (default 1)")
    p.add_argument("--away", type=float, default=5.0, metavar="S",
                   help="a dropped client comes back after 0.5 to S seconds (default 5)")
    p.add_argument("--every", type=float, default=30.0, metavar="S",
                   help="seconds between samples (default 30)")
    p.add_argument("--warmup", type=float, default=60.0, metavar="S",
                   help="seconds before the RSS that the end is compared with (default 60)")
    p.add_argument("--bot-delay", type=float, default=0.8,
                   help="the server's bot delay in seconds (default 0.8, its own)")
    p.add_argument("--think", type=float, default=800.0, metavar="MS",
                   help="mean ms a client thinks before each move (default 800)")
    p.add_argument("--bot-level", choices=("easy", "medium", "hard"), default="easy")
    p.add_argument("--match-end", default=MATCH_END["classic"],
                   help="each table's match_end (default %(default)s, the longest: "
                   "matches rarely end; when one does, the client agrees to a rematch, "
                   "or on its resume if it was away)")
    p.add_argument("--deal-pause", type=float, default=0.0,
                   help="seconds between deals on the server (default 0)")
    p.add_argument("--db", choices=("memory", "file"), default="file",
                   help="the server's store: a fresh SQLite file (default) or memory")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(list(argv))
    if args.tables < 1 or args.minutes <= 0 or args.every <= 0 or args.drop_rate < 0 \
            or args.away < 0.5 or args.warmup < 0 or args.bot_delay < 0 or args.think < 0:
        p.error("--tables at least 1; --minutes and --every positive; --away at least "
                "0.5; the others not negative")
    return args


def main(argv: Sequence[str] | None = None, prog: str = "pisyedili-bench soak") -> int:
    args = parse(sys.argv[1:] if argv is None else argv, prog)
    raise_fd_limit()
    budget = args.minutes * 60 + args.tables / 2 + args.away + 300
    result = run_on_reactor(Soak(args).run, budget, prog)
    if result is None:
        return 1
    print(json.dumps(result))
    ok = not result["tables_lost"] and not result["failed_resumes"]
    return 0 if ok else 1
