"""Stacked decks (`--test-decks`, docs/protocol.md "Stacked decks"): a test server deals
a `create_table.deck` as given, every deal of the match; elsewhere the option is refused;
the deck must be exactly the table's cards; such a table is private and never rated; and
a restarted server deals the stacked table's order still."""

from __future__ import annotations

import random
import signal
import subprocess
from collections import Counter
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import pytest_twisted
from process_output import Output, logged_server
from test_restart_process import Client
from wireclient import Msg, Server

from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.rules import CARD_STR, Match, Options, legal_moves, parse_card

BACKSTOP = 60.0

HEARTS = ["2h", "3h", "4h", "5h", "6h", "8h", "9h"]
DIAMONDS = ["2d", "3d", "4d", "5d", "6d", "8d", "9d"]


def stacked(first: list[str], decks: int = 1) -> list[str]:
    """A whole pack (`decks` decks) whose order starts with `first`, the rest sorted."""
    rest = Counter(CARD_STR * decks) - Counter(first)
    return first + sorted(rest.elements())


def wire(order: list[str]) -> str:
    """A deck as `create_table.deck` takes it: cards separated by spaces."""
    return " ".join(order)


def dealt(order: list[str], seat: int, players: int, deal_no: int = 1) -> Counter[str]:
    """The hand `seat` is dealt from `order`: seven cards, one at a time, from the seat
    after the dealer, who is the last seat at the first deal and moves one seat on."""
    dealer = (players - 1 + deal_no - 1) % players
    return Counter(order[(seat - dealer - 1) % players: 7 * players: players])


# Classic, two seats: seat 0 holds no club (C2: it must draw at the opening), seat 1 only
# diamonds, and the stock's first card, the one seat 0 draws, is the 7 of clubs.
OPENING = stacked([c for pair in zip(HEARTS, DIAMONDS, strict=True) for c in pair] + ["7c"])


async def stacked_server() -> Server:
    server = await Server.start()
    server.factory.lobby.test_decks = True  # what --test-decks sets (test_tap_flag below)
    return server


@pytest_twisted.ensureDeferred
async def test_a_stacked_deck_deals_the_given_cards() -> None:
    server = await stacked_server()
    try:
        host = await server.connect("Ayşe")
        assert host.welcome["test_decks"] is True
        snap = await host.ok("create_table", rules="classic", seats=2, deck=wire(OPENING),
                             options={"match_end": "deals:1"})
        assert snap["table"]["private"] is True and "rated" not in snap["table"]
        await host.ok("add_bot", seat=1, level="easy")
        await host.ok("start")
        first = await host.next_decision()
        view = first["view"]
        assert (view["dealer"], view["turn"], view["top"]) == (1, 0, None)
        assert Counter(view["hand"]) == dealt(OPENING, 0, 2) == Counter(HEARTS)
        assert view["stock"] == 52 - 14
        assert first["moves"] == [{"kind": "draw"}]  # no club to open with (C2)
        await host.ok("move", move={"kind": "draw"})
        drew = await host.next_decision()
        assert Counter(drew["view"]["hand"]) == Counter([*HEARTS, "7c"])
        assert {"kind": "play", "card": "7c"} in drew["moves"]
        await host.ok("move", move={"kind": "play", "card": "7c"})
        played = await host.wait(lambda m: m["type"] == "update" and m["view"]["top"] == "7c")
        assert played["view"]["pile"] == ["7c"]
    finally:
        await server.stop()


def test_every_deal_of_a_match_is_dealt_from_the_stacked_order() -> None:
    """The engine's side: the same order each deal, the dealer moving on (C2)."""
    order = stacked(["Jc", "7s", "7h", "7d"])
    deck = tuple(parse_card(c) for c in order)
    match = Match(Options.make("classic", 3, match_end="deals:3"), random.Random(5), deck=deck)
    rng = random.Random(6)
    for deal_no in (1, 2, 3):
        deal = match.deal
        assert deal.dealer == (2 + deal_no - 1) % 3
        for seat in range(3):
            assert Counter(CARD_STR[c] for c in deal.hands[seat]) == \
                dealt(order, seat, 3, deal_no)
        assert deal.stock[::-1] == list(deck[21:])  # drawn from the front of the rest
        while not deal.over:
            match.apply(rng.choice(legal_moves(deal, deal.turn)))
        if not match.over:
            match.next_deal()
    assert match.over


@pytest.mark.parametrize(("decks", "deck", "says"), [
    (1, OPENING[:-1], "must hold 52 cards"),
    (1, [*OPENING[:-1], OPENING[0]], "time(s), not 1"),  # a card twice, one missing
    (1, [*OPENING[:-1], "Tc"], "time(s), not 1"),  # T is 10, which it holds already
    (1, [*OPENING[:-1], "1c"], "deck card 52: not a card"),
    (2, OPENING, "must hold 104 cards"),
    (2, [*OPENING, *OPENING[:-1], OPENING[0]], "time(s), not 2"),  # one card thrice
])
@pytest_twisted.ensureDeferred
async def test_a_deck_that_is_not_the_tables_pack_is_refused(decks: int, deck: list[str],
                                                             says: str) -> None:
    server = await stacked_server()
    try:
        host = await server.connect("Ayşe")
        reply = await host.request("create_table", rules="classic", seats=2,
                                   options={"decks": decks}, deck=wire(deck))
        assert (reply["type"], reply["code"], reply["field"]) == ("error", "bad_field", "deck")
        assert says in reply["message"]
        assert server.factory.lobby.tables() == []
        two = await host.ok("create_table", rules="classic", seats=2, options={"decks": 2},
                            deck=wire(stacked([], 2)))
        assert two["table"]["options"]["decks"] == 2
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_server_without_the_flag_refuses_a_deck() -> None:
    server = await Server.start()
    try:
        host = await server.connect("Ayşe")
        assert "test_decks" not in host.welcome
        reply = await host.request("create_table", rules="classic", seats=2, deck=wire(OPENING))
        assert (reply["type"], reply["code"]) == ("error", "test_decks_off")
        assert server.factory.lobby.tables() == []
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_stacked_table_is_never_rated_nor_joined_from_the_list() -> None:
    server = await stacked_server()
    try:
        host = await server.connect("Ayşe")
        other = await server.connect("Bora")
        rated = await host.request("create_table", rules="classic", seats=2, deck=wire(OPENING),
                                   rated=True)
        assert (rated["code"], rated["field"]) == ("bad_field", "rated")
        lobby = await other.ok("lobby_subscribe")
        assert lobby["tables"] == []
        snap = await host.ok("create_table", rules="classic", seats=2, deck=wire(OPENING),
                             private=False)
        assert snap["table"]["private"] is True  # a deck makes it private, whatever it said
        row: Msg = await other.wait_type("lobby_update", op="add")
        assert row["summary"]["private"] is True
        refused = await other.request("join_table", table=snap["table"]["id"])
        assert refused["code"] == "private_table"
        joined = await other.ok("join_table", code=snap["table"]["code"])
        assert joined["you"]["seat"] == 1
    finally:
        await server.stop()


# -- a real server process --------------------------------------------------------------


def server_process(db: Path) -> AbstractContextManager[tuple[subprocess.Popen[str], int,
                                                              Output]]:
    """A real server on `db` that takes stacked decks, and its log."""
    return logged_server("--listen", "tcp:0:interface=127.0.0.1", "--db", str(db),
                         "--test-decks", "--turn-seconds", "0", "--bot-delay", "0",
                         "--no-announce")


def first_decision(client: Client) -> Msg:
    while True:
        msg = client.recv()
        assert msg is not None, "the server went away"
        if "moves" in msg:
            return msg


def test_tap_flag_warns_and_a_restart_keeps_the_stacked_deck(tmp_path: Path) -> None:
    """`--test-decks` is said in the log; a server killed before the match starts deals
    the stacked order once restarted: the deck is part of the table's stored setup."""
    db = tmp_path / "stacked.sqlite3"
    with server_process(db) as (proc, port, out):
        assert "!!! --test-decks is set" in out.text
        client = Client(port)
        welcome = client.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe")
        assert welcome["test_decks"] is True
        client.answer("create_table", rules="cardiva", seats=2, deck=wire(OPENING))
        client.answer("add_bot", seat=1, level="easy")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=BACKSTOP)
    with server_process(db) as (_, port, _out):
        back = Client(port)
        resumed = back.answer("hello", protocol=PROTOCOL_VERSION, name="Ayşe",
                              token=welcome["token"])
        assert resumed["resumed"] is True
        back.answer("start")
        decision = first_decision(back)
        assert Counter(decision["view"]["hand"]) == dealt(OPENING, 0, 2)
        assert decision["view"]["dealer"] == 1
