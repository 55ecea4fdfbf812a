"""Wording each language's readers would stumble on, held off in both catalogs: the
register (Russian and Ukrainian never gender a player with "(а)", Persian describes a
command with an infinitive), the script's own conventions (Thai has no semicolon,
Persian writes its own digits and one ezafe), and the mistranslations once found
(Turkish suffixes glued to a number, the Turkish K9 sending the turn "ileri")."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from babel.messages.catalog import Catalog, Message

from pisyedili.client import catalogs
from pisyedili.client.parse import COMMANDS

ROOT = catalogs.ROOT
DOMAINS = ("terminal", "web")


def catalog(lang: str, domain: str) -> Catalog:
    return catalogs.read_catalog(catalogs.po_path(ROOT, lang, domain))


def texts(lang: str, domains: tuple[str, ...] = DOMAINS) -> Iterator[tuple[Message, str]]:
    """Every translated form of every message of the language, with its message."""
    for domain in domains:
        for message in catalog(lang, domain):
            if not message.id:
                continue
            forms = message.string if isinstance(message.string, tuple | list) \
                else (message.string,)
            for form in forms:
                yield message, str(form or "")


def english(message: Message) -> str:
    return message.id if isinstance(message.id, str) else str(message.id[0])


def where(message: Message) -> list[str]:
    return [path for path, _ in message.locations]


def test_thai_has_no_semicolons() -> None:
    """Thai separates clauses with a space; a semicolon is foreign to it."""
    found = [form for _, form in texts("th") if ";" in form]
    assert found == []
    assert sum(1 for m, _ in texts("th") if ";" in english(m)) >= 10  # the English has them


def test_thai_spaces_a_field_after_jak() -> None:
    assert [form for _, form in texts("th") if "จาก{" in form] == []


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_no_player_is_gendered_with_a_bracketed_ending(lang: str) -> None:
    """"сыграл(а)", "переміг(ла)", "готов(а)": the present tense or a noun says it for
    anyone, and for several winners at once."""
    pattern = re.compile(r"\((?:-?л?а|ла|-?ась|-?лася|ий|ая)\)|[а-яёієїґ]\([а-яёієїґ-]+\)")
    assert [form for _, form in texts(lang) if pattern.search(form)] == []
    # Nor with a masculine form alone, the words these catalogs once said of a player.
    masculine = re.compile(r"(?<!\w)(вышел|вийшов|вернулся|повернувся|сам|готов|готовий|"
                           r"победил|переміг|ушёл|пішов)(?!\w)")
    assert [form for _, form in texts(lang) if masculine.search(form)] == []


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_a_shared_win_reads_right(lang: str) -> None:
    """"{winners} won" is said with a noun that takes one winner or several."""
    said = [form for message, form in texts(lang) if "{winners} won" in english(message)]
    assert said
    for form in said:
        assert re.search(r"Победа|Перемога", form), form


def test_persian_rule_lines_and_move_log_write_persian_digits() -> None:
    """Digits standing in Persian prose are Persian: in every rule line and every line
    of the move log, in both clients (a rule's name, C9 or K14, stays as it is)."""
    lines = {line for summary in catalogs.rule_lines().values() for line in summary}
    log = ("client/render/table.py", "client/web/state.js")
    checked = 0
    for message, form in texts("fa"):
        if english(message) in lines or any(path in log for path in where(message)):
            checked += 1
            prose = re.sub(r"\{\w+\}|\b[CK]\d+[a-z]?\b|\b\d+[cdhsCDHS]\b", "", form)
            assert not re.search(r"[0-9]", prose), (english(message), form)
    assert checked > 60
    terminal = catalog("fa", "terminal")
    shown = "".join(str(getattr(terminal.get(line), "string", "")) for line in lines)
    assert "۱۰۱" in shown and "۷" in shown


def test_persian_writes_one_ezafe() -> None:
    """After a silent h the ezafe is the hamza above (همهٔ), never a joined ی (همه‌ی)."""
    assert [form for _, form in texts("fa") if re.search("ه\u200cی(?=[\\s،؛:.)»])", form)] == []
    assert sum(1 for _, form in texts("fa") if "هٔ" in form) > 50


def test_persian_describes_commands_with_infinitives() -> None:
    """/help's descriptions name an action (بازی کردن، برداشتن), never order one person
    about (بازی کن، بکش)."""
    singular = re.compile(r"(?<![\w\u200c])(کن|بده|بزن|بنویس|بردار|بکش|بپیوند|بگیر|بمان|"
                          r"برگزین|شو|بنشین|بنشان)(?![\w\u200c])")
    terminal = catalog("fa", "terminal")
    described = [spec.about for spec in COMMANDS]
    assert len(described) > 20
    for text in described:
        found = terminal.get(text)
        assert found is not None and found.string, text
        assert not singular.search(str(found.string)), (text, found.string)


def test_turkish_glues_no_suffix_to_a_field() -> None:
    """"{points}'e" takes its suffix from a number not yet known: the sentence is built
    so that no suffix follows a field ("1 ile {last} arasında", "hedef {points} puan")."""
    assert [form for _, form in texts("tr") if re.search(r"\}'\w", form)] == []


def test_turkish_k9_sends_the_turn_back() -> None:
    """K9: a second 10 bounces the turn further back, not "ileri" (forward)."""
    line = catalog("tr", "terminal").get(
        "K9 10 bounces the turn one seat back (another 10 bounces further).")
    assert line is not None
    assert "geri" in str(line.string) and "ileri" not in str(line.string)


def test_turkish_addresses_the_player_as_siz() -> None:
    """Siz throughout: no second person singular the catalogs once mixed in ("sıranı
    bitir", "elinizi ... diz"), and every command /help describes is a siz imperative
    (oturun, çekin), never the bare stem a button is labelled with."""
    sen = re.compile(r"(?<!\w)(sıranı|elini|sen|senin|sana|yapabilirsin|istersen)(?!\w)")
    assert [form for _, form in texts("tr") if sen.search(form)] == []
    stem = re.compile(r"(?<!\w)(otur|bırak|koy|kaldır|bildir|al|başlat|et|çiz|listele|aç|"
                      r"katıl|izle|kaydet|yap|değiştir|kes|yasakla|kapat|duyur|diz|çal|dön|"
                      r"göster|çık|oyna|çek|seç|bitir|gir)(?=[\s,;:.()]|$)")
    terminal = catalog("tr", "terminal")
    described = [spec.about for spec in COMMANDS]
    assert len(described) > 20
    for text in described:
        found = terminal.get(text)
        assert found is not None and found.string, text
        assert not stem.search(str(found.string)), (text, found.string)


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_no_count_follows_a_name_bare(lang: str) -> None:
    """A bot is named with its seat's number ("bot 3"): a count written straight after a
    name reads as one number ("bot 3 2 kart çekti"), so a word or a comma parts them."""
    pattern = re.compile(r"\{(who|name|dealer)\} \{(n|count|picks|seat|total|points)\}")
    assert [form for _, form in texts(lang) if pattern.search(form)] == []
