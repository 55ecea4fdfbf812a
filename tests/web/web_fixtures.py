"""The fixtures the browser test modules share: a roomy server, one Chromium for the
module, and a fresh page (a new player) for each test.

pytest finds fixtures by name in a test's module, so a module imports the ones it uses,
the ones they use included:

    from web_fixtures import driver, page, server, viewport  # noqa: F401

and overrides any of them by defining its own: `viewport` for another window size,
`server` for other options.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import Page, chromium, fresh_page, set_viewport
from web_kit import WebServer, served

ROOMY = ("--max-tables-per-address", "100", "--max-sessions-per-address", "100",
         "--max-per-address", "100")
"""Every test is a new player from the same address, and earlier ones keep their tables
until their grace period ends: room for all of them."""


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    """The browser window's width and height."""
    return (1280, 800)


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    with served(*ROOMY) as srv:
        yield srv


@pytest.fixture(scope="module")
def driver(viewport: tuple[int, int]) -> Iterator[Any]:
    with chromium(*viewport) as d:
        yield d


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the module's screenshots, to look at when a test asks for it."""
    return tmp_path_factory.mktemp("screens")


@pytest.fixture
def page(driver: Any, server: WebServer, viewport: tuple[int, int]) -> Iterator[Page]:
    """A fresh player: the client's page with nothing stored from an earlier test, and
    no error in its console by the test's end."""
    set_viewport(driver, *viewport)
    p = fresh_page(driver, server.url)
    yield p
    assert p.errors() == [], "the page logged errors"
