"""A page that cannot load one of its files says so, in the player's language, and
offers to load it again (client/web/boot.js), in a real browser (headless Chromium).

The browser itself is told to fail one module's load (DevTools' blocked URLs), as a
dropped connection or a server too busy to answer would: without the watchman the
module graph never runs and the page stays blank.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_kit import Page
from catalog_kit import build_all
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer

BLOCKED = "*/cards.js"
"""A module app.js imports, two steps down the graph."""


@pytest.fixture(scope="module", autouse=True)
def catalogs() -> None:
    """client/web/locale/*.json from the .po files, as an install would have them."""
    build_all()


@pytest.fixture
def blocked(page: Page) -> Iterator[Page]:
    """The page, with every load of `BLOCKED` failing until the test lifts it; the
    failed loads it logged are the test's point, not errors of the page."""
    driver = page.driver
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": [BLOCKED]})
    try:
        yield page
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        driver.execute_cdp_cmd("Network.disable", {})
        driver.get_log("browser")


def screen(driver: Any) -> Any:
    return driver.execute_script("return document.body.dataset.screen")


def test_a_module_that_fails_to_load_is_told_with_a_button_to_try_again(
        blocked: Page, server: WebServer) -> None:
    page = blocked
    page.driver.get(server.url)
    page.wait_css("#load-failed")
    assert page.attr("#load-failed", "role") == "alert"
    assert page.text("#load-failed p") == ("Part of the page could not be loaded. "
                                           "Check your connection, then try again.")
    assert page.text("#load-retry") == "Try again"
    assert page.focused("id") == "load-retry"
    assert page.body("screen") == "name"  # index.html's own: app.js never ran

    # In the language chosen on the page before, from its catalog.
    page.driver.execute_script("localStorage.setItem('pisyedili.lang', 'tr')")
    page.click("#load-retry")
    page.wait(lambda d: page.attr("html", "lang") == "tr", what="the Turkish page")
    page.wait_css("#load-failed")
    assert page.text("#load-failed p") == ("Sayfanın bir bölümü yüklenemedi. "
                                           "Bağlantınızı denetleyip yeniden deneyin.")
    assert page.text("#load-retry") == "Yeniden dene"

    # Once the file can be had, the button loads the whole page.
    page.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    page.click("#load-retry")
    page.wait(lambda d: not page.all("#load-failed") and page.all("#main *")
              and d.execute_script("return !!window.pisyedili"), what="the loaded page")
    assert page.all("#load-failed") == []
