"""The rule lines have one source and one translation: `/rules` in the terminal and the
web's Rules panel read client/web/rule_lines.json, and the web's compiled catalog
carries the terminal catalog's translation of each line (client/catalogs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from pisyedili.client import catalogs, i18n, render

pytestmark = pytest.mark.usefixtures("english")  # tests/conftest.py

ROOT = catalogs.ROOT
LINES = catalogs.rule_lines()
EVERY_LINE = [line for summary in LINES.values() for line in summary]


def template(domain: str) -> set[str]:
    with (ROOT / "locale" / f"{domain}.pot").open("rb") as f:
        return {str(m.id) for m in read_po(f) if m.id}


def terminal_lines(rules: str) -> list[str]:
    """What `/rules` shows of the rule set's lines, as text."""
    return ["".join(text for _, text in line).strip()
            for line in render.rules_lines(rules, None)[1:]]


def test_both_rule_sets_have_their_numbered_lines() -> None:
    assert sorted(LINES) == ["cardiva", "classic"]
    assert [line.split()[0] for line in LINES["classic"]][:3] == ["C1", "C2", "C4"]
    assert all(line.startswith("K") for line in LINES["cardiva"])


def test_the_lines_are_translated_in_the_terminal_domain_only() -> None:
    """Extracted into terminal.pot from the JSON, absent from web.pot and from every
    web.po: the web has no wording of its own to drift from the terminal's."""
    assert set(EVERY_LINE) <= template("terminal")
    assert not set(EVERY_LINE) & template("web")
    for lang in catalogs.LANGUAGES:
        web = catalogs.read_catalog(catalogs.po_path(ROOT, lang, "web"))
        assert not [line for line in EVERY_LINE if web.get(line) is not None], lang


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_the_web_catalog_carries_the_terminals_lines(lang: str, tmp_path: Path) -> None:
    """The compiled web catalog holds, for each line, the terminal's own translation,
    and `/rules` in the terminal shows exactly that text."""
    root = tmp_path / "client"
    (root / "web").mkdir(parents=True)
    (root / catalogs.RULE_LINES).write_text(
        (ROOT / catalogs.RULE_LINES).read_text(encoding="utf-8"), encoding="utf-8")
    for domain in ("terminal", "web"):
        target = catalogs.po_path(root, lang, domain)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(catalogs.po_path(ROOT, lang, domain).read_bytes())
    catalogs.compile_all(root, out=lambda line: None)
    built = json.loads((root / "web" / "locale" / f"{lang}.json").read_text(encoding="utf-8"))
    terminal = catalogs.read_catalog(catalogs.po_path(ROOT, lang, "terminal"))
    i18n.set_language(lang)
    for rules, lines in LINES.items():
        web = [built["messages"][line] for line in lines]
        assert web == [getattr(terminal.get(line), "string", None) for line in lines]
        assert terminal_lines(rules) == web
        assert all(shown != english for shown, english in zip(web, lines, strict=True))


def test_persian_rule_lines_follow_the_digits_setting() -> None:
    """Persian rule lines are written with Persian digits; `--digits latn` shows them
    as 0-9, as it does the numbers of fields."""
    i18n.set_language("fa")
    shown = "".join(terminal_lines("cardiva"))
    assert "۱۰۱" in shown and "101" not in shown
    i18n.set_digits("latn")
    shown = "".join(terminal_lines("cardiva"))
    assert "101" in shown and not any("۰" <= c <= "۹" for c in shown)
