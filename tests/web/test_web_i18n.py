"""The web client in its players' languages: the catalogs, and the page in a real browser.

The catalogs: every t()/tn() text of client/web/*.js is in client/locale/web.pot and
translated in every web.po (no missing or fuzzy entry, the same placeholders, as many
plural forms as the language's header says). The page: a pseudo-locale (every text
"⟦" + English + "⟧") loaded into it while the lobby, a match, the rules, the results,
the history, a replay, the leaderboard and a profile are walked, so a word built
outside t()/tn() shows unmarked; a match in Turkish chosen by the browser's languages
and one in Persian chosen on the page, right to left, with its digits and its setting.

The page's catalogs are built from the .po files here (catalog_kit) as the install's
build step builds them. The README's pictures of a table in each language are taken
by tests/language_screenshots.py.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from browser_kit import Page, chromium, fresh_page
from catalog_kit import LANGS, POT, WEB, build_all, extracted, po_path, pseudo, read, rule_lines
from screenshots import save
from test_web_accounts import register_in_page
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer

PLURALS = {"tr": 2, "ru": 3, "uk": 3, "fa": 2, "th": 1}
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@pytest.fixture(scope="module", autouse=True)
def catalogs() -> None:
    """client/web/locale/*.json from the .po files, as an install would have them."""
    build_all()


# ------------------------------------------------------------------- catalogs


def ids(catalog: Catalog) -> set[Any]:
    return {m.id for m in catalog if m.id}


def test_every_message_of_the_page_is_in_the_template() -> None:
    assert extracted() == ids(read(POT))


def test_every_call_names_its_text_as_a_literal() -> None:
    """t(variable) would hide its text from the extractor, and so would a call the
    extractor misses (one nested in another's arguments): every call passes literals,
    and every literal is in what the extractor finds."""
    calls = re.compile(r'(?<![\w.$])(?<!function )(tn?)\(\s*(?:"((?:[^"\\]|\\.)*)"'
                       r'(?:\s*,\s*"((?:[^"\\]|\\.)*)")?|([^\s)]))')
    found = extracted()
    for path in sorted(WEB.glob("*.js")):
        for match in calls.finditer(path.read_text(encoding="utf-8")):
            keyword, one, other, bare = match.groups()
            assert bare is None, f"{path.name}: {match.group(0)!r} passes no literal"
            text = unescape(one)
            key = text if keyword == "t" else (text, unescape(other or ""))
            assert key in found, f"{path.name}: {key!r} is not extracted"


def unescape(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal)


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_is_translated(lang: str) -> None:
    """The same messages as the template, none fuzzy or empty, each with the English
    placeholders, and as many plural forms as the header's Plural-Forms says."""
    catalog = read(po_path(lang))
    assert str(catalog.locale) == lang
    assert catalog.num_plurals == PLURALS[lang]
    assert ids(catalog) == ids(read(POT))
    for m in catalog:
        if not m.id:
            continue
        assert not m.fuzzy, m.id
        if isinstance(m.id, tuple):
            assert isinstance(m.string, tuple) and len(m.string) == PLURALS[lang], m.id
            english = set(PLACEHOLDER.findall(m.id[1]))
            forms = [str(f) for f in m.string]
        else:
            english = set(PLACEHOLDER.findall(str(m.id)))
            forms = [str(m.string)]
        for form in forms:
            assert form and form.strip(), m.id
            assert set(PLACEHOLDER.findall(form)) == english, (m.id, form)


def test_the_compiled_catalog_takes_the_plural_rule_of_its_header() -> None:
    """Russian's three forms: 1 and 21 one, 2-4 and 22 a few, 5-20 and 111 many."""
    built = json.loads((WEB / "locale" / "ru.json").read_text(encoding="utf-8"))
    table = built["plural_table"]
    assert len(table) == 200
    assert [table[n] for n in (1, 21, 2, 4, 22, 5, 11, 12, 20, 0)] == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2]
    assert built["messages"]["{n} card\u0004{n} cards"] == ["{n} карта", "{n} карты", "{n} карт"]
    assert json.loads((WEB / "locale" / "fa.json").read_text(encoding="utf-8"))["dir"] == "rtl"


def test_a_catalog_is_served_as_the_other_files_are(server: WebServer) -> None:
    """JSON, gzipped for a browser that takes it, a strong ETag that costs a 304 the
    next time, and the page's Content-Security-Policy (default-src 'self' lets the
    page fetch it)."""
    url = server.url + "locale/tr.json"
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"] == "application/json"
        assert reply.headers["Content-Encoding"] == "gzip"
        assert "default-src 'self'" in reply.headers["Content-Security-Policy"]
        etag = reply.headers["ETag"]
    again = urllib.request.Request(url, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    with pytest.raises(urllib.error.HTTPError) as unchanged:
        urllib.request.urlopen(again, timeout=10)
    assert unchanged.value.code == 304


# ----------------------------------------------------------------- the page

UNMARKED = """
const names = new Set([...arguments[0], "Pis Yedili"]); // the game's name is a name
const s = window.pisyedili.state;
for (const n of [s.me && s.me.name, s.me && s.me.server, s.table && s.table.name]) {
  if (n) names.add(n);
}
for (const row of s.lobby.tables) { names.add(row.name); if (row.host) names.add(row.host); }
for (const seat of (s.table ? s.table.seats : [])) if (seat.name) names.add(seat.name);
const byLength = [...names].filter(Boolean).sort((a, b) => b.length - a.length);
// Cards, keys, codes, names and dates (Intl's, in the language's own form) are no words.
const skip = [".card", "kbd", "code", "time", ".logo", "h1", "#lang-choice", ".name-link",
  "#chat-list", "#invite-code", ".code"].join(", ");
const out = [];
// An element's own texts read together: a text with nodes in it (fillNodes: keys,
// links, codes) is split round them, marks and all.
const seen = new Set();
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const el = node.parentElement;
  if (!el || seen.has(el) || el.closest("script, style, noscript") || el.closest(skip)) continue;
  seen.add(el);
  if (!el.checkVisibility({ checkVisibilityCSS: true })) continue;
  const own = [...el.childNodes].map((c) => (c.nodeType === Node.TEXT_NODE ? c.data
    : c.matches && c.matches("span.red, span.black") && /^[♣♦♥♠]$/.test(c.textContent)
      ? c.textContent : "")).join("");
  if (!own.trim()) continue;
  let rest = own;
  for (let was = null; was !== rest;) { was = rest; rest = rest.replace(/⟦[^⟦⟧]*⟧/g, ""); }
  for (const name of byLength) rest = rest.split(name).join("");
  rest = rest.replace(/(10|[2-9JQKA])[♣♦♥♠]/g, "");
  if (/[^\\s\\d.,:;·#+×\\-–\\/()\\[\\]★↻↺▶◀…%=♣♦♥♠♪]/u.test(rest)) out.push(own.trim());
}
return out;
"""


def unmarked(page: Page, *names: str) -> list[str]:
    """The visible texts not in the pseudo-locale's marks (names, cards and numbers
    apart): each was built outside t()/tn()."""
    return list(page.driver.execute_script(UNMARKED, list(names)))


def install_pseudo(page: Page) -> None:
    page.driver.execute_script("window.pisyedili.useLanguage(arguments[0])",
                              pseudo(extracted() | rule_lines()))
    page.wait(lambda d: "⟦" in page.css("#log-title").text, what="the pseudo-locale")


def set_field(page: Page, selector: str, value: str) -> None:
    """A form field's value as a person would leave it, whatever the language shows."""
    page.driver.execute_script(
        "const el = document.querySelector(arguments[0]); el.value = arguments[1];"
        "el.dispatchEvent(new Event('change', {bubbles: true}))", selector, value)


def one_deal_table(page: Page) -> None:
    """From the lobby: a classic one-deal match with two bots, started."""
    set_field(page, "#seats", "3")
    set_field(page, "#match_kind", "deals")
    set_field(page, "#match_count", "1")
    page.click("#create")
    page.wait_screen("table")
    page.click('.seat-row[data-seat="1"] .add-bot')
    page.wait_css('.seat-row[data-seat="2"] .add-bot').click()
    page.wait(lambda d: page.state("table.seats.every(s => s.kind !== 'open')"), what="two bots")
    page.click("#start")
    page.wait(lambda d: page.body("tablePhase") == "playing", what="the match to start")


def mid_deal(page: Page, turns: int = 3) -> None:
    """Play `turns` of our decisions, then wait for one with a card to play (the deal
    may end first: then the caller sees the result)."""
    played = 0
    while True:
        page.wait(lambda d: page.body("turn") == "mine" or page.body("tablePhase") == "over",
                  what="our turn")
        over = page.body("tablePhase") == "over"
        if over or (played >= turns and page.all("#hand button.card.legal")):
            return
        page.take_turn()
        played += 1


def to_the_end(page: Page) -> None:
    page.play_until(lambda: page.body("tablePhase") == "over")
    page.wait_css("#match-result")


def test_every_visible_text_goes_through_the_catalog(page: Page, server: WebServer) -> None:
    """The pseudo-locale on every page: nothing the page shows stays English (a guest's
    and a player's account panel, a profile and a name without one among them)."""
    page.open(server.url)
    page.wait_css("#name-input")
    install_pseudo(page)
    assert unmarked(page) == []
    page.name_and_enter("Derin")
    page.click(".keys summary")
    page.wait_css("#account-panel")
    assert unmarked(page) == []
    register_in_page(page, "a long password")  # the account panel of a player
    assert unmarked(page) == []
    one_deal_table(page)
    mid_deal(page)
    assert unmarked(page) == []
    page.click("#table-rules summary")
    page.wait_css("#table-rules .rules-lines")
    assert unmarked(page) == []
    page.click("#table-rules summary")
    to_the_end(page)
    assert unmarked(page) == []
    match = page.state("table.id")
    assert match is not None
    page.driver.execute_script("window.location.hash = '#history-recent'")
    page.wait_css("#match-list .replay-link")
    assert unmarked(page) == []
    page.click("#match-list .replay-link")
    page.wait_css("#replay-moves li")
    assert unmarked(page) == []
    page.driver.execute_script("window.location.hash = '#ladder'")
    page.wait_css("#ladder .help")
    assert unmarked(page) == []
    page.driver.execute_script("window.location.hash = '#profile=Derin'")
    page.wait_css("#profile-totals")
    assert unmarked(page) == []
    page.driver.execute_script("window.location.hash = '#profile=Nobody'")
    page.wait_css("#profile-error")
    assert unmarked(page, "Nobody") == []


def shoot(page: Page, tmp_path: Path, name: str) -> None:
    """A screenshot of the page as it stands: the page draws whole in the language."""
    out = save(page, name, tmp_path)
    assert out.read_bytes().startswith(b"\x89PNG")


def html(page: Page) -> tuple[str, str]:
    lang, direction = page.driver.execute_script(
        "return [document.documentElement.lang, document.documentElement.dir]")
    return str(lang), str(direction)


def test_a_match_in_turkish_as_the_browser_asks(server: WebServer, tmp_path: Path) -> None:
    """A browser that reads Turkish first (tr-TR) gets the page in Turkish, left to
    right, the chooser on Türkçe; a whole match is played in it."""
    with chromium(1280, 800, languages="tr-TR,tr,en") as d:
        page = fresh_page(d, server.url)
        page.open(server.url)
        page.wait(lambda _: html(page) == ("tr", "ltr"), what="the page in Turkish")
        assert page.css("#lang-choice").get_attribute("value") == "tr"
        assert page.text("#connect") == "Oyna"
        page.name_and_enter("Ayşe")
        assert page.text("#lobby-title") == "Masalar"
        one_deal_table(page)
        mid_deal(page)
        if page.body("tablePhase") != "over":  # "Draw", or "Draw 3" with a 7 run on
            drawn = page.text("#draw")
            assert re.match(r"Çek|\d+ çek", drawn), drawn
            shoot(page, tmp_path, "web-tr")
        to_the_end(page)
        assert page.text("#match-result h3").startswith("Maç bitti")
        assert re.search(r"oynadınız|çektiniz|pas geçtiniz", page.log_text())
        assert page.errors() == []


def rules_text(page: Page) -> str:
    """The table's rule lines, shown or not (the panel may be closed)."""
    return str(page.css("#table-rules .rules-lines").get_attribute("textContent"))


def digits(text: str) -> set[str]:
    return {"fa" if "۰" <= c <= "۹" else "latn" for c in text if c.isdigit()}


def test_a_match_in_persian_chosen_on_the_page(
        page: Page, server: WebServer, tmp_path: Path) -> None:
    """The chooser turns the page Persian without reconnecting, the log written before
    it too: right to left, the header mirrored, the hand still left to right, Persian
    digits until Western digits are asked for; both choices outlive a reload, and
    English comes back ltr."""
    page.open(server.url)
    page.name_and_enter("Sara")
    player = page.state("me.player")
    set_field(page, "#lang-choice", "fa")
    page.wait(lambda d: html(page) == ("fa", "rtl"), what="the page in Persian")
    assert page.text("#lobby-title") == "میزها"
    assert page.state("me.player") == player and page.body("link") == "welcomed"  # the same session
    assert "به web test خوش آمدید" in page.log_text()  # the log, written before, worded again
    one_deal_table(page)
    mid_deal(page)
    if page.body("tablePhase") != "over":
        logo, settings = page.css(".top h1").rect, page.css("#settings").rect
        assert settings["x"] < logo["x"], "the header mirrors right to left"
        # In one script: read card by card, a redraw between reads (a bot's move) mixed
        # two layouts of the hand.
        cards = page.driver.execute_script(
            "return [...document.querySelectorAll('#hand button.card')]"
            ".map((b) => b.getBoundingClientRect().x);")
        assert cards == sorted(cards), "a hand reads left to right"
        assert digits(page.text("#stock-count")) == {"fa"}
        shoot(page, tmp_path, "web-fa")
        page.click("#western-digits")
        page.wait(lambda d: digits(page.css("#stock-count").text) == {"latn"},
                  what="Western digits")
    else:  # the deal ended first (the server deals at random): the digits asked all the same
        page.click("#western-digits")
    to_the_end(page)
    assert page.text("#match-result h3").startswith("مسابقه تمام شد")
    page.driver.refresh()
    page.wait_screen("table")
    page.wait(lambda d: html(page) == ("fa", "rtl"), what="Persian after the reload")
    assert page.css("#lang-choice").get_attribute("value") == "fa"
    assert page.css("#western-digits").is_selected()
    assert digits(page.text("#match-result")) <= {"latn"}
    assert digits(rules_text(page)) == {"latn"}  # the translation's own digits too
    page.click("#western-digits")
    page.wait(lambda d: digits(page.css("#match-result").text) == {"fa"}, what="Persian digits")
    assert "fa" in digits(rules_text(page))
    set_field(page, "#lang-choice", "en")
    page.wait(lambda d: html(page) == ("en", "ltr"), what="English again")
    assert page.text("#match-result h3").startswith("Match over")
    assert "Welcome back, Sara." in page.log_text()


def test_each_language_takes_the_page_over(page: Page, server: WebServer) -> None:
    """Every language of the chooser: its catalog loads, `<html lang>` follows, `dir`
    is rtl in Persian only, and the lobby's words are the catalog's."""
    page.open(server.url)
    page.name_and_enter("Lale")
    for lang in (*LANGS, "en"):
        set_field(page, "#lang-choice", lang)
        page.wait(lambda d, lang=lang: html(page) == (lang, "rtl" if lang == "fa" else "ltr"),  # type: ignore[misc]
                  what=f"the page in {lang}")
        title = page.text("#lobby-title")
        assert (title == "Tables") == (lang == "en"), (lang, title)


def test_a_refusal_shown_is_worded_again_in_the_language_chosen(
        page: Page, server: WebServer) -> None:
    """A refusal on screen is kept as what it says, not as its English words: a
    language chosen after it words it again."""
    page.open(server.url)
    page.name_and_enter("Lale")
    page.css("#code-input").send_keys("ZZZZ")
    page.click("#join-code")
    assert page.wait_css("#code-error").text.startswith("No such table")
    set_field(page, "#lang-choice", "ru")
    page.wait(lambda d: page.css("#code-error").text.startswith("Нет такого стола"),
              what="the refusal in Russian")
