"""What the player sees: cards, the status area, the event log, results, help."""

from __future__ import annotations

from typing import Any

import pytest
from client_kit import error, message, seat, table, table_info, update, view, welcome
from prompt_toolkit.styles import default_ui_style, merge_styles
from prompt_toolkit.utils import get_cwidth

from pisyedili.client import render
from pisyedili.client.render import Look, plain
from pisyedili.client.state import ClientState

UNI = Look(unicode=True, color=True)
ASCII = Look(unicode=False, color=False)
NAMES = {0: "you", 1: "ayse", 2: "bot 3"}

VIEW = view()


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
    lines = [plain(f) for f in render.status(VIEW, NAMES, 0, UNI,
                                             render.Moment(legal=legal, clock="12s"))]
    text = "\n".join(lines)
    assert "top 9♥" in text and "stock 23" in text and "deal 2 of 4" in text
    assert "▶ you: 4 cards, 12 pts (12s)" in text
    assert "ayse: 6 cards, 40 pts" in text and "bot 3: 1 card, 0 pts" in text
    # The hand, sorted with colours alternating, numbered as typed.
    assert "hand 1:2♣  2:7♥  3:J♠  4:Q♦" in text
    assert "your move: 2:7♥  draw" in text, "a legal card carries its hand number"


@pytest.mark.rule("C6")
@pytest.mark.rule("C11")
def test_status_shows_named_suit_and_pending_penalty() -> None:
    view_ = view(top="Js", named_suit="h", penalty=6, turn=1, pile=["9c", "Js"])
    text = "\n".join(plain(f) for f in render.status(view_, NAMES, 0, UNI))
    assert "top J♠ named ♥" in text
    assert "7s penalty 6" in text
    assert "waiting for ayse" in text


@pytest.mark.rule("K3")
@pytest.mark.rule("C12")
def test_status_explains_the_opening_and_the_ace_follow_up() -> None:
    cardiva = {**VIEW["options"], "rules": "cardiva", "ten": "bounce", "match_end": "points:101"}
    opening = plain(render.status(view(rules="cardiva", options=cardiva, first_round=2),
                                  NAMES, 0, UNI)[0])
    assert "opening: clubs (K3)" in opening
    ace = plain(render.status(view(must_follow="ace"), NAMES, 0, UNI)[0])
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
        ({"event": "timeout", "seat": 1, "count": 1, "bot": False},
         "ayse ran out of time; the server moves for them"),
        ({"event": "timeout", "seat": 0, "count": 2, "bot": True},
         "you ran out of time again: a stand-in bot plays for you; say anything to take "
         "your seat back"),
        ({"event": "timeout", "seat": 1, "count": 2, "bot": True},
         "ayse ran out of time again: a stand-in bot plays for them until ayse acts"),
        ({"event": "muamele", "seat": 1, "picks": 3, "spread": 1},
         "muamele: ayse picks 3 of 1 face-down card (K14)"),
    ],
)
def test_event_log_lines(event: dict[str, Any], text: str) -> None:
    update([event])  # the event is one a server may send
    assert text in plain(render.event(event, NAMES, UNI))


@pytest.mark.rule("C12a")
def test_with_two_players_a_ten_shows_no_change_of_direction() -> None:
    two = {0: "you", 1: "ayse"}
    reverse = {"event": "reverse", "direction": -1}
    assert plain(render.event(reverse, two, UNI, "classic")) == \
        "10: with two players, play goes on as before (C12a)"
    seen = plain(render.status(view(players=2, hand_counts=[4, 6], scores=[0, 0],
                                    direction=-1), two, 0, UNI)[0])
    assert "top 9♥" in seen and "play goes" not in seen
    three = plain(render.status(view(direction=-1), NAMES, 0, UNI)[0])
    assert "play goes ←" in three, "with three, the direction is worth showing"


def test_event_kinds_unknown_here_are_ignored() -> None:
    newer = {"event": "something_new", "seat": 1, "x": 2}
    update([newer])  # events are an open set: a newer server may send kinds we lack
    assert render.event(newer, NAMES, UNI) == []


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




@pytest.mark.parametrize(("name", "shown"), [
    ("friday", "friday"), ("sixteen-chars-xy", "sixteen-chars-xy"),
    ("a table name forty characters long, full", "a table name forty…"),
    ("日本語の長いテーブル名です", "日本語の長いテーブ…")])
def test_a_lobby_row_keeps_its_columns_whatever_the_name(name: str, shown: str) -> None:
    """Rules, seats and phase start in one column on every row of a page, a wide name
    and the longest a server allows (40) included; a name past 20 columns is cut."""
    page = [{"id": 3, "name": "friday", "rules": "cardiva", "seats": 4, "taken": 2,
             "phase": "waiting"},
            {"id": 12345, "name": name, "rules": "classic", "seats": 2, "taken": 1,
             "phase": "playing"}]
    short, long = (plain(f) for f in render.lobby(page)[1:3])
    at = get_cwidth(short[:short.index("cardiva")])
    assert get_cwidth(long[:long.index("classic")]) == at
    assert long[:long.index("classic")].split(maxsplit=1)[1].rstrip() == shown
    assert long[:long.index("classic")].endswith("  "), "two spaces between the columns"
    alone = plain(render.lobby_table(page[1], None, Look(unicode=False)))
    assert "..." in alone if get_cwidth(name) > 20 else name in alone


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
def test_rules_summary_cites_rule_numbers(rules: str) -> None:
    text = "\n".join(plain(f) for f in render.rules_lines(rules, {"ten": "bounce"}))
    prefix = "C" if rules == "classic" else "K"
    assert f"{prefix}11" in text and f"{prefix}1" in text and "options: 10 bounces" in text


def test_state_follows_a_deal_from_updates() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(view_=VIEW), now=0.0)
    assert not st.my_turn, "a snapshot without moves is not our decision"
    legal = [{"kind": "play", "card": "7h"}, {"kind": "draw"}]
    st.handle(update([], VIEW, moves=legal, deadline=30), now=100.0)
    assert st.my_turn and st.context().hand == ("2c", "7h", "Js", "Qd")
    assert "(28s)" in plain(st.status(now=102.0)[1])
    assert st.context().hand == tuple(st.hand())
    after = view(turn=1, hand=["Qd", "2c", "Js"], hand_counts=[3, 6, 1], top="7h",
                 pile=["9c", "9h", "7h"], penalty=3)
    log = st.handle(update([{"event": "play", "seat": 0, "card": "7h"},
                            {"event": "penalty", "seat": 1, "count": 3}], after,
                           deadline=12.5), now=103.0)
    assert [plain(line) for line in log] == ["you played 7♥",
                                             "ayse must draw 3 or answer with a 7 (C11)"]
    assert not st.my_turn, "the moves offered are gone once the decision moved on"
    assert st.turn_seat == 1 and "▶ ayse: 6 cards, 40 pts (13s)" in plain(
        st.status(now=103.0)[1]), "everyone sees the countdown of whoever acts"
    err = st.handle(error("illegal_card", "9c matches neither the suit nor the rank of 7h",
                          rule="C4"), now=104.0)
    assert plain(err[0]) == "9♣ matches neither the suit nor the rank of 7♥ (rule C4)"


def test_a_snapshot_carries_the_pending_decision() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(view_=VIEW, moves=[{"kind": "draw"}], deadline=20), now=50.0)
    assert st.legal == [{"kind": "draw"}] and st.deadline_at == 70.0
    st.handle(table(view_=view(turn=2)), now=51.0)
    assert not st.my_turn and st.deadline_at is None


@pytest.mark.rule("C13")
def test_a_deal_ends_and_a_match_ends_inside_an_update() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(view_=VIEW, match={"deal_no": 2, "totals": [12, 40, 0]}), now=0.0)
    result = {"reason": "out", "winner": 0, "multiplier": 1, "points": [0, 30, 9],
              "hands": [[], ["7h", "Kd"], ["9d"]]}
    over = view(phase="over", turn=None, hand=[], hand_counts=[0, 2, 1], result=result,
                scores=[12, 70, 9], top="2c", pile=["9c", "9h", "2c"])
    log = [plain(line) for line in st.handle(update([
        {"event": "play", "seat": 0, "card": "2c"},
        {"event": "deal_end", "result": result},
        {"event": "match_end", "totals": [12, 70, 9], "winners": [0]},
    ], over), now=1.0)]
    assert log[0] == "you played 2♣"
    assert log[1] == "deal over: you went out"
    assert "+30 → 70" in log[3], "a deal's totals are the view's scores once it is over"
    # Then the score sheet as this client saw it (the snapshot came without one).
    assert [row.split() for row in log[5:9]] == [
        ["score", "sheet", "(/score;", "*", "the", "deal's", "winner)"],
        ["deal", "you", "ayse", "bot", "3"],
        ["2", "0*", "30", "9"], ["total", "12", "70", "9"]]
    assert log[9] == "match over: you won" and st.match_over
    assert st.totals == [12, 70, 9] and not st.my_turn


def test_state_shows_chat_rematch_and_timeouts() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(table_info(phase="over"), view_=None, match=None), now=0.0)
    chat = st.handle(message("chat", scope="table", name="ayse", text="gg", spectator=False),
                     now=0.0)
    assert plain(chat[0]) == "ayse: gg"
    rematch = st.handle(message("rematch", table=1, agreed=[1]), now=0.0)
    assert plain(rematch[0]) == "rematch: ayse agreed"
    st.handle(table(view_=VIEW, moves=[{"kind": "draw"}]), now=0.0)
    timeout = st.handle(update([{"event": "timeout", "seat": 0, "count": 1, "bot": False},
                                {"event": "draw", "seat": 0, "count": 1, "reason": "draw",
                                 "cards": ["Kc"]}], view(turn=1)), now=0.0)
    assert [plain(line) for line in timeout] == [
        "you ran out of time; the server moves for you", "you drew 1 card: K♣"]
    assert not st.my_turn


def test_seat_changes_are_one_line_each() -> None:
    before = table_info([seat(0, name="me"), seat(1, "open"),
                         seat(2, name="ayse", ready=True)], phase="waiting")
    after = table_info([seat(0, name="me", ready=True),
                        seat(1, "bot", name="bot (hard)", level="hard"),
                        seat(2, name="ayse", ready=True, connected=False,
                             held_by_bot="disconnected")], phase="playing")
    lines = [plain(f) for f in render.seat_changes(before, after, 0)]
    assert lines == ["you are ready", "bot 2 (hard) takes seat 2", "ayse lost the connection",
                     "ayse is away: a stand-in bot plays for them until they are back",
                     "table is now playing"]


def test_lobby_updates_follow_the_table_list() -> None:
    st = ClientState(look=UNI)
    st.handle(message("lobby", tables=[]), now=0.0)
    summary = {"id": 4, "name": "friday", "rules": "classic", "options": {}, "seats": 3,
               "taken": 1, "bots": 0, "spectators": 0, "phase": "waiting", "private": False}
    added = st.handle(message("lobby_update", op="add", table=4, summary=summary), now=0.0)
    assert "#4" in plain(added[0]) and "1/3 seats" in plain(added[0])
    st.handle(message("lobby_update", op="update", table=4, summary={**summary, "taken": 2}),
              now=0.0)
    assert st.lobby[4]["taken"] == 2
    st.handle(message("lobby_update", op="remove", table=4), now=0.0)
    assert st.lobby == {}


def test_a_fresh_session_forgets_the_old_table() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(view_=VIEW), now=0.0)
    st.handle(welcome(resumed=True), now=1.0)
    assert st.at_table, "a resumed session keeps its table until the snapshot comes"
    st.handle(welcome(token="another"), now=2.0)
    assert not st.at_table and st.view is None


def test_a_welcome_says_whether_the_resumed_session_is_an_operators() -> None:
    st = ClientState(look=UNI)
    resumed = {**welcome(resumed=True), "registered": True, "operator": True}
    st.handle(message("welcome", **{k: v for k, v in resumed.items() if k != "type"}),
              now=0.0)
    assert (st.registered, st.operator) == (True, True)
    st.handle(welcome(token="another"), now=1.0)  # a fresh guest session
    assert (st.registered, st.operator) == (False, False)


@pytest.mark.parametrize(("cause", "said"), [
    ("server_gone", "your table was lost: the server that held it went away"),
    ("seat_released", "gave your seat up; join the table again to play on")])
def test_a_table_lost_leaves_it_and_says_why(cause: str, said: str) -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), now=0.0)
    st.handle(table(view_=VIEW), now=0.0)
    assert st.table is not None
    shown = st.handle(message("table_lost", table=st.table["id"] + 1, cause=cause), now=1.0)
    assert st.at_table, "another table's loss is not ours"
    assert said in plain(shown[0])
    st.handle(message("table_lost", table=st.table["id"], cause=cause), now=2.0)
    assert not st.at_table and st.view is None


def test_the_help_overview_lists_help_once_naming_every_topic() -> None:
    text = "\n".join(plain(line) for line in render.help_lines(width=200))  # unwrapped
    (entry,) = [line for line in text.splitlines() if line.lstrip().startswith("/help")]
    for topic in render.HELP_TOPICS:
        assert topic in entry, topic
