"""The browser's counterparts of two terminal commands, in a real browser (headless
Chromium) against a real server process: the replay viewer's Download (`/export`) and
the table's Rules panel (`/rules`).

The export is compared with what the terminal's own code writes for the same match,
fetched over a real TCP connection; the panel with the terminal's `/rules` lines, in
English and in every language of the catalogs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import Page, fresh_page, set_viewport
from catalog_kit import LANGS, build_all
from test_web_accounts import Player, enter_name, finished_match, kept_match
from test_web_table import offline
from web_fixtures import ROOMY, driver  # noqa: F401
from web_kit import WebServer, served

from pisyedili.client import i18n, render, replay

Msg = dict[str, Any]


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    """A server whose decks come from one seed: the long match is the same each run."""
    with served(*ROOMY, "--seed", "7") as srv:
        yield srv


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    return (1280, 900)


@pytest.fixture
def page(driver: Any, server: WebServer, viewport: tuple[int, int],
         tmp_path: Path) -> Iterator[Page]:
    """A fresh visitor whose downloads land in `tmp_path`."""
    set_viewport(driver, *viewport)
    p = fresh_page(driver, server.url)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {
        "behavior": "allow", "downloadPath": str(tmp_path)})
    yield p
    assert p.errors() == [], "the page logged errors"


def terminal_export(port: int, match_id: int, path: Path) -> str:
    """The file the terminal's `/export ID FILE` writes: its pages fetched as
    `App.fetch_match` fetches them, joined and saved by `client/replay.py`."""
    tcp = Player(port, "Exporter")
    try:
        replies: list[Msg] = []
        deal, start, deals = 1, 0, 1
        while deal <= deals:
            ask: Msg = {"type": "replay", "match": match_id, "deal": deal}
            if start:
                ask["from"] = start
            reply = tcp.request(ask)
            replies.append(reply)
            deals = int(reply["match"]["deals"])
            got = int(reply["from"]) + len(reply["record"]["moves"])
            if got < int(reply["move_count"]) and got > start:
                start = got
            else:
                deal, start = deal + 1, 0
    finally:
        tcp.close()
    replay.save(replay.from_replies(replies), path)
    return path.read_text(encoding="utf-8")


def test_the_replay_viewer_downloads_the_terminals_export_file(
        page: Page, server: WebServer, tmp_path: Path) -> None:
    match = finished_match(server.tcp_port, "Tuna", deals=2)
    page.open(f"{server.url}#replay={match}")
    enter_name(page, "Viewer")
    page.wait_screen("replay")
    link = page.wait_css("#replay-download")
    assert link.get_attribute("download") == f"pisyedili-match-{match}.json"
    assert link.text == "Download"
    # The page's CSP lets it fetch nothing but its server, blob: URLs included, so the
    # file is read from the Blob the link is made of.
    page.driver.execute_script(
        "const make = URL.createObjectURL;"
        "URL.createObjectURL = (blob) => { window.exported = blob; return make.call(URL, blob); };")
    page.click("#replay-download")
    page.wait(lambda d: page.css("#replay-download").get_attribute("data-ready") == "yes",
              what="the export file made")
    href = page.css("#replay-download").get_attribute("href")
    assert href.startswith("blob:")
    text = page.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.exported.text().then(done);")
    assert isinstance(text, str)
    browser_file = tmp_path / "browser.json"
    browser_file.write_text(text, encoding="utf-8")
    loaded = replay.load(browser_file)  # the loader `pisyedili replay FILE` uses
    assert loaded.id == match and len(loaded.deals) == 2
    expected = terminal_export(server.tcp_port, match, tmp_path / "terminal.json")
    assert json.loads(text) == json.loads(expected)
    assert text == expected  # laid out the same too: one deal a line
    # Every deal's seed, a 64-bit integer, came through with every digit.
    assert [d["record"]["seed"] for d in json.loads(text)["deals"]] == \
        [d["record"]["seed"] for d in json.loads(expected)["deals"]]
    # The click saved the same file where the browser puts its downloads.
    saved = tmp_path / f"pisyedili-match-{match}.json"
    page.wait(lambda d: saved.exists() and saved.read_text(encoding="utf-8") == expected,
              what="the downloaded file")


def long_match(port: int) -> int:
    """A one-deal match in which the player only draws and passes, on a reshuffled
    stock: over 100 moves, so the viewer fetches the deal in pages of 100 steps, and
    reshuffles, which replay right only with the seed's every digit."""
    tcp = Player(port, "Drawer")
    try:
        tcp.request({"type": "create_table", "rules": "classic", "seats": 2, "options": {
            "match_end": "deals:1", "turn_seconds": 0, "empty_stock": "reshuffle"}})
        tcp.request({"type": "add_bot", "seat": 1, "level": "easy"})
        tcp.request({"type": "start"})
        for _ in range(3000):
            msg = tcp.until(lambda m: m["type"] in ("update", "table"), 30)
            events = msg.get("events", []) if msg["type"] == "update" else []
            if any(e["event"] == "match_end" for e in events):
                break
            moves = {m["kind"]: m for m in msg.get("moves") or []}
            if moves:
                move = moves.get("pass") or moves.get("draw") or msg["moves"][0]
                tcp.send({"type": "move", "move": move})
        return kept_match(tcp)
    finally:
        tcp.close()


def test_a_deal_of_many_pages_with_reshuffles_exports_whole(
        page: Page, server: WebServer, tmp_path: Path) -> None:
    match = long_match(server.tcp_port)
    expected = terminal_export(server.tcp_port, match, tmp_path / "terminal.json")
    doc = json.loads(expected)
    assert len(doc["deals"][0]["record"]["moves"]) > 100, "the deal took one page"
    page.open(f"{server.url}#replay={match}")
    enter_name(page, "Viewer")
    page.wait_screen("replay")
    page.driver.execute_script(
        "const make = URL.createObjectURL;"
        "URL.createObjectURL = (blob) => { window.exported = blob; return make.call(URL, blob); };")
    page.click("#replay-download")
    page.wait(lambda d: page.css("#replay-download").get_attribute("data-ready") == "yes",
              what="the export file made")
    text = page.driver.execute_async_script(
        "window.exported.text().then(arguments[arguments.length - 1]);")
    assert text == expected
    browser_file = tmp_path / "browser.json"
    browser_file.write_text(text, encoding="utf-8")
    assert replay.load(browser_file).deals[0]["record"]["moves"] == \
        doc["deals"][0]["record"]["moves"]


def panel_lines(page: Page) -> list[str]:
    return list(page.driver.execute_script(
        "const p = document.getElementById('table-rules');"
        "return [...p.querySelectorAll('.rules-body p, .rules-body li')]"
        ".map((e) => e.textContent);"))


def terminal_rules(rules: str, options: Msg) -> list[str]:
    """The terminal's `/rules` lines, as text."""
    return ["".join(text for _, text in line).strip()
            for line in render.rules_lines(rules, options)]


@pytest.mark.parametrize(("rules", "key_rules"), [
    ("classic", ["C11 7: the next player draws 3 or answers with a 7; sevens stack",
                 "C5/C6 a jack goes on anything but a jack and names the suit"]),
    ("cardiva", ["K7 7: the next player draws 3 or answers with a 7 (3, 6, 9...)",
                 "K8 a jack goes on anything and names the suit."]),
])
def test_the_tables_rules_panel_says_what_rules_says(
        page: Page, server: WebServer, rules: str, key_rules: list[str]) -> None:
    offline(page, server, "Ada", rules=rules)
    panel = page.wait_css("#table-rules summary")
    assert panel.text == "Rules"
    assert not page.css("#table-rules").get_attribute("open")
    felt = page.driver.execute_script(
        "return document.querySelector('.table-screen > .felt').getBoundingClientRect().top")
    page.click("#table-rules summary")
    page.wait(lambda d: page.css("#table-rules-options").is_displayed(), what="the open panel")
    text = page.text("#table-rules")
    for rule in key_rules:
        assert rule in text
    # Open, it lies over the felt: the table below does not move (it fits the screen).
    assert page.driver.execute_script(
        "return document.querySelector('.table-screen > .felt').getBoundingClientRect().top"
    ) == felt
    options: Msg = page.state("table.options")
    assert options["rules"] == rules
    lines = panel_lines(page)
    assert lines == terminal_rules(rules, options)
    # The options in a player's words, not the wire's keys.
    assert re.match(r"options: \d+ (deals|points), 10 (reverses|bounces), ", lines[-1]), lines[-1]
    # The panel stays open while the game goes on round it (a redraw keeps it).
    before = page.log_text()
    page.take_turn()
    page.wait(lambda d: page.log_text() != before, what="the move in the log")
    assert page.css("#table-rules").get_attribute("open") is not None


def test_the_rules_panel_words_each_rule_as_the_terminal_does(
        page: Page, server: WebServer) -> None:
    """In every language the panel's rule lines are the terminal's `/rules` lines,
    word for word: one translation serves both clients."""
    build_all()
    offline(page, server, "Ada", rules="cardiva")
    page.click("#table-rules summary")
    page.wait_css("#table-rules .rules-lines li")
    options: Msg = page.state("table.options")
    try:
        for lang in LANGS:
            i18n.set_language(lang)
            wanted = terminal_rules("cardiva", options)[1:-1]  # the lines: no title, no options
            page.driver.execute_script(
                "const el = document.getElementById('lang-choice'); el.value = arguments[0];"
                "el.dispatchEvent(new Event('change', {bubbles: true}))", lang)
            page.wait(lambda d, wanted=wanted: rule_items(page) == wanted,  # type: ignore[misc]
                      what=f"the rule lines in {lang}")
    finally:
        i18n.set_language("en")


def rule_items(page: Page) -> list[str]:
    return list(page.driver.execute_script(
        "return [...document.querySelectorAll('#table-rules .rules-lines li')]"
        ".map((e) => e.textContent);"))


def test_the_open_rules_panel_fits_a_phone(page: Page, server: WebServer) -> None:
    set_viewport(page.driver, 390, 844, mobile=True)
    offline(page, server, "Ece", rules="cardiva")
    page.click("#table-rules summary")
    page.wait(lambda d: page.css("#table-rules-options").is_displayed(), what="the open panel")
    body = page.driver.execute_script(
        "const r = document.querySelector('#table-rules .rules-body').getBoundingClientRect();"
        "return [r.left, r.right, document.documentElement.scrollWidth];")
    assert body[0] >= 0 and body[1] <= 390 and body[2] <= 390
