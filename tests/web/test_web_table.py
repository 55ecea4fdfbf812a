"""The table experience in a real browser (headless Chromium) against real server
processes: layout at three screen sizes, motion, sound and notices, the log after a
reload, the lost-connection banner, and the small things a player meets.

Waits are on the DOM (see `browser_kit`); every test ends with no console error.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

import fork_kit
from browser_kit import Page, contrast, fresh_page, rgb, set_viewport
from process_output import BACKSTOP, PLAY, Output
from test_web_browser import TcpPlayer
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer

TURN_LIMIT = 400
DEAD_PATH = "no-socket-here"
"""A path of the web server that answers no WebSocket: a try there fails at once."""


def offline(page: Page, server: WebServer, name: str, bots: int = 2,
            rules: str = "classic") -> None:
    """The `?play=1` autopilot: a started table with bots, our first turn on screen."""
    page.open(f"{server.url}?play=1&name={name}&rules={rules}&bots={bots}&level=easy")
    page.wait_screen("table")
    page.wait(lambda d: page.body("turn") == "mine", what="our first turn")


def next_turn(page: Page) -> None:
    page.wait(lambda d: page.body("turn") == "mine" or page.body("phase") == "over",
              what="our turn or the deal's end")


def rect(page: Page, selector: str) -> dict[str, float]:
    return dict(page.driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width};",
        selector))


def card_width(page: Page) -> float:
    return rect(page, "#hand button.card")["width"]


# ------------------------------------------------------------------------------ layout


def test_the_table_fits_each_screen(driver: Any, server: WebServer) -> None:
    """1280x720: no scrolling, the Draw/Pass row in view; 1920x1080: bigger cards;
    a 360-px phone: every card at least 44 px wide where it can be tapped, and the last
    moves on the felt in view."""
    widths = {}
    for width, height, mobile in ((1280, 720, False), (1920, 1080, False), (360, 740, True)):
        set_viewport(driver, width, height, mobile)
        page = fresh_page(driver, server.url)
        offline(page, server, f"Fit{width}", bots=3)
        page.take_turn()
        next_turn(page)
        widths[width] = card_width(page)
        if width == 1280:
            for control in ("#draw", "#pass", "#move-input"):
                box = rect(page, control)
                assert 0 <= box["top"] and box["bottom"] <= height, control
            assert driver.execute_script("return document.documentElement.scrollHeight") <= height
        if width == 360:
            assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
            boxes = driver.execute_script(
                "return [...document.querySelectorAll('#hand button.card')].map(b => {"
                "const r = b.getBoundingClientRect(); return [r.left, r.top, r.width]; })")
            for (left, top, w), (next_left, next_top, _) in zip(boxes, [*boxes[1:], [1e9, -1, 0]],
                                                               strict=True):
                assert w >= 44
                if abs(next_top - top) < 1:  # the next card overlaps this one in its row
                    assert next_left - left >= 44, "less than 44 px of a card to tap"
            # In view with the hand, wherever the page is scrolled to reach it.
            for where in ("#hand", "#draw"):
                driver.execute_script(
                    "document.querySelector(arguments[0]).scrollIntoView({block: 'nearest'})",
                    where)
                recent = rect(page, "#recent")
                assert recent["top"] >= 0 and recent["bottom"] <= height, where
            last = driver.execute_script(
                "return [...document.querySelectorAll('#log li')].filter(li => "
                "!li.classList.contains('dim')).pop().innerText")
            assert last in page.text("#recent")
        assert page.errors() == []
    assert widths[1920] > widths[1280] * 1.3
    set_viewport(driver, 1280, 800)
    driver.get("about:blank")


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["left"] < b["right"] and b["left"] < a["right"]
            and a["top"] < b["bottom"] and b["top"] < a["bottom"])


def test_the_direction_ring_keeps_clear_and_the_felt_reads(driver: Any,
                                                           server: WebServer) -> None:
    """The ring's arrowheads cover no seat, hand or control (the seats are opaque, so
    its line passes behind them); on a phone, with no room round the seats, there is no
    ring; the suits in the last moves on the felt are as legible as the words."""
    page = fresh_page(driver, server.url)
    offline(page, server, "Halka", bots=3)
    # Turns (the bots play theirs) until a card, with its suit, is among the last moves:
    # a deal (the server draws it at random) may open with draws and passes alone.
    for _ in range(12):
        page.take_turn()
        page.wait(lambda d: page.body("turn") == "mine", what="our turn again")
        if page.all("#recent .red, #recent .black"):
            break
    boxes = driver.execute_script(
        "const box = (e) => { const r = e.getBoundingClientRect();"
        "  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };"
        "return [[...document.querySelectorAll('#direction-ring .head')].map(box),"
        "  [...document.querySelectorAll('.seat, #hand, .actions, .centre > *, #prompt')]"
        "  .map(box)]")
    heads, parts = boxes
    assert heads, "no arrowheads on the ring"
    assert not [h for h in heads for p in parts if overlaps(h, p)], "an arrowhead over the table"
    assert rgb(page.css(".seat").value_of_css_property("background-color"))[3] == 1.0
    set_viewport(driver, 360, 740, mobile=True)
    page.wait(lambda d: not page.css("#direction-ring").is_displayed(), what="no ring")
    felt = rgb(page.css(".seat").value_of_css_property("background-color"))
    suits = page.all("#recent .red, #recent .black")
    assert suits, page.text("#recent")
    for suit in suits:
        assert contrast(rgb(suit.value_of_css_property("color")), felt) >= 4.5, suit.text
    assert page.errors() == []
    set_viewport(driver, 1280, 800)
    driver.get("about:blank")


def test_the_last_moves_on_the_felt_are_this_tables(page: Page, server: WebServer) -> None:
    """Moves made at a table left behind are not shown on the felt of the next one."""
    host = TcpPlayer(server.tcp_port, "Sonraki")
    try:
        offline(page, server, "Eski")
        page.take_turn()
        page.wait(lambda d: page.all("#recent"), what="our move on the felt")
        table = host.request({"type": "create_table", "rules": "classic", "seats": 3})
        page.click("#leave")
        page.wait(lambda d: d.switch_to.alert, what="the question before leaving").accept()
        page.wait_screen("lobby")
        page.click(f'.lobby-row[data-table="{table["table"]["id"]}"] button.watch')
        page.wait(lambda d: page.body("screen") == "table" and page.all(".table-screen"),
                  what="the table we watch")
        assert page.text("#table-title") == "Sonraki's table"
        assert page.all("#recent") == [], page.css("#recent").get_attribute("textContent")
    finally:
        host.close()


def test_a_phone_shows_the_acting_opponents_name_whole(driver: Any, server: WebServer) -> None:
    """On a 360-px phone the seat to act keeps its name on one line (its gold border
    says it acts; a "to play" mark beside the name squeezed it letter by letter)."""
    set_viewport(driver, 360, 740, mobile=True)
    page = fresh_page(driver, server.url)
    host = TcpPlayer(server.tcp_port, "Burak")
    try:
        snap = host.request({"type": "create_table", "rules": "classic", "seats": 2,
                             "options": {"turn_seconds": 0}})
        host.request({"type": "add_bot", "seat": 1, "level": "easy"})
        host.request({"type": "start"})
        host.until(lambda m: bool(m.get("moves")), 20)  # Burak's turn, and he waits
        page.open(server.url)
        page.name_and_enter("Bakan")
        page.click(f'.lobby-row[data-table="{snap["table"]["id"]}"] button.watch')
        page.wait_css('.seat.acting[data-seat="0"]')
        height, line = driver.execute_script(
            "const n = document.querySelector('.seat.acting .seat-name');"
            "return [n.getBoundingClientRect().height, parseFloat(getComputedStyle(n).lineHeight)]")
        assert height < 1.5 * line, "the name takes more than a line"
        assert page.errors() == []
    finally:
        host.close()
        set_viewport(driver, 1280, 800)
        driver.get("about:blank")


def test_a_long_hand_stays_on_one_row_at_1280x720(driver: Any, server: WebServer) -> None:
    """Drawing instead of playing: past eleven cards the hand overlaps its cards, and
    the Draw/Pass row stays in view."""
    set_viewport(driver, 1280, 720)
    page = fresh_page(driver, server.url)
    try:
        offline(page, server, "Toplayıcı", bots=1)
        for _ in range(TURN_LIMIT):
            next_turn(page)
            if page.body("phase") == "over" or len(page.state("view.hand")) >= 13:
                break
            serial = page.body("serial")
            button = "#draw" if page.enabled("#draw") else "#pass"
            if button == "#pass" and not page.enabled("#pass"):
                page.take_turn()
                continue
            page.css(button).click()
            page.wait(lambda d, was=serial: page.body("serial") != was  # type: ignore[misc]
                      or page.body("turn") != "mine", what=button)
        assert len(page.state("view.hand")) >= 12, "the deal ended before the hand grew"
        # Only the last draw is marked as new, not every card drawn since the last play.
        last = [line for line in page.log_text().splitlines() if line.startswith("you drew")][-1]
        marks = page.all("#hand button.card.drawn")
        assert len(marks) <= int(last.split()[2])
        tops = {round(y) for y in driver.execute_script(  # one read: no redraw between cards
            "return [...document.querySelectorAll('#hand button.card:not(.legal)')]"
            ".map((b) => b.getBoundingClientRect().y);")}
        assert len(tops) == 1, "the hand took a second row"
        box = rect(page, "#draw")
        assert box["bottom"] <= 720
        assert driver.execute_script("return document.documentElement.scrollHeight") <= 720
        assert page.errors() == []
    finally:
        set_viewport(driver, 1280, 800)
        driver.get("about:blank")


# ------------------------------------------------------------------------------ motion


def flights(page: Page) -> list[dict[str, Any]]:
    return list(page.driver.execute_script("return window.pisyedili.flights.slice()"))


def draw_once(page: Page) -> None:
    """Play on until a draw of ours is on offer, then draw."""
    for _ in range(TURN_LIMIT):
        next_turn(page)
        assert page.body("phase") != "over", "the deal ended before we could draw"
        if page.enabled("#draw"):
            serial = page.body("serial")
            page.css("#draw").click()
            page.wait(lambda d, was=serial: page.body("serial") != was  # type: ignore[misc]
                      or page.body("turn") != "mine", what="the draw")
            return
        page.take_turn()
    raise AssertionError("no draw offered")


def test_cards_fly_and_the_card_drawn_is_marked(page: Page, server: WebServer) -> None:
    """A play flies to the pile, a draw from the stock; each flight is short and the
    screen is final at once (the pile shows the card played while it flies); the card
    drawn is marked, in sight and in its label."""
    offline(page, server, "Uçan")
    # Play on until a play: a hand with nothing to play draws, and easy bots draw at
    # random even when they could play, so the first play can be many turns away.
    for _ in range(TURN_LIMIT):
        page.take_turn()
        next_turn(page)
        if "play" in {f["kind"] for f in flights(page)} or page.body("phase") == "over":
            break
    kinds = {f["kind"] for f in flights(page)}
    assert "play" in kinds  # ours or the bots'
    if "you played" in page.log_text():  # ours leaves from its place in the hand
        assert "hand" in {f["source"] for f in flights(page) if f["kind"] == "play"}
    assert all(f["ms"] <= 250 for f in flights(page))
    draw_once(page)
    page.wait(lambda d: page.state("drawn.length") > 0 or page.body("phase") == "over",
              what="the card drawn")
    assert "draw" in {f["kind"] for f in flights(page)}
    drawn = page.state("drawn")
    if page.body("phase") != "over" and page.state("view.hand").count(drawn[-1]):
        assert page.attr("#hand button.card.drawn", "data-card") in drawn
        assert "just drawn" in str(page.attr("#hand button.card.drawn", "aria-label"))
        assert "new" in page.text("#hand button.card.drawn")
    # While a clone flies the real pile already shows the top card: nothing waits on it.
    top = page.driver.execute_script(
        "return document.querySelector('#pile .top')?.dataset.card || null")
    assert top in (page.state("view.top"), None)


def test_no_motion_when_the_player_asks_for_less(page: Page, server: WebServer) -> None:
    page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    offline(page, server, "Sakin")
    for _ in range(3):
        page.take_turn()
        next_turn(page)
        if page.body("phase") == "over":
            break
    assert "you played" in page.log_text() or "you drew" in page.log_text()
    assert flights(page) == []
    assert page.driver.execute_script("return document.querySelectorAll('.flying').length") == 0


# ------------------------------------------------------------------------ sound, notices


def played(page: Page) -> list[dict[str, Any]]:
    return list(page.driver.execute_script("return window.pisyedili.played.slice()"))


def test_sounds_are_off_until_turned_on_and_served_by_the_server(
        page: Page, server: WebServer) -> None:
    """No sound by default; the toggle turns them on (a sample plays), our turns and
    deal ends then sound, and the choice survives a reload. The files come from the
    server, small, as audio/wav."""
    offline(page, server, "Ses")
    page.take_turn()
    next_turn(page)
    assert played(page) == []
    assert page.attr("#sound-toggle", "aria-pressed") == "false"
    page.click("#sound-toggle")
    page.wait(lambda d: page.attr("#sound-toggle", "aria-pressed") == "true",
              what="the toggle on")
    page.wait(lambda d: any(p["name"] == "turn" and p["ok"] is not None for p in played(page)),
              what="the sample to play or fail")
    assert page.driver.execute_script("return localStorage.getItem('pisyedili.sound')") == "on"
    before = len(played(page))
    page.take_turn()
    next_turn(page)
    if page.body("phase") != "over":
        page.wait(lambda d: len(played(page)) > before, what="a sound for our next turn")
        assert {p["name"] for p in played(page)[before:]} <= {"turn", "penalty", "deal_end"}
    page.driver.refresh()
    page.wait_screen("table")
    assert page.attr("#sound-toggle", "aria-pressed") == "true"
    files = page.driver.execute_async_script(
        """const done = arguments[0];
        Promise.all(["turn", "penalty", "deal_end"].map((n) => fetch(`/sounds/${n}.wav`)
          .then(async (r) => [r.status, r.headers.get("content-type"),
                              (await r.arrayBuffer()).byteLength]))).then(done);""")
    for status, kind, size in files:
        assert status == 200 and kind == "audio/wav" and 1000 < size < 8000


def test_a_notice_on_our_turn_while_the_tab_is_hidden(page: Page, server: WebServer) -> None:
    """Permission is asked for only when the player turns notices on; then our turn in
    a hidden tab shows one."""
    origin = server.url.rstrip("/")
    page.driver.execute_cdp_cmd("Browser.resetPermissions", {})
    offline(page, server, "Haber")
    assert page.driver.execute_script("return Notification.permission") == "default"
    page.driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": origin, "permissions": ["notifications"]})
    page.click("#notify-toggle")
    page.wait(lambda d: page.attr("#notify-toggle", "aria-pressed") == "true",
              what="notices on")
    first = page.driver.current_window_handle
    # Another tab in front, then our moves (once the page is hidden and has something
    # to play: a busy machine may get there late; a draw keeps the turn ours, and a
    # jack asks for a suit, so the mover plays on until the notice): the next turn comes
    # to a hidden page, which leaves word in the origin's storage for the tab in front.
    page.driver.execute_script(
        """const mover = setInterval(() => {
             if (window.pisyedili.played.some((p) => p.kind === 'notification')) {
               clearInterval(mover);
               return;
             }
             if (!document.hidden) return;
             const move = document.querySelector('#suit-picker .suit-choice')  // a jack's
               || document.querySelector(
                 '#hand .legal, #draw:not([disabled]), #pass:not([disabled])');
             if (move) move.click();
           }, 100);
           setInterval(() => {
             const seen = window.pisyedili.played.find((p) => p.kind === 'notification');
             if (seen) localStorage.setItem('test.notified', document.hidden ? 'hidden' : 'shown');
             localStorage.setItem('test.state', JSON.stringify({  // read if it times out
               hidden: document.hidden, turn: document.body.dataset.turn,
               phase: document.body.dataset.tablePhase,
               played: window.pisyedili.played.map((p) => p.kind), at: Date.now()}));
           }, 50);""")
    page.driver.switch_to.new_window("tab")
    try:
        page.driver.get(server.url + "no-such-page")  # of the origin, not the game
        word = "return localStorage.getItem('test.notified')"
        # A hidden page's timers are throttled (about once a second, less when the
        # machine is busy): give its mover and its report time.
        try:
            page.wait(lambda d: d.execute_script(word), timeout=45,
                      what="a notice in the hidden tab")
        except AssertionError as e:
            said = page.driver.execute_script(
                "return [localStorage.getItem('test.state'), Date.now()]")
            raise AssertionError(f"{e}; the hidden tab last said {said[0]}, at {said[1]}"
                                 ) from None
        assert page.driver.execute_script(word) == "hidden"
    finally:
        page.driver.close()
        page.driver.switch_to.window(first)
    # The other tab's 404s (the page, its favicon) are its own; the game logged nothing.
    assert [e for e in page.errors()
            if "no-such-page" not in e and "favicon" not in e] == []
    page.driver.execute_cdp_cmd("Browser.resetPermissions", {})


# --------------------------------------------------------------------------- the log


def play_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if " played " in line or " drew " in line]


def test_the_move_log_survives_a_reload(page: Page, server: WebServer) -> None:
    """After a reload the snapshot's deal so far fills the log again: the same lines."""
    offline(page, server, "Defter")
    for _ in range(3):
        page.take_turn()
        next_turn(page)
    assert page.body("phase") == "play"
    before = play_lines(page.log_text())
    assert len(before) >= 3
    page.driver.refresh()
    page.wait_screen("table")
    page.wait(lambda d: page.body("turn") == "mine", what="the decision after the reload")
    after = page.log_text()
    assert "Deal 1 so far" in after
    assert play_lines(after) == before
    # Our own draws keep their cards; the bots' never show them.
    assert all(":" not in line for line in before if line.startswith("bot") and "drew" in line)


# ------------------------------------------------------------------- a lost connection


def test_a_lost_connection_shows_a_banner_a_countdown_and_try_now(
        page: Page, server: WebServer) -> None:
    """While the link is down a banner covers the table with a countdown, the table
    takes no input, and Try now reconnects at once (no waiting out the countdown)."""
    offline(page, server, "Kopuk")
    # The next tries go to a path of the same server that is no WebSocket, so their
    # handshakes fail as a dead link's (another port would be refused by the page's CSP
    # before any try, and Chromium then reports no close at all).
    page.driver.execute_script(
        "const w = window.pisyedili.wire; w.realUrl = w.url;"
        f"w.url = w.url.replace(/\\/ws$/, '/{DEAD_PATH}'); w.ws.close();")
    page.wait(lambda d: page.body("banner") == "lost" and page.all("#banner-countdown[data-at]"),
              what="the banner's countdown")
    banner = page.css("#banner")
    assert "Connection lost" in banner.text and "Trying again in" in banner.text
    assert page.driver.execute_script("return document.getElementById('main').inert") is True
    assert page.driver.execute_script(
        "return document.elementFromPoint(...(() => { const r = document.querySelector("
        "'#hand button.card').getBoundingClientRect(); return [r.x + 5, r.y + 5]; })())"
        ".closest('#hand') === null || document.getElementById('main').inert")
    # Wait for the countdown to be long (several failed tries), then skip it.
    # Read in one script: between two reads a try may begin and clear retryAt.
    page.wait(lambda d: (d.execute_script(
        "const at = window.pisyedili.state.retryAt;"
        "return at == null ? 0 : at - performance.now();") or 0) > 1500,
              what="a long wait before the next try")
    page.driver.execute_script("const w = window.pisyedili.wire; w.url = w.realUrl;")
    # Try now opens the next try there and then, the countdown notwithstanding.
    trying = page.driver.execute_script(
        "const w = window.pisyedili.wire; const waiting = w.ws === null;"
        "document.getElementById('retry-now').click(); return [waiting, w.ws !== null];")
    assert trying == [True, True]
    page.wait(lambda d: page.body("link") == "welcomed" and page.body("banner") == "none",
              what="the reconnect")
    assert page.driver.execute_script("return document.getElementById('main').inert") is False
    assert "Welcome back" in page.log_text()
    page.wait(lambda d: page.body("turn") == "mine", what="our decision again")
    # The failed tries are the browser's own console errors, not the page's.
    assert [e for e in page.errors() if DEAD_PATH not in e] == []


def test_another_tab_takes_the_seat_and_this_one_takes_it_back(
        page: Page, server: WebServer) -> None:
    offline(page, server, "İkiz")
    first = page.driver.current_window_handle
    page.driver.switch_to.new_window("tab")
    try:
        page.driver.get(server.url)  # the same stored session: it resumes here
        page.wait_screen("table")
        page.driver.switch_to.window(first)
        page.wait(lambda d: page.body("banner") == "replaced", what="the replaced banner")
        assert "another tab" in page.text("#banner")
        page.click("#take-back")
        page.wait(lambda d: page.body("banner") == "none" and page.body("link") == "welcomed",
                  what="the seat back here")
        assert page.state("you.seat") == 0
        page.driver.switch_to.window(next(h for h in page.driver.window_handles if h != first))
        page.wait(lambda d: page.body("banner") == "replaced", what="the other tab to stop")
        page.driver.close()
    finally:
        page.driver.switch_to.window(first)


def test_the_page_stops_when_play_web_ends(page: Page) -> None:
    """`pisyedili play --web` ends: its page says the server is gone and stops trying."""
    process = fork_kit.popen(
        [sys.executable, "-c", PLAY, "play", "--web", "--no-open", "--name", "Son",
         "--bots", "1", "--level", "easy"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, encoding="utf-8")
    try:
        assert process.stdout is not None
        output = Output(process.stdout)
        url = output.wait_for(r" at (http://\S+)").group(1)
        page.open(url)
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        process.send_signal(signal.SIGINT)
        # It stops in a fraction of a second of CPU; the backstop is for a starved machine.
        process.wait(timeout=BACKSTOP)
        page.wait(lambda d: page.body("banner") == "gone", what="the page to say it is over")
        assert "stopped" in page.text("#banner")
        assert page.driver.execute_script("return window.pisyedili.wire.stopped") is True
        assert page.all("#retry-now") == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


# ------------------------------------------------------------------------ small things


def test_the_waiting_room_and_the_offline_table(page: Page, server: WebServer) -> None:
    """The host is not tagged "not ready" (its Start is its ready); an offline table
    shows no invite code; the felt shows which way play goes."""
    from selenium.webdriver.common.keys import Keys

    page.open(server.url)
    page.name_and_enter("Ev Sahibi")
    page.css("#seats").send_keys("2")
    # Keys, not clicks: a lobby row another test's table adds moves the form down, and a
    # click lands where the element was (on Create instead of the box, as seen once).
    page.css("#private").send_keys(Keys.SPACE)
    page.css("#create").send_keys(Keys.ENTER)
    page.wait_screen("table")
    host_row = page.css('.seat-row[data-seat="0"]')
    assert "host" in host_row.text and "not ready" not in host_row.text
    assert not page.all("#ready")
    assert page.text("#invite-code")  # a private table online: the code to share
    page.driver.get("about:blank")
    page.driver.execute_cdp_cmd("Storage.clearDataForOrigin", {
        "origin": server.url.rstrip("/"), "storageTypes": "local_storage"})
    offline(page, server, "Yalnız")
    assert not page.all("#invite-code")
    assert "code" not in page.text(".table-head")
    clockwise = page.state("view.direction") == 1
    assert page.attr("#direction-ring", "data-direction") == ("cw" if clockwise else "ccw")
    note = page.text("#direction-note")
    assert ("anticlockwise" not in note) == clockwise and "then" in note


def test_with_two_players_the_felt_shows_no_way_round(page: Page, server: WebServer) -> None:
    """Either way round, the other player is next: a 10 changes nothing there (C12a),
    so neither the ring nor the note shows a way that would seem to turn."""
    offline(page, server, "İkili", bots=1)
    assert page.state("view.players") == 2
    assert not page.all("#direction-ring") and not page.all("#direction-note")
    page.driver.get("about:blank")  # a new offline table, not the saved one resumed
    page.driver.execute_cdp_cmd("Storage.clearDataForOrigin", {
        "origin": server.url.rstrip("/"), "storageTypes": "local_storage"})
    offline(page, server, "Üçlü", bots=2)
    assert page.state("view.players") == 3
    assert page.all("#direction-ring") and page.all("#direction-note")


def test_h_goes_to_the_first_card_that_can_be_played(page: Page, server: WebServer) -> None:
    for _ in range(TURN_LIMIT):
        if not page.all("#hand"):
            offline(page, server, "Hızlı")
        next_turn(page)
        cards = page.all("#hand button.card")
        legal = page.all("#hand button.card.legal")
        if legal and cards[0] != legal[0]:
            break
        if page.body("phase") == "over":  # a deal can end before such a turn: another
            offline(page, server, "Hızlı")
            continue
        page.take_turn()
    else:
        raise AssertionError(f"no turn whose first card was not playable in {TURN_LIMIT}")
    page.css("#table-title").click()  # the focus off the hand
    want = page.attrs("#hand button.card.legal", "data-key")[0]
    page.press("h")
    assert page.focused("data-key") == want


def test_chat_says_when_it_reaches_its_limit(page: Page, server: WebServer) -> None:
    offline(page, server, "Geveze")
    field = page.css("#chat-input")
    field.send_keys("a" * 260)
    help_ = page.wait_css("#chat-help")
    assert "260 of 300" in help_.text
    field.send_keys("b" * 60)
    page.wait(lambda d: "at most" in page.css("#chat-help").text, what="the limit said")
    assert len(str(field.get_attribute("value"))) == 300


def test_a_name_in_use_and_a_refused_name_are_said_plainly(page: Page, server: WebServer) -> None:
    """A name taken on the server comes back suffixed: the lobby says so. A refused
    name stays in its field, with the reason in plain words next to it."""
    page.open(server.url)
    page.name_and_enter("Çift")
    page.click("#change-name")
    page.name_and_enter("Çift")  # the first session still holds it
    note = page.wait_css("#renamed")
    assert "Çift" in note.text and page.state("me.name") in note.text
    assert page.state("me.name") != "Çift"
    page.click("#change-name")
    page.wait_screen("name")
    field = page.css("#name-input")
    field.clear()
    field.send_keys("bot (easy)")
    page.click("#connect")
    error = page.wait_css("#name-error")
    assert "kept for the server's bots" in error.text and "name:" not in error.text
    assert page.css("#name-input").get_attribute("value") == "bot (easy)"
    assert "name-error" in str(page.css("#name-input").get_attribute("aria-describedby"))


def test_a_wrong_invite_code_is_said_next_to_its_field(page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Kodcu")
    page.css("#code-input").send_keys("ZZZZZZ")
    page.click("#join-code")
    error = page.wait_css("#code-error")
    assert "invite code" in error.text
    box, field = rect(page, "#code-error"), rect(page, "#code-input")
    assert 0 <= box["top"] - field["bottom"] < 40  # right under the field


def test_our_stand_in_says_it_plays_for_us(page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Uykucu")
    page.css("#seats").send_keys("2")
    page.css("#turn_seconds").send_keys("1")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait(lambda d: page.state("table.seats[1].kind") == "bot", what="the bot")
    page.click("#start")
    page.wait_css("#come-back", timeout=30)  # two turns timed out: a stand-in plays
    tags = page.text(".seat.mine .seat-tags")
    assert "a bot plays for you" in tags and "them" not in tags


# --------------------------------------------------------------------- console errors


def console_errors(page: Page) -> list[str]:
    """Chromium's own log of the page: errors and uncaught exceptions (SEVERE)."""
    return [f"{e['level']}: {e['message']}" for e in page.driver.get_log("browser")
            if e.get("level") == "SEVERE"]


def replay_index(page: Page) -> int:
    return int(str(page.attr("#replay", "data-index")))


def test_no_console_error_across_a_match_a_reload_and_a_lost_connection(
        page: Page, server: WebServer) -> None:
    """A registered player's rated match against bots, a reload and a lost link in it,
    then the pages after it: the match's replay (a step each way, play and pause, the
    slider), the leaderboard and the player's profile."""
    page.open(server.url)
    page.name_and_enter("Temiz")
    assert console_errors(page) == [], "the name screen or the lobby"
    for field in ("#register-password", "#register-again"):
        page.css(field).send_keys("temiz's password")
    page.click("#register")
    page.wait_css("#account-status")
    page.click("#rated")
    page.css("#seats").send_keys("3")
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys("1")
    page.css("#turn_seconds").send_keys("0")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait_css('.seat-row[data-seat="2"] .add-bot').click()
    page.wait(lambda d: page.state("table.seats.every(s => s.kind !== 'open')"), what="bots")
    page.click("#sound-toggle")  # sounds on: they play (or stay quiet) without an error
    page.click("#start")
    page.wait(lambda d: page.body("turn") == "mine", what="our first turn")
    assert console_errors(page) == [], "the waiting room and the start"
    moves = 0
    while page.body("phase") != "over":
        page.take_turn()
        moves += 1
        if moves == 2:
            page.driver.refresh()
            page.wait_screen("table")
            assert console_errors(page) == [], "the reload"
        if moves == 4:
            page.driver.execute_script("window.pisyedili.wire.ws.close()")
            page.wait(lambda d: page.body("link") == "welcomed" and page.body("banner") == "none",
                      what="the reconnect")
            assert console_errors(page) == [], "the lost connection"
        next_turn(page)
        assert moves < TURN_LIMIT
    page.wait_css("#match-result")
    assert console_errors(page) == [], "the match and its end"

    page.click("#nav-history")
    page.wait_screen("history")
    page.click("#history-mine")
    page.click("#match-list a.replay-link")
    page.wait_screen("replay")
    page.wait(lambda d: page.all("#replay-hands"), what="the first position")
    page.click("#replay-forward")
    page.wait(lambda d: replay_index(page) == 1, what="a step on")
    page.click("#replay-back")
    page.wait(lambda d: replay_index(page) == 0, what="a step back")
    page.click("#replay-play")
    page.wait(lambda d: replay_index(page) >= 2, what="the replay playing")
    page.click("#replay-play")
    page.wait(lambda d: page.css("#replay-play").text == "Play", what="the replay paused")
    page.driver.execute_script(
        "const s = document.getElementById('replay-slider'); s.value = s.max;"
        "s.dispatchEvent(new Event('input', {bubbles: true}))")
    page.wait(lambda d: page.all("#replay-result"), what="the deal's end")
    assert console_errors(page) == [], "the replay"

    page.click("#nav-ladder")
    page.wait_screen("ladder")
    page.click("#ladder-provisional")  # one rated match settles nobody's rating
    page.click('#ladder-table a.name-link[href="#profile=Temiz"]')
    page.wait_screen("profile")
    page.wait_css("#profile-ratings")
    page.wait_css("#profile-recent")
    assert console_errors(page) == [], "the leaderboard and a profile"
