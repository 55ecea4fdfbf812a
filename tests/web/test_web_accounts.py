"""Accounts, ratings, matches, replays, moderation and spectating in a real browser
(headless Chromium) against a real server process, as `test_web_browser` does.

Each test saves a screenshot of what it checked under pytest's temporary folder
(`shots` fixture), to look at when a test or a change of the page asks for it.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import (
    Page,
    assert_headings_align,
    contrast,
    rgb,
    set_viewport,
)
from poll_kit import BACKSTOP, poll_until
from process_output import add_operator
from test_web_browser import TcpPlayer
from web_fixtures import ROOMY, driver, page, shots  # noqa: F401
from web_kit import WebServer, served

from pisyedili.client.catalogs import LANGUAGES
from pisyedili.server.net.web import static_root

Msg = dict[str, Any]
OPERATOR = "Deniz"


OPERATOR_PASSWORD = "operator's password"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """A server on a real store in which the operator's account exists before it starts:
    `--operator` names only accounts that exist then (docs/operating.md)."""
    db = tmp_path_factory.mktemp("store") / "pisyedili.db"
    add_operator(str(db), OPERATOR, OPERATOR_PASSWORD)
    with served(*ROOMY, "--db", str(db), "--operator", OPERATOR) as srv:
        yield srv


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    return (1280, 900)


def shot(page: Page, folder: Path, name: str) -> None:
    page.driver.execute_script("document.activeElement && document.activeElement.blur()")
    page.driver.save_screenshot(str(folder / f"{name}.png"))


def storage(page: Page) -> dict[str, str]:
    return dict(page.driver.execute_script(
        "return Object.fromEntries(Object.entries(localStorage))"))


def fill(page: Page, fields: dict[str, str]) -> None:
    for selector, value in fields.items():
        element = page.wait_css(selector)
        element.clear()
        element.send_keys(value)


class Player(TcpPlayer):
    """`TcpPlayer` asking for the accounts, ratings and history features too."""

    def __init__(self, port: int, name: str, source: str = "127.0.0.1") -> None:
        """`source`: the loopback address to connect from; a kicked guest's is kept out
        for a while, so a test that kicks one connects it from its own."""
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                             source_address=(source, 0))
        self.buffer = b""
        self.seen: list[Msg] = []
        self.moves: list[Msg] = []
        self.next_id = 1
        self.send({"type": "hello", "protocol": 2, "name": name,
                   "features": ["chat", "accounts", "ratings", "history", "moderation"]})
        self.welcome = self.until(lambda m: m["type"] == "welcome")


def registered_player(port: int, name: str, password: str = "a long password") -> Player:
    """A TCP client that registered `name`."""
    tcp = Player(port, name)
    assert tcp.welcome["name"] == name
    tcp.request({"type": "register", "password": password})
    return tcp


def register_in_page(page: Page, password: str) -> None:
    fill(page, {"#register-password": password, "#register-again": password})
    page.click("#register")
    page.wait(lambda d: page.all("#account-status"), what="logged in")


def test_register_log_out_log_in_and_the_kept_login(page: Page, server: WebServer,
                                                      shots: Path) -> None:
    page.open(server.url)
    page.name_and_enter("Ayşe")
    register_in_page(page, "correct horse battery")
    assert "Logged in as Ayşe" in page.text("#account-status")
    kept = storage(page)
    login = json.loads(kept["pisyedili.login"])
    assert login["name"] == "Ayşe" and len(login["token"]) > 16
    assert not any("correct horse" in v for v in kept.values()), "the password was stored"
    # The next visit, after the session itself has expired: the kept login brings the
    # account back, without the name screen.
    page.driver.execute_script("localStorage.removeItem('pisyedili.session')")
    page.open(server.url)
    page.wait(lambda d: page.all("#account-status"), what="logged in again by the token")
    assert page.text("#who").startswith("Ayşe")
    # Change the password: the new one works, the old one no longer does.
    fill(page, {"#passwd-old": "correct horse battery", "#passwd-new": "staple grammar"})
    page.click("#passwd")
    page.wait(lambda d: "password is changed" in page.css("#account-info").text,
              what="the password changed")
    assert json.loads(storage(page)["pisyedili.login"])["token"] != login["token"]
    page.click("#logout")
    page.wait(lambda d: page.all("#register-form"), what="a guest again")
    assert "pisyedili.login" not in storage(page)
    assert page.state("me.name") != "Ayşe"  # the account keeps the name
    fill(page, {"#login-name": "Ayşe", "#login-password": "correct horse battery"})
    page.click("#login")
    page.wait(lambda d: page.all("#account-error"), what="the refusal")
    assert page.text("#account-error") == "That name and password do not match."
    shot(page, shots, "account-refused")
    fill(page, {"#login-name": "Ayşe", "#login-password": "staple grammar"})
    page.click("#login")
    page.wait(lambda d: page.all("#account-status"), what="logged in by password")
    assert page.state("me.name") == "Ayşe"
    shot(page, shots, "account")
    # Another name: the account logs out first, so its kept token is revoked, not left.
    token = json.loads(storage(page)["pisyedili.login"])["token"]
    page.click("#change-name")
    page.wait_screen("name")
    assert "pisyedili.login" not in storage(page)
    other = Player(server.tcp_port, "Someone")
    try:
        other.send({"type": "login", "name": "Ayşe", "token": token})
        assert other.until(lambda m: m["type"] in ("account", "error"))["code"] == "bad_login"
    finally:
        other.close()


def test_no_page_is_wider_than_a_phone(page: Page, server: WebServer) -> None:
    """At 360 px the name screen (with its login), the lobby (with the account panel)
    and the pages fit the width: nothing to scroll sideways."""
    set_viewport(page.driver, 360, 740, mobile=True)

    def width(where: str) -> None:
        wide = page.driver.execute_script("return document.documentElement.scrollWidth")
        assert wide <= 360, f"{where} is {wide} px wide"

    page.open(server.url)
    page.wait_css("#entry-login")
    width("the name screen")
    page.name_and_enter("Dar")
    page.wait_css("#register-form")
    width("the lobby")
    match = finished_match(server.tcp_port, "Kısa", deals=1)
    for route, screen in (("#ladder", "ladder"), ("#history-recent", "history"),
                          (f"#replay={match}", "replay")):
        page.driver.execute_script("location.hash = arguments[0]", route)
        page.wait_screen(screen)
        page.wait(lambda d: not page.all("main [role=status]"), what=f"the {screen} page")
        width(f"the {screen} page")
        if screen == "ladder":  # the rule sets' buttons side by side, not stacked
            assert page.css("#ladder-classic").rect["y"] == page.css("#ladder-cardiva").rect["y"]


def test_logging_in_from_the_name_screen(page: Page, server: WebServer) -> None:
    tcp = registered_player(server.tcp_port, "Kerem", "kerem's password")
    tcp.close()
    page.open(server.url)
    page.wait_screen("name")
    fill(page, {"#entry-name": "Kerem", "#entry-password": "kerem's password"})
    # The login is the name screen's second panel, in its column.
    name_panel, login_panel = page.driver.execute_script(
        "return ['.name-panel', '#login-entry'].map(s => { const r = document.querySelector(s)"
        ".closest('.panel').getBoundingClientRect(); return [r.left, r.width]; })")
    assert name_panel == login_panel
    page.click("#entry-login")
    page.wait_screen("lobby")
    page.wait(lambda d: page.all("#account-status"), what="logged in")
    assert page.state("me.name") == "Kerem"
    assert "kerem's password" not in json.dumps(storage(page))


def test_a_guest_at_a_rated_table_is_told_why_and_offered_a_login(
        page: Page, server: WebServer, shots: Path) -> None:
    host = registered_player(server.tcp_port, "Mehmet")
    try:
        snap = host.request({"type": "create_table", "rules": "classic", "seats": 3,
                             "rated": True, "name": "Rated night"})
        table = snap["table"]["id"]
        page.open(server.url)
        page.name_and_enter("Efe")
        row = page.wait_css(f'.lobby-row[data-table="{table}"]')
        assert "rated" in row.find_element("css selector", ".tag.rated").text
        page.click(f'.lobby-row[data-table="{table}"] button.join')
        notice = page.wait_css("#rated-notice")
        assert "only players with an account may take a seat" in notice.text
        assert page.body("screen") == "table"
        assert page.text("#table-rated") == "rated"
        shot(page, shots, "rated-notice")
        page.click("#notice-login")
        page.wait_screen("lobby")
        page.wait(lambda d: page.focused("id") == "login-name",
                  what="the login form, focused")
    finally:
        host.close()


def play_out(tcp: Player, limit: int = 2000) -> Msg:
    """Make the first move on offer each time until the match ends; its `match_end`.

    Against a bot this player moves faster than the server's rate for one connection
    (`Limits.rate`), as a bot of a third party may: a move refused `rate_limited` is
    sent again once the wait its refusal names is over, as docs/protocol.md asks."""
    sent: dict[int, Msg] = {}
    for _ in range(limit):
        msg = tcp.until(lambda m: m["type"] in ("update", "table")
                        or m.get("code") == "rate_limited", 30)
        if msg["type"] == "error":
            time.sleep(float(msg["retry_after"]))  # the server's own wait, not a guess
            move = sent.pop(int(msg["id"]))
            sent[tcp.send(move)] = move
            continue
        for event in msg.get("events", []) if msg["type"] == "update" else []:
            if event["event"] == "match_end":
                return dict(event)
        if msg.get("moves"):
            move = {"type": "move", "move": msg["moves"][0]}
            sent[tcp.send(move)] = move
    raise AssertionError("the match did not end")


def rated_match(port: int, name: str) -> tuple[Player, int]:
    """`name` registers and plays a one-deal rated match against a hard bot."""
    tcp = registered_player(port, name)
    snap = tcp.request({"type": "create_table", "rules": "classic", "seats": 2, "rated": True,
                        "options": {"match_end": "deals:1", "turn_seconds": 0}})
    tcp.request({"type": "add_bot", "seat": 1, "level": "hard"})
    tcp.request({"type": "start"})
    play_out(tcp)
    return tcp, int(snap["table"]["id"])


def test_the_leaderboard_and_a_profile_reached_from_names(
        page: Page, server: WebServer, shots: Path) -> None:
    tcp, _ = rated_match(server.tcp_port, "Zeynep")
    try:
        tcp.request({"type": "leave_table"})
        tcp.request({"type": "create_table", "rules": "classic", "seats": 3, "name": "Zeynep's"})
        page.open(server.url)
        page.name_and_enter("Selin")
        page.click("#nav-ladder")
        page.wait_screen("ladder")
        page.wait_css("#ladder-empty")  # one rated match settles nobody's rating
        page.click("#ladder-provisional")
        table = page.wait_css("#ladder-table")
        rows = table.find_elements("css selector", "tbody tr")
        names = [r.get_attribute("data-name") for r in rows]
        assert "Zeynep" in names and "bot (hard)" in names
        assert_headings_align(page, "#ladder-table")
        shot(page, shots, "ladder")
        page.click('#ladder-table a.name-link[href="#profile=Zeynep"]')
        page.wait_screen("profile")
        page.wait_css("#profile-recent")
        assert page.text("#profile-title") == "Zeynep"
        assert "classic" in page.text("#profile-ratings")
        recent = page.all("#profile-recent li")
        assert len(recent) >= 1 and "rated" in recent[0].text
        assert_headings_align(page, "#profile-ratings")
        # On the white panel: links in a legible colour (not the header's gold), and
        # tags with a tint of their own, so "lost" and "rated" read as tags.
        white = (255.0, 255.0, 255.0)
        for link in ("#profile-history", "#profile-recent a.replay-link"):
            assert contrast(rgb(page.css(link).value_of_css_property("color")), white) >= 4.5
        for tag in page.all("#profile-recent .tag"):
            assert rgb(tag.value_of_css_property("background-color"))[:3] != white, tag.text
        shot(page, shots, "profile")
        # From the lobby's host name, and from the chat.
        page.click("#nav-home")
        page.wait_screen("lobby")
        page.click('.lobby-row a.name-link[href="#profile=Zeynep"]')
        page.wait_screen("profile")
        page.click("#nav-home")
        page.wait_screen("lobby")
        tcp.request({"type": "chat", "text": "merhaba", "scope": "lobby"})
        page.click('#chat-list a.name-link[href="#profile=Zeynep"]')
        page.wait_screen("profile")
        page.wait_css("#profile-recent")
        # A guest has no profile: said in words.
        page.driver.get(server.url + "#profile=Selin")
        page.wait_css("#profile-error")
        assert "has no account" in page.text("#profile-error")
    finally:
        tcp.close()


def test_watching_from_the_lobby_shows_who_watches(page: Page, server: WebServer,
                                                    shots: Path) -> None:
    host = Player(server.tcp_port, "Burak")
    watcher = Player(server.tcp_port, "Canan")
    try:
        snap = host.request({"type": "create_table", "rules": "classic", "seats": 2,
                             "options": {"turn_seconds": 0}})
        table = snap["table"]["id"]
        host.request({"type": "add_bot", "seat": 1, "level": "easy"})
        host.request({"type": "start"})
        watcher.request({"type": "join_table", "table": table, "spectate": True})
        page.open(server.url)
        page.name_and_enter("Ece")
        page.click(f'.lobby-row[data-table="{table}"] button.watch')
        page.wait_screen("table")
        page.wait(lambda d: page.all("#watchers") and "Ece" in page.css("#watchers").text,
                  what="the watchers")
        watchers = page.css("#watchers")
        assert "Canan" in watchers.text
        # Below the table's title line and its buttons, not between them.
        assert page.css("#leave").rect["y"] + page.css("#leave").rect["height"] \
            <= watchers.rect["y"]
        assert watchers.find_element("css selector", 'a[href="#profile=Canan"]')
        assert page.all('.seat a.name-link[href="#profile=Burak"]')
        shot(page, shots, "watching")
    finally:
        host.close()
        watcher.close()


def test_an_operator_moderates_from_the_page_after_confirming(
        page: Page, server: WebServer, shots: Path) -> None:
    # The operator's account was made before the server started; it logs in in the page.
    troll = Player(server.tcp_port, "Troll", source="127.0.0.7")  # kicked below
    host = Player(server.tcp_port, "Okan")
    try:
        snap = host.request({"type": "create_table", "rules": "classic", "seats": 2})
        table = snap["table"]["id"]
        page.open(server.url)
        page.wait_screen("name")
        fill(page, {"#entry-name": OPERATOR, "#entry-password": OPERATOR_PASSWORD})
        page.click("#entry-login")
        page.wait_css("#operator-tag")
        # A reload resumes the session, and its welcome says it is an operator's.
        page.driver.refresh()
        page.wait(lambda d: page.body("link") == "welcomed", what="the session resumed")
        page.wait_css("#operator-tag")
        # Nothing leaves before the confirmation; Cancel sends nothing.
        fill(page, {"#mod-mute-name": "Troll", "#mod-mute-minutes": "30"})
        page.click('#mod-mute button[type="submit"]')
        assert "Stop Troll from chatting for 30 minutes?" in page.wait_css("#mod-confirm").text
        page.click("#mod-no")
        page.wait(lambda d: not page.all("#mod-confirm"), what="the question gone")
        troll.send({"type": "chat", "text": "still free", "scope": "lobby"})
        assert troll.until(lambda m: m["type"] in ("ok", "error"))["type"] == "ok"
        page.click('#mod-mute button[type="submit"]')
        page.click("#mod-yes")
        page.wait(lambda d: page.all("#mod-result"), what="the mute's answer")
        assert page.text("#mod-result") == "Done: mute."
        troll.send({"type": "chat", "text": "muted?", "scope": "lobby"})
        assert troll.until(lambda m: m["type"] in ("ok", "error"))["code"] == "muted"
        fill(page, {"#mod-unmute-name": "Troll"})
        page.click('#mod-unmute button[type="submit"]')
        assert "Let Troll chat again?" in page.wait_css("#mod-confirm").text
        page.click("#mod-yes")
        page.wait(lambda d: page.css("#mod-result").text == "Done: unmute.", what="unmuted")
        troll.send({"type": "chat", "text": "free again", "scope": "lobby"})
        assert troll.until(lambda m: m["type"] in ("ok", "error"))["type"] == "ok"
        # Announce, close a table, kick: each asked, then done.
        fill(page, {"#mod-announce-text": "Restart at ten"})
        page.click('#mod-announce button[type="submit"]')
        page.click("#mod-yes")
        assert troll.until(lambda m: m["type"] == "announcement")["text"] == "Restart at ten"
        page.wait(lambda d: "Restart at ten" in page.css("#announcement").text,
                  what="the announcement on the page")
        fill(page, {"#mod-close-table": str(table), "#mod-close-reason": "test over"})
        page.click('#mod-close_table button[type="submit"]')
        assert f"Close table #{table}" in page.wait_css("#mod-confirm").text
        page.click("#mod-yes")
        assert host.until(lambda m: m["type"] == "table_closed")["reason"] == "test over"
        fill(page, {"#mod-kick-name": "Nobody Here"})
        page.click('#mod-kick button[type="submit"]')
        page.click("#mod-yes")
        page.wait(lambda d: page.all("#mod-result.error"), what="the refusal")
        fill(page, {"#mod-kick-name": "Troll", "#mod-kick-reason": "abuse"})
        page.click('#mod-kick button[type="submit"]')
        page.click("#mod-yes")
        assert troll.until(lambda m: m["type"] == "error")["code"] == "kicked"
        page.wait(lambda d: page.css("#mod-result").text == "Done: kick.", what="the kick")
        page.driver.execute_script("document.getElementById('moderation').scrollIntoView()")
        shot(page, shots, "moderation")
    finally:
        troll.close()
        host.close()


def test_a_plain_player_sees_no_moderation(page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Gizem")
    register_in_page(page, "gizem's password")
    assert not page.all("#moderation") and not page.all("#operator-tag")


PAGE_BUDGET = 200 * 1024
"""Bytes, compressed as sent, that the client may weigh in any one language: every file
of it (sounds included) but the other languages' catalogs and fonts."""

OWN_FILES = {"th": ("locale/th.json", "fonts/noto-sans-thai-thai-400-normal.woff2"),
             "fa": ("locale/fa.json", "fonts/vazirmatn-arabic-400-normal.woff2")}
"""Each language's own files, where it has more than its catalog."""


def language_weights(origin: str) -> dict[str, int]:
    """Each language's page at its heaviest: the shared files, its catalog and font."""
    sizes = {p.relative_to(static_root()).as_posix():
             _sent_size(origin + "/" + p.relative_to(static_root()).as_posix())
             for p in static_root().rglob("*") if p.is_file() and not p.name.startswith(".")}
    own = {lang: OWN_FILES.get(lang, (f"locale/{lang}.json",)) for lang in LANGUAGES}
    assert all(path in sizes for paths in own.values() for path in paths), own
    theirs = {path for paths in own.values() for path in paths}
    shared = sum(size for path, size in sizes.items() if path not in theirs)
    return {"en": shared, **{lang: shared + sum(sizes[p] for p in paths)
                             for lang, paths in own.items()}}


def _sent_size(url: str) -> int:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return len(response.read())


def test_the_page_loads_only_from_its_server_and_stays_light(page: Page,
                                                             server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Hale")
    page.click("#nav-ladder")
    page.wait_screen("ladder")
    loaded = page.driver.execute_script(
        "return [location.href, ...performance.getEntriesByType('resource').map(e => e.name)]")
    origin = server.url.rstrip("/")
    assert len(loaded) > 5, loaded  # the page and its modules
    strays = [u for u in loaded if not u.startswith(origin + "/")]
    assert strays == [], "the page loaded from elsewhere"
    # The WebSocket is the server's too (the CSP would have refused any other).
    assert page.driver.execute_script("return window.pisyedili.wire.ws.url") == server.ws_url
    loaded_weight = sum(_sent_size(u.split("#")[0]) for u in set(loaded))
    weights = language_weights(origin)
    assert loaded_weight <= weights["en"], (loaded_weight, weights)
    assert max(weights.values()) <= PAGE_BUDGET, weights


def kept_match(tcp: TcpPlayer) -> int:
    """The id of the match `tcp`'s player last finished, once the store keeps it (a
    moment after the match's last update)."""
    def kept() -> int | None:
        matches = tcp.request({"type": "history", "of": "mine"})["matches"]
        return int(matches[0]["id"]) if matches else None

    return poll_until(kept, BACKSTOP, "the match to be kept", 0.1)


def finished_match(port: int, name: str, deals: int = 2, private: bool = False) -> int:
    """`name` plays a whole casual match against a bot; the match's id."""
    tcp = Player(port, name)
    try:
        tcp.request({"type": "create_table", "rules": "classic", "seats": 2, "private": private,
                     "options": {"match_end": f"deals:{deals}", "turn_seconds": 0}})
        tcp.request({"type": "add_bot", "seat": 1, "level": "easy"})
        tcp.request({"type": "start"})
        play_out(tcp)
        return kept_match(tcp)
    finally:
        tcp.close()


def enter_name(page: Page, name: str) -> None:
    """The name screen's Play, for a page that goes on to a page of its own."""
    fill(page, {"#name-input": name})
    page.click("#connect")


def replay_data(page: Page, key: str) -> int:
    """The viewer's position; -1 while it loads a deal's pages (it says "Loading…" and
    has no position yet, as when play runs on into the next deal)."""
    value = page.css("#replay").get_attribute(f"data-{key}")
    return -1 if value is None else int(value)


def test_a_replay_steps_through_every_deal_face_up_and_can_be_shared(
        page: Page, server: WebServer, shots: Path) -> None:
    match = finished_match(server.tcp_port, "Tuna", deals=2)
    page.open(server.url)
    page.name_and_enter("Umut")
    page.click("#nav-history")
    page.wait_screen("history")
    page.wait_css(f'#match-list a.replay-link[data-match="{match}"]')
    page.click("#history-mine")  # Umut has played nothing yet
    page.wait_css("#history-empty")
    page.driver.get(f"{server.url}#history=Tuna")  # a player's matches, by name
    page.wait(lambda d: "Tuna's matches" in page.css("#history-title").text
              and page.all("#match-list"), what="Tuna's matches")
    page.click(f'#match-list a.replay-link[data-match="{match}"]')
    page.wait_screen("replay")
    page.wait(lambda d: page.all("#replay-hands"), what="the first position")
    assert page.driver.current_url.endswith(f"#replay={match}")
    hands = page.all("#replay-hands .replay-seat")
    assert len(hands) == 2
    assert [len(s.find_elements("css selector", ".card")) for s in hands] == [7, 7]
    assert "the cards as dealt" in page.text("#replay-moves")
    steps = replay_data(page, "steps")
    assert steps > 10
    page.click("#replay-forward")
    page.wait(lambda d: replay_data(page, "index") == 1, what="one move on")
    assert "Tuna" in page.text("#replay-moves") or "bot" in page.text("#replay-moves")
    page.click("#replay-back")
    page.wait(lambda d: replay_data(page, "index") == 0, what="one move back")
    # The slider: to the deal's end, where the result shows.
    page.driver.execute_script(
        "const s = document.getElementById('replay-slider'); s.value = s.max;"
        "s.dispatchEvent(new Event('input', {bubbles: true}))")
    page.wait(lambda d: page.all("#replay-result"), what="the deal's result")
    assert replay_data(page, "index") == steps - 1
    shot(page, shots, "replay-end")
    # Play runs on into the next deal; pause stops it there.
    page.click("#replay-play")
    page.wait(lambda d: replay_data(page, "deal") == 2 and replay_data(page, "index") >= 1,
              what="play running into deal 2")
    page.click("#replay-play")
    stopped = replay_data(page, "index")
    assert page.text("#replay-play") == "Play"
    assert page.text("#replay-deal") == "Deal 2 of 2"
    page.click("#replay-prev-deal")
    page.wait(lambda d: replay_data(page, "deal") == 1, what="back to deal 1")
    assert replay_data(page, "index") == 0 and stopped >= 1
    shot(page, shots, "replay")
    # The link opens the same replay for another visitor, after their name.
    link = page.css("#replay-link").get_attribute("value")
    assert link == f"{server.url}#replay={match}"
    page.driver.get("about:blank")
    page.driver.execute_cdp_cmd("Storage.clearDataForOrigin", {
        "origin": server.url.rstrip("/"), "storageTypes": "local_storage"})
    page.open(link)
    enter_name(page, "Vedat")
    page.wait_screen("replay")
    page.wait(lambda d: page.all("#replay-hands"), what="the shared replay")


def test_a_private_match_is_not_replayed_to_others(page: Page, server: WebServer) -> None:
    match = finished_match(server.tcp_port, "Yasemin", deals=1, private=True)
    page.open(f"{server.url}#replay={match}")
    enter_name(page, "Zafer")
    page.wait_screen("replay")
    assert "private table you did not sit at" in page.wait_css("#replay-error").text
