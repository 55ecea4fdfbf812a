"""No English at the table: the web client in a real browser, in each of its languages,
shows none of the English words a player would meet (rule sets, bot levels and names,
a table's options and name, refusals), on the lobby, at a table with its Rules panel
open, in the history, a replay, the leaderboard and a profile.

What a page shows is its visible text (`innerText`) and the hints and titles of its
visible elements; a server bot of a finished match and of the ladder is among them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_kit import Page, chromium, fresh_page
from catalog_kit import LANGS, build_all
from english_kit import english_words
from test_web_accounts import Player, kept_match, rated_match
from test_web_i18n import html
from test_web_table import offline
from web_fixtures import ROOMY
from web_kit import WebServer, served


@pytest.fixture(scope="module", autouse=True)
def catalogs() -> None:
    build_all()


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[WebServer, int]]:
    """A server with a rated match of Zeynep's against a hard bot (a history, a replay,
    a ladder with a bot level on it), and a table open in the lobby with a bot seated."""
    with served(*ROOMY) as server:
        zeynep, __ = rated_match(server.tcp_port, "Zeynep")
        host = Player(server.tcp_port, "Mehmet")
        try:
            zeynep.request({"type": "leave_table"})
            match = kept_match(zeynep)
            host.request({"type": "create_table", "rules": "cardiva", "seats": 3,
                          "options": {"ten": "bounce", "match_end": "points:101"}})
            host.request({"type": "add_bot", "seat": 1, "level": "medium"})
            yield server, match
        finally:
            host.close()
            zeynep.close()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(1280, 900) as d:
        yield d


SHOWN = """
const out = [document.body.innerText];
for (const el of document.querySelectorAll("[placeholder], [title], [aria-label]")) {
  if (!el.checkVisibility()) continue;
  for (const name of ["placeholder", "title", "aria-label"]) {
    if (el.getAttribute(name)) out.push(el.getAttribute(name));
  }
}
return out.join("\\n");
"""


def shown(page: Page) -> str:
    return str(page.driver.execute_script(SHOWN))


def go(page: Page, place: str, ready: str, click: str | None = None) -> str:
    """The page's words once `place` (its URL's hash) shows `ready` (after a click on
    `click`, if given)."""
    page.driver.execute_script("window.location.hash = arguments[0]", place)
    if click is not None:
        page.click(click)
    page.wait_css(ready)
    return shown(page)


PROVISIONAL = "#ladder-provisional"
"""The leaderboard's choice to list provisional ratings: one rated match settles none."""


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_speaks_no_english(driver: Any, world: tuple[WebServer, int],
                                      lang: str) -> None:
    server, match = world
    page = fresh_page(driver, server.url)
    page.open(server.url)
    page.driver.execute_script("localStorage.setItem('pisyedili.lang', arguments[0])", lang)
    page.driver.refresh()
    page.wait(lambda d: html(page)[0] == lang, what=f"the page in {lang}")
    page.name_and_enter("Derin")
    page.wait_css("#lobby-list .lobby-row")
    texts = {"lobby": shown(page)}
    page.css("#code-input").send_keys("ZZZZ")
    page.click("#join-code")
    page.wait_css("#code-error")
    texts["refusal"] = shown(page)
    texts["history"] = go(page, "#history-recent", "#match-list .replay-link")
    texts["replay"] = go(page, f"#replay={match}", "#replay-moves li")
    texts["ladder"] = go(page, "#ladder", "#ladder-table tbody tr", PROVISIONAL)
    texts["profile"] = go(page, "#profile=Zeynep", "#profile-totals")
    offline(page, server, "Derin")
    page.click("#table-rules summary")
    page.wait_css("#table-rules .rules-lines li")
    texts["table"] = shown(page)
    found = {where: english_words(text, lang) for where, text in texts.items()}
    assert {where: words for where, words in found.items() if words} == {}, texts
    assert page.errors() == []


def test_the_words_looked_for_are_there_in_english(world: tuple[WebServer, int],
                                                   driver: Any) -> None:
    """The same walk in English finds the words: the test looks where they would be."""
    server, match = world
    page = fresh_page(driver, server.url)
    page.open(server.url)
    page.name_and_enter("Derin")
    page.wait_css("#lobby-list .lobby-row")
    words = {w.split("'")[1].lower() for w in english_words(shown(page), "en")}
    assert {"cardiva", "bot", "points"} <= words, words
    ladder = go(page, "#ladder", "#ladder-table tbody tr", PROVISIONAL)
    assert "bot (hard)" in ladder
    replay = go(page, f"#replay={match}", "#replay-moves li")
    assert "bot 2" in replay
    offline(page, server, "Derin")
    page.click("#table-rules summary")
    page.wait_css("#table-rules .rules-lines li")
    assert "Rules: classic" in shown(page)
