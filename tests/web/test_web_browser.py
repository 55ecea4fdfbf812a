"""The web client in a real browser (headless Chromium), against a real server process.

One server and one browser serve the whole module; each test starts from a fresh page
with an empty `localStorage`, so it is a new player. Waits are on the DOM (see
`browser_kit`), and the TCP player of the mixed table is a blocking socket client
written from docs/protocol.md, read with a short timeout while the browser moves.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fork_kit
import msgpack
import pytest
from browser_kit import Page, assert_headings_align, set_viewport
from catalog_kit import BUILT, build_all
from process_output import PLAY, Output
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer, served

Msg = dict[str, Any]


@contextmanager
def seeded_server(page: Page, seed: str) -> Iterator[WebServer]:
    """A server of its own whose shuffles follow `seed` (the bots' play follows), so a
    test meets the same deal every time. The page leaves it before it stops, so no
    reconnecting page logs a refused connection."""
    with served("--seed", seed) as srv:
        try:
            yield srv
        finally:
            page.driver.get("about:blank")


class TcpPlayer:
    """A blocking protocol client over TCP: 4-byte big-endian length, one msgpack map."""

    FEATURES: tuple[str, ...] = ("chat", "rematch")
    """What its `hello` asks for."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""
        self.seen: list[Msg] = []
        self.moves: list[Msg] = []
        self.next_id = 1
        self.send({"type": "hello", "protocol": 2, "name": name,
                   "features": list(self.FEATURES)})
        self.welcome = self.until(lambda m: m["type"] == "welcome")

    def send(self, msg: Msg) -> int:
        rid = self.next_id
        self.next_id += 1
        body = msgpack.packb({**msg, "id": rid}, use_bin_type=True)
        self.sock.sendall(struct.pack(">I", len(body)) + body)
        return rid

    def request(self, msg: Msg) -> Msg:
        rid = self.send(msg)
        reply = self.until(lambda m: m.get("id") == rid)
        assert reply["type"] != "error", reply
        return reply

    def poll(self, timeout: float) -> Msg | None:
        """The next message, or None if none came within `timeout` seconds."""
        self.sock.settimeout(timeout)
        try:
            while len(self.buffer) < 4 or len(self.buffer) < 4 + self._length():
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError(
                        f"the server closed the connection after {self.seen[-3:]}")
                self.buffer += chunk
        except TimeoutError:
            return None
        n = self._length()
        msg: Msg = msgpack.unpackb(self.buffer[4:4 + n], raw=False)
        self.buffer = self.buffer[4 + n:]
        self.seen.append(msg)
        if msg["type"] == "ping":
            self.send({"type": "pong"})
        if msg["type"] in ("update", "table"):
            self.moves = list(msg.get("moves", []))
        return msg

    def _length(self) -> int:
        return int(struct.unpack(">I", self.buffer[:4])[0])

    def until(self, pred: Any, timeout: float = 10.0) -> Msg:
        msg = self.poll(timeout)
        while msg is not None and not pred(msg):
            msg = self.poll(timeout)
        if msg is None:
            raise AssertionError(f"no such message in {timeout}s; seen {self.seen[-5:]}")
        return msg

    def close(self) -> None:
        self.sock.close()


def legal_cards_shown(page: Page) -> set[str]:
    return {str(card) for card in page.attrs("#hand button.card.legal", "data-card")}


def offered_cards(page: Page) -> set[str]:
    moves = page.state("moves")
    return {m["card"] for m in moves if m["kind"] == "play"}


def test_a_whole_deal_against_bots_from_the_lobby(page: Page, server: WebServer) -> None:
    """Name, lobby, a new table with options, two bots, start, a whole one-deal match by
    clicks (the highlighted cards are exactly the server's legal plays), the results,
    then a rematch."""
    page.open(server.url)
    page.name_and_enter("Ayşe")
    page.css("#rules").send_keys("Classic")
    page.css("#seats").send_keys("3")
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys("1")
    page.css("#turn_seconds").send_keys("0")
    page.css("#table_name").send_keys("Friday")
    page.click("#create")
    page.wait_screen("table")
    assert page.text("#table-title") == "Friday"
    assert page.state("table.options.match_end") == "deals:1"
    assert page.state("table.options.turn_seconds") == 0
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.click('.seat-row[data-seat="2"] .add-bot')
    page.wait(lambda d: page.state("table.seats.every(s => s.kind !== 'open')"), what="two bots")
    assert page.state("table.seats.map(s => s.kind)") == ["human", "bot", "bot"]
    page.click("#start")
    page.wait(lambda d: page.body("tablePhase") == "playing", what="the match to start")

    turns = 0
    while True:
        page.wait(lambda d: page.body("turn") == "mine" or page.body("phase") == "over",
                  what="our turn or the deal's end")
        if page.body("phase") == "over":
            break
        assert legal_cards_shown(page) == offered_cards(page)
        assert page.enabled("#draw") == any(
            m["kind"] == "draw" for m in page.state("moves"))
        page.take_turn()
        turns += 1
    assert turns > 0

    result = page.wait_css("#deal-result")
    rows = result.find_elements("css selector", "table:not(.sheet) tbody tr")
    assert len(rows) == 3
    points = page.state("view.result.points")
    for row, pts in zip(rows, points, strict=True):
        assert f"+{pts}" in row.text
    assert_headings_align(page, "#deal-result table")
    assert "Deal over" in page.log_text()
    match = page.wait_css("#match-result")
    assert "Match over" in match.text
    assert page.body("tablePhase") == "over"

    page.click("#rematch")  # bots always agree: a new match starts at once
    page.wait(lambda d: page.body("tablePhase") == "playing" and page.body("phase") == "play",
              what="the rematch to start")
    assert not page.all("#match-result")


def test_a_browser_player_and_a_tcp_client_at_one_table(page: Page, server: WebServer) -> None:
    """The lobby updates live; the browser joins a TCP player's table, they chat, ready,
    start and play a deal to its end, each seeing the other's moves."""
    page.open(server.url)
    page.name_and_enter("Zeynep")
    tcp = TcpPlayer(server.tcp_port, "Mehmet")
    try:
        snap = tcp.request({"type": "create_table", "rules": "classic", "seats": 2,
                            "name": "Mehmet's game",
                            "options": {"match_end": "deals:1", "turn_seconds": 0}})
        table_id = snap["table"]["id"]
        row = page.wait_css(f'.lobby-row[data-table="{table_id}"]')  # no reload: a lobby_update
        assert "Mehmet's game" in row.text
        row.find_element("css selector", "button.join").click()
        page.wait_screen("table")
        tcp.until(lambda m: m["type"] == "table_update"
                  and m["table"]["seats"][1].get("name") == "Zeynep")
        assert "Mehmet" in page.text('.seat-row[data-seat="0"]')

        tcp.request({"type": "chat", "text": "iyi oyunlar!"})
        page.wait(lambda d: "iyi oyunlar!" in page.css("#chat-list").text, what="the TCP chat")
        page.css("#chat-input").send_keys("sana da")
        page.click("#chat-send")
        said = tcp.until(lambda m: m["type"] == "chat" and m["name"] == "Zeynep")
        assert said["text"] == "sana da" and said["seat"] == 1

        page.click("#ready")
        tcp.until(lambda m: m["type"] == "table_update" and m["table"]["seats"][1]["ready"])
        tcp.request({"type": "start"})

        browser_moves = 0
        tcp_plays: list[str] = []
        while True:
            msg = tcp.poll(0.05)
            if msg is not None and msg["type"] == "update" and any(
                    e["event"] == "deal_end" for e in msg["events"]):
                break
            if tcp.moves and msg is None:
                move = tcp.moves[0]
                tcp.moves = []
                tcp.send({"type": "move", "move": move})
                if move["kind"] == "play":
                    tcp_plays.append(move["card"])
            if page.body("turn") == "mine":
                page.take_turn()
                browser_moves += 1
        assert browser_moves > 0
        page.wait_css("#deal-result")
        # What the TCP player played is in the browser's log, in its words.
        log = page.log_text()
        for card in tcp_plays[:3]:
            rank, suit = card[:-1], {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}[card[-1]]
            assert f"Mehmet played {rank}{suit}" in log
        assert page.state("view.result.points") == msg["view"]["result"]["points"]
    finally:
        tcp.close()


def test_watching_a_table(page: Page, server: WebServer) -> None:
    """A spectator sees the seats, the pile and the counts, and no hand of its own."""
    tcp = TcpPlayer(server.tcp_port, "Deniz")
    try:
        snap = tcp.request({"type": "create_table", "rules": "cardiva", "seats": 2,
                            "options": {"turn_seconds": 0}})
        table_id = snap["table"]["id"]
        tcp.request({"type": "add_bot", "seat": 1, "level": "easy"})
        tcp.request({"type": "start"})
        tcp.until(lambda m: m["type"] == "update" and bool(m.get("moves")))
        page.open(server.url)
        page.name_and_enter("Ece")
        page.click(f'.lobby-row[data-table="{table_id}"] button.watch')
        page.wait_screen("table")
        assert page.state("you.spectator") is True
        assert not page.all("#hand") and not page.all("#draw")
        seats = page.all(".opponents .seat")
        assert len(seats) == 2
        assert "7 cards" in seats[0].text and "Deniz" in seats[0].text
        tcp.send({"type": "move", "move": tcp.moves[0]})
        page.wait(lambda d: "Deniz played" in page.log_text() or "Deniz drew" in page.log_text(),
                  what="Deniz's move in the log")
    finally:
        tcp.close()


def test_a_reload_mid_deal_resumes_the_seat(page: Page, server: WebServer) -> None:
    """The `?play=1` autopilot hosts a table with no clicks; a reload in the middle of a
    deal comes back to the same seat, hand and decision (the token in localStorage)."""
    page.open(server.url + "?play=1&name=Kerem&rules=classic&bots=2&level=easy")
    page.wait_screen("table")
    page.wait(lambda d: page.body("turn") == "mine", what="our first turn")
    assert page.state("table.seats.map(s => s.kind + ':' + (s.level || ''))") == [
        "human:", "bot:easy", "bot:easy"]
    page.take_turn()
    page.wait(lambda d: page.body("turn") == "mine" and page.body("phase") == "play",
              what="our next turn")
    table_id = page.state("table.id")
    hand = page.state("view.hand")
    moves = page.state("moves")
    player = page.state("me.player")

    page.driver.refresh()
    page.wait_screen("table")
    page.wait(lambda d: page.body("turn") == "mine", what="the decision after the reload")
    assert page.state("me.player") == player
    assert page.state("table.id") == table_id
    assert page.state("you.seat") == 0
    assert page.state("view.hand") == hand
    assert page.state("moves") == moves
    assert "Welcome back" in page.log_text()
    page.take_turn()  # and the seat plays on
    assert page.state("table.id") == table_id
    # The autopilot saw the session at its table and opened no second one.
    hosted = page.state("lobby.tables.filter(t => t.host === 'Kerem').length")
    assert hosted == 1


def test_keyboard_alone(page: Page, server: WebServer) -> None:
    """A decision puts the focus on what it offers; arrows walk the hand; Enter plays;
    D draws and P passes; a move typed as in the terminal client goes too."""
    from selenium.webdriver.common.keys import Keys

    page.open(server.url + "?play=1&name=Ada&rules=classic&bots=1&level=easy")
    page.wait_screen("table")
    keyed = 0
    while keyed < 6:
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        assert page.focused("data-card") or page.focused("id") in (
            "draw", "pass"), "the decision put the focus on nothing it offers"
        serial = page.body("serial")
        if keyed == 5:  # the last one typed: the first card offered, else draw or pass
            moves = page.state("moves")
            play = next((m for m in moves if m["kind"] == "play"), None)
            text = "d" if any(m["kind"] == "draw" for m in moves) else "p"
            if play is not None:
                text = play["card"] + (f">{play['suit']}" if play.get("suit") else "")
            page.press("/")
            page.press(text.lower(), Keys.ENTER)
        elif page.all("#hand button.card.legal"):
            first = page.focused("data-key")
            page.press(Keys.ARROW_RIGHT)
            if len(page.all("#hand button")) > 1:
                assert page.focused("data-key") != first
            page.press(Keys.ARROW_LEFT)
            assert page.focused("data-key") == first
            card = str(page.focused("data-card"))
            page.press(Keys.ENTER)
            if card.startswith("J") and page.all("#suit-picker"):
                page.press("h")
        elif page.enabled("#draw"):
            page.press("d")
        else:
            page.press("p")
        page.wait(lambda d, was=serial: page.body("turn") != "mine" or page.body("serial") != was,  # type: ignore[misc]
                  what="the keyed move to go")
        keyed += 1
        if page.body("phase") == "over":
            break
    assert "you played" in page.log_text() or "you drew" in page.log_text()
    assert "error" not in page.driver.execute_script(
        "return [...document.querySelectorAll('#log li')].map(li => li.className).join(' ')")


def test_a_phone_sized_viewport(page: Page, server: WebServer) -> None:
    """At 360 CSS pixels nothing scrolls sideways, the hand fits, and a tap plays."""
    set_viewport(page.driver, 360, 740, mobile=True)
    page.open(server.url + "?play=1&name=Efe&rules=cardiva&bots=3&level=easy")
    page.wait_screen("table")
    page.wait(lambda d: page.body("turn") == "mine", what="our turn")
    width = page.driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 360
    for card in page.all("#hand button.card"):
        box = card.rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360
    for control in ("#draw", "#pass", "#leave"):
        box = page.css(control).rect
        assert box["width"] >= 24 and box["height"] >= 24  # WCAG 2.2 target size
    page.take_turn()
    # The move left when the decision went; its line comes with the server's answer.
    page.wait(lambda d: "you " in page.log_text(), what="our move in the log")


def test_a_refused_name_is_explained(page: Page, server: WebServer) -> None:
    """A name kept for the server's bots is refused by the server; the page says why and
    lets the player choose again. From the lobby, a player may start over as another."""
    page.open(server.url)
    page.wait_screen("name")
    page.css("#name-input").send_keys("bot (easy)")
    page.click("#connect")
    error = page.wait_css("#name-error")
    assert error.text
    assert page.body("screen") == "name"
    page.name_and_enter("Selin")
    first = page.state("me.player")
    page.click("#change-name")  # a new session under another name
    page.name_and_enter("Sena")
    assert page.state("me.name") == "Sena"
    assert page.state("me.player") != first


def test_a_dropped_connection_resumes_and_a_stand_in_gives_the_seat_back(
        page: Page, server: WebServer) -> None:
    """The turn timer counts down; two timeouts hand the seat to a stand-in bot, and
    "I am back" takes it back. A dropped WebSocket reconnects by itself and resumes."""
    page.open(server.url)
    page.name_and_enter("Arda")
    page.css("#seats").send_keys("2")
    page.css("#turn_seconds").send_keys("2")
    # A long match: the stand-in plays at the bots' test speed, and on a busy machine a
    # short match could end before the page is looked at again.
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys("100")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait(lambda d: page.state("table.seats[1].kind") == "bot", what="the bot")
    page.click("#start")
    page.wait(lambda d: page.body("turn") == "mine", what="our turn")
    timer = page.wait_css(".seat.mine .timer")
    assert timer.text in ("0:02", "0:01")

    page.driver.execute_script("window.pisyedili.wire.ws.close()")
    page.wait(lambda d: page.body("link") == "reconnecting", what="the client to notice")
    page.wait(lambda d: page.body("link") == "welcomed", what="the reconnect")
    assert "Welcome back" in page.log_text()
    assert page.state("you.seat") == 0

    # Let the time run out twice: a stand-in bot holds the seat (held_by_bot: idle).
    page.wait_css("#come-back", timeout=15)
    assert page.state("table.seats[0].held_by_bot") == "idle"
    # The client's own log, not the panel's text: the panel shows the table's latest
    # lines, and the stand-in may have played a deal or more since on a busy machine.
    assert page.state("log.some(e => e.text.includes('ran out of time'))")
    page.click("#come-back")  # found again: the table may have been redrawn since
    page.wait(lambda d: not page.state("table.seats[0].held_by_bot"), what="the seat back")
    assert "took the seat back" in page.log_text()
    # Leaving mid-match is confirmed; a table of bots alone closes, so its long match
    # does not play on beside the module's next tests.
    page.click("#leave")
    page.driver.switch_to.alert.accept()
    page.wait_screen("lobby")


def test_joining_a_private_table_by_its_invite_code(page: Page, server: WebServer) -> None:
    """A private table is listed without a Join button; its code (in any letter case)
    takes the browser to its open seat, and Leave gives the seat up."""
    tcp = TcpPlayer(server.tcp_port, "Cem")
    try:
        snap = tcp.request({"type": "create_table", "rules": "classic", "seats": 2,
                            "private": True, "name": "Cem's private"})
        code = snap["table"]["code"]
        page.open(server.url)
        page.name_and_enter("Leyla")
        row = page.wait_css(f'.lobby-row[data-table="{snap["table"]["id"]}"]')
        assert "private" in row.text and not row.find_elements("css selector", "button.join")
        page.css("#code-input").send_keys(code.lower())
        page.click("#join-code")
        page.wait_screen("table")
        assert page.text("#table-title") == "Cem's private"
        assert page.state("you.seat") == 1
        assert page.text("#invite-code") == code
        page.click("#leave")
        page.wait_screen("lobby")
        tcp.until(lambda m: m["type"] == "table_update"
                  and m["table"]["seats"][1]["kind"] == "open")
    finally:
        tcp.close()


def test_a_jack_asks_for_the_suit_it_names(page: Page) -> None:
    """A playable jack opens the suit picker with exactly the suits offered (C5); Escape
    keeps the jack; a suit chosen is the one sent. A seeded server deals the same cards
    each time, so the jack comes at the same turn."""
    with seeded_server(page, "3") as seeded:
        page.open(seeded.url + "?play=1&name=Oya&rules=classic&bots=1&level=easy")
        page.wait_screen("table")

        def jack_offered() -> bool:
            return bool(page.state("moves.some(m => m.kind === 'play' && m.suit)"))

        for _ in range(120):
            page.wait(lambda d: page.body("turn") == "mine", what="our turn")
            if jack_offered():
                break
            page.take_turn()
        else:
            raise AssertionError("no jack to play in 120 turns")
        moves = page.state("moves")
        jack = next(m["card"] for m in moves if m["kind"] == "play" and m.get("suit"))
        suits = {m["suit"] for m in moves if m.get("card") == jack}
        symbol = "♣♦♥♠"["cdhs".index(jack[-1])]
        played = f"you played {jack[:-1]}{symbol}"
        before = page.log_text().count(played)
        page.css(f'#hand button[data-card="{jack}"]').click()
        page.wait_css("#suit-picker")
        offered = set(page.attrs("#suit-picker .suit-choice", "data-suit"))
        assert offered == suits
        assert page.focused("data-suit") in suits
        page.press("\ue00c")  # Escape
        page.wait(lambda d: not page.all("#suit-picker"), what="the picker to close")
        assert page.body("turn") == "mine"  # nothing was sent
        assert page.log_text().count(played) == before
        page.css(f'#hand button[data-card="{jack}"]').click()
        choice = sorted(suits)[-1]
        page.click(f'#suit-picker [data-suit="{choice}"]')
        names = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
        page.wait(lambda d: page.log_text().count(played) == before + 1, what="the jack")
        named = "♣♦♥♠"["cdhs".index(choice)]
        assert f"{played}, naming {named} {names[choice]}" in page.log_text()


def test_pisyedili_play_web_opens_a_started_table(page: Page) -> None:
    """`pisyedili play --web` prints a page that, with no clicks, names the player,
    fills the seats with bots at the level asked for and starts the match."""
    import signal
    import subprocess
    import sys

    process = fork_kit.popen(
        [sys.executable, "-c", PLAY, "play", "--web", "--no-open", "--name", "Ayşe",
         "--bots", "2", "--level", "easy", "--rules", "cardiva"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, encoding="utf-8")
    assert process.stdout is not None
    output = Output(process.stdout)
    try:
        url = output.wait_for(r"^Pis Yedili is at (\S+)").group(1)
        page.open(url)
        page.wait(lambda d: page.body("tablePhase") == "playing", what="the match to start")
        assert page.state("me.name") == "Ayşe"
        assert page.state("table.rules") == "cardiva"
        assert page.state("table.seats.map(s => s.kind + ':' + (s.level || ''))") == [
            "human:", "bot:easy", "bot:easy"]
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        page.take_turn()
        page.driver.get("about:blank")  # before the server goes: no reconnecting page
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.rest()  # the stream has ended: its reading thread is done with it
        process.stdout.close()


def test_typed_moves_read_as_the_terminal_client_reads_them(
        page: Page, server: WebServer) -> None:
    """cards.js, run in the browser: forgiving card text, a jack's suit, draw and pass,
    picks (1-based on screen, 0-based on the wire), and what it refuses."""
    page.open(server.url)
    moves = [{"kind": "play", "card": "Jh", "suit": s} for s in "cdhs"] + [
        {"kind": "play", "card": "10s"}, {"kind": "draw"}]
    hand = ["Jh", "10s", "7c"]
    cases = ["10S", "ts", "Jh>s", "js h", "jh", "d", "pass", "7c", "9d", "7c s", "", "zz"]
    got = page.driver.execute_async_script(
        """const [cases, moves, hand, done] = arguments;
        import("/cards.js").then((m) =>
          done(cases.map((c) => m.parseMoveText(c, moves, hand))));""",
        cases, moves, hand)
    assert got[:3] == [
        {"move": {"kind": "play", "card": "10s"}},
        {"move": {"kind": "play", "card": "10s"}},
        {"move": {"kind": "play", "card": "Jh", "suit": "s"}},
    ]
    assert got[3] == {"error": "You do not hold J♠."}  # "js h": the jack of spades
    assert got[4:8] == [
        {"jack": "Jh"},  # no suit: the picker asks
        {"move": {"kind": "draw"}},
        {"move": {"kind": "pass"}},
        {"move": {"kind": "play", "card": "7c"}},  # not offered: sent, the server says why
    ]
    assert got[8] == {"error": "You do not hold 9♦."}
    assert got[9] == {"error": "Only a jack names a suit (C5, K8)."}
    assert all("error" in g for g in got[10:])
    picks = page.driver.execute_async_script(
        """const done = arguments[0];
        import("/cards.js").then((m) => done([
          m.parseMoveText("pick 3", [{kind: "pick", position: 2}], []),
          m.parseMoveText("1", [{kind: "pick", position: 0}], []),
          m.sortHand(["Ad", "2c", "Kh", "3s", "10c"]),
          m.sortHand(["Ad", "2c", "Kh", "3s", "10c"], "rank"),
        ]));""")
    assert picks[0] == {"move": {"kind": "pick", "position": 2}}
    assert picks[1] == {"move": {"kind": "pick", "position": 0}}
    assert picks[2] == ["2c", "10c", "Kh", "3s", "Ad"]  # ♣ ♥ ♠ ♦: colours alternate
    assert picks[3] == ["2c", "3s", "10c", "Kh", "Ad"]


@pytest.mark.parametrize(("lang", "draw", "pass_", "clubs"), [
    ("fa", "برداشتن", "پاس", "خاج"), ("tr", "çek", "pas", "sinek"), ("th", "จั่ว", "ผ่าน", "ดอกจิก"),
])
def test_the_move_box_reads_the_languages_glossary_words(
        page: Page, server: WebServer, lang: str, draw: str, pass_: str, clubs: str) -> None:
    """The words the language's glossary says a player types (as the terminal's parser
    reads them) come with its compiled catalog: draw, pass and a jack's suit typed in
    them read as `d`, `p` and `Jh c`; back in English they are no moves."""
    build_all()
    catalog = json.loads((BUILT / f"{lang}.json").read_text(encoding="utf-8"))
    page.open(server.url)
    moves = [{"kind": "play", "card": "Jh", "suit": s} for s in "cdhs"] + [
        {"kind": "draw"}, {"kind": "pass"}]
    got = page.driver.execute_async_script(
        """const [catalog, cases, moves, done] = arguments;
        Promise.all([import("/cards.js"), import("/words.js")]).then(([cards, words]) => {
          const read = () => cases.map((c) => cards.parseMoveText(c, moves, ["Jh"]));
          words.useLanguage(catalog);
          const local = read();
          words.useLanguage(null);
          done([local, read()]);
        });""",
        catalog, [draw, pass_, f"jh {clubs}"], moves)
    assert got[0] == [{"move": {"kind": "draw"}}, {"move": {"kind": "pass"}},
                      {"move": {"kind": "play", "card": "Jh", "suit": "c"}}]
    assert all("error" in g for g in got[1])


def test_lobby_updates_place_a_table_by_its_id(page: Page, server: WebServer) -> None:
    """state.js, run in the browser, applies `lobby_update`s as docs/protocol.md says:
    a new table joins only a page that reaches the end; one listed again (in a
    cluster, its process back after it was taken for gone) joins the page its id falls
    in, at its place; `total` counts every add and remove."""
    page.open(server.url)
    got = page.driver.execute_async_script(
        """const done = arguments[0];
        import("/state.js").then((m) => {
          const row = (id) => ({ id, name: `t${id}` });
          const ids = (state) => [state.lobby.tables.map((t) => t.id), state.lobby.total];
          const run = (offset, count, total, deltas) => {
            const state = m.createState();
            const tables = Array.from({ length: count }, (_, i) => row(offset + i + 1));
            m.apply(state, { type: "lobby", tables, offset, total }, 0);
            for (const [op, table] of deltas) {
              const msg = { type: "lobby_update", op, table };
              if (op !== "remove") msg.summary = row(table);
              m.apply(state, msg, 0);
            }
            return ids(state);
          };
          done([
            run(0, 3, 3, [["remove", 2], ["add", 2], ["add", 4]]),
            run(3, 3, 9, [["remove", 5], ["add", 5], ["add", 1], ["add", 10]]),
            run(0, 3, 9, [["remove", 1], ["add", 1]]),
          ]);
        });""")
    assert got == [
        [[1, 2, 3, 4], 4],
        [[4, 5, 6], 11],  # 1 is an earlier page's, 10 a later one's: counted only
        [[1, 2, 3], 9],
    ]


def test_a_table_lost_leaves_that_table_only(page: Page, server: WebServer) -> None:
    """state.js: `table_lost` (a cluster's server let us go) leaves our table, not on
    another table's word, and says why by its cause."""
    page.open(server.url)
    got = page.driver.execute_async_script(
        """const done = arguments[0];
        import("/state.js").then((m) => {
          const state = m.createState();
          m.apply(state, { type: "table", table: { id: 7, seats: [] }, you: { seat: 0 } }, 0);
          m.apply(state, { type: "table_lost", table: 8, cause: "server_gone" }, 0);
          const kept = state.table && state.table.id;
          m.apply(state, { type: "table_lost", table: 7, cause: "seat_released" }, 0);
          done([kept, state.table, m.tableLostText("server_gone"),
                m.tableLostText("seat_released")]);
        });""")
    assert got[:2] == [7, None]
    assert got[2] == "The table was lost: the server that held it went away."
    assert got[3].startswith("The server that holds the table lost touch with yours")


def test_muamele_picks_from_the_face_down_spread(page: Page) -> None:
    """Cardiva's penalty round (K14): the spread is drawn face down, the positions the
    server offers are the ones to click, and each pick is told in the log. A seeded
    server brings a muamele of ours in the first deal."""
    with seeded_server(page, "5") as seeded:
        page.open(seeded.url + "?play=1&name=Nil&rules=cardiva&bots=1&level=easy")
        page.wait_screen("table")

        def our_pick() -> bool:
            return bool(page.body("phase") == "muamele" and page.body("turn") == "mine")

        for _ in range(200):
            page.wait(lambda d: page.body("turn") == "mine", what="our turn")
            if our_pick():
                break
            page.take_turn()
        else:
            raise AssertionError("no muamele of ours in 200 turns")
        spread = page.state("view.muamele.spread")
        offered = sorted(m["position"] for m in page.state("moves"))
        assert len(page.attrs("#muamele .spread button", "class")) == spread
        legal = sorted(int(str(position)) for position
                       in page.attrs("#muamele .spread button.legal", "data-position"))
        assert legal == offered
        assert "Muamele" in page.text("#muamele")
        picked = 0
        while our_pick():
            left = page.state("view.muamele.picks")
            page.take_turn()
            picked += 1
            page.wait(lambda d, was=left: d.execute_script(  # type: ignore[misc]
                "const s = window.pisyedili.state; return !s.inFlight && ("
                "s.view.phase !== 'muamele' || s.view.muamele.picks !== arguments[0]"
                " || s.view.muamele.seat !== s.you.seat)", was), what="the pick to be made")
        assert picked > 0
        assert page.log_text().count("you picked card") == picked
