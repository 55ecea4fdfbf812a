"""The screen laid out for a terminal's width: nothing cut off, words kept whole, the
match's progress, help pages that fit, refusals in the screen's own card style, /log."""

from __future__ import annotations

import re

import pytest
from client_kit import OPTIONS, error, message, seat, table, table_info, update, view, welcome
from prompt_toolkit.utils import get_cwidth

from pisyedili.client import cards, render
from pisyedili.client.parse import COMMANDS, Context, Invalid, Local, parse_input
from pisyedili.client.render import Look, Moment, plain
from pisyedili.client.state import ClientState

UNI = Look(unicode=True, color=True)
ASCII = Look(unicode=False, color=False)

HAND = ["2c", "3c", "5c", "9c", "Kc", "3h", "4h", "8h", "Qh", "Ah", "2s", "6s", "10s", "Js",
        "4d", "6d", "9d", "Kd"]
SIX = {**OPTIONS, "players": 6}
SEATS = [seat(0, name="tester"), seat(1, name="Ayşe", connected=False,
                                      held_by_bot="disconnected"),
         *(seat(n, "bot") for n in range(2, 6))]
NAMES = render.seat_names(table_info(SEATS, options=SIX), 0)


def crowded(**changes: object) -> dict[str, object]:
    return view(**{"players": 6, "options": SIX, "hand": HAND, "top": "5d",
                   "hand_counts": [18, 5, 7, 3, 12, 1], "scores": [40, 12, 101, 7, 0, 1],
                   "pile": ["9c", "5d"], "stock": 2, **changes})


def rows(lines: list[render.Fragments]) -> list[str]:
    return [plain(line) for line in lines]


# ------------------------------------------------------------------------- wrapping


def test_wrap_breaks_between_words_and_indents_what_follows() -> None:
    line = [("", "  "), ("class:error", "a refusal that goes on"), ("", " and on " * 8)]
    out = rows(render.wrap(line, 30))
    assert all(get_cwidth(r) <= 30 for r in out)
    assert out[0].startswith("  a refusal") and all(r.startswith("    ") for r in out[1:])
    assert " ".join(r.strip() for r in out).split() == plain(line).split(), "no word cut"
    styles = {style for row in render.wrap(line, 30) for style, _ in row}
    assert "class:error" in styles, "styles survive the wrap"
    assert render.wrap([("", "short")], 30) == [[("", "short")]]


@pytest.mark.parametrize(("look", "mark"), [(UNI, "┆ "), (ASCII, "| ")])
def test_a_padded_chat_line_cannot_pass_for_another_players(look: Look, mark: str) -> None:
    st = ClientState(look=look)
    st.handle(welcome(), 0.0)
    text = "gg" + " " * 40 + "ayse: I resign, type /leave" + " " * 30 + "bob: me too"
    chat = message("chat", name="mallory", text=text, scope="lobby", spectator=False)
    [line] = st.handle(chat, 0.0)
    out = rows(render.wrap(line, 40, mark=render.continued(look)))
    assert out == ["[lobby] mallory: gg", f"{mark}ayse: I resign, type /leave",
                   f"{mark}bob: me too"]
    assert all(r.startswith(mark) for r in out[1:]), "every row after the first is marked"
    cut = rows(render.wrap([("", "x" * 100)], 40, mark=render.continued(look)))
    assert cut[1].startswith(mark), "a word cut at the edge is marked too"
    indented = rows(render.wrap([("", "  " + "word " * 20)], 40, mark=mark))
    assert all(r.startswith(f"  {mark}") for r in indented[1:]), "under the line's indent"


def test_flow_never_splits_an_item() -> None:
    items = [[("", f"{i}:"), ("class:suit-red", "10♥")] for i in range(1, 19)]
    out = rows(render.flow([("", "hand ")], items, 40))
    assert all(get_cwidth(r) <= 40 for r in out) and len(out) > 1
    assert re.findall(r"\d+:10♥", " ".join(out)) == [f"{i}:10♥" for i in range(1, 19)]
    assert all(r.startswith("     ") for r in out[1:]), "continuations under the first item"


# --------------------------------------------------------------------------- status


@pytest.mark.parametrize("width", [80, 120, 60])
def test_every_card_and_every_seat_fit_the_width(width: int) -> None:
    legal = [*({"kind": "play", "card": c} for c in ("5c", "4d", "6d", "9d", "Kd")),
             {"kind": "draw"}]
    lines = rows(render.status(crowded(), NAMES, 0, UNI, Moment(legal=legal, width=width,
                                                                notes={1: "away"})))
    assert all(get_cwidth(r) <= width for r in lines), lines
    text = "\n".join(lines)
    held = cards.sort_hand(list(HAND))
    assert re.findall(r"(\d+):(\S+)", text[text.index("hand "):text.index("your move")]) == [
        (str(i), render.card_text(c, UNI)) for i, c in enumerate(held, 1)]
    for who in ("you: 18 cards", "Ayşe (away): 5 cards", "bot 3:", "bot 4:", "bot 5:",
                "bot 6: 1 card, 1 pt"):
        assert who in text, (who, text)
    assert "your move: 3:5♣  15:4♦  16:6♦  17:9♦  18:K♦  draw" in text.replace("\n     ", "  ")


def test_a_small_terminal_keeps_rows_for_the_log() -> None:
    """At 40×12 the status area takes at most 7 rows (a third of the screen, and the
    prompt, stay for what the others do): compact first, the hand and moves kept."""
    from pisyedili.client.app import status_rows

    assert status_rows(12) == 7 and status_rows(24) == 15
    legal = [{"kind": "play", "card": "5c"}, {"kind": "draw"}]
    small = view(hand=HAND[:7], hand_counts=[7, 6, 5], direction=-1, first_round=1)
    full = rows(render.status(small, {0: "you", 1: "ayse", 2: "bot 3"}, 0, UNI,
                              Moment(legal=legal, width=40)))
    assert len(full) > 7, full
    fitted = rows(render.status(small, {0: "you", 1: "ayse", 2: "bot 3"}, 0, UNI,
                                Moment(legal=legal, width=40, rows=7)))
    assert len(fitted) <= 7 and all(get_cwidth(r) <= 40 for r in fitted), fitted
    text = "\n".join(fitted)
    assert "top 9♥" in text and "ayse: 6 cards" in text and "bot 3: 5 cards" in text
    assert "pts" not in text and "classic" not in text and "opening" not in text
    assert fitted[-3:] == full[-3:], "the hand and the moves as they are"
    roomy = Moment(legal=legal, width=80, rows=15)
    assert render.status(small, NAMES, 0, UNI, roomy) == \
        render.status(small, NAMES, 0, UNI, Moment(legal=legal, width=80)), "room: no change"

    # Six seats and eighteen cards in 7 rows: the seats give up rows, never the hand.
    crammed = rows(render.status(crowded(), NAMES, 0, UNI,
                                 Moment(legal=legal, width=40, rows=7)))
    held = "\n".join(crammed)
    assert len(re.findall(r"\d+:\S+", held[held.index("hand "):held.index("your move")])) == 18


def test_a_hand_can_be_ordered_by_rank() -> None:
    assert cards.sort_hand(["Kd", "2h", "Kc", "2c"], "rank") == ["2c", "2h", "Kc", "Kd"]
    assert cards.sort_hand(["Kd", "2h", "Kc", "2c"]) == ["2c", "Kc", "2h", "Kd"]
    st = ClientState(look=ASCII, hand_order="rank")
    st.handle(welcome(), 0.0)
    st.handle(table(view_=view(hand=["Qd", "7h", "2c", "Js"])), 0.0)
    assert st.hand() == ["2c", "7h", "Js", "Qd"] and st.context().hand == tuple(st.hand())
    assert "hand 1:2c  2:7h  3:Js  4:Qd" in "\n".join(rows(st.status(0.0)))


@pytest.mark.rule("C16")
@pytest.mark.rule("K15")
def test_the_status_line_says_how_far_the_match_is() -> None:
    assert render.progress(OPTIONS, 2) == ["deal 2 of 4"]
    cardiva = {**OPTIONS, "rules": "cardiva", "match_end": "points:101"}
    first = plain(render.status(view(rules="cardiva", options=cardiva, deal_no=3), NAMES, 0,
                                ASCII)[0])
    assert first.startswith("cardiva | deal 3 | to 101 | top 9h")


def state_at_deal_end(pause: float | None) -> ClientState:
    st = ClientState(look=UNI, deal_pause=pause)
    st.handle(welcome(), 0.0)
    st.handle(table(view_=view(), moves=[{"kind": "draw"}], deadline=30), 0.0)
    result = {"reason": "out", "winner": 1, "multiplier": 1, "points": [25, 0, 9],
              "hands": [["Qd", "7h"], [], ["9d"]]}
    over = view(phase="over", turn=None, hand=["Qd", "7h"], hand_counts=[2, 0, 1],
                scores=[37, 40, 9], result=result)
    st.handle(update([{"event": "play", "seat": 1, "card": "9c"},
                      {"event": "deal_end", "result": result}], over), 100.0)
    return st


def test_between_deals_the_status_counts_down_to_the_next() -> None:
    st = state_at_deal_end(4.0)
    first = plain(st.status(101.0)[0])
    assert first == "classic · deal 2 of 4 · deal over · next deal in 3s", first
    assert "▶" not in "\n".join(rows(st.status(101.0))), "nobody's turn, no stale clock"
    assert "next deal in 0s" in plain(st.status(200.0)[0])
    # Not told the pause (a network game): "shortly", then learnt from the first one.
    st = state_at_deal_end(None)
    assert plain(st.status(101.0)[0]).endswith("next deal shortly")
    st.handle(update([{"event": "deal_start", "deal_no": 3, "dealer": 0}], view(deal_no=3)),
              105.0)
    assert st.deal_pause == 5 and st.next_deal_at is None


def test_after_the_match_the_status_says_so() -> None:
    st = state_at_deal_end(4.0)
    st.handle(update([{"event": "match_end", "totals": [37, 40, 9], "winners": [2]}],
                     view(phase="over", turn=None, scores=[37, 40, 9])), 101.0)
    first = "\n".join(rows(st.status(102.0)))
    assert "match over: bot 3 won" in first and "next deal" not in first
    assert "/rematch to play again" in first
    # A snapshot of a table whose match is over says the same (the winners from totals).
    st.handle(table(table_info(phase="over"), view_=view(phase="over", turn=None),
                    match={"deal_no": 4, "totals": [37, 40, 9]}), 103.0)
    assert "match over: bot 3 won" in plain(st.status(103.0)[0])


def test_a_lost_connection_shows_and_nothing_counts_down() -> None:
    st = ClientState(look=UNI)
    st.handle(welcome(), 0.0)
    st.handle(table(view_=view(turn=1), deadline=30), 0.0)
    lines = rows(st.status(1.0, link="reconnecting"))
    assert lines[0].startswith("disconnected — reconnecting · classic")
    assert "(29s)" not in "\n".join(lines) and "waiting for" not in "\n".join(lines)
    assert "(29s)" in "\n".join(rows(st.status(1.0)))
    assert rows(st.status(1.0, link="gone"))[0].startswith("disconnected · classic")
    lobby = ClientState(look=ASCII)
    assert rows(lobby.status(0.0, link="connecting")) == [
        "connecting to the server | lobby: 0 tables; /help for commands"]


def test_plurals() -> None:
    st = ClientState(look=ASCII)
    st.handle(message("lobby", tables=[{
        "id": 1, "name": "a", "rules": "classic", "options": OPTIONS, "seats": 2, "taken": 1,
        "bots": 1, "spectators": 0, "phase": "waiting", "private": False}]), 0.0)
    assert rows(st.status(0.0)) == ["lobby: 1 table; /help for commands"]
    seats = "\n".join(rows(render.status(view(hand_counts=[1, 2, 1], scores=[1, 0, 2]),
                                         {0: "you", 1: "ayse", 2: "bot 3"}, 0, ASCII)))
    assert "you: 1 card, 1 pt" in seats and "ayse: 2 cards, 0 pts" in seats
    spread = plain(render.spread({"seat": 0, "picks": 1, "spread": 1}, {0: "you"}, ASCII))
    assert "pick 1 more of 1 face-down card:" in spread


# ------------------------------------------------------------------------- presence


def test_a_bot_released_at_the_match_end_does_not_bring_its_player_back() -> None:
    held = table_info([seat(0, name="me"), seat(1, name="Ayşe", connected=False,
                                                 held_by_bot="disconnected")])
    released = table_info([seat(0, name="me"), seat(1, name="Ayşe", connected=False)],
                          phase="over")
    lines = rows(render.seat_changes(held, released, 0))
    assert lines == ["table is now over"], "Ayşe is still away: nobody plays again"
    back = table_info([seat(0, name="me"), seat(1, name="Ayşe", connected=True)])
    assert rows(render.seat_changes(held, back, 0)) == ["Ayşe is back and plays again"]
    idle = table_info([seat(0, name="me", held_by_bot="idle"), seat(1, name="Ayşe")])
    assert rows(render.seat_changes(table_info([seat(0, name="me"), seat(1, name="Ayşe")]),
                                    idle, 0)) == [
        "a stand-in bot plays for you: say anything to take your seat back"]


def test_seats_say_who_is_away_and_who_a_bot_plays_for() -> None:
    st = ClientState(look=ASCII)
    st.handle(welcome(), 0.0)
    st.handle(table(table_info(SEATS[:3]), view_=view()), 0.0)
    assert st.notes() == {1: "away, bot plays"}
    assert "Ayşe (away, bot plays): 6 cards" in "\n".join(rows(st.status(0.0)))


# ----------------------------------------------------------------------------- help


@pytest.mark.parametrize("topic", ["", "moves", "table", "lobby", "screen", "create", "log",
                                   "replay", "history", "export", "account", "operator"])
def test_each_help_page_fits_80_by_24(topic: str) -> None:
    lines = rows(render.help_lines(topic, 80))
    # A page leaves room for the status area (up to 8 rows) and the prompt.
    assert len(lines) <= 15 and all(get_cwidth(r) <= 80 for r in lines), lines
    assert "Unknown" not in lines[0] and "No help" not in lines[0]


@pytest.mark.parametrize("where", render.PLACES)
def test_help_alone_shows_what_can_be_done_where_the_player_stands(where: str) -> None:
    lines = rows(render.help_lines("", 80, where=where))
    assert len(lines) <= 15 and all(get_cwidth(r) <= 80 for r in lines), lines
    text = "\n".join(lines)
    assert ("On your turn" in text) == (where == "playing"), "moves only where they are made"
    assert ("/create" in text) == (where == "lobby")
    assert ("/ready" in text) == (where == "table")
    assert ("/history" in text) == (where in ("lobby", "replay"))
    assert ("/leave" in text) == (where in ("table", "playing", "watching"))
    assert ("n or next" in text) == (where == "replay")
    if where == "lobby":
        assert lines == rows(render.help_lines("lobby", 80, where="playing")), \
            "/help lobby is the same page from anywhere"


def test_the_state_knows_where_the_player_stands() -> None:
    st = ClientState(look=ASCII)
    st.handle(welcome(), 0.0)
    assert st.place() == "lobby"
    st.handle(table(table_info(phase="waiting"), view_=None), 1.0)
    assert st.place() == "table"
    st.handle(table(view_=view()), 2.0)
    assert st.place() == "playing"
    st.handle(table(you_seat=None, spectator=True, view_=view(hand=None)), 3.0)
    assert st.place() == "watching"
    st.handle(table(table_info(phase="over"), view_=view(phase="over")), 4.0)
    assert st.place() == "table", "after the match: rematch or leave"


def test_every_command_is_on_a_help_page() -> None:
    pages = "\n".join(plain(f) for t in ("", "table", "lobby", "invite", "replay", "account",
                                         "operator")
                      for f in render.help_lines(t, 80))
    for c in COMMANDS:
        assert c.usage in pages, c.name
    assert "No help on 'poker'" in plain(render.help_lines("poker")[0])


def test_help_wraps_between_words_at_40_columns() -> None:
    for line in rows(render.help_lines("", 40)):
        assert get_cwidth(line) <= 40
    words = " ".join(rows(render.help_lines("", 40))).split()
    assert " ".join(rows(render.help_lines("", 200))).split() == words


# ------------------------------------------------------------------------- refusals


@pytest.mark.rule("C4")
def test_a_refusal_draws_cards_as_the_screen_does_and_cites_the_rule() -> None:
    refused = error("illegal_card", "2c matches neither the suit nor the rank of 5d",
                    rule="C4")
    assert plain(render.refusal(refused, UNI)) == (
        "2♣ matches neither the suit nor the rank of 5♦ (rule C4)")
    assert plain(render.refusal(refused, ASCII)) == (
        "2c matches neither the suit nor the rank of 5d (rule C4)")
    red = [style for style, text in render.refusal(refused, UNI) if text == "5♦"]
    assert red == ["class:suit-red"]


@pytest.mark.rule("C6")
def test_refusals_name_suits_and_seats_as_the_screen_does() -> None:
    asks = error("illegal_card", "the jack on top asks for s", rule="C6")
    assert plain(render.refusal(asks, UNI)) == "The jack on top asks for ♠ (rule C6)"
    assert plain(render.refusal(asks, ASCII)) == "The jack on top asks for spades (rule C6)"
    taken = error("seat_taken", "seat 2 is not open", seat=2)
    assert plain(render.refusal(taken, ASCII)) == "Seat 3 is not open"
    waiting = error("table_not_ready", "every seat must be filled and ready",
                    waiting_for=[1, 2])
    assert plain(render.refusal(waiting, ASCII)).endswith("(waiting for seats 2, 3)")
    st = ClientState(look=UNI)
    [line] = st.handle(error("game_in_progress", "seats cannot change during a match"), 0.0)
    assert plain(line) == "Seats cannot change during a match", "no internal code"


def test_the_clients_own_refusals_draw_cards_too() -> None:
    parsed = parse_input("8s", Context(hand=("7h", "Qd"), my_turn=True, at_table=True))
    assert isinstance(parsed, Invalid) and parsed.cards
    assert plain(render.with_cards(parsed.message, UNI)) == "You do not hold 8♠."
    assert plain(render.with_cards("the 7s' penalty; 10 seconds", UNI)) == (
        "the 7s' penalty; 10 seconds"), "only cards are redrawn"


# ------------------------------------------------------------------------------ log


def test_log_pages_fit_the_rows_and_keep_lines_whole() -> None:
    lines = [[("", f"bot {i % 5 + 2} played 7♥, and this line is long enough to wrap "
                   "at forty columns")] for i in range(30)]
    page = rows(render.log_page(lines, 1, 10, 40, 3))
    assert len(page) <= 10 and all(get_cwidth(r) <= 40 for r in page)
    assert page[0].startswith("deal 3, page 1 of") and "/log 2" in page[0]
    assert page[-1].startswith("┆ ") and "wrap" in page[-2] + page[-1], "the newest, whole"
    assert rows(render.log_page(lines, 1, 10, 40, 3, ASCII))[-1].startswith("| ")
    last = rows(render.log_page(lines, 99, 10, 40, 3))
    assert "bot 2 played" in last[1], "the oldest page starts with the first line"
    assert rows(render.log_page([], 1, 10, 40)) == ["Nothing has happened in this deal yet."]


def test_the_deal_log_holds_this_deals_events() -> None:
    st = ClientState(look=ASCII)
    st.handle(welcome(), 0.0)
    st.handle(table(view_=view()), 0.0)
    st.handle(update([{"event": "play", "seat": 1, "card": "9h"}], view()), 1.0)
    st.handle(update([{"event": "deal_start", "deal_no": 3, "dealer": 1}], view(deal_no=3)),
              2.0)
    st.handle(update([{"event": "play", "seat": 2, "card": "9c"},
                      {"event": "draw", "seat": 0, "count": 1, "reason": "draw",
                       "cards": ["Kc"]}], view(deal_no=3)), 3.0)
    assert rows(st.deal_log) == ["-- deal 3 -- ayse dealt", "bot 3 played 9c",
                                 "you drew 1 card: Kc"]
    st.handle(table(view_=view(deal_no=3)), 4.0)
    assert len(st.deal_log) == 3, "a resync of the same deal keeps what was seen"


def test_a_snapshot_brings_the_deal_so_far_into_the_log() -> None:
    """After `play --continue` (a fresh client, a table mid-deal) the snapshot's
    `deal_events` are the deal so far: shown once, and /log holds them."""
    st = ClientState(look=ASCII)
    st.handle(welcome(resumed=True), 0.0)
    so_far = [{"event": "play", "seat": 1, "card": "9h"},
              {"event": "draw", "seat": 2, "count": 1, "reason": "draw"},
              {"event": "play", "seat": 0, "card": "9c"}]
    shown = rows(st.handle(table(view_=view(deal_no=3, dealer=1), deal_events=so_far), 1.0))
    told = ["-- deal 3 -- ayse dealt", "ayse played 9h", "bot 3 drew 1 card", "you played 9c"]
    assert shown[-4:] == told
    assert rows(st.deal_log) == told

    # A resume of the same deal adds only what was missed meanwhile, said so.
    st.handle(update([{"event": "pass", "seat": 1}], view(deal_no=3, dealer=1)), 2.0)
    later = [*so_far, {"event": "pass", "seat": 1}, {"event": "play", "seat": 2, "card": "9d"}]
    shown = rows(st.handle(table(view_=view(deal_no=3, dealer=1), deal_events=later), 3.0))
    assert shown[-2:] == ["while you were away:", "bot 3 played 9d"]
    assert rows(st.deal_log) == [*told, "ayse passed", "bot 3 played 9d"]
    st.handle(table(view_=view(deal_no=3, dealer=1), deal_events=later), 4.0)
    assert len(st.deal_log) == 6, "a resync with nothing new adds nothing"


def test_new_commands_parse() -> None:
    ctx = Context(at_table=True)
    assert parse_input("/sort rank", ctx) == Local("sort", "rank")
    assert parse_input("/sort", ctx) == Local("sort", "")
    assert isinstance(parse_input("/sort colour", ctx), Invalid)
    assert parse_input("/bell off", ctx) == Local("bell", "off")
    assert parse_input("/log", ctx) == Local("log", "1")
    assert parse_input("/log 3", ctx) == Local("log", "3")
    assert isinstance(parse_input("/log 0", ctx), Invalid)
    assert parse_input("/help moves", ctx) == Local("help", "moves")
