"""A move in reach, in a real browser (headless Chromium) against a real server
process (issue 38): on a 360x740 phone the hand, Draw, Pass and the move box are on
screen with the page scrolled to its top, however long the hand grows; the jack's suit
picker opens in view, over the felt just above the hand, on a laptop and a phone; a
card dragged to the pile is played, with a mouse (HTML5 drag and drop) and with a
finger (pointer events), and one the server did not offer is refused in words at the
controls; and all of it right to left, in Persian.

"In reach" is read as a person meets it: the element's box lies inside the viewport and
the point at its middle hits the element itself, not something drawn over it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_kit import Page, fresh_page, set_viewport
from catalog_kit import build_all
from test_web_i18n import html, set_field
from test_web_table import TURN_LIMIT, next_turn, offline
from web_fixtures import ROOMY, driver, page, viewport  # noqa: F401
from web_kit import WebServer, served

SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
CONTROLS = ("#draw", "#pass", "#move-input", ".move-form button[type=submit]")


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    """A seeded server (the same deals each run, jacks among them), with the catalogs
    built as an install builds them, for Persian."""
    build_all()
    with served(*ROOMY, "--seed", "3") as srv:
        yield srv


REACH = """
const at = (e) => {
  const r = e.getBoundingClientRect();
  const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
  return {what: e.dataset.card || e.id || e.className, top: r.top, bottom: r.bottom,
    left: r.left, right: r.right, hit: hit !== null && (hit === e || e.contains(hit))};
};
return [...document.querySelectorAll(arguments[0])].map(at);
"""


def out_of_reach(page: Page, selector: str) -> list[dict[str, Any]]:
    """The elements matching `selector` that are not whole on screen, or that something
    covers at their middle; read in one step (a redraw between reads mixes layouts)."""
    width, height = page.driver.execute_script("return [innerWidth, innerHeight]")
    boxes = page.driver.execute_script(REACH, selector)
    assert boxes, f"nothing matches {selector}"
    return [b for b in boxes if not (b["hit"] and 0 <= b["top"] and b["bottom"] <= height
                                     and 0 <= b["left"] and b["right"] <= width)]


def assert_a_move_in_reach(page: Page) -> None:
    """From the top of the page: every control of a move and every card on offer."""
    page.driver.execute_script("window.scrollTo(0, 0)")
    assert page.driver.execute_script("return scrollY") == 0
    for selector in CONTROLS:
        assert out_of_reach(page, selector) == [], selector
    if page.all("#hand button.card.legal"):
        assert out_of_reach(page, "#hand button.card.legal") == []


def hand_rows(page: Page) -> int:
    return len({round(y) for y in page.driver.execute_script(
        "return [...document.querySelectorAll('#hand button.card:not(.legal)')]"
        ".map((b) => b.getBoundingClientRect().top)")})


def grow_hand(page: Page) -> None:
    """Our decision, taken so that the hand grows: draw, then pass; a card only when
    nothing else is on offer."""
    serial = page.body("serial")
    if page.enabled("#draw"):
        page.css("#draw").click()
    elif page.enabled("#pass"):
        page.css("#pass").click()
    else:
        page.take_turn()
        return
    page.wait(lambda d: page.body("serial") != serial or page.body("turn") != "mine",
              what="the move to go")


def to_persian(page: Page) -> None:
    set_field(page, "#lang-choice", "fa")
    page.wait(lambda d: html(page) == ("fa", "rtl"), what="the page in Persian")


def played(page: Page, card: str) -> int:
    """How many times the log says we played `card`, in English or in Persian."""
    text = f"{card[:-1]}{SUITS[card[-1]]}"
    return sum(1 for line in page.log_text().splitlines()
               if text in line and (line.startswith("you played") or "بازی کردید" in line))


def name_a_suit(page: Page, card: str) -> None:
    """A jack played with suits to name opens the picker: the first suit."""
    if card.startswith("J") and page.state(
            f"moves.filter(m => m.card === '{card}').length") > 1:
        page.click("#suit-picker .suit-choice")


def a_turn_with(page: Page, want: str) -> str:
    """Play on (first move on offer) until a turn whose hand holds a card that is
    `legal` or `idle` (not on offer), and return that card."""
    for _ in range(TURN_LIMIT):
        next_turn(page)
        assert page.body("phase") != "over", f"the deal ended before a {want} card"
        cards = page.attrs(f"#hand button.card.{want}", "data-card")
        if cards:
            return str(cards[0])
        page.take_turn()
    raise AssertionError(f"no {want} card in {TURN_LIMIT} turns")


# ------------------------------------------------------------------- a phone's screen


def test_a_phone_has_a_move_in_reach_without_scrolling(driver: Any, server: WebServer) -> None:
    """360x740, scrolled to the top, every turn until the hand takes two rows: Draw,
    Pass, the move box and the playable cards are on screen and uncovered; with the
    page scrolled down the felt, still; in Persian, right to left, too, and a card
    dragged there by a finger is played."""
    set_viewport(driver, 360, 740, mobile=True)
    page = fresh_page(driver, server.url)
    try:
        offline(page, server, "Cep", bots=3)
        rows = 0
        for _ in range(TURN_LIMIT):
            next_turn(page)
            assert page.body("phase") != "over", "the deal ended before the hand took two rows"
            assert_a_move_in_reach(page)
            rows = hand_rows(page)
            if rows >= 2:
                break
            grow_hand(page)
        assert rows >= 2
        assert driver.execute_script("return document.documentElement.scrollWidth") <= 360
        # Scrolled halfway down the felt: the controls stay at the bottom of the screen.
        driver.execute_script("document.querySelector('.felt').scrollIntoView()")
        assert driver.execute_script("return scrollY") > 0
        for selector in CONTROLS:
            assert out_of_reach(page, selector) == [], selector

        to_persian(page)
        assert_a_move_in_reach(page)
        card = a_turn_with(page, "legal")
        assert_a_move_in_reach(page)
        before = played(page, card)
        finger_drag(page, f'#hand button[data-card="{card}"]', "#pile")
        name_a_suit(page, card)
        page.wait(lambda d: played(page, card) == before + 1, what=f"{card} played by a finger")
        assert page.body("drag") == ""
        assert page.errors() == []
    finally:
        set_viewport(driver, 1280, 800)
        driver.get("about:blank")


def finger_drag(page: Page, source: str, target: str) -> None:
    """A finger pressed on `source`, moved to `target` and lifted: real touch input,
    as the browser gets it from a touch screen."""
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    finger = PointerInput(interaction.POINTER_TOUCH, "finger")  # type: ignore[no-untyped-call]
    actions = ActionBuilder(page.driver, mouse=finger)
    chain = actions.pointer_action.move_to(page.css(source))  # type: ignore[no-untyped-call]
    chain = chain.pointer_down().move_by(0, -15)
    chain.move_to(page.css(target)).pointer_up()
    actions.perform()


# ---------------------------------------------------------------- the jack's suit picker


def test_the_suit_picker_opens_in_view_above_the_hand(driver: Any, server: WebServer) -> None:
    """A jack with suits to name: its picker is whole on screen, its choices uncovered,
    between the pile and the hand, at 1280x720, on a 360x740 phone and in Persian; the
    suit chosen on the phone is the one played."""
    set_viewport(driver, 1280, 720)
    page = fresh_page(driver, server.url)
    try:
        offline(page, server, "Vale", bots=1)
        for _ in range(TURN_LIMIT):
            next_turn(page)
            assert page.body("phase") != "over", "the deal ended before a jack naming a suit"
            if page.state("moves.some(m => m.kind === 'play' && m.suit)"):
                break
            page.take_turn()
        jack = next(m["card"] for m in page.state("moves") if m["kind"] == "play" and m.get("suit"))
        page.css(f'#hand button[data-card="{jack}"]').click()
        page.wait_css("#suit-picker")

        def in_view_near_the_play() -> None:
            driver.execute_script("window.scrollTo(0, 0)")
            assert out_of_reach(page, "#suit-picker") == []
            assert out_of_reach(page, "#suit-picker button") == []
            picker = out_box(page, "#suit-picker")
            assert picker["bottom"] <= out_box(page, "#hand")["top"], "the picker covers the hand"
            assert picker["top"] >= out_box(page, ".felt")["top"], "the picker is off the felt"

        in_view_near_the_play()
        set_viewport(driver, 360, 740, mobile=True)
        in_view_near_the_play()
        to_persian(page)
        in_view_near_the_play()
        assert_a_move_in_reach(page)
        before = played(page, jack)
        choice = str(page.attrs("#suit-picker .suit-choice", "data-suit")[-1])
        page.click(f'#suit-picker [data-suit="{choice}"]')
        page.wait(lambda d: played(page, jack) == before + 1, what="the jack played")
        line = [line for line in page.log_text().splitlines() if f"J{SUITS[jack[-1]]}" in line][-1]
        assert line.count(SUITS[choice]) == 1 + (choice == jack[-1]), line  # the suit named
        assert page.errors() == []
    finally:
        set_viewport(driver, 1280, 800)
        driver.get("about:blank")


def out_box(page: Page, selector: str) -> dict[str, float]:
    return dict(page.driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};", selector))


# ------------------------------------------------------------------- dragged to the pile


def test_a_card_dragged_to_the_pile_is_played_and_one_not_on_offer_refused(
        page: Page, server: WebServer) -> None:
    """With a mouse (the browser's HTML5 drag and drop): a card not on offer let go on
    the pile is refused in words at the controls and stays in the hand; a card let go
    off the pile sends nothing; a card on offer let go on the pile is played."""
    from selenium.webdriver.common.action_chains import ActionChains

    offline(page, server, "Sürükle", bots=2)
    idle = a_turn_with(page, "idle")
    serial = page.body("serial")
    ActionChains(page.driver).drag_and_drop(
        page.css(f'#hand button[data-card="{idle}"]'), page.css("#pile")).perform()
    page.wait(lambda d: page.all(".actions .error"), what="the refusal at the controls")
    assert page.text(".actions .error").startswith("That card cannot be played now."), \
        page.text(".actions .error")
    assert page.body("turn") == "mine" and page.body("serial") == serial
    assert idle in page.state("view.hand")
    assert page.body("drag") == ""

    legal = a_turn_with(page, "legal")
    serial = page.body("serial")
    log = page.log_text()
    ActionChains(page.driver).drag_and_drop(
        page.css(f'#hand button[data-card="{legal}"]'), page.css("#prompt")).perform()
    # Nothing sent: the card is still on offer in the hand, and the play that follows
    # is the only one (below).
    assert page.body("turn") == "mine" and page.body("serial") == serial
    assert "legal" in str(page.attrs(f'#hand button[data-card="{legal}"]', "class")[0]).split()

    before = played(page, legal)
    ActionChains(page.driver).drag_and_drop(
        page.css(f'#hand button[data-card="{legal}"]'), page.css("#pile")).perform()
    name_a_suit(page, legal)
    page.wait(lambda d: played(page, legal) == before + 1, what=f"{legal} played by a drag")
    assert page.log_text().startswith(log)
    assert "cannot be played" not in page.log_text()[len(log):]
    assert page.body("drag") == ""
