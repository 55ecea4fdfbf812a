"""A deal's result with a long score sheet fits the window, in a real browser (headless
Chromium) against a real server process: a match of twelve deals at four seats, at
1280x720 and on a 360x740 phone. The result's headline, the sheet (scrolling inside
the panel) and the panel's buttons are in view and on top with the page scrolled to
its top; at 1280x720 the page does not scroll at all. And a spectator who joins in
the middle of a match, or a player whose page resumes after the server restarted,
sees every deal's row from the first.

Our seat times out twice (one-second turns) and a stand-in plays it from then on, so
the twelve deals go at the bots' speed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import Page, fresh_page, set_viewport
from test_web_browser import TcpPlayer
from web_fixtures import ROOMY, driver, page, viewport  # noqa: F401
from web_kit import WebServer, served

from pisyedili.server.bench.services import free_port

DEALS = 12
MATCH_WAIT = 240.0
"""Seconds the whole match may take: twelve deals of bots with a pause after each."""


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    """A pause after each deal long enough for a look at its result."""
    with served(*ROOMY, "--deal-pause", "1.5") as srv:
        yield srv


def seated_bot(page: Page, seat: int, _driver: Any) -> bool:
    return bool(page.state(f"table.seats[{seat}].kind") == "bot")


def start_long_match(page: Page, url: str) -> None:
    page.open(url)
    page.name_and_enter("Sabırlı")
    page.css("#rules").send_keys("Classic")
    page.css("#seats").send_keys("4")
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys(str(DEALS))
    page.css("#turn_seconds").send_keys("1")
    page.click("#create")
    page.wait_screen("table")
    for seat in (1, 2, 3):
        page.click(f'.seat-row[data-seat="{seat}"] .add-bot')
        page.wait(functools.partial(seated_bot, page, seat), what=f"the bot at seat {seat + 1}")
    page.click("#start")


# In one script, so that what is measured is the state it was checked in: null unless
# `ready(state)`, else each element's box, whether it is on top at its middle (the point
# a click would hit), and the page's and the viewport's heights.
BOXES = """
function measure(ready, selectors) {
  if (!ready(window.pisyedili.state)) return null;
  const boxes = {};
  for (const sel of selectors) {
    const el = document.querySelector(sel);
    if (!el) { boxes[sel] = null; continue; }
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + Math.min(r.height / 2, 10));
    boxes[sel] = {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
      onTop: Boolean(hit && (el === hit || el.contains(hit)))};
  }
  const sheet = document.querySelector("#deal-result .sheet-box");
  const doc = document.documentElement;
  return {boxes, page: doc.scrollHeight, wide: doc.scrollWidth,
    height: innerHeight, width: innerWidth,
    sheet: sheet && {scroll: sheet.scrollHeight, client: sheet.clientHeight}};
}
"""


def measured(page: Page, ready: str, selectors: list[str]) -> dict[str, Any]:
    """The boxes of `selectors` once the state `ready` (an expression of `s`) holds."""
    script = f"{BOXES}\nreturn measure((s) => ({ready}), arguments[0]);"
    found = page.wait(lambda d: d.execute_script(script, selectors), MATCH_WAIT, what=ready)
    return dict(found)


def recorded(page: Page, ready: str, selectors: list[str]) -> dict[str, Any]:
    """`measured` for a state that lasts a moment (a deal's end, until the next deal):
    the page measures itself every 20 ms from now on and keeps the first result, since
    on a busy machine one round trip of the driver's can outlast the state. (The
    driver's script may define the functions the timer calls; the page's own scripts
    may not build one from a string, by its Content-Security-Policy.)"""
    page.driver.execute_script(
        f"{BOXES}\nconst selectors = arguments[0];"
        "window.recordedBoxes = null;"
        "const timer = setInterval(() => {"
        f"  const found = measure((s) => ({ready}), selectors);"
        "  if (found) { window.recordedBoxes = found; clearInterval(timer); }"
        "}, 20);", selectors)
    found = page.wait(lambda d: d.execute_script("return window.recordedBoxes"),
                      MATCH_WAIT, what=ready)
    return dict(found)


def assert_in_view(seen: dict[str, Any], page_scrolls: bool) -> None:
    for sel, box in seen["boxes"].items():
        assert box is not None, f"{sel} is not on the page"
        assert 0 <= box["top"] and box["bottom"] <= seen["height"], (sel, box, seen["height"])
        assert 0 <= box["left"] and box["right"] <= seen["width"], (sel, box, seen["width"])
        assert box["onTop"], f"{sel} is covered"
    assert seen["wide"] <= seen["width"], "the page scrolls sideways"
    if not page_scrolls:
        assert seen["page"] <= seen["height"], "the page scrolls"


RESULT = ["#deal-result h3", "#deal-result .result-scores", "#deal-sheet thead th",
          "#deal-sheet tfoot th", "#result-close"]


@pytest.mark.rule("C16")
def test_a_long_sheet_keeps_the_result_and_its_buttons_in_the_window(
        driver: Any, server: WebServer) -> None:
    set_viewport(driver, 1280, 720)
    page = fresh_page(driver, server.url)
    try:
        start_long_match(page, server.url)
        # A deal's end late in the match: ten rows and more, the next deal to come.
        late = recorded(page, f"s.view?.phase === 'over' && s.sheet.length >= {DEALS - 2} "
                        "&& s.table.phase === 'playing'", [*RESULT, "#come-back"])
        assert_in_view(late, page_scrolls=False)
        assert late["sheet"]["scroll"] > late["sheet"]["client"], "the sheet scrolls inside"

        # The match's end: its result with Play again and No more, over the deal's.
        ended = f"s.table.phase === 'over' && s.sheet.length === {DEALS}"
        buttons = [*RESULT, "#match-result h3", "#rematch", "#no-rematch"]
        assert_in_view(measured(page, ended, buttons), page_scrolls=False)
        # The last deal's row scrolls into the sheet's box, the header and totals stay.
        driver.execute_script("const b = document.querySelector('#deal-result .sheet-box');"
                              "b.scrollTop = b.scrollHeight;")
        last = measured(page, ended, [f'#deal-sheet tr[data-deal="{DEALS}"] th',
                                      "#deal-sheet thead th", "#deal-sheet tfoot th"])
        assert_in_view(last, page_scrolls=False)

        set_viewport(driver, 360, 740, mobile=True)
        page.wait(lambda d: d.execute_script(
            "return document.getElementById('results')?.classList.contains('pinned')"),
            what="the result over the phone's window")
        driver.execute_script("scrollTo(0, 0)")
        assert_in_view(measured(page, ended, buttons), page_scrolls=True)

        # Closed, the felt shows again, and the match's result with its buttons.
        page.click("#result-close")
        page.wait(lambda d: page.all("#deal-result") == [], what="the result closed")
        assert page.all("#rematch")
        # The table's Score sheet button: the whole sheet, its Close in view.
        page.click("#sheet-toggle")
        panel = measured(page, ended, ["#score-sheet-table thead th", "#score-sheet-table tfoot th",
                                       "#sheet-close"])
        assert_in_view(panel, page_scrolls=True)
        set_viewport(driver, 1280, 720)
        assert_in_view(measured(page, ended, ["#score-sheet-table thead th",
                                              "#score-sheet-table tfoot th", "#sheet-close"]),
                       page_scrolls=False)
        assert page.errors() == []
    finally:
        set_viewport(driver, 1280, 800)
        driver.get("about:blank")


def test_a_spectator_joining_mid_match_sees_every_deal_so_far(page: Page,
                                                              server: WebServer) -> None:
    """The snapshot of a table joined after some deals holds its whole sheet: the
    spectator's sheet starts at deal 1, and its totals are the table's scores."""
    host = TcpPlayer(server.tcp_port, "Ev Sahibi")
    try:
        snap = host.request({"type": "create_table", "rules": "classic", "seats": 4,
                             "options": {"turn_seconds": 1, "match_end": "deals:6"}})
        for seat in (1, 2, 3):
            host.request({"type": "add_bot", "seat": seat, "level": "easy"})
        host.request({"type": "start"})
        ended = 0
        while ended < 2:  # our seat times out; a stand-in plays it
            msg = host.until(lambda m: m["type"] == "update", timeout=60)
            ended += sum(e.get("event") == "deal_end" for e in msg.get("events", []))
        page.open(server.url)
        page.name_and_enter("İzleyici")
        page.click(f'.lobby-row[data-table="{snap["table"]["id"]}"] button.watch')
        page.wait_screen("table")
        assert page.state("you.spectator") is True
        seen = page.driver.execute_script(
            "const s = window.pisyedili.state;"
            "return [s.sheet.map((r) => r.deal_no), s.sheet.at(-1).totals, s.view.scores,"
            " s.view.deal_no, s.view.phase];")
        numbers, totals, scores, deal_no, phase = seen
        done = deal_no if phase == "over" else deal_no - 1
        assert numbers == list(range(1, done + 1)) and done >= 2, seen
        assert totals == scores, seen
        page.click("#sheet-toggle")
        page.wait_css("#score-sheet-table")
        shown = page.driver.execute_script(
            "return [...document.querySelectorAll('#score-sheet-table tbody tr')]"
            ".map((tr) => tr.dataset.deal);")
        assert shown[:2] == ["1", "2"], shown
    finally:
        host.close()


def test_a_player_resuming_after_a_server_restart_sees_the_whole_sheet(
        driver: Any, tmp_path: Path) -> None:
    """The server stops mid-match and starts again from its journal on the same port:
    the page reconnects by itself, resumes its seat, and its sheet still starts at
    deal 1, the rows it showed before unchanged."""
    port = free_port()
    args = (*ROOMY, "--deal-pause", "1.5", "--db", str(tmp_path / "server.sqlite"),
            "--web", f"tcp:{port}:interface=127.0.0.1")
    url = f"http://127.0.0.1:{port}/"
    set_viewport(driver, 1280, 800)
    page = fresh_page(driver, url)
    try:
        with served(*args):
            start_long_match(page, url)
            page.wait(lambda d: page.state("sheet.length") >= 2, MATCH_WAIT, what="two deals")
            before = page.state("sheet")
        page.wait(lambda d: page.body("link") != "welcomed", what="the link lost")
        with served(*args):
            page.wait(lambda d: page.body("link") == "welcomed", MATCH_WAIT,
                      what="the session resumed")
            page.wait(lambda d: page.state("table") is not None, what="the table again")
            after = page.state("sheet")
            assert after[:len(before)] == before, (before, after)
            page.click("#sheet-toggle")
            page.wait_css("#score-sheet-table")
            shown = page.driver.execute_script(
                "return [...document.querySelectorAll('#score-sheet-table tbody tr')]"
                ".map((tr) => tr.dataset.deal);")
            assert shown[:len(before)] == [str(r["deal_no"]) for r in before], shown
            page.driver.get("about:blank")  # the page stops before the server does
    finally:
        driver.get("about:blank")
