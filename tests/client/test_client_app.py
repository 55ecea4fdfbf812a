"""The prompt_toolkit client against the real server on loopback, in this process.

The app reads from a pipe (what a person would type) and writes to a dummy output; the
server is the embedded one of `pisyedili play`, on an asyncio reactor instance of its
own (pytest-twisted has installed a different global reactor), sharing one loop with
the client exactly as the real command does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from twisted.internet.asyncioreactor import AsyncioSelectorReactor

from pisyedili.client import cards, offline
from pisyedili.client.app import ClientApp
from pisyedili.client.offline import OfflineOptions, play
from pisyedili.client.parse import move_inputs
from pisyedili.client.render import Look

TIMEOUT = 120.0
"""A backstop for a whole scenario (a match and a rematch take seconds): far past what
a busy machine needs, so only a hung scenario reaches it."""
WAIT = 30.0
"""A backstop for one wait on the server (a bot's move, the next event)."""


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as p:
        yield p


def run(scenario: Callable[[Any], Coroutine[Any, Any, None]]) -> None:
    """Run `scenario(reactor)` on a fresh loop with an asyncio reactor bound to it."""
    loop = asyncio.new_event_loop()
    try:
        reactor = AsyncioSelectorReactor(loop)
        loop.run_until_complete(asyncio.wait_for(scenario(reactor), TIMEOUT))
        reactor.removeAll()  # type: ignore[no-untyped-call]
    finally:
        loop.close()


async def until(app: ClientApp, ready: Callable[[], bool], what: str) -> None:
    """Wait for server messages until `ready()` holds."""
    try:
        async with asyncio.timeout(WAIT):
            while not ready():
                app.changed.clear()
                await app.changed.wait()
    except TimeoutError:
        tail = "\n".join(app.log[-15:])
        raise AssertionError(f"waited in vain for {what}; the log ends:\n{tail}") from None


def in_log(app: ClientApp, text: str) -> bool:
    return any(text in line for line in app.log)


def quit_(pipe: PipeInput) -> None:
    """`/quit`, and again: mid-match the first one only asks for confirmation."""
    pipe.send_text("/quit\r/quit\r")


def start(app: ClientApp, reactor: Any, opts: OfflineOptions) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(play(app, reactor, "tester", opts))


@pytest.mark.rule("C13")
@pytest.mark.rule("C4")
def test_a_whole_deal_played_by_typed_moves(pipe: PipeInput) -> None:
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="classic", bots=2, seed=7, bot_delay=0.0)
    typed: list[str] = []

    def refusals() -> int:
        return sum("(rule " in line for line in app.log)

    def grew(before: int) -> Callable[[], bool]:
        return lambda: len(app.log) > before

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        refused_once = by_index_once = False
        while True:
            await until(app, lambda: app.state.my_turn or in_log(app, "deal over"),
                        "our turn or the deal's end")
            if in_log(app, "deal over"):
                break
            legal, hand = app.state.legal, [c.lower() for c in app.state.hand()]
            assert "your move:" in app.status_text(), "the status shows what we may do"
            offered = move_inputs(legal)
            illegal = [c for c in hand if c not in offered and not c.startswith("j")]
            if not refused_once and illegal and "draw" in offered:
                # A held card the server did not offer: its refusal names the rule (C4).
                refused_once, before = True, refusals()
                pipe.send_text(illegal[0] + "\r")
                await until(app, lambda b=before: refusals() > b, "a refusal")  # type: ignore[misc]
                assert app.state.my_turn, "after a refused move the prompt stays"
                continue
            choice = offered[0]
            before = len(app.log)
            if not by_index_once and choice in hand:
                by_index_once = True
                pipe.send_text(f"{hand.index(choice) + 1}\r")  # the card's number as shown
                await until(app, grew(before), "the move's event")
                assert f"you played {cards.parse_card(choice)}" in app.log[before]
            else:
                pipe.send_text(choice + "\r")
                await until(app, grew(before), "the move's event")
            typed.append(choice)
        quit_(pipe)
        await task

    run(scenario)
    assert typed, "we made moves"
    assert refusals() == 1
    assert in_log(app, "you played") or in_log(app, "you drew"), "our moves reached the log"
    result = [ln for ln in app.log if "deal over" in ln]
    assert len(result) == 1
    # Every hand is revealed with its points and total, one line per seat (C13).
    rows = app.log[app.log.index(result[0]) + 1:][:3]
    assert all("->" in row for row in rows), rows
    assert any(ln.startswith("  you ") for ln in rows)


async def autoplay(app: ClientApp, pipe: PipeInput, done: Callable[[], bool]) -> int:
    """Type the first legal move offered whenever it is our turn, until `done()`."""
    moves = 0
    while True:
        await until(app, lambda: app.state.my_turn or done(), "our turn or the end")
        if done():
            return moves
        before = len(app.log)
        pipe.send_text(move_inputs(app.state.legal)[0] + "\r")
        await until(app, lambda b=before: len(app.log) > b, "the move's event")  # type: ignore[misc]
        moves += 1


@pytest.mark.rule("C16")
def test_a_whole_match_then_a_rematch(pipe: PipeInput) -> None:
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="classic", bots=1, seed=3, bot_delay=0.0, deal_pause=0.0,
                          level="easy")

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        assert await autoplay(app, pipe, lambda: in_log(app, "match over")) > 0
        assert app.state.match_over
        pipe.send_text("/rematch\r")
        await until(app, lambda: sum("-- deal 1 --" in ln for ln in app.log) == 2,
                    "the rematch's first deal")
        quit_(pipe)
        await task

    run(scenario)
    assert sum("deal over" in ln for ln in app.log) == 4, "a classic match is 4 deals (C16)"
    over = next(i for i, ln in enumerate(app.log) if "match over" in ln)
    totals = app.log[over + 1:over + 3]
    points = [int(row.split()[-1]) for row in totals]
    assert points == sorted(points), "totals are listed lowest first"
    assert "/rematch" in app.log[over + 3]


MUAMELE_SEED = 6
"""A seed whose first cardiva deal, one easy bot against our first moves that keep the
sevens, ends in a muamele of ours. The server's seed fixes every shuffle and the bot's
randomness, so the deal is the same on every run; a change to the deal or the easy bot
may need a new seed (any that passes this test)."""


@pytest.mark.rule("K14")
def test_muamele_picks_typed_as_numbers(pipe: PipeInput) -> None:
    """A known deal ends with sevens in our hand (we keep them): we pick by position."""
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="cardiva", bots=1, seed=MUAMELE_SEED, bot_delay=0.0,
                          deal_pause=0.0, level="easy")
    spreads: list[str] = []

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        while True:
            await until(app, lambda: app.state.my_turn or in_log(app, "deal over"),
                        "our turn or the deal's end")
            if in_log(app, "deal over"):
                break
            legal = app.state.legal
            before = len(app.log)
            if legal[0]["kind"] == "pick":
                spreads.append(app.status_text())
                pipe.send_text(f"{legal[-1]['position'] + 1}\r")  # the last position
            else:
                # Keep the sevens: a seven still in hand at the end makes the muamele.
                keep = [m for m in legal if not str(m.get("card", "")).startswith("7")]
                pipe.send_text(move_inputs(keep or legal)[0] + "\r")
            await until(app, lambda b=before: len(app.log) > b, "the move's event")  # type: ignore[misc]
        quit_(pipe)
        await task

    run(scenario)
    assert spreads, f"seed {MUAMELE_SEED} no longer brings a muamele of ours: pick another"
    assert "muamele you pick" in spreads[0] and "face-down cards: #" in spreads[0]
    assert "type a number 1-" in spreads[0]
    picks = [ln for ln in app.log if ln.startswith("you picked card ")]
    assert len(picks) == len(spreads), "every number typed was a pick"
    assert not any("(rule " in ln for ln in app.log)


@pytest.mark.rule("C7")
def test_reconnection_resumes_the_seat_with_the_same_hand(pipe: PipeInput) -> None:
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="classic", bots=1, seed=11, bot_delay=0.0)

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        await until(app, lambda: app.state.my_turn, "our first turn")
        hand, seat = app.state.hand(), app.state.my_seat
        assert app.link is not None
        app.link.drop()
        await until(app, lambda: in_log(app, "connection to the server lost"), "the drop")
        assert "reconnecting" in app.log[-1] or in_log(app, "reconnecting")
        await until(app, lambda: app.link is not None and app.link.connected
                    and app.state.my_turn, "resumed with our turn")
        assert app.state.my_seat == seat
        assert app.state.hand() == hand, "the snapshot gives back the same hand"
        # And the game goes on: a move is accepted.
        before = len(app.log)
        pipe.send_text(move_inputs(app.state.legal)[0] + "\r")
        await until(app, lambda: len(app.log) > before, "the move's event")
        assert not any("(rule " in ln or "not your turn" in ln
                       for ln in app.log[before:]), app.log[before:]
        quit_(pipe)
        await task

    run(scenario)


def test_a_match_played_to_its_end_leaves_no_journal(pipe: PipeInput, tmp_path: Path) -> None:
    folder = tmp_path / "offline"
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="classic", bots=1, seed=3, bot_delay=0.0, deal_pause=0.0,
                          level="easy", journals=folder)

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        await until(app, lambda: app.state.my_turn, "our first turn")
        assert len(list(folder.glob("*.sqlite3"))) == 1, "the match is journalled"
        assert await autoplay(app, pipe, lambda: in_log(app, "match over")) > 0
        pipe.send_text("/quit\r")
        await task

    run(scenario)
    assert list(folder.iterdir()) == [], "a match over is not kept"


def test_only_the_newest_unfinished_matches_are_kept(
        pipe: PipeInput, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Matches quit mid-way are kept for `--continue`, up to `KEEP_UNFINISHED`: a new
    match's start removes the oldest of those past it."""
    folder = tmp_path / "offline"
    monkeypatch.setattr(offline, "KEEP_UNFINISHED", 1)
    made: list[set[str]] = []

    def quit_mid_match(seed: int) -> None:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=DummyOutput())
        opts = OfflineOptions(rules="classic", bots=1, seed=seed, bot_delay=0.0,
                              journals=folder)

        async def scenario(reactor: Any) -> None:
            task = start(app, reactor, opts)
            await until(app, lambda: app.state.my_turn, "our first turn")
            quit_(pipe)
            await task

        run(scenario)
        made.append({p.name for p in folder.glob("*.sqlite3")})

    quit_mid_match(3)
    quit_mid_match(5)
    (first,) = made[0]
    assert first in made[1] and len(made[1]) == 2, made
    quit_mid_match(7)  # two unfinished before it, one kept: the oldest went
    assert first not in made[2] and len(made[2]) == 2, made
