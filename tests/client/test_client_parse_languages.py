"""Cards typed in the player's language (Turkish, Russian, Ukrainian, Persian, Thai),
beside the wire notation, which always works."""

from __future__ import annotations

from typing import Any

import pytest

from pisyedili.client import cards
from pisyedili.client.parse import Context, Move, NeedSuit, parse_input, parse_suit_answer

HAND = tuple(cards.sort_hand(["7h", "10s", "Qd", "Js", "Jc", "2c", "Ah"]))
LEGAL: tuple[dict[str, Any], ...] = (
    {"kind": "play", "card": "7h"},
    {"kind": "play", "card": "Ah"},
    *({"kind": "play", "card": j, "suit": s} for j in ("Jc", "Js") for s in "cdhs"),
    {"kind": "draw"},
)
TURN = Context(hand=HAND, legal=LEGAL, my_turn=True, at_table=True)


@pytest.mark.parametrize(("typed", "card"), [
    ("kupa 7", "7h"), ("7 kupa", "7h"), ("kupa as", "Ah"), ("As kupa", "Ah"),
    ("karo kız", "Qd"), ("karo kiz", "Qd"), ("maça 10", "10s"), ("sinek 2", "2c"),
    ("7 червей", "7h"), ("семёрка червей", "7h"), ("туз червей", "Ah"), ("дама бубен", "Qd"),
    ("десятка пик", "10s"), ("сімка чирви", "7h"), ("туз чирви", "Ah"),
    ("دل 7", "7h"), ("دل ۷", "7h"), ("پیک ۱۰", "10s"), ("آس دل", "Ah"), ("โพแดง 7", "7h"),
    ("โพธิ์แดง 7", "7h"),
])
def test_a_card_named_in_words_is_played(typed: str, card: str) -> None:
    assert parse_input(typed, TURN) == Move({"kind": "play", "card": card})


@pytest.mark.parametrize("typed", ["maça vale", "vale maça", "maça bacak", "валет пик",
                                   "سرباز پیک"])
def test_a_jack_named_in_words_asks_for_its_suit(typed: str) -> None:
    assert parse_input(typed, TURN) == NeedSuit("Js")


@pytest.mark.parametrize(("typed", "jack", "suit"), [
    ("sinek vale kupa", "Jc", "h"), ("валет треф черви", "Jc", "h"),
    ("js kupa", "Js", "h"), ("jc пики", "Jc", "s"),
])
def test_a_jack_names_a_suit_in_words(typed: str, jack: str, suit: str) -> None:
    assert parse_input(typed, TURN) == Move({"kind": "play", "card": jack, "suit": suit})


@pytest.mark.parametrize(("answer", "suit"), [
    ("kupa", "h"), ("maça", "s"), ("maca", "s"), ("sinek", "c"), ("karo", "d"),
    ("черви", "h"), ("пики", "s"), ("трефы", "c"), ("бубны", "d"), ("чирви", "h"),
    ("دل", "h"), ("โพดำ", "s"),
])
def test_the_suit_question_takes_the_language_s_names(answer: str, suit: str) -> None:
    assert parse_suit_answer(answer) == suit


@pytest.mark.parametrize(("typed", "move"), [
    ("7h", {"kind": "play", "card": "7h"}),
    ("Js>h", {"kind": "play", "card": "Js", "suit": "h"}),
    ("Jc>s", {"kind": "play", "card": "Jc", "suit": "s"}),
    ("d", {"kind": "draw"}),
])
def test_the_wire_notation_always_works(typed: str, move: dict[str, Any]) -> None:
    assert parse_input(typed, TURN) == Move(move)


def test_a_number_and_a_letter_stay_a_hand_card_naming_a_suit() -> None:
    """`6 h` is hand card 6 naming hearts (a jack there), in every language: only a word of a
    language makes the pair a card, and `j kupa` is a jack naming hearts as `j h` is."""
    six = HAND[5]
    assert six == "Js"
    assert parse_input("6 h", TURN) == Move({"kind": "play", "card": "Js", "suit": "h"})
    assert parse_input("j kupa", TURN) == parse_input("j h", TURN)


def test_persian_digits_pick_a_hand_card() -> None:
    assert parse_input("۳", TURN) == parse_input("3", TURN)


@pytest.mark.parametrize(("typed", "kind"), [
    ("çek", "draw"), ("взять", "draw"), ("узяти", "draw"), ("کشیدن", "draw"), ("برداشتن", "draw"),
    ("จั่ว", "draw"),
    ("pas", "pass"), ("Пас", "pass"), ("پاس", "pass"), ("ผ่าน", "pass"),
])
def test_draw_and_pass_as_the_screen_says_them(typed: str, kind: str) -> None:
    """The legal moves show `çek`, `взять`...: what is shown can be typed."""
    assert parse_input(typed, TURN) == Move({"kind": kind})


@pytest.mark.parametrize(("lang", "typed", "request_"), [
    ("tr", "/create klasik 4", {"type": "create_table", "rules": "classic", "seats": 4}),
    ("ru", "/create Кардива 3", {"type": "create_table", "rules": "cardiva", "seats": 3}),
    ("fa", "/bot 3 سخت", {"type": "add_bot", "seat": 2, "level": "hard"}),
    ("uk", "/bot 2 легкий", {"type": "add_bot", "seat": 1, "level": "easy"}),
    ("th", "/top คลาสสิก", {"type": "leaderboard", "rules": "classic"}),
    ("tr", "/create classic 2", {"type": "create_table", "rules": "classic", "seats": 2}),
])
def test_a_rule_set_or_level_is_typed_as_the_screen_names_it(
        lang: str, typed: str, request_: dict[str, Any]) -> None:
    """The words the screen shows for rule sets and bot levels are understood when
    typed, and the wire's English keys in every language."""
    from pisyedili.client import i18n
    from pisyedili.client.parse import Request

    i18n.set_language(lang)
    try:
        parsed = parse_input(typed, Context(at_table=lang != "th"))
    finally:
        i18n.set_language("en")
    assert isinstance(parsed, Request)
    assert {k: v for k, v in parsed.msg.items() if k in request_} == request_


def test_a_help_topic_is_typed_in_the_language_of_the_screen() -> None:
    from pisyedili.client import i18n, render

    i18n.set_language("tr")
    try:
        assert render.help_lines("masa") == render.help_lines("table")
        assert render.plain(render.help_lines("masa")[0]) == "Masada"
    finally:
        i18n.set_language("en")
