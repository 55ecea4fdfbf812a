"""A real browser for the web client's tests: headless Chromium from the system's
packages, driven by Selenium.

Selenium is pointed at `/usr/bin/chromium` and `/usr/bin/chromedriver` explicitly, so
Selenium Manager never looks for (or downloads) a browser of its own. Without them the
browser tests skip, saying why, except under `CI=true`, where a missing browser is a
broken environment and fails.

The helpers wait on DOM conditions (`WebDriverWait`) and never on fixed sleeps: the
client marks its body with `data-screen`, `data-turn` (`mine` while a decision of ours
is pending and nothing is in flight) and `data-serial` (a count of decisions handed to
us), which is what the waits read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 20.0
"""Seconds any one DOM condition may take: a server round trip and some bot moves."""

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--force-device-scale-factor=1",
         # One renderer for our one site, kept across the tests' navigations, where by
         # default each new page starts a renderer process of its own and loads the
         # client into it from nothing. The page cannot tell: each test's page is a
         # fresh visitor all the same (`fresh_page`).
         "--process-per-site", "--disable-site-isolation-trials",
         "--disable-features=BackForwardCache,RenderDocument,site-per-process,IsolateOrigins")


SHOWN = ("const el = document.querySelector(arguments[0]);"
         "return el && el.checkVisibility({visibilityProperty: true}) ? el : null;")
"""The first element matching a selector if it is displayed, else null."""
CLICK_SHOWN = ("const el = document.querySelector(arguments[0]);"
               "if (!el || !el.checkVisibility({visibilityProperty: true}) || el.disabled)"
               " return false;"
               "el.click(); return true;")
"""Click the first element matching a selector if it is displayed and enabled."""


def need_browser() -> None:
    """Skip (fail under CI) when the system's Chromium or its driver is missing."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    if missing:
        reason = (f"the browser tests need {', '.join(missing)} "
                  "(apt-get install chromium chromium-driver; pip install selenium)")
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@contextmanager
def chromium(width: int = 1280, height: int = 800, mobile: bool = False,
             languages: str | None = None) -> Iterator[Any]:
    """One headless Chromium with a fresh profile, closed (and its profile removed) after.

    The page gets exactly `width` x `height` CSS pixels (the DevTools device metrics,
    not the window, whose frame would take some); `mobile` also turns on the phone's
    viewport rules and touch; `languages` ("tr-TR,tr") is what the browser tells pages
    it reads (`navigator.languages`), as a person sets it in the browser's settings."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pisyedili-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if languages:
        options.add_argument(f"--lang={languages.split(',')[0]}")
        options.add_experimental_option("prefs", {"intl.accept_languages": languages})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        set_viewport(driver, width, height, mobile)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def set_viewport(driver: Any, width: int, height: int, mobile: bool = False) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile})


def fresh_page(driver: Any, url: str) -> Page:
    """A new visitor of the page at `url`: the last test's page stopped (so it stops
    reconnecting), nothing stored for its origin, no emulated media, the console log
    emptied of what earlier tests left."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Storage.clearDataForOrigin", {
        "origin": url.rstrip("/"), "storageTypes": "local_storage"})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    driver.get_log("browser")
    return Page(driver)


@dataclass
class Page:
    """The web client in one browser, with the waits the tests need."""

    driver: Any

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.wait(lambda d: d.execute_script("return document.body.dataset.screen") is not None)

    def wait(self, cond: Callable[[Any], Any], timeout: float = WAIT, what: str = "") -> Any:
        """Poll `cond` until it holds. An element it found may be redrawn before it is
        read (a reply arrives between the two): that poll counts as not yet."""
        from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05,
                                 ignored_exceptions=(StaleElementReferenceException,)).until(cond)
        except TimeoutException:
            raise AssertionError(f"timed out waiting for {what or cond}; the log says: "
                                 f"{self.log_text()[-1500:]!r}; errors: {self.errors()}") from None

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, selector))

    def wait_css(self, selector: str, timeout: float = WAIT) -> Any:
        """The first element matching `selector`, once it is displayed. Found and checked
        in one script: a page redrawn faster than two of the driver's round trips (a
        stand-in playing for us, on a busy machine) would make every find-then-check go
        stale, and the wait would never see an element that is there all along."""
        return self.wait(lambda d: d.execute_script(SHOWN, selector) or False, timeout,
                         what=selector)

    def click(self, selector: str) -> None:
        """Click the first element matching `selector` once it is displayed, with the
        driver's click (the pointer's events, the focus). Should the page redraw it
        between the find and the click (as `wait_css` says), it is clicked as drawn
        then, found and clicked in one script."""
        from selenium.common.exceptions import StaleElementReferenceException

        def clicked(d: Any) -> bool:
            found = d.execute_script(SHOWN, selector)
            if not found:
                return False
            try:
                found.click()
            except StaleElementReferenceException:
                return bool(d.execute_script(CLICK_SHOWN, selector))
            return True

        self.wait(clicked, what=selector)

    def text(self, selector: str) -> str:
        """The text of the first element matching `selector`, read in one step in the
        page: an element found and then read can be redrawn between the two (a turn's
        clock ticks), which Selenium reports as a stale element."""
        found = self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
            selector)
        assert found is not None, f"nothing matches {selector}"
        return str(found).strip()

    def attr(self, selector: str, name: str) -> str | None:
        """An attribute of the first element matching `selector`, read in one step (as
        `text`)."""
        found = self.driver.execute_script(
            "const e = document.querySelector(arguments[0]);"
            "return e ? [e.getAttribute(arguments[1])] : null;", selector, name)
        assert found is not None, f"nothing matches {selector}"
        return None if found[0] is None else str(found[0])

    def attrs(self, selector: str, name: str) -> list[str | None]:
        """That attribute of every element matching `selector`, read in one step."""
        return list(self.driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])]"
            ".map((e) => e.getAttribute(arguments[1]));", selector, name))

    def enabled(self, selector: str) -> bool:
        """Whether the first element matching `selector` may be used, read in one step."""
        found = self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? !e.disabled : null;",
            selector)
        assert found is not None, f"nothing matches {selector}"
        return bool(found)

    def focused(self, name: str) -> str | None:
        """An attribute of the element that has the keyboard focus, read in one step:
        the table redraws its hand as replies arrive, which a reference taken first
        (`switch_to.active_element`) would not survive."""
        found = self.driver.execute_script(
            "const e = document.activeElement; return e ? e.getAttribute(arguments[0]) : null;",
            name)
        return None if found is None else str(found)

    def press(self, *keys: str) -> None:
        """Type `keys` into whatever has the focus when they arrive (no element
        reference to go stale)."""
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver).send_keys(*keys).perform()

    def body(self, key: str) -> str:
        return str(self.driver.execute_script(f"return document.body.dataset.{key} || ''"))

    def wait_screen(self, screen: str, timeout: float = WAIT) -> None:
        self.wait(lambda d: self.body("screen") == screen, timeout, what=f"the {screen} screen")

    def state(self, expr: str) -> Any:
        """Read the client's own state (`window.pisyedili.state`), e.g. `view.phase`."""
        return self.driver.execute_script(f"const s = window.pisyedili.state; return s.{expr};")

    def log_text(self) -> str:
        try:
            return str(self.driver.execute_script(
                "return document.getElementById('log')?.innerText || ''"))
        except Exception:  # the page itself is gone: nothing to add to the message
            return ""

    def errors(self) -> list[str]:
        """What the page logged as errors (uncaught exceptions, failed loads)."""
        try:
            entries = self.driver.get_log("browser")
        except Exception:
            return []
        return [e["message"] for e in entries if e.get("level") == "SEVERE"]

    def name_and_enter(self, name: str) -> None:
        """From the name screen to the lobby."""
        self.wait_screen("name")
        field = self.wait_css("#name-input")
        field.clear()
        field.send_keys(name)
        self.click("#connect")
        self.wait_screen("lobby")

    def take_turn(self) -> str:
        """Make the first move on offer, as a person would with the mouse: a pick in
        muamele, a highlighted card (and the first suit offered for a jack), else pass,
        else draw.
        Returns what it did."""
        from selenium.common.exceptions import StaleElementReferenceException

        for _ in range(5):
            try:
                return self._take_turn()
            except StaleElementReferenceException:
                continue  # the state moved under the pointer (a timer, a redraw): look again
        raise AssertionError("the controls kept changing under the pointer")

    def _take_turn(self) -> str:
        serial = self.body("serial")
        picks = self.all("#muamele button.legal")
        cards = self.all("#hand button.card.legal")
        if picks:
            picks[0].click()
            done = "pick"
        elif cards:
            card = str(cards[0].get_attribute("data-card"))
            cards[0].click()
            if card.startswith("J") and self.all("#suit-picker"):
                self.click("#suit-picker .suit-choice")
            done = f"play {card}"
        elif self.enabled("#pass"):
            self.css("#pass").click()  # after a draw (C7) or an ace (C12): end the turn
            done = "pass"
        else:
            self.css("#draw").click()
            done = "draw"
        # The move left: the decision it answered is no longer on screen.
        self.wait(lambda d: self.body("turn") != "mine" or self.body("serial") != serial,
                  what=f"the client to send {done}")
        return done

    def play_until(self, done: Callable[[], bool], limit: int = 400) -> int:
        """Take every decision the server hands us until `done()`; returns the moves made."""
        moves = 0
        while moves < limit:
            self.wait(lambda d: done() or self.body("turn") == "mine", what="our turn or the end")
            if done():
                return moves
            self.take_turn()
            moves += 1
        raise AssertionError(f"still playing after {limit} moves")


def rgb(css: str) -> tuple[float, float, float, float]:
    """A computed colour (`rgb(…)` or `rgba(…)`) as red, green, blue and alpha."""
    parts = [float(p) for p in css[css.index("(") + 1:css.index(")")].split(",")]
    return parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0


def contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG's contrast ratio of two opaque colours."""
    def luminance(c: tuple[float, ...]) -> float:
        lin = [x / 255 / 12.92 if x / 255 <= 0.03928 else ((x / 255 + 0.055) / 1.055) ** 2.4
               for x in c[:3]]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def assert_headings_align(page: Page, table: str) -> None:
    """Each column's heading is aligned as its cells are (numbers to the right)."""
    aligned = page.driver.execute_script(
        "const t = document.querySelector(arguments[0]); const al = (c) => getComputedStyle(c)"
        ".textAlign; return [...t.tHead.rows[0].cells].map((c, i) => [c.innerText, al(c),"
        "al(t.tBodies[0].rows[0].cells[i])]);", table)
    assert [(name, head) for name, head, _ in aligned] == [(n, c) for n, _, c in aligned]
