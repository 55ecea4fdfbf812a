"""Ratings as players read them, in a real browser (headless Chromium) against a real
server process: the end of a rated match says how every seat's rating moved, the
leaderboard shows settled ratings and marks bots (provisional ones when asked, marked
"?"), and a profile draws each rating's history as a chart. In English and in Persian,
whose page shows no English and its own digits."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_kit import Page
from test_web_accounts import Player, register_in_page, registered_player, shot
from test_web_i18n import html, set_field
from web_fixtures import ROOMY, driver, page, shots  # noqa: F401
from web_kit import WebServer, served

PASSWORD = "correct horse battery"
PERSIAN_DIGITS = "۰۱۲۳۴۵۶۷۸۹"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    db = tmp_path_factory.mktemp("store") / "pisyedili.db"
    with served(*ROOMY, "--db", str(db)) as srv:
        yield srv


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    return (1280, 900)


def western(text: str) -> str:
    return text.translate(str.maketrans(PERSIAN_DIGITS, "0123456789"))


def ratings_of(tcp: Player, rules: str = "classic") -> dict[str, dict[str, object]]:
    board = tcp.request({"type": "leaderboard", "rules": rules, "provisional": True})
    return {str(row["name"]): row for row in board["rows"]}


def play_rated_match_in_page(page: Page) -> None:
    """From the lobby: a rated two-seat table with a bot, one deal, played out."""
    page.css("#rules").send_keys("Classic")
    page.css("#seats").send_keys("2")
    page.css("#match_kind").send_keys("deals")
    page.css("#match_count").send_keys("1")
    page.css("#turn_seconds").send_keys("0")
    page.click("#rated")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait(lambda d: page.state("table.seats[1].kind") == "bot", what="the bot")
    page.click("#start")
    page.wait(lambda d: page.body("tablePhase") == "playing", what="the match to start")
    page.play_until(lambda: bool(page.all("#rating-changes li")))


def test_a_rated_match_ends_with_every_seats_change_and_the_ladder_and_profile_show_it(
        page: Page, server: WebServer, shots: Path) -> None:
    watcher = registered_player(server.tcp_port, "Zeynep")
    try:
        page.open(server.url)
        page.name_and_enter("Ayşe")
        register_in_page(page, PASSWORD)
        play_rated_match_in_page(page)

        # What the page says is what the server keeps, for both seats.
        level = page.state("table.seats[1].level")
        kept = ratings_of(watcher)
        ayse, bot = kept["Ayşe"], kept[f"bot ({level})"]
        lines = [li.text for li in page.all("#rating-changes li")]
        assert lines == [f"you: 1500? → {ayse['display']}?, {signed(ayse, 1500)}",
                         f"bot 2: 1500? → {bot['display']}?, {signed(bot, 1500)}"], lines
        assert page.all('#rating-changes li.mine[data-seat="0"]')
        assert f"you: 1500? → {ayse['display']}?" in page.log_text()
        shot(page, shots, "rated-match-end")

        # The leaderboard: nobody is settled after one match, so it says so, and lists
        # everyone when asked, marked provisional; the bot level marked as a bot.
        page.click("#leave")
        page.wait_screen("lobby")
        page.click("#nav-ladder")
        page.wait_screen("ladder")
        page.wait_css("#ladder-empty")
        page.click("#ladder-provisional")
        table = page.wait_css("#ladder-table")
        rows = {r.get_attribute("data-name"): r for r in table.find_elements(
            "css selector", "tbody tr")}
        assert set(rows) == {"Ayşe", f"bot ({level})"}
        assert rows["Ayşe"].find_element("css selector", "td.rating").text == \
            f"{ayse['display']}?"
        assert "provisional" in str(rows["Ayşe"].get_attribute("class"))
        assert rows[f"bot ({level})"].find_element("css selector", ".bot-level").text == \
            f"bot ({level})"
        shot(page, shots, "ladder-provisional")

        # A second rated match: the profile's chart has a point for each.
        page.click("#nav-home")
        page.wait_screen("lobby")
        play_rated_match_in_page(page)
        again = ratings_of(watcher)["Ayşe"]
        page.driver.get(server.url + "#profile=Ayşe")
        page.wait_screen("profile")
        chart = page.wait_css("#rating-history-classic svg")
        points = chart.find_element("css selector", "polyline").get_attribute("points")
        assert len(str(points).split()) == 3  # from 1500, where every rating starts
        assert page.text('#profile-ratings tr[data-rules="classic"] td.rating') == \
            f"{again['display']}?"
        caption = page.text("#rating-history-classic figcaption")
        assert caption.endswith(f"now {again['display']}"), caption
        assert "Ayşe" in str(chart.get_attribute("aria-label"))
        shot(page, shots, "profile-chart")
        assert page.errors() == []
    finally:
        watcher.close()


def signed(row: dict[str, object], before: int) -> str:
    change = int(str(row["display"])) - before
    return f"+{change}" if change > 0 else f"−{-change}" if change < 0 else "±0"


def test_in_persian_the_ratings_show_no_english_and_persian_digits(
        page: Page, server: WebServer, shots: Path) -> None:
    page.open(server.url)
    page.name_and_enter("Deniz")
    register_in_page(page, PASSWORD)
    play_rated_match_in_page(page)
    set_field(page, "#lang-choice", "fa")
    page.wait(lambda d: html(page) == ("fa", "rtl"), what="the page in Persian")
    changes = page.text("#rating-changes")
    assert "۱۵۰۰؟" in changes and not re.search(r"[0-9A-Za-z]", changes), changes
    shot(page, shots, "rated-match-end-fa")
    page.click("#leave")
    page.wait_screen("lobby")
    page.driver.get(server.url + "#profile=Deniz")
    page.wait_screen("profile")
    page.wait_css("#rating-history-classic svg")
    for part in ("#profile-ratings", "#rating-history-classic"):
        text = page.text(part)
        assert not re.search(r"[A-Za-z0-9]", text), text
    assert "Deniz" in str(page.attr("#rating-history-classic svg", "aria-label"))
    assert western(page.text("#profile-ratings td.rating")).rstrip("؟").isdigit()
    shot(page, shots, "profile-fa")
