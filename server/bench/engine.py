"""Engine speed benchmark: random legal play for a fixed time, one JSON line out.

Bots search with this engine, so moves per second is the bots' strength. The loop is
what a search rollout does — `legal_moves`, a random choice, `apply` — through the
public API only. A move is one decision of a seat: a play, a draw, a pass, a pick.

With ``--openspiel`` (needs ``pip install open_spiel``) the same loop drives
OpenSpiel's C++ ``crazy_eights`` from Python for comparison, its chance events
(dealing, the card drawn) sampled but not counted. Run both in one invocation on a
noisy machine: the ratio is the figure that means something. See docs/bench.md.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from pisyedili.server.rules import COMPILED, Options, apply, legal_moves, new_deal

SLICE_S = 0.5


class Counter:
    """Deals, moves and time, accumulated over one or more slices of play."""

    def __init__(self) -> None:
        self.deals = 0
        self.moves = 0
        self.seconds = 0.0

    def figures(self) -> dict[str, Any]:
        elapsed = self.seconds or 1e-9
        return {
            "deals": self.deals,
            "moves": self.moves,
            "seconds": round(self.seconds, 3),
            "deals_per_s": round(self.deals / elapsed, 1),
            "moves_per_s": round(self.moves / elapsed, 1),
        }


Slice = Callable[[float, Counter], None]
"""Plays whole deals for about the given seconds, adding them to the counter."""


def timed(play_deal: Callable[[], int]) -> Slice:
    """A slice runner around `play_deal`, which plays one deal and returns its moves.

    The clock is read between deals only, so timing costs nothing per move."""

    def run(seconds: float, counter: Counter) -> None:
        clock = time.perf_counter
        start = clock()
        deadline = start + seconds
        deals = moves = 0
        while True:
            moves += play_deal()
            deals += 1
            if clock() >= deadline:
                break
        counter.deals += deals
        counter.moves += moves
        counter.seconds += clock() - start

    return run


def engine_player(rules: str, players: int, seed: int, quiet: bool = False) -> Slice:
    """Our engine: random legal moves through the public API, as a search rollout does;
    ``quiet`` deals build no events (``Deal.quiet``), as the search's simulations do."""
    rng = random.Random(seed)
    choice = rng.choice
    options = Options.make(rules, players)
    dealers = itertools.cycle(range(players))

    def play_deal() -> int:
        deal = new_deal(options, next(dealers), rng)
        deal.quiet = quiet
        moves = 0
        while not deal.over:
            apply(deal, choice(legal_moves(deal, deal.to_act)))  # type: ignore[arg-type]
            moves += 1
        return moves

    return timed(play_deal)


def openspiel_player(players: int, seed: int, lean: bool = False) -> Slice:
    """The reference: OpenSpiel's C++ crazy_eights, random legal actions from Python.

    At a chance node the reference loop picks from ``chance_outcomes()``, as OpenSpiel's
    own examples do; the lean loop (``lean``) picks from ``legal_actions()``, which is the
    same uniform choice for this game (every chance node of crazy_eights is uniform over
    its legal actions) and about a tenth faster, because it builds no (action,
    probability) pairs. The lean loop is the bar: the fastest way to drive it."""
    try:
        pyspiel: Any = importlib.import_module("pyspiel")
    except ImportError as exc:
        raise SystemExit("--openspiel needs: pip install open_spiel") from exc
    game = pyspiel.load_game("crazy_eights", {"players": players})
    rng = random.Random(seed)
    choice = rng.choice

    def play_deal() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
        return decisions

    def play_deal_lean() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.legal_actions()))
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
        return decisions

    return timed(play_deal_lean if lean else play_deal)


def run_engine(
    rules: str, players: int, seconds: float, seed: int, quiet: bool = False
) -> dict[str, Any]:
    """Play random deals until `seconds` have passed; count deals and moves."""
    counter = Counter()
    engine_player(rules, players, seed, quiet)(seconds, counter)
    return {"rules": rules, "players": players, "quiet": quiet, "compiled": COMPILED,
            **counter.figures()}


def compare(rules: str, players: int, seconds: float, seed: int) -> list[dict[str, Any]]:
    """Ours (events built, as the server plays; quiet, as the search simulates) against
    OpenSpiel's two drivers, in rotating slices so that machine load hits all four
    alike; ratios to the lean driver (the bar) and to the reference one."""
    ref, lean = Counter(), Counter()
    players_of: list[tuple[Slice, Counter]] = [
        (openspiel_player(players, seed), ref),
        (openspiel_player(players, seed, lean=True), lean),
    ]
    ours = {quiet: Counter() for quiet in (False, True)}
    players_of += [(engine_player(rules, players, seed, q), c) for q, c in ours.items()]
    slices = max(1, round(seconds / SLICE_S))
    for _ in range(slices):
        for play, counter in players_of:
            play(seconds / slices, counter)
    lines = [
        {"game": "openspiel:crazy_eights", "driver": driver, "players": players, **c.figures()}
        for driver, c in (("reference", ref), ("lean", lean))
    ]
    for quiet, c in ours.items():
        rate = c.moves / c.seconds
        mine = {"rules": rules, "players": players, "quiet": quiet, "compiled": COMPILED,
                **c.figures()}
        mine["ratio_to_openspiel"] = round(rate / (lean.moves / lean.seconds), 3)
        mine["ratio_to_openspiel_reference_loop"] = round(rate / (ref.moves / ref.seconds), 3)
        lines.append(mine)
    return lines


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Play random legal moves for N seconds and print one JSON line of figures.",
    )
    parser.add_argument("--rules", choices=("classic", "cardiva"), default="classic")
    parser.add_argument("--players", type=int, default=4, help="seats at the table (default 4)")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to play (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random player (default 1)")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="deals that build no events, as the search's simulations (with --openspiel "
        "both ways are timed)",
    )
    parser.add_argument(
        "--openspiel",
        action="store_true",
        help="also time OpenSpiel's crazy_eights, in alternating slices of the same run, "
        "and print the ratio",
    )
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = build_parser(prog).parse_args(argv)
    if args.seconds <= 0:
        print("--seconds must be positive", file=sys.stderr)
        return 2
    try:
        Options.make(args.rules, args.players)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.openspiel:
        print(json.dumps(run_engine(args.rules, args.players, args.seconds, args.seed, args.quiet)))
        return 0
    for line in compare(args.rules, args.players, args.seconds, args.seed):
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
