"""The translation catalogs: extract, compile and check them (``python -m
pisyedili.client.catalogs extract|compile|check``).

One gettext domain a client: ``terminal`` (every string of the terminal client, from
``client/**.py``) and ``web`` (the browser client's, from ``client/web/**.js``, keywords
``t`` and ``tn``). Each has a template ``client/locale/<domain>.pot`` and a catalog a
language, ``client/locale/<lang>/LC_MESSAGES/<domain>.po``; ``compile`` writes a ``.mo``
beside each ``.po`` and, for ``web``, ``client/web/locale/<lang>.json`` (`web_json`).

The rule lines (`/rules` in the terminal, the web's Rules panel) have one source,
``client/web/rule_lines.json`` (English, by rule set), and one translation, in the
``terminal`` catalogs (`extract_rule_lines` puts them in its template); ``compile``
copies those translations into each web JSON, so the two clients say the rules alike.

Pure functions of the folders they are given, plus the command line. The build backend
(``_build_backend.py``) loads this file by its path, before the package is installed:
so it imports Babel and the standard library only.
"""

from __future__ import annotations

import argparse
import gettext
import io
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po, write_po

LANGUAGES = ("tr", "ru", "uk", "fa", "th")
"""The languages translated from English, the source."""
RTL = frozenset({"fa"})
"""Languages written right to left."""
PLURAL_TABLE = 200
"""Entries of the web's plural table: ``n < 200 ? table[n] : table[100 + n % 100]``."""

ROOT = Path(__file__).resolve().parent
"""The client's folder: ``locale/`` and ``web/`` are in it."""
RULE_LINES = Path("web") / "rule_lines.json"
"""The rule lines of both clients, English, by rule set (under the client's folder)."""


@dataclass(frozen=True)
class Domain:
    """A catalog domain: where its strings are read from and by which keywords."""

    name: str
    mapping: str
    """The mapping file under ``locale/`` (``pybabel extract -F``), relative to the client."""
    keywords: dict[str, tuple[int, ...] | None]


DOMAINS = (
    Domain("terminal", "terminal.cfg", {"_": None, "N_": None, "ngettext": (1, 2)}),
    Domain("web", "web.cfg", {"t": None, "tn": (1, 2)}),
)

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:[:!][^{}]*)?\}")


def locale_dir(root: Path = ROOT) -> Path:
    return root / "locale"


def po_path(root: Path, lang: str, domain: str) -> Path:
    return locale_dir(root) / lang / "LC_MESSAGES" / f"{domain}.po"


def rule_lines(root: Path = ROOT) -> dict[str, list[str]]:
    """Each rule set's summary lines, in English: the keys of their translations."""
    data = json.loads((root / RULE_LINES).read_text(encoding="utf-8"))
    return {str(rules): [str(line) for line in lines] for rules, lines in data.items()}


def extract_rule_lines(fileobj: IO[bytes], keywords: object, comment_tags: object,
                       options: object) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel's extractor for ``rule_lines.json`` (``terminal.cfg``): each line a
    message of the ``terminal`` domain, found on its own line of the file."""
    text = fileobj.read().decode("utf-8")
    rows = text.splitlines()
    for lines in json.loads(text).values():
        for line in lines:
            quoted = json.dumps(line, ensure_ascii=False)
            lineno = next((i for i, row in enumerate(rows, 1) if quoted in row), 0)
            yield lineno, None, line, ["i18n: a line of /rules and the web's Rules panel"]


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields of a message (str.format style, the web's too)."""
    return set(_FIELD.findall(text))


# ------------------------------------------------------------------------- extract


def extract_domain(root: Path, domain: Domain) -> Catalog:
    """Every string the domain's sources mark, as a template catalog."""
    with (locale_dir(root) / domain.mapping).open(encoding="utf-8") as f:
        methods, options = parse_mapping_cfg(f)  # type: ignore[no-untyped-call]
    template = Catalog(project="pisyedili", domain=domain.name, fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
        str(root), methods, options, keywords=domain.keywords, comment_tags=("i18n:",),
        strip_comment_tags=True,
    ):
        template.add(message, None, [(f"client/{filename}", lineno)],
                     auto_comments=comments, context=context)
    return template


def extract(root: Path = ROOT, out: Callable[[str], None] = print) -> None:
    """Rewrite each domain's template and merge it into that domain's every catalog (as
    ``pybabel extract`` then ``update`` do): new strings come in untranslated, gone
    ones are kept as obsolete, a changed one goes fuzzy."""
    for domain in DOMAINS:
        template = extract_domain(root, domain)
        if not len(template):
            continue
        pot = locale_dir(root) / f"{domain.name}.pot"
        with pot.open("wb") as f:
            write_po(f, template, width=100, omit_header=False, sort_output=False)
        out(f"{pot.relative_to(root.parent)}: {len(template)} messages")
        for lang in LANGUAGES:
            po = po_path(root, lang, domain.name)
            if po.exists():
                with po.open("rb") as f:
                    catalog = read_po(f, locale=lang, domain=domain.name)
            elif domain.name == "terminal":
                po.parent.mkdir(parents=True, exist_ok=True)
                catalog = Catalog(locale=lang, domain=domain.name, project="pisyedili")
            else:
                continue  # a web catalog is started from web.pot (docs/development.md)
            catalog.update(template, update_header_comment=False)
            with po.open("wb") as f:
                write_po(f, catalog, width=100, ignore_obsolete=False)
            out(f"{po.relative_to(root.parent)}: updated")


# ------------------------------------------------------------------------- compile


def read_catalog(po: Path) -> Catalog:
    lang = po.parent.parent.name
    with po.open("rb") as f:
        return read_po(f, locale=lang, domain=po.stem)


def mo_bytes(catalog: Catalog) -> bytes:
    """The .mo of a catalog, fuzzy entries left out (English shows for them)."""
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    return buf.getvalue()


def plural_function(catalog: Catalog) -> Callable[[int], int]:
    """The catalog's header plural formula, as gettext evaluates it."""
    return gettext.c2py(catalog.plural_expr)


def plural_table(catalog: Catalog, size: int = PLURAL_TABLE) -> list[int]:
    """The plural form of n for 0 <= n < size: exact, with ``table[100 + n % 100]``
    beyond, for formulas that only look at n % 10 and n % 100 past 100 (ours do)."""
    form = plural_function(catalog)
    return [int(form(n)) for n in range(size)]


def _translated(message: Message) -> bool:
    strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
    return bool(message.id) and not message.fuzzy and all(strings)


def web_json(catalog: Catalog, terminal: Catalog | None = None,
             lines: Iterable[str] = (), typed: dict[str, object] | None = None,
             ) -> dict[str, object]:
    """The browser's catalog: its direction, plural table, and translated messages
    (a plural one keyed ``singular\\u0004plural``, its forms in order); with the
    rule `lines` as the ``terminal`` catalog translates them, and the words a player
    `typed` for moves and suits (`typed_words`)."""
    messages: dict[str, object] = {}
    for line in lines:
        found = terminal.get(line) if terminal is not None else None
        if found is not None and _translated(found):
            messages[line] = found.string
    for message in catalog:
        if not _translated(message):
            continue
        if isinstance(message.id, tuple | list):
            messages["\u0004".join(message.id[:2])] = list(_strings(message))
        else:
            messages[message.id] = message.string
    lang = str(catalog.locale)
    return {"lang": lang, "dir": "rtl" if lang in RTL else "ltr",
            "plural_table": plural_table(catalog), "messages": messages,
            "typed": typed or {}}


def catalogs(root: Path = ROOT) -> list[Path]:
    """Every .po under ``locale/``, sorted."""
    return sorted(locale_dir(root).glob("*/LC_MESSAGES/*.po"))


def compile_all(root: Path = ROOT, out: Callable[[str], None] = print) -> list[Path]:
    """Write every .po's .mo beside it, and every web.po's JSON; returns what it wrote."""
    written = []
    # A folder of catalogs alone (a translator's copy) has no rule lines to carry over.
    summaries = rule_lines(root) if (root / RULE_LINES).exists() else {}
    lines = [line for summary in summaries.values() for line in summary]
    for po in catalogs(root):
        catalog = read_catalog(po)
        mo = po.with_suffix(".mo")
        mo.write_bytes(mo_bytes(catalog))
        written.append(mo)
        if po.stem == "web":
            lang = po.parent.parent.name
            terminal = po_path(root, lang, "terminal")
            shared = read_catalog(terminal) if terminal.exists() else None
            target = root / "web" / "locale" / f"{lang}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            built = web_json(catalog, shared, lines, typed_words(root, lang))
            target.write_text(json.dumps(built, ensure_ascii=False, indent=1) + "\n",
                              encoding="utf-8")
            written.append(target)
    for path in written:
        out(f"wrote {path.relative_to(root.parent)}")
    return written


# --------------------------------------------------------------------------- check


def _ids(message: Message) -> list[str]:
    return list(message.id) if isinstance(message.id, tuple | list) else [message.id]


def _strings(message: Message) -> list[str]:
    s = message.string
    return [x or "" for x in s] if isinstance(s, tuple | list) else [s or ""]


def check_catalog(template: Catalog, catalog: Catalog, name: str) -> list[str]:
    """What is wrong with one catalog against its template: a message missing,
    untranslated or fuzzy, a placeholder lost or added, the wrong number of plural forms."""
    problems = []
    expected = get_plural(str(catalog.locale)).num_plurals
    if catalog.num_plurals != expected:
        problems.append(f"{name}: the header says {catalog.num_plurals} plural forms, the "
                        f"language has {expected}")
    for entry in template:
        if not entry.id:
            continue
        found = catalog.get(entry.id, entry.context)
        shown = _ids(entry)[0]
        if found is None:
            problems.append(f"{name}: missing {shown!r}")
            continue
        if found.fuzzy:
            problems.append(f"{name}: fuzzy {shown!r}")
        strings = _strings(found)
        if not all(strings):
            problems.append(f"{name}: untranslated {shown!r}")
            continue
        plural = isinstance(entry.id, tuple | list)
        if plural and len(strings) != expected:
            problems.append(f"{name}: {len(strings)} plural forms, not {expected}, for "
                            f"{shown!r}")
        wanted = set().union(*(placeholders(i) for i in _ids(entry)))
        for form in strings:
            have = placeholders(form)
            # One plural form may leave {n} out ("one card" for n == 1), never add a field.
            if have - wanted or (not plural and have != wanted) or \
                    (plural and wanted - have - {"n"}):
                problems.append(f"{name}: placeholders {sorted(have)} not {sorted(wanted)} "
                                f"in {form!r}")
    return problems


def check(root: Path = ROOT) -> list[str]:
    """Every domain's every catalog against its template (or, for a domain not extracted
    yet, against itself), and against its language's glossary. The terminal's must
    exist in every language; the web's are checked wherever they exist."""
    problems = []
    for domain in DOMAINS:
        pot = locale_dir(root) / f"{domain.name}.pot"
        template = None
        if pot.exists():
            with pot.open("rb") as f:
                template = read_po(f)
        for lang in LANGUAGES:
            po = po_path(root, lang, domain.name)
            name = str(po.relative_to(root.parent))
            if not po.exists():
                if domain.name == "terminal":
                    problems.append(f"{name}: missing")
                continue
            catalog = read_catalog(po)
            # Without a template (not extracted yet), a catalog's own entries are checked.
            problems += check_catalog(template or catalog, catalog, name)
    for lang in LANGUAGES:
        problems += glossary_problems(root, lang)[0]
    return problems


# ------------------------------------------------------------------------ glossary


@dataclass(frozen=True)
class Term:
    """One term of a language's glossary (``locale/<lang>/glossary.toml``)."""

    key: str
    english: re.Pattern[str]
    """What in a message's English names the term."""
    words: tuple[re.Pattern[str], ...]
    """The language's word for it: every translation of such a message says one."""
    wrong: tuple[re.Pattern[str], ...]
    """Words once used for it that none may say."""
    typed: tuple[str, ...]
    """What a player types for it, which the terminal's parser reads."""
    besides: frozenset[str]
    """Messages whose English uses the word otherwise (a verb, a command's word)."""
    note: str
    source: str


def glossary_path(root: Path, lang: str) -> Path:
    return locale_dir(root) / lang / "glossary.toml"


def glossary(root: Path, lang: str) -> dict[str, Term]:
    """The language's glossary, by term; empty when it has none."""
    path = glossary_path(root, lang)
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {key: Term(key, re.compile(entry["english"], re.I),
                      tuple(re.compile(w, re.I) for w in entry["words"]),
                      tuple(re.compile(w, re.I) for w in entry.get("wrong", ())),
                      tuple(entry.get("typed", ())), frozenset(entry.get("besides", ())),
                      str(entry.get("note", "")), str(entry.get("source", "")))
            for key, entry in data.items()}


_NOT_WORDS = re.compile(r"\{\w+\}|/help \w+|/[\w-]+|--[\w-]+(?::\S+)?|pisyedili \w+|docs/\S+")
"""What in a message is no word of the language: placeholders ({tables}), and what is
typed as it is: commands (/help replay), options (--rated), programs (pisyedili
replay) and file names."""


def words_of(text: str) -> str:
    """The English a reader sees of a message."""
    return _NOT_WORDS.sub("", text)


def glossary_problems(root: Path, lang: str) -> tuple[list[str], dict[str, int]]:
    """Each translation, in either domain, of a message whose English names a term but
    which says none of the glossary's words for it or one of its wrong ones; and how
    many messages each term was held to (a term that matches none checks nothing)."""
    terms = glossary(root, lang)
    checked = dict.fromkeys(terms, 0)
    found: list[str] = []
    for domain in DOMAINS:
        po = po_path(root, lang, domain.name)
        if not po.exists():
            continue
        for message in read_catalog(po):
            if not message.id:
                continue
            english = " | ".join(_ids(message))
            for term in terms.values():
                if english in term.besides or not term.english.search(words_of(english)):
                    continue
                checked[term.key] += 1
                for form in _strings(message):
                    if not any(w.search(form) for w in term.words):
                        found.append(f"{lang} {domain.name} {term.key}: {english!r} -> "
                                     f"{form!r} says none of the glossary's words")
                    bad = [w.pattern for w in term.wrong if w.search(form)]
                    if bad:
                        found.append(f"{lang} {domain.name} {term.key}: {english!r} -> "
                                     f"{form!r} says {bad}")
    return found, checked


TYPED_SUITS = {"clubs": "c", "diamonds": "d", "hearts": "h", "spades": "s"}
"""The glossary's suit terms, by the wire's suit letter."""


def typed_words(root: Path, lang: str) -> dict[str, object]:
    """What a player of `lang` types for draw, pass and each suit, from its glossary:
    the web page's move box reads them as the terminal's parser does."""
    terms = glossary(root, lang)
    moves: dict[str, object] = {kind: [w.lower() for w in terms[kind].typed]
                                for kind in ("draw", "pass") if kind in terms}
    suits = {word.lower(): letter for key, letter in TYPED_SUITS.items() if key in terms
             for word in terms[key].typed}
    return {**moves, "suits": suits}


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pisyedili.client.catalogs",
        description="The translation catalogs of the terminal and web clients.")
    parser.add_argument("command", choices=("extract", "compile", "check"),
                        help="extract: update the templates and merge them into every "
                             "catalog; compile: write the .mo and web JSON files; check: "
                             "list every message missing, fuzzy or mistranslated, or "
                             "wording a term otherwise than its language's glossary")
    args = parser.parse_args(None if argv is None else list(argv))
    if args.command == "extract":
        extract()
    elif args.command == "compile":
        compile_all()
    else:
        problems = check()
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problems" if problems else "every catalog is complete")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
