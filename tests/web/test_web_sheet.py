"""The score sheet in a real browser (headless Chromium) against a real server process:
in a deal's result, behind the table's "Score sheet" button (after a reload too, from
the snapshot), and in the replay viewer (docs/protocol.md, "The score sheet").

Waits are on the DOM (see `browser_kit`); every test ends with no console error.
"""

from __future__ import annotations

import pytest
from browser_kit import Page
from test_web_accounts import enter_name, finished_match, replay_data
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer


def sheet(page: Page, table: str) -> list[list[str]]:
    """The cells of a sheet on the page, row by row: the header, each deal, the totals."""
    return list(page.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' tr')]"
        ".map((tr) => [...tr.children].map((c) => c.innerText.trim()));", table))


def start_match(page: Page, url: str, name: str) -> None:
    """A classic table of two, against a bot, a match of two deals, started."""
    page.open(url)
    page.name_and_enter(name)
    page.css("#rules").send_keys("Classic")
    page.css("#seats").send_keys("2")
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys("2")
    page.css("#turn_seconds").send_keys("0")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait(lambda d: page.state("table.seats.every(s => s.kind !== 'open')"), what="a bot")
    page.click("#start")
    page.wait(lambda d: page.body("tablePhase") == "playing", what="the match to start")


@pytest.mark.rule("C13", "C14")
def test_a_deals_end_shows_the_sheet_and_the_button_shows_it_after_a_reload(
        page: Page, server: WebServer) -> None:
    start_match(page, server.url, "Sevgi")
    assert page.all("#score-sheet") == []  # closed until asked for
    page.click("#sheet-toggle")
    assert "No deal of this match has ended yet." in page.text("#score-sheet")
    page.click("#sheet-close")
    page.wait(lambda d: page.all("#score-sheet") == [], what="the sheet closed")

    page.play_until(lambda: page.body("tablePhase") == "over")  # both deals
    page.wait_css("#deal-sheet")
    result = page.state("view.result")  # the last deal's
    scores = page.state("view.scores")
    at_end = sheet(page, "#deal-sheet")
    assert at_end[0] == ["Deal", "you", "bot 2", "Note"], at_end
    assert [row[0] for row in at_end[1:]] == ["1", "2", "Total"], at_end
    cells = [f"{p} ★" if s == result["winner"] else str(p)
             for s, p in enumerate(result["points"])]
    note = f"×{result['multiplier']}" if result["multiplier"] > 1 else (
        "stock out" if result["reason"] == "stock_out" else "")
    assert at_end[2] == ["2", *cells, note], at_end  # its points, multiplier applied (C14)
    assert at_end[3] == ["Total", *map(str, scores), ""], at_end
    points = [[int(cell.rstrip(" ★")) for cell in row[1:3]] for row in at_end[1:3]]
    assert scores == [a + b for a, b in zip(*points, strict=True)]

    # A reload: the snapshot brings the sheet back, and the button shows it.
    page.driver.refresh()
    page.wait_screen("table")
    page.click("#sheet-toggle")
    assert page.attr("#sheet-toggle", "aria-expanded") == "true"
    page.wait_css("#score-sheet-table")
    assert sheet(page, "#score-sheet-table") == at_end
    assert page.state("sheet.length") == 2


def test_the_replay_viewer_shows_the_sheet_so_far(page: Page, server: WebServer) -> None:
    match = finished_match(server.tcp_port, "Deniz", deals=2)
    page.open(f"{server.url}#replay={match}")
    enter_name(page, "Ilgaz")
    page.wait_screen("replay")
    page.wait(lambda d: page.all("#replay-hands"), what="the first position")
    assert "No deal of this match has ended yet." in page.text("#replay-sheet")

    def to_the_end() -> None:
        page.driver.execute_script(
            "const s = document.getElementById('replay-slider'); s.value = s.max;"
            "s.dispatchEvent(new Event('input', {bubbles: true}))")
        page.wait(lambda d: page.all("#replay-result"), what="the deal's result")

    to_the_end()
    first = sheet(page, "#replay-sheet-table")
    assert [row[0] for row in first] == ["Deal", "1", "Total"], first
    page.click("#replay-next-deal")
    page.wait(lambda d: replay_data(page, "deal") == 2 and replay_data(page, "index") == 0,
              what="deal 2")
    page.wait(lambda d: page.all("#replay-sheet-table"), what="deal 2's sheet")
    assert sheet(page, "#replay-sheet-table") == first  # deal 2 is not over yet
    to_the_end()
    whole = sheet(page, "#replay-sheet-table")
    assert [row[0] for row in whole] == ["Deal", "1", "2", "Total"], whole
    assert page.attr("#replay-sheet-table tr[aria-current]", "data-deal") == "2"
    # The totals are the two deals' points added up (C16).
    points = [[int(cell.rstrip(" ★")) for cell in row[1:3]] for row in whole[1:3]]
    assert whole[-1][1:3] == [str(a + b) for a, b in zip(*points, strict=True)]
