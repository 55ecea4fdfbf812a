"""The translation catalogs (client/catalogs.py) and the runtime that reads them
(client/i18n.py): complete, compiled as the web client expects, read fresh."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from pisyedili.client import catalogs, i18n

pytestmark = pytest.mark.usefixtures("english")  # tests/conftest.py

ROOT = catalogs.ROOT


def test_every_catalog_is_complete() -> None:
    """Every message of every domain's template is translated in every catalog, none
    fuzzy, placeholders and plural form counts as the template's (the web's catalogs
    wherever they exist); `catalogs check` prints the same and exits 0."""
    assert catalogs.check() == []
    done = subprocess.run([sys.executable, "-m", "pisyedili.client.catalogs", "check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every catalog is complete" in done.stdout


def test_every_language_has_a_terminal_catalog() -> None:
    for lang in catalogs.LANGUAGES:
        assert catalogs.po_path(ROOT, lang, "terminal").is_file(), lang


def _client_copy(tmp_path: Path, web: bool = True) -> Path:
    """A copy of the client's catalogs and mapping files, to break (without the web
    domain's: a domain whose catalogs do not exist yet)."""
    root = tmp_path / "client"
    skip = ("*.mo",) if web else ("*.mo", "web.pot", "web.po")
    shutil.copytree(ROOT / "locale", root / "locale", ignore=shutil.ignore_patterns(*skip))
    return root


def _edit(po: Path, change: dict[str | tuple[str, str], str | tuple[str, ...]],
          fuzzy: str | None = None) -> None:
    with po.open("rb") as f:
        catalog = read_po(f, locale=po.parent.parent.name)
    for msgid, string in change.items():
        message = catalog.get(msgid)
        assert message is not None, msgid
        message.string = string
    if fuzzy is not None:
        message = catalog.get(fuzzy)
        assert message is not None
        message.flags.add("fuzzy")
    with po.open("wb") as f:
        write_po(f, catalog)


def test_check_finds_missing_fuzzy_and_broken_entries(tmp_path: Path) -> None:
    root = _client_copy(tmp_path)
    tr = catalogs.po_path(root, "tr", "terminal")
    ru = catalogs.po_path(root, "ru", "terminal")
    _edit(tr, {"you": "", "seat {seat}": "yer"}, fuzzy="Bell off.")
    _edit(ru, {("{n} card", "{n} cards"): ("{n} карта", "{n} карты")})
    catalogs.po_path(root, "th", "terminal").unlink()
    problems = catalogs.check(root)
    assert any("tr/" in p and "untranslated 'you'" in p for p in problems), problems
    assert any("tr/" in p and "fuzzy 'Bell off.'" in p for p in problems), problems
    assert any("tr/" in p and "placeholders [] not ['seat']" in p for p in problems), problems
    # A form left out is an untranslated one.
    assert any("ru/" in p and "untranslated '{n} card'" in p for p in problems), problems
    assert any("th/LC_MESSAGES/terminal.po: missing" in p for p in problems), problems


def test_check_finds_a_wrong_plural_header(tmp_path: Path) -> None:
    """A Russian catalog that says it has two plural forms (English's) is wrong however
    its entries read."""
    root = _client_copy(tmp_path)
    po = catalogs.po_path(root, "ru", "terminal")
    text = po.read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith('"Plural-Forms:'))
    po.write_text(text.replace(header, '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"'),
                  encoding="utf-8")
    problems = catalogs.check(root)
    assert any("ru/" in p and "header says 2 plural forms, the language has 3" in p
               for p in problems), problems


def test_a_message_missing_from_a_catalog_is_found(tmp_path: Path) -> None:
    root = _client_copy(tmp_path)
    po = catalogs.po_path(root, "uk", "terminal")
    with po.open("rb") as f:
        catalog = read_po(f, locale="uk")
    catalog.delete("Bell off.")
    with po.open("wb") as f:
        write_po(f, catalog)
    assert any("uk/" in p and "missing 'Bell off.'" in p for p in catalogs.check(root))


def _web_po(root: Path, lang: str) -> Path:
    """A small web catalog: one translated, one fuzzy, one untranslated, one plural."""
    catalog = Catalog(locale=lang, domain="web")
    catalog.add("Draw", {"tr": "Çek", "fa": "بکش"}[lang])
    catalog.add("Pass", {"tr": "Pas", "fa": "پاس"}[lang], flags=["fuzzy"])
    catalog.add("Leave", "")
    catalog.add(("{n} card", "{n} cards"),
                {"tr": ("{n} kart", "{n} kart"), "fa": ("{n} کارت", "{n} کارت")}[lang])
    po = catalogs.po_path(root, lang, "web")
    po.parent.mkdir(parents=True, exist_ok=True)
    with po.open("wb") as f:
        write_po(f, catalog)
    return po


def test_compile_writes_each_mo_and_the_web_json(tmp_path: Path) -> None:
    root = _client_copy(tmp_path)
    _web_po(root, "tr")
    _web_po(root, "fa")
    written = catalogs.compile_all(root, out=lambda line: None)
    for lang in catalogs.LANGUAGES:
        assert catalogs.po_path(root, lang, "terminal").with_suffix(".mo") in written
    tr = json.loads((root / "web" / "locale" / "tr.json").read_text(encoding="utf-8"))
    fa = json.loads((root / "web" / "locale" / "fa.json").read_text(encoding="utf-8"))
    assert set(tr) == {"lang", "dir", "plural_table", "messages", "typed"}
    assert (tr["lang"], tr["dir"], fa["lang"], fa["dir"]) == ("tr", "ltr", "fa", "rtl")
    # The glossary's typed words, for the page's move box.
    assert "برداشتن" in fa["typed"]["draw"] and tr["typed"]["suits"]["sinek"] == "c"
    # Fuzzy and untranslated entries are left out: the browser shows their English.
    assert tr["messages"] == {"Draw": "Çek", "{n} card\u0004{n} cards": ["{n} kart", "{n} kart"]}
    assert fa["messages"]["Draw"] == "بکش"
    assert len(tr["plural_table"]) == catalogs.PLURAL_TABLE
    assert tr["plural_table"][:3] == [1, 0, 1] and fa["plural_table"][:3] == [0, 0, 1]


def test_a_web_catalog_is_checked_wherever_it_exists(tmp_path: Path) -> None:
    """The web's catalogs are the web client's to start; one that exists is checked, with
    its template or, before its first extract, on its own."""
    root = _client_copy(tmp_path, web=False)
    assert catalogs.check(root) == []
    _web_po(root, "tr")
    problems = catalogs.check(root)
    assert any("tr/LC_MESSAGES/web.po: fuzzy 'Pass'" in p for p in problems), problems
    assert any("tr/LC_MESSAGES/web.po: untranslated 'Leave'" in p for p in problems), problems
    assert not any("web.po: missing" in p for p in problems), problems


def _cldr_forms(lang: str) -> Callable[[int], int]:
    """Babel's own reading of the plural rule (CLDR): n's category, as the index of the
    categories that integers take, in CLDR's order."""
    order = ["zero", "one", "two", "few", "many", "other"]
    form = Locale.parse(lang).plural_form
    used = sorted({form(k) for k in range(200)}, key=order.index)
    return lambda n: used.index(form(n))


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_the_plural_table_gives_babel_s_form_up_to_10000(lang: str) -> None:
    """`n < 200 ? table[n] : table[100 + n % 100]`, as the web client reads the table, is
    the header formula's form and CLDR's for every n up to 10,000."""
    with catalogs.po_path(ROOT, lang, "terminal").open("rb") as f:
        catalog = read_po(f, locale=lang)
    table = catalogs.plural_table(catalog)
    formula = catalogs.plural_function(catalog)
    cldr = _cldr_forms(lang)
    for n in range(10_001):
        shown = table[n] if n < 200 else table[100 + n % 100]
        assert shown == formula(n) == cldr(n), (lang, n)


def test_extract_merges_a_new_string_into_every_catalog(tmp_path: Path) -> None:
    root = _client_copy(tmp_path)
    (root / "fresh.py").write_text('from .i18n import _\n\nSAID = _("A brand new line")\n',
                                   encoding="utf-8")
    catalogs.extract(root, out=lambda line: None)
    with (root / "locale" / "terminal.pot").open("rb") as f:
        assert read_po(f).get("A brand new line") is not None
    for lang in catalogs.LANGUAGES:
        with catalogs.po_path(root, lang, "terminal").open("rb") as f:
            message = read_po(f, locale=lang).get("A brand new line")
        assert message is not None and not message.string
    assert any("untranslated 'A brand new line'" in p for p in catalogs.check(root))


def test_a_po_newer_than_its_mo_is_read_instead(tmp_path: Path) -> None:
    """A developer's edit shows at once: the stale .mo is not used."""
    root = _client_copy(tmp_path)
    catalogs.compile_all(root, out=lambda line: None)
    folder = root / "locale"
    assert i18n.translations("tr", folder=folder).gettext("Bell off.") == "Zil kapalı."
    po = catalogs.po_path(root, "tr", "terminal")
    _edit(po, {"Bell off.": "Zil sustu."})
    later = time.time() + 5
    os.utime(po, (later, later))
    assert i18n.translations("tr", folder=folder).gettext("Bell off.") == "Zil sustu."
    po.with_suffix(".mo").unlink()
    assert i18n.translations("tr", folder=folder).gettext("Bell off.") == "Zil sustu."


@pytest.mark.parametrize(("env", "lang"), [
    ({"LANG": "tr_TR.UTF-8"}, "tr"),
    ({"LANG": "ru_RU.UTF-8", "LC_MESSAGES": "uk_UA.UTF-8"}, "uk"),
    ({"LANG": "ru_RU.UTF-8", "LC_MESSAGES": "uk_UA", "LC_ALL": "fa_IR.UTF-8"}, "fa"),
    ({"LC_ALL": "", "LANG": "th_TH.UTF-8"}, "th"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({"LC_ALL": "C.UTF-8", "LANG": "tr_TR.UTF-8"}, "en"),
    ({"LANG": "sr_RS@latin"}, "en"),
    ({}, "en"),
])
def test_the_environment_chooses_the_language(env: dict[str, str], lang: str) -> None:
    """The first of LC_ALL, LC_MESSAGES and LANG that is set decides, as POSIX has it."""
    assert i18n.from_environment(env) == lang


def test_lang_overrides_the_environment() -> None:
    assert i18n.choose("ru", {"LANG": "tr_TR.UTF-8"}) == "ru"
    assert i18n.choose(None, {"LANG": "tr_TR.UTF-8"}) == "tr"
    assert i18n._("Bell off.") == "Zil kapalı."


def test_numbers_in_the_language_s_digits() -> None:
    i18n.set_language("fa")
    assert i18n.number(2026) == "۲۰۲۶"
    assert i18n.number(3.25, 2) == "۳٫۲۵"
    assert i18n._("deal {deal} of {deals}", deal=2, deals=4) == "دست ۲ از ۴"
    assert i18n.ngettext("{n} card", "{n} cards", 3) == "۳ کارت"
    i18n.set_digits("latn")
    assert i18n._("deal {deal} of {deals}", deal=2, deals=4) == "دست 2 از 4"
    i18n.set_digits("default")
    i18n.set_language("th")
    assert i18n.number(2026) == "2026"  # Babel's default for Thai: Western digits
    i18n.set_language("en")
    assert (i18n.number(2026), i18n.number(2.675, 2)) == ("2026", "2.67")  # as Python has it


def test_russian_plurals_take_three_forms() -> None:
    i18n.set_language("ru")
    forms = [i18n.ngettext("{n} card", "{n} cards", n) for n in (1, 3, 5, 11, 21, 22, 25)]
    assert forms == ["1 карта", "3 карты", "5 карт", "11 карт", "21 карта", "22 карты",
                     "25 карт"]


def test_names_and_cards_are_never_translated() -> None:
    """A field is filled as it is: a player called `you` or `seat` stays so."""
    i18n.set_language("tr")
    assert i18n._("{who} passed", who="seat") == "seat pas geçti"
    assert i18n._("You do not hold {card}.", card="7h") == "Elinizde 7h yok."


def test_argparse_speaks_the_chosen_language() -> None:
    done = subprocess.run([sys.executable, "-m", "pisyedili.client.cli", "play", "--lang",
                           "ru", "--help"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "показать эту справку и выйти" in done.stdout
    assert "число ботов-соперников" in done.stdout
    refused = subprocess.run([sys.executable, "-m", "pisyedili.client.cli", "play", "--lang",
                              "tr", "--bots", "9"], capture_output=True, text=True,
                             timeout=120, check=False)
    assert refused.returncode == 2
    assert "hata: --bots, classic için 1-5 olmalı (C1, K1)" in refused.stderr


def test_a_bad_export_file_is_told_in_the_chosen_language(tmp_path: Path) -> None:
    bad = tmp_path / "match.json"
    bad.write_text("[1, 2", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pisyedili.client.cli", "replay", "--lang",
                           "uk", str(bad)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1
    assert "це не вивантаження матчу: не JSON (рядок 1, стовпець" in done.stderr


def test_every_error_code_has_a_refusal_of_its_own() -> None:
    """A code added to the protocol needs its words in the catalog too."""
    from pisyedili.client.render import REFUSALS
    from pisyedili.protocol.errors import ERRORS

    assert set(REFUSALS) == set(ERRORS)


def test_a_refusal_is_translated_from_its_code() -> None:
    from pisyedili.client.render import Look, plain, refusal

    look = Look(unicode=True, color=False)
    i18n.set_language("tr")
    assert plain(refusal({"code": "illegal_card", "message": "7h does not match Kd",
                          "rule": "C4"}, look)) == "Bu kart şimdi oynanamaz (kural C4)"
    assert plain(refusal({"code": "bad_field", "message": "seat: out of range",
                          "field": "seat"}, look)) == "Sunucu bu istekteki bir değeri reddetti"
    assert plain(refusal({"code": "bad_field", "message": "level: no such level"},
                         look)) == "Sunucu bu istekteki bir değeri reddetti"
    assert plain(refusal({"code": "table_not_ready", "message": "not ready",
                          "waiting_for": [1, 2]}, look)) == \
        "Henüz her yer dolu ve hazır değil (beklenen yerler: 2, 3)"
    # A code this client does not know (a newer server's): a plain refusal, since the
    # server's own words are English.
    assert plain(refusal({"code": "brand_new", "message": "the moon is full"}, look)) == \
        "Sunucu bunu reddetti"
    i18n.set_language("en")
    assert plain(refusal({"code": "illegal_card", "message": "7h does not match Kd",
                          "rule": "C4"}, look)) == "7♥ does not match K♦ (rule C4)"


def test_the_deal_log_is_drawn_in_the_language_of_the_moment() -> None:
    """`/log` after `/lang` shows the deal so far in the new language, its seats named as
    they were when each event came."""
    from client_kit import table, update, view, welcome

    from pisyedili.client.render import Look, plain
    from pisyedili.client.state import ClientState

    st = ClientState(look=Look(unicode=False, color=False))
    st.handle(welcome(), 0.0)
    st.handle(table(view_=view()), 0.0)
    st.handle(update([{"event": "deal_start", "deal_no": 3, "dealer": 1}], view(deal_no=3)),
              1.0)
    st.handle(update([{"event": "draw", "seat": 0, "count": 2, "reason": "draw",
                       "cards": ["Kc", "2d"]}], view(deal_no=3)), 2.0)
    english = [plain(line) for line in st.deal_log]
    assert english == ["-- deal 3 -- ayse dealt", "you drew 2 cards: Kc 2d"]
    i18n.set_language("ru")
    assert [plain(line) for line in st.deal_log] == ["-- раздача 3 -- сдаёт ayse",
                                                     "вы берёте 2 карты: Kc 2d"]
