"""Bot tournament: level A against level B, deals duplicated across seatings.

Every deal is played once per seating, the same deck order each time, with A's seat
rotated through the table and B in every other seat: with two players each deal is
played twice, seats swapped, so the luck of the deal cancels. The deal, not the game,
is the statistical unit: a level's win rate is the mean over deals of its share of wins
across that deal's seatings, and its 95% interval is the normal interval over deals.

`pisyedili-bench bots ...` and `python -m pisyedili.server.bots.tournament ...` run it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..rules import Options, apply, events_for, legal_moves, new_deal, view
from .outcome import credits
from .policy import LEVELS, Observer, make_policy
from .search import DEFAULT_BUDGET_S


@dataclass
class DealRecord:
    """One deal over all its seatings: A's and B's (per-seat) credit and points."""

    a_credit: float = 0.0
    b_credit: float = 0.0
    a_points: float = 0.0
    b_points: float = 0.0
    no_winner: int = 0
    a_times: list[float] = field(default_factory=list)
    b_times: list[float] = field(default_factory=list)
    a_iterations: list[int] = field(default_factory=list)  # per searched decision (hard)
    b_iterations: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Config:
    rules: str
    players: int
    a: str
    b: str
    budget_s: float | None
    iterations: int | None
    seed: int


def play_deal(cfg: Config, index: int) -> DealRecord:
    """Play deal `index` once per seating of A; deterministic given the seed and an
    iteration budget (with a time budget the search depth varies with the machine)."""
    options = Options.make(cfg.rules, cfg.players)
    rec = DealRecord()
    dealer = index % cfg.players
    seatings = cfg.players
    for a_seat in range(seatings):
        deck_rng = random.Random(f"{cfg.seed}:deal:{index}")
        deal = new_deal(options, dealer, deck_rng)
        levels = [cfg.a if s == a_seat else cfg.b for s in range(cfg.players)]
        policies = [
            make_policy(lv, budget_s=cfg.budget_s, iterations=cfg.iterations) for lv in levels
        ]
        rngs = [random.Random(f"{cfg.seed}:bot:{index}:{a_seat}:{s}") for s in range(cfg.players)]
        clock = time.perf_counter
        while not deal.over:
            seat = deal.to_act
            assert seat is not None
            legal = legal_moves(deal, seat)
            started = clock()
            move = policies[seat].choose(view(deal, seat), legal, rngs[seat])
            spent = clock() - started
            (rec.a_times if seat == a_seat else rec.b_times).append(spent)
            searched = getattr(policies[seat], "last_iterations", 0)
            if searched:
                (rec.a_iterations if seat == a_seat else rec.b_iterations).append(searched)
            events = apply(deal, move)
            for s, p in enumerate(policies):
                if isinstance(p, Observer):
                    p.observe(events_for(events, s))
        result = deal.result
        assert result is not None
        credit = credits(result.winner, result.points)
        others = [s for s in range(cfg.players) if s != a_seat]
        rec.a_credit += credit[a_seat] / seatings
        rec.b_credit += sum(credit[s] for s in others) / len(others) / seatings
        rec.a_points += result.points[a_seat] / seatings
        rec.b_points += sum(result.points[s] for s in others) / len(others) / seatings
        rec.no_winner += result.winner is None
    return rec


def _play(job: tuple[Config, int]) -> DealRecord:
    return play_deal(*job)


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and normal 95% interval over deals."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean, mean
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def percentiles_ms(times: Sequence[float]) -> dict[str, float]:
    if not times:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    ordered = sorted(times)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": at(1.0)}


def _side(
    level: str, credit: list[float], points: list[float], times: list[float], its: list[int]
) -> dict[str, object]:
    mean, lo, hi = interval(credit)
    ordered = sorted(its)
    return {
        "level": level,
        "win_rate": round(mean, 4),
        "ci95": [round(lo, 4), round(hi, 4)],
        "mean_points": round(statistics.fmean(points), 2),
        "decision_ms": percentiles_ms(times),
        "decisions": len(times),
        # How deep `hard` searched: iterations per searched decision (p10, p50, p90).
        "search_iterations": [ordered[int(q * (len(ordered) - 1))] for q in (0.1, 0.5, 0.9)]
        if ordered
        else None,
    }


def summarize(cfg: Config, records: Sequence[DealRecord], seconds: float) -> dict[str, object]:
    a_times = [t for r in records for t in r.a_times]
    b_times = [t for r in records for t in r.b_times]
    a_its = [n for r in records for n in r.a_iterations]
    b_its = [n for r in records for n in r.b_iterations]
    return {
        "rules": cfg.rules,
        "players": cfg.players,
        "deals": len(records),
        "games": len(records) * cfg.players,
        "no_winner_games": sum(r.no_winner for r in records),
        "budget_s": cfg.budget_s,
        "iterations": cfg.iterations,
        "seed": cfg.seed,
        "fair_share": round(1 / cfg.players, 4),
        "seconds": round(seconds, 1),
        "a": _side(
            cfg.a, [r.a_credit for r in records], [r.a_points for r in records], a_times, a_its
        ),
        "b": _side(
            cfg.b, [r.b_credit for r in records], [r.b_points for r in records], b_times, b_its
        ),
    }


def table(summary: dict[str, object]) -> str:
    sides = [summary[k] for k in ("a", "b")]
    levels = {side["level"] for side in sides if isinstance(side, dict)}
    if "hard" not in levels:
        search = "no search"
    elif summary["iterations"] is not None:
        search = f"hard searches {summary['iterations']} iterations a decision"
    elif summary["budget_s"] is not None:
        search = f"hard searches {summary['budget_s']} s a decision"
    else:
        search = f"hard searches its default {DEFAULT_BUDGET_S} s a decision"
    lines = [
        f"{summary['rules']}, {summary['players']} players, {summary['deals']} deals "
        f"({summary['games']} games, {summary['no_winner_games']} without a winner), "
        f"{search}; {summary['seconds']} s",
        f"{'level':<8} {'win rate':>9} {'95% interval':>17} {'mean pts':>9} "
        f"{'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'its p50':>8}",
    ]
    for key in ("a", "b"):
        s = summary[key]
        assert isinstance(s, dict)
        lo, hi = s["ci95"]
        ms = s["decision_ms"]
        its = s["search_iterations"]
        lines.append(
            f"{s['level']:<8} {s['win_rate']:>9.3f} {f'[{lo:.3f}, {hi:.3f}]':>17} "
            f"{s['mean_points']:>9.1f} {ms['p50']:>8} {ms['p90']:>8} {ms['p99']:>8} "
            f"{its[1] if its else '-':>8}"
        )
    return "\n".join(lines)


def run(
    cfg: Config,
    deals: int,
    jobs: int,
    progress: Callable[[int], None] | None = None,
    partial: Callable[[dict[str, object]], None] | None = None,
) -> dict[str, object]:
    """Play `deals` deals on `jobs` processes; `progress(done)` hears of each deal played,
    and `partial` is given the summary of the deals played so far at each tenth of the
    run: a long run stopped early still says what its first deals showed."""
    started = time.perf_counter()
    tenth = max(1, deals // 10)
    work = [(cfg, i) for i in range(deals)]
    records: list[DealRecord] = []
    with contextlib.ExitStack() as stack:
        if jobs > 1:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(jobs))
            played: Iterable[DealRecord] = pool.imap(_play, work, chunksize=1)
        else:
            played = map(_play, work)
        for record in played:
            records.append(record)
            if progress is not None:
                progress(len(records))
            if partial is not None and len(records) % tenth == 0 and len(records) < deals:
                partial(summarize(cfg, records, time.perf_counter() - started))
    return summarize(cfg, records, time.perf_counter() - started)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pisyedili-bench bots",
        description="Play two bot levels against each other on duplicated deals.",
    )
    p.add_argument("--rules", choices=("classic", "cardiva"), default="classic")
    p.add_argument("--a", choices=LEVELS, default="hard", help="the level in one seat")
    p.add_argument("--b", choices=LEVELS, default="medium", help="the level in the others")
    p.add_argument("--deals", type=int, default=100, help="deals, each played per seating")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--budget", type=float, default=None, help="hard: seconds per decision")
    p.add_argument("--iterations", type=int, default=None, help="hard: iterations per decision")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument(
        "--progress",
        action="store_true",
        help="report each tenth done on stderr, with the JSON summary of the deals so far",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.deals < 1 or args.jobs < 1:
        print("--deals and --jobs must be at least 1", file=sys.stderr)
        return 2
    try:
        Options.make(args.rules, args.players)
    except ValueError as exc:
        print(f"pisyedili-bench bots: {exc}", file=sys.stderr)
        return 2
    if args.budget is not None and args.budget <= 0:
        print("--budget must be positive", file=sys.stderr)
        return 2
    cfg = Config(args.rules, args.players, args.a, args.b, args.budget, args.iterations, args.seed)
    step = max(1, args.deals // 10)

    def progress(done: int) -> None:
        if done % step == 0 or done == args.deals:
            print(f"{done}/{args.deals} deals played", file=sys.stderr, flush=True)

    def partial(summary: dict[str, object]) -> None:
        print(json.dumps(summary, sort_keys=True), file=sys.stderr, flush=True)

    summary = run(
        cfg,
        args.deals,
        args.jobs,
        progress if args.progress else None,
        partial if args.progress else None,
    )
    print(table(summary))
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
