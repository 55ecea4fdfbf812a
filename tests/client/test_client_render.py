"""What the player sees: cards, the status area, the event log, results, help."""

from __future__ import annotations

from typing import Any

import pytest
from prompt_toolkit.styles import default_ui_style, merge_styles

from pisyedili.client import render
from pisyedili.client.parse import COMMANDS
from pisyedili.client.render import Look, plain
from pisyedili.client.state import ClientState

UNI = Look(unicode=True, color=True)
ASCII = Look(unicode=False, color=False)
NAMES = {0: "you", 1: "ayse", 2: "bot 3"}

VIEW: dict[str, Any] = {
    "rules": "classic", "players": 3, "dealer": 2, "phase": "play", "turn": 0,
    "direction": 1, "hand": ["Qd", "7h", "2c", "Js"], "hand_counts": [4, 6, 1],
    "top": "9h", "named_suit": None, "stock": 23, "penalty": 0, "scores": [12, 40, 0],
    "deal_no": 2,
}


def test_hearts_and_diamonds_are_red_clubs_and_spades_are_not() -> None:
    assert render.card("7h", UNI) == [("class:suit-red", "7♥")]
    assert render.card("Qd", UNI) == [("class:suit-red", "Q♦")]
    assert render.card("10s", UNI) == [("class:suit-black", "10♠")]
    assert render.card(0, UNI) == [("class:suit-black", "2♣")], "engine ints are understood too"


def test_ascii_look_has_no_suit_symbols() -> None:
    assert plain(render.card_list(["7h", "10s", "Jc", "Ad"], ASCII)) == "7h 10s Jc Ad"


def test_no_color_style_has_no_colours() -> None:
    coloured = render.make_style(Look(color=True))
    bare = render.make_style(Look(color=False))
    assert "#e03030" in str(coloured.style_rules)
    assert all("#" not in rule for _, rule in bare.style_rules)
    # Black suits keep the terminal's foreground: pure black vanishes on a dark terminal.
    merged = merge_styles([default_ui_style(), coloured])
    assert merged.get_attrs_for_style_str("class:bottom-toolbar class:suit-black").color == ""
    assert merged.get_attrs_for_style_str("class:suit-red").color == "e03030"


def test_status_shows_everything_a_player_needs() -> None:
    legal = [{"kind": "play", "card": "7h"}, {"kind": "draw"}]
    lines = [plain(f) for f in render.status(VIEW, NAMES, 0, UNI, legal, clock="12s")]
    text = "\n".join(lines)
    assert "top 9♥" in text and "stock 23" in text and "deal 2" in text
    assert "▶ you: 4 cards, 12 pts (12s)" in text
    assert "ayse: 6 cards, 40 pts" in text and "bot 3: 1 cards, 0 pts" in text
    # The hand, sorted with colours alternating, numbered as typed.
    assert "hand 1:2♣  2:7♥  3:J♠  4:Q♦" in text
    assert "your move: 7♥  draw" in text


@pytest.mark.rule("C6")
@pytest.mark.rule("C11")
def test_status_shows_named_suit_and_pending_penalty() -> None:
    view = {**VIEW, "top": "Js", "named_suit": "h", "penalty": 6, "turn": 1}
    text = "\n".join(plain(f) for f in render.status(view, NAMES, 0, UNI))
    assert "top J♠ named ♥" in text
    assert "7s penalty 6" in text
    assert "waiting for ayse" in text


@pytest.mark.rule("K3")
@pytest.mark.rule("C12")
def test_status_explains_the_opening_and_the_ace_follow_up() -> None:
    opening = plain(render.status({**VIEW, "rules": "cardiva", "first_round": True},
                                  NAMES, 0, UNI)[0])
    assert "opening: clubs (K3)" in opening
    ace = plain(render.status({**VIEW, "must_follow": "ace"}, NAMES, 0, UNI)[0])
    assert "ace: one more card (C12)" in ace


def test_playable_cards_are_marked_in_the_hand() -> None:
    frags = render.hand(["2c", "7h"], UNI, [{"kind": "play", "card": "7h"}])
    styles = {text: style for style, text in frags}
    assert "underline" in styles["7♥"] and "underline" not in styles["2♣"]


@pytest.mark.rule("C5")
def test_legal_hint_folds_a_jack_offered_for_every_suit() -> None:
    legal = [{"kind": "play", "card": "Js", "suit": s} for s in "cdhs"] + [{"kind": "draw"}]
    assert plain(render.legal_hint(legal, UNI)) == "J♠+suit  draw"


@pytest.mark.rule("K14")
def test_muamele_hint_and_spread() -> None:
    legal = [{"kind": "pick", "position": p} for p in range(5)]
    assert "type a number 1-5" in plain(render.legal_hint(legal, UNI))
    spread = plain(render.spread({"seat": 1, "picks": 3, "spread": 5}, NAMES, ASCII))
    assert spread == "muamele ayse picks 3 more of 5 face-down cards: ##### (1-5)"


@pytest.mark.parametrize(
    ("event", "text"),
    [
        ({"event": "play", "seat": 1, "card": "7h"}, "ayse played 7♥"),
        ({"event": "play", "seat": 0, "card": "Js", "suit": "d"}, "you played J♠, naming ♦"),
        ({"event": "penalty", "seat": 2, "count": 6}, "bot 3 must draw 6"),
        ({"event": "draw", "seat": 0, "count": 1, "reason": "draw", "cards": ["Kc"]},
         "you drew 1 card: K♣"),
        ({"event": "draw", "seat": 1, "count": 3, "reason": "penalty"}, "ayse drew 3 cards"),
        ({"event": "skip", "seat": 2}, "bot 3 is skipped (8, C9)"),
        ({"event": "bounce", "seat": 1}, "bounces back to ayse (K9)"),
        ({"event": "reverse", "direction": -1}, "reversed (C10)"),
        ({"event": "pass", "seat": 2}, "bot 3 passed"),
        ({"event": "pick", "seat": 1, "position": 0, "card": "7c", "picks": 5},
         "ayse picked card 1: 7♣ (5 picks left)"),
        ({"event": "something_new", "seat": 1, "x": 2}, "ayse: something new (x 2)"),
    ],
)
def test_event_log_lines(event: dict[str, Any], text: str) -> None:
    assert text in plain(render.event(event, NAMES, UNI))


@pytest.mark.rule("C11")
@pytest.mark.rule("K7")
def test_event_lines_cite_the_table_rule_set() -> None:
    penalty = {"event": "penalty", "seat": 1, "count": 3}
    assert plain(render.event(penalty, NAMES, UNI, "classic")).endswith("(C11)")
    assert plain(render.event(penalty, NAMES, UNI, "cardiva")).endswith("(K7)")


@pytest.mark.rule("C13")
@pytest.mark.rule("C14")
def test_deal_result_reveals_every_hand_and_the_points() -> None:
    result = {"reason": "out", "winner": 1, "multiplier": 2, "points": [30, 0, 50],
              "hands": [["Qd", "Jc"], [], ["7h", "7s", "Kd"]]}
    lines = [plain(f) for f in render.deal_result(result, [42, 40, 50], NAMES, UNI)]
    assert lines[0] == "deal over: ayse went out, penalties ×2"
    assert "J♣ Q♦" in lines[1] and "+30 → 42" in lines[1]
    assert "(out)" in lines[2]
    assert "7♥ 7♠ K♦" in lines[3]


@pytest.mark.rule("C16")
@pytest.mark.rule("C15")
def test_a_stock_out_names_the_lowest_hand() -> None:
    result = {"reason": "stock_out", "winner": 0, "multiplier": 1, "points": [3, 20, 9],
              "hands": [["3c"], ["7h"], ["9d"]]}
    head = plain(render.deal_result(result, [3, 20, 9], NAMES, UNI)[0])
    assert head == "deal over: the stock ran out; you have the lowest hand"


def test_match_result_lists_totals_lowest_first_and_offers_a_rematch() -> None:
    lines = [plain(f) for f in render.match_result([80, 35, 120], [1], NAMES)]
    assert lines[0] == "match over: ayse won"
    assert [ln.split()[0] for ln in lines[1:4]] == ["ayse", "you", "bot"]
    assert "/rematch" in lines[-1]


def test_lobby_rows() -> None:
    rows = [plain(f) for f in render.lobby([
        {"id": 3, "name": "friday", "rules": "cardiva", "seats": 4, "taken": 2, "bots": 1,
         "phase": "waiting", "private": True}])]
    assert "#3" in rows[1] and "cardiva" in rows[1] and "2/4 seats (1 bot)" in rows[1]
    assert "private" in rows[1]
    assert "No tables" in plain(render.lobby([])[0])


def test_help_lists_every_command_with_an_example() -> None:
    text = "\n".join(plain(f) for f in render.help_lines())
    for c in COMMANDS:
        assert c.example in text


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
def test_rules_summary_cites_rule_numbers(rules: str) -> None:
    text = "\n".join(plain(f) for f in render.rules_lines(rules, {"ten": "bounce"}))
    prefix = "C" if rules == "classic" else "K"
    assert f"{prefix}11" in text and f"{prefix}1" in text and "ten bounce" in text


def test_state_follows_a_deal_from_messages() -> None:
    st = ClientState(look=UNI)
    table = {"id": 1, "rules": "classic", "seats": [
        {"seat": 0, "kind": "human", "name": "me"},
        {"seat": 1, "kind": "human", "name": "ayse"},
        {"seat": 2, "kind": "bot", "name": "bot 3", "level": "easy"}]}
    st.handle({"type": "table", "table": table, "you": {"seat": 0, "spectator": False},
               "view": VIEW}, now=0.0)
    st.handle({"type": "turn", "table": 1, "seat": 0, "deadline": 30,
               "moves": [{"kind": "play", "card": "7h"}, {"kind": "draw"}]}, now=100.0)
    assert st.my_turn and st.context().hand == ("2c", "7h", "Js", "Qd")
    assert "(28s)" in plain(st.status(now=102.0)[1])
    log = st.handle({"type": "event", "table": 1,
                     "event": {"event": "play", "seat": 0, "card": "7h"},
                     "view": {**VIEW, "turn": 1, "hand": ["Qd", "2c", "Js"]}}, now=103.0)
    assert plain(log[0]) == "you played 7♥"
    assert not st.my_turn, "the moves offered are gone once the turn moved on"
    err = st.handle({"type": "error", "code": "illegal_card", "rule": "C4",
                     "message": "9c matches neither the suit nor the rank of 7h"}, now=104.0)
    assert plain(err[0]).startswith("9c matches neither") and "(C4)" in plain(err[0])


def test_state_counts_down_another_seats_turn_from_clock() -> None:
    st = ClientState(look=UNI)
    table = {"id": 1, "rules": "classic", "seats": [
        {"seat": 0, "kind": "human", "name": "me"},
        {"seat": 1, "kind": "human", "name": "ayse"}]}
    st.handle({"type": "table", "table": table, "you": {"seat": 0, "spectator": False},
               "view": VIEW}, now=0.0)
    st.handle({"type": "clock", "table": 1, "seat": 1, "deadline": 30}, now=100.0)
    status = plain(st.status(now=110.0)[1])
    assert st.turn_seat == 1 and not st.my_turn
    assert "(20s)" in status


def test_state_shows_chat_rematch_and_timeouts() -> None:
    st = ClientState(look=UNI)
    table = {"id": 1, "rules": "classic", "phase": "over", "seats": [
        {"seat": 0, "kind": "human", "name": "me"},
        {"seat": 1, "kind": "human", "name": "ayse"}]}
    st.handle({"type": "table", "table": table, "you": {"seat": 0, "spectator": False},
               "view": None, "match": None}, now=0.0)
    chat = st.handle({"type": "chat", "scope": "table", "name": "ayse", "text": "gg",
                      "spectator": False}, now=0.0)
    assert plain(chat[0]) == "ayse: gg"
    rematch = st.handle({"type": "rematch", "table": 1, "agreed": [1]}, now=0.0)
    assert plain(rematch[0]) == "rematch: ayse agreed"
    st.legal = [{"kind": "draw"}]
    timeout = st.handle({"type": "timeout", "table": 1, "seat": 0}, now=0.0)
    assert "you ran out of time" in plain(timeout[0]) and not st.my_turn


def test_seat_changes_are_one_line_each() -> None:
    before = {"phase": "waiting", "seats": [
        {"seat": 0, "kind": "human", "name": "me", "ready": False, "connected": True},
        {"seat": 1, "kind": "open", "ready": False, "connected": True},
        {"seat": 2, "kind": "human", "name": "ayse", "ready": True, "connected": True}]}
    after = {"phase": "playing", "seats": [
        {"seat": 0, "kind": "human", "name": "me", "ready": True, "connected": True},
        {"seat": 1, "kind": "bot", "name": "bot (hard)", "level": "hard", "ready": True,
         "connected": True},
        {"seat": 2, "kind": "human", "name": "ayse", "ready": True, "connected": False,
         "held_by_bot": True}]}
    lines = [plain(f) for f in render.seat_changes(before, after, 0)]
    assert lines == ["you are ready", "bot 2 (hard) takes seat 2",
                     "a bot plays for ayse until ayse acts", "ayse lost the connection",
                     "table is now playing"]


def test_lobby_updates_follow_the_table_list() -> None:
    st = ClientState(look=UNI)
    st.handle({"type": "lobby", "tables": []}, now=0.0)
    summary = {"id": 4, "name": "friday", "rules": "classic", "options": {}, "seats": 3,
               "taken": 1, "bots": 0, "spectators": 0, "phase": "waiting", "private": False}
    added = st.handle({"type": "lobby_update", "op": "add", "table": 4, "summary": summary},
                      now=0.0)
    assert "#4" in plain(added[0]) and "1/3 seats" in plain(added[0])
    st.handle({"type": "lobby_update", "op": "update", "table": 4,
               "summary": {**summary, "taken": 2}}, now=0.0)
    assert st.lobby[4]["taken"] == 2
    st.handle({"type": "lobby_update", "op": "remove", "table": 4}, now=0.0)
    assert st.lobby == {}


def test_a_fresh_session_forgets_the_old_table() -> None:
    st = ClientState(look=UNI)
    welcome = {"type": "welcome", "player": 1, "name": "me", "token": "t"}
    st.handle(welcome, now=0.0)
    st.handle({"type": "table", "table": {"id": 1, "seats": []}, "you": {"seat": 0},
               "view": VIEW}, now=0.0)
    st.handle({**welcome, "resumed": True}, now=1.0)
    assert st.at_table, "a resumed session keeps its table until the snapshot comes"
    st.handle(welcome, now=2.0)
    assert not st.at_table and st.view is None
