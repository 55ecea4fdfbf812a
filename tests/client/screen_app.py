"""The terminal client in a real terminal, fed recorded server messages instead of a
server: for screens a real game reaches only by chance (a hand of 18 cards, six
seats).  test_client_tmux.py runs it in tmux:

    python screen_app.py crowded|between|two [--ascii]

in the language LANG (or LC_ALL, LC_MESSAGES) asks for.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the kits of tests/ (poll_kit) as pytest sees them
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from client_kit import OPTIONS, Msg, seat, table, table_info, update, view, welcome

from pisyedili.client import i18n
from pisyedili.client.app import ClientApp
from pisyedili.client.cli import look_for

HAND = ["2c", "3c", "5c", "9c", "Kc", "3h", "4h", "8h", "Qh", "Ah", "2s", "6s", "10s", "Js",
        "4d", "6d", "9d", "Kd"]
"""Eighteen cards: a seven stack of twelve drawn, and more."""
LEGAL = ["5c", "Js", "4d", "6d", "9d", "Kd"]
"""On a 5♦, shown last in suit order: the cards a hand line cut off at the screen's
edge would hide."""
SIX = {**OPTIONS, "players": 6}


def crowded() -> list[Msg]:
    seats = [seat(0, name="tester", player=100),
             seat(1, name="Ayşe", connected=False, held_by_bot="disconnected"),
             *(seat(n, "bot", level="medium") for n in range(2, 6))]
    v = view(players=6, options=SIX, hand=HAND, hand_counts=[18, 5, 7, 3, 12, 1],
             scores=[40, 12, 101, 7, 0, 1], top="5d", pile=["9c", "5c", "5d"], stock=2,
             turn=0, dealer=5)
    moves = [{"kind": "play", "card": c} for c in LEGAL if c[0] != "J"]
    moves += [{"kind": "play", "card": "Js", "suit": s} for s in "cdhs"]
    return [welcome(player=100), table(table_info(seats, options=SIX), view_=v,
                                       match={"deal_no": 2, "totals": v["scores"]},
                                       moves=[*moves, {"kind": "draw"}], deadline=55)]


def between() -> list[Msg]:
    """The deal just ended and the match goes on: the countdown to the next one."""
    result = {"reason": "out", "winner": 5, "multiplier": 1, "points": [90, 5, 7, 3, 12, 0],
              "hands": [HAND, ["2d"] * 5, ["3d"] * 7, ["4s"] * 3, ["5s"] * 12, []]}
    over = view(players=6, options=SIX, phase="over", turn=None, hand=HAND,
                hand_counts=[18, 5, 7, 3, 12, 0], scores=[130, 17, 108, 10, 12, 1],
                top="6c", pile=["9c", "6c"], stock=2, dealer=5, result=result)
    return [*crowded(), update([{"event": "play", "seat": 5, "card": "6c"},
                                {"event": "deal_end", "result": result}], over)]


def two() -> list[Msg]:
    """Two players, and the other has just played a 10 (C10, C12a)."""
    options = {**OPTIONS, "players": 2}
    seats = [seat(0, name="tester", player=100), seat(1, "bot", level="easy")]
    before = view(players=2, options=options, hand_counts=[4, 5], scores=[0, 0], turn=1,
                  dealer=1, deal_no=1)
    after = {**before, "hand_counts": [4, 4], "top": "10h", "pile": ["9h", "10h"],
             "direction": -1, "turn": 0}
    return [welcome(player=100),
            table(table_info(seats, options=options), view_=before,
                  match={"deal_no": 1, "totals": [0, 0]}),
            update([{"event": "play", "seat": 1, "card": "10h"},
                    {"event": "reverse", "direction": -1}], after,
                   moves=[{"kind": "play", "card": "Qd"}, {"kind": "draw"}])]


SCENARIOS = {"crowded": crowded, "between": between, "two": two}


async def main(scenario: str, ascii_only: bool) -> None:
    i18n.choose(None)  # LANG and the other locale variables, as `pisyedili` without --lang
    app = ClientApp(look_for(ascii_only), "tester")
    app.subscribe_lobby = False
    app.state.deal_pause = 60.0
    for msg in SCENARIOS[scenario]():
        app.on_message(msg)
    await app.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], "--ascii" in sys.argv[2:]))
