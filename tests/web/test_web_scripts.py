"""The page in every language's script, in a real browser: the Thai and Persian fonts it
ships are fetched by a page in that language only, and no hint or choice is cut off by
the box that holds it (the new-table form, the move box and the chat), on a desktop and
on a phone."""

from __future__ import annotations

from typing import Any

import pytest
from browser_kit import Page, set_viewport
from catalog_kit import LANGS, build_all
from test_web_i18n import html, set_field
from test_web_table import offline
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer


@pytest.fixture(scope="module", autouse=True)
def catalogs() -> None:
    build_all()


FONTS = {"th": "noto-sans-thai-thai-400-normal.woff2", "fa": "vazirmatn-arabic-400-normal.woff2"}


def fonts_fetched(page: Page) -> list[str]:
    """The font files the page has fetched, by their file names."""
    return [str(name).rsplit("/", 1)[-1] for name in page.driver.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
        ".filter((n) => /\\.(woff2?|ttf|otf)$/.test(n))")]


def in_language(page: Page, server: WebServer, lang: str) -> None:
    """A fresh page in `lang`, chosen before it loads: nothing of another language's
    has been drawn in it."""
    page.open(server.url)
    page.driver.execute_script("localStorage.setItem('pisyedili.lang', arguments[0])", lang)
    page.driver.get("about:blank")
    page.open(server.url)
    page.wait(lambda d: html(page)[0] == lang, what=f"the page in {lang}")


@pytest.mark.parametrize("lang", ["en", "tr", "ru", "th", "fa"])
def test_a_page_fetches_the_font_of_its_own_script_only(
        page: Page, server: WebServer, lang: str) -> None:
    """English, Turkish and Russian pages fetch no font (the language chooser's Thai and
    Persian names included); a Thai page fetches Noto Sans Thai, a Persian one
    Vazirmatn, and draws its words in it."""
    in_language(page, server, lang)
    offline(page, server, "Derin")
    page.wait(lambda d: d.execute_script("return document.fonts.status") == "loaded",
              what="the fonts the page asked for")
    assert fonts_fetched(page) == ([FONTS[lang]] if lang in FONTS else [])
    if lang in FONTS:
        family = "Noto Sans Thai" if lang == "th" else "Vazirmatn"
        assert page.driver.execute_script(
            "return document.fonts.check('1em \"' + arguments[0] + '\"', arguments[1])",
            family, page.text("#log-title"))


OVERFLOWS = """
// Each hint and shown choice against its box: an input with its placeholder typed in
// scrolls (scrollWidth over clientWidth) when it is cut; a select's chosen text is
// measured in its own font against its box less the padding and the arrow.
const out = [];
const probe = document.createElement("span");
probe.style.cssText = "position: absolute; visibility: hidden; white-space: pre";
document.body.append(probe);
for (const el of document.querySelectorAll("input[placeholder], select")) {
  if (!el.checkVisibility() || el.id === "lang-choice") continue;
  if (el.tagName === "INPUT") {
    const value = el.value;
    el.value = el.placeholder;
    if (el.scrollWidth > el.clientWidth) {
      out.push([el.id, el.placeholder, el.scrollWidth, el.clientWidth]);
    }
    el.value = value;
  } else {
    const style = getComputedStyle(el);
    probe.style.font = style.font;
    probe.textContent = el.options[el.selectedIndex].text;
    const room = el.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight) - 16;
    const wide = probe.getBoundingClientRect().width;
    if (wide > room) out.push([el.id, probe.textContent, wide, room]);
  }
}
probe.remove();
return out;
"""


def cut_off(page: Page) -> list[Any]:
    return list(page.driver.execute_script(OVERFLOWS))


@pytest.mark.parametrize("width", [1280, 390])
def test_no_hint_or_choice_is_cut_off_in_any_language(
        page: Page, server: WebServer, width: int) -> None:
    """The new-table form's choices ("rule set's default" among them), its hints, the
    move box's and the chat's hints, whole in every language, wide and narrow."""
    set_viewport(page.driver, width, 800, mobile=width < 600)
    page.open(server.url)
    page.name_and_enter("Derin")
    for lang in ("en", *LANGS):
        set_field(page, "#lang-choice", lang)
        page.wait(lambda d, lang=lang: html(page)[0] == lang, what=f"the lobby in {lang}")  # type: ignore[misc]
        page.wait_css("#ten")
        assert cut_off(page) == [], (lang, "lobby")
    offline(page, server, "Derin")
    for lang in ("en", *LANGS):
        set_field(page, "#lang-choice", lang)
        page.wait(lambda d, lang=lang: html(page)[0] == lang, what=f"the table in {lang}")  # type: ignore[misc]
        page.wait_css("#move-input")
        assert cut_off(page) == [], (lang, "table")
