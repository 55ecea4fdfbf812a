"""The client's reading of what a player types: moves, commands, chat."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pisyedili.client import cards
from pisyedili.client.parse import (
    COMMANDS,
    Chat,
    Context,
    Invalid,
    Local,
    Move,
    NeedSuit,
    Request,
    move_inputs,
    parse_input,
    parse_move,
    parse_suit_answer,
)

HAND = tuple(cards.sort_hand(["7h", "10s", "Qd", "Js", "Jc", "2c", "Qh"]))
LEGAL: tuple[dict[str, Any], ...] = (
    {"kind": "play", "card": "7h"},
    {"kind": "play", "card": "Qh"},
    *({"kind": "play", "card": j, "suit": s} for j in ("Jc", "Js") for s in "cdhs"),
    {"kind": "draw"},
)
TURN = Context(hand=HAND, legal=LEGAL, my_turn=True, at_table=True)


def test_hand_display_order_alternates_colours() -> None:
    assert HAND == ("2c", "Jc", "7h", "Qh", "10s", "Js", "Qd")


@pytest.mark.parametrize(
    ("text", "card"),
    [("7h", "7h"), ("7H", "7h"), ("10s", "10s"), ("ts", "10s"), ("T♠", "10s"),
     ("qd", "Qd"), ("Q♦", "Qd"), (" qh ", "Qh")],
)
def test_cards_are_read_forgivingly(text: str, card: str) -> None:
    assert parse_input(text, TURN) == Move({"kind": "play", "card": card})


@pytest.mark.rule("C5")
@pytest.mark.parametrize("text", ["js h", "jsh", "js>h", "js:h", "J♠ hearts", "js ♥", "6 h"])
def test_a_jack_with_a_suit_names_it(text: str) -> None:
    # "6 h": the sixth card of the hand as shown is the jack of spades.
    assert parse_input(text, TURN) == Move({"kind": "play", "card": "Js", "suit": "h"})


@pytest.mark.rule("C5")
def test_a_bare_jack_asks_for_the_suit() -> None:
    assert parse_input("js", TURN) == NeedSuit("Js")
    assert parse_input("6", TURN) == NeedSuit("Js")
    # "j": any legal jack will do, they differ only by the suit they name.
    assert isinstance(parse_input("j", TURN), NeedSuit)
    assert parse_suit_answer("Hearts") == "h"
    assert parse_suit_answer("x") is None


def test_a_bare_rank_needs_to_be_unambiguous() -> None:
    both_queens = parse_input("q", TURN)
    assert both_queens == Move({"kind": "play", "card": "Qh"}), "only Qh is legal"
    ctx = Context(hand=HAND, legal=(*LEGAL, {"kind": "play", "card": "Qd"}), my_turn=True,
                  at_table=True)
    assert isinstance(parse_input("q", ctx), Invalid)


def test_hand_index_is_one_based_as_shown() -> None:
    assert parse_input("3", TURN) == Move({"kind": "play", "card": "7h"})
    assert isinstance(parse_input("0", TURN), Invalid)
    assert isinstance(parse_input("8", TURN), Invalid)


def test_draw_and_pass() -> None:
    for t in ("d", "draw", "D"):
        assert parse_input(t, TURN) == Move({"kind": "draw"})
    for t in ("p", "pass"):
        assert parse_input(t, TURN) == Move({"kind": "pass"})


@pytest.mark.rule("C6")
def test_an_illegal_held_card_is_still_sent_so_the_server_says_why() -> None:
    assert parse_input("2c", TURN) == Move({"kind": "play", "card": "2c"})


def test_a_card_not_in_hand_is_refused_locally() -> None:
    result = parse_input("9h", TURN)
    assert isinstance(result, Invalid) and "9h" in result.message


@pytest.mark.rule("C5")
def test_only_a_jack_names_a_suit() -> None:
    assert isinstance(parse_input("7h s", TURN), Invalid)


@pytest.mark.rule("K14")
def test_muamele_numbers_are_spread_positions() -> None:
    picks = tuple({"kind": "pick", "position": p} for p in range(12))
    ctx = Context(hand=HAND, legal=picks, my_turn=True, at_table=True)
    assert parse_input("4", ctx) == Move({"kind": "pick", "position": 3})
    assert parse_input("pick 12", ctx) == Move({"kind": "pick", "position": 11})
    assert isinstance(parse_input("13", ctx), Invalid)


def test_text_off_turn_is_chat_but_a_move_is_refused() -> None:
    ctx = Context(hand=HAND, at_table=True)
    assert parse_input("good luck all", ctx) == Chat("good luck all")
    assert parse_input("hi", ctx) == Chat("hi")
    assert isinstance(parse_input("7h", ctx), Invalid)
    assert parse_input("/say 7h is coming", ctx) == Chat("7h is coming")


def test_on_turn_plain_text_is_not_a_move() -> None:
    result = parse_input("hello there", TURN)
    assert isinstance(result, Invalid) and "/say" in result.message
    assert parse_input("   ", TURN) is None


def test_lobby_commands_build_wire_requests() -> None:
    lobby = Context()
    assert parse_input("/create classic 4 --private", lobby) == Request(
        {"type": "create_table", "rules": "classic", "seats": 4, "private": True})
    assert parse_input(
        "/create cardiva 3 --ten reverse --match-end deals:4 --turn 30 --name 'Friday night'",
        lobby,
    ) == Request({"type": "create_table", "rules": "cardiva", "seats": 3,
                  "name": "Friday night",
                  "options": {"ten": "reverse", "match_end": "deals:4", "turn_seconds": 30}})
    assert parse_input("/join 3", lobby) == Request({"type": "join_table", "table": 3})
    assert parse_input("/join K7QX", lobby) == Request({"type": "join_table", "code": "K7QX"})
    assert parse_input("/watch 3", lobby) == Request(
        {"type": "join_table", "table": 3, "spectate": True})
    # Seats are 1-based on screen, 0-based on the wire.
    assert parse_input("/sit 2", lobby) == Request({"type": "sit", "seat": 1})
    assert parse_input("/bot 3 hard", lobby) == Request(
        {"type": "add_bot", "seat": 2, "level": "hard"})
    assert parse_input("/ready", lobby) == Request({"type": "ready", "ready": True})
    assert parse_input("/rematch no", lobby) == Request({"type": "rematch", "agree": False})
    assert parse_input("/leave", lobby) == Request({"type": "leave_table"})
    assert parse_input("/quit", lobby) == Local("quit")


@pytest.mark.parametrize(
    "text", ["/create", "/create poker 4", "/create classic four", "/sit", "/sit 0",
             "/bot 2 genius", "/join", "/frobnicate", "/create classic 4 --decks two",
             "/say", "/create classic 4 --name 'unterminated"],
)
def test_bad_commands_say_how_to_type_them(text: str) -> None:
    result = parse_input(text, Context())
    assert isinstance(result, Invalid) and result.message


def test_every_command_example_parses() -> None:
    for spec in COMMANDS:
        assert not isinstance(parse_input(spec.example, Context(at_table=True)), Invalid), spec


def test_completions_are_exactly_the_legal_moves() -> None:
    inputs = move_inputs(LEGAL)
    assert inputs[:2] == ["7h", "qh"]
    assert "js h" in inputs and "jc s" in inputs and inputs[-1] == "draw"
    assert len(inputs) == len(LEGAL)
    # Each completion, typed back, is the move it stands for.
    for text, m in zip(inputs, LEGAL, strict=True):
        assert parse_input(text, TURN) == Move(m)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_no_input_crashes_the_parser(text: str) -> None:
    for ctx in (TURN, Context(), Context(at_table=True)):
        parse_input(text, ctx)
        parse_move(text, ctx)
