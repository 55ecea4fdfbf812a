"""The terminal client's language: `_()` and `ngettext()` over the ``terminal`` catalogs.

English is the source: a message is its own English text, with ``{name}`` fields
(str.format style, as the web's) that `_()` fills in. Numbers among the fields are
written in the language's digits (Persian's own by default, `set_digits`); names, chat
and cards are fields, so they are never translated. A message built before a language
is chosen (a table of help lines) is marked with `N_()` and translated where it is shown.

The compiled ``.mo`` is read with the standard library; when it is missing or older
than its ``.po`` (a developer editing a catalog), the ``.po`` is read with Babel
instead, so the screen never shows stale text. One language at a time, for the whole
process: the terminal shows one player's screen.
"""

from __future__ import annotations

import gettext as _gettext
import io
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from babel import Locale
from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal

from .catalogs import LANGUAGES, mo_bytes, read_catalog

DOMAIN = "terminal"
LOCALE_VARIABLE = "PISYEDILI_LOCALE_DIR"
"""A folder of catalogs (``<lang>/LC_MESSAGES/terminal.po``) to read instead of the
installed ones: a translator trying a catalog, the tests' pseudo-locale."""
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENGLISH = "en"
CHOICES = (ENGLISH, *LANGUAGES)
"""Every language the terminal speaks, by code."""
NAMES = {"en": "English", "tr": "Türkçe", "ru": "Русский", "uk": "Українська",
         "fa": "فارسی", "th": "ไทย"}
"""Each language in itself, as `/lang` lists them."""
DIGITS = ("default", "latn")
"""`--digits`: the language's own (Persian's are ۰-۹), or Western 0-9 everywhere."""


def locale_dir() -> Path:
    """Where the catalogs are read from: `LOCALE_VARIABLE`'s folder, else the package's."""
    return Path(os.environ.get(LOCALE_VARIABLE) or LOCALE_DIR)


@dataclass
class _Current:
    lang: str = ENGLISH
    digits: str = "default"
    catalog: _gettext.NullTranslations = field(default_factory=_gettext.NullTranslations)
    checked: float = 0.0
    """When the catalog's files were last looked at (time.monotonic)."""


_current = _Current()
_loaded: dict[tuple[str, str], tuple[float, float, _gettext.NullTranslations]] = {}


def translations(lang: str, domain: str = DOMAIN,
                 folder: Path | None = None) -> _gettext.NullTranslations:
    """The catalog of `lang` (in `folder`, by default `locale_dir()`): the .mo, or the
    .po when that is newer; none for English or a language without one."""
    po = (folder or locale_dir()) / lang / "LC_MESSAGES" / f"{domain}.po"
    mo = po.with_suffix(".mo")
    po_time = po.stat().st_mtime if po.exists() else -1.0
    mo_time = mo.stat().st_mtime if mo.exists() else -1.0
    key = (str(po), domain)
    cached = _loaded.get(key)
    if cached and cached[:2] == (po_time, mo_time):
        return cached[2]
    found: _gettext.NullTranslations
    if lang == ENGLISH or (po_time < 0 and mo_time < 0):
        found = _gettext.NullTranslations()
    elif mo_time >= po_time:
        with mo.open("rb") as f:
            found = _gettext.GNUTranslations(f)
    else:
        found = _gettext.GNUTranslations(io.BytesIO(mo_bytes(read_catalog(po))))
    _loaded[key] = (po_time, mo_time, found)
    return found


def language_code(value: str | None) -> str | None:
    """A supported language from a code or locale name (`tr_TR.UTF-8` -> tr), else None."""
    if not value:
        return None
    code = value.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in CHOICES else None


def from_environment(env: Mapping[str, str] | None = None) -> str:
    """The language the locale variables ask for: the first of LC_ALL, LC_MESSAGES and
    LANG that is set decides, as POSIX has it; English when it names another language."""
    env = os.environ if env is None else env
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(name):
            return language_code(env[name]) or ENGLISH
    return ENGLISH


def choose(lang: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """`--lang` if given, else the environment's; set it and return it."""
    chosen = language_code(lang) if lang else from_environment(env)
    set_language(chosen or ENGLISH)
    return current()


def set_language(lang: str) -> None:
    """Show every message from now on in `lang` (a code of `CHOICES`)."""
    if lang not in CHOICES:
        raise ValueError(f"unknown language {lang!r}")
    _current.lang = lang
    _current.catalog = translations(lang)
    _current.checked = time.monotonic()


def set_digits(digits: str) -> None:
    """`default`: the language's own digits; `latn`: 0-9 whatever the language."""
    if digits not in DIGITS:
        raise ValueError(f"unknown digits {digits!r}")
    _current.digits = digits


def current() -> str:
    return _current.lang


RECHECK = 1.0
"""Seconds between two looks at the catalog's files: a screen asks for hundreds of
messages a redraw, and a catalog being edited need only show within a second."""


def _catalog() -> _gettext.NullTranslations:
    # A catalog edited while the client runs (a developer at work) is read again.
    now = time.monotonic()
    if _current.lang != ENGLISH and now - _current.checked >= RECHECK:
        _current.catalog = translations(_current.lang)
        _current.checked = now
    return _current.catalog


_DIGITS = {"arab": "٠١٢٣٤٥٦٧٨٩", "arabext": "۰۱۲۳۴۵۶۷۸۹", "thai": "๐๑๒๓๔๕๖๗๘๙"}
"""The digits of the numbering systems our languages may default to (CLDR): Babel picks
a system's symbols (Persian's decimal separator ٫) but writes its digits 0-9."""


def _in_digits(text: str) -> str:
    """`text`'s 0-9 in the current language's digits (none changed with `latn`)."""
    if _current.digits == "latn" or _current.lang == ENGLISH:
        return text
    digits = _DIGITS.get(Locale.parse(_current.lang).default_numbering_system or "")
    return text.translate(str.maketrans("0123456789", digits)) if digits else text


def number(n: int | float, decimals: int | None = None) -> str:
    """`n` in the language's digits, with `decimals` places if given; English is
    written as Python writes it, ungrouped."""
    if _current.lang == ENGLISH:
        return str(n) if decimals is None else f"{n:.{decimals}f}"
    pattern = None if decimals is None else "0." + "0" * decimals if decimals else "0"
    return _in_digits(format_decimal(n, format=pattern, locale=_current.lang,
                                     group_separator=False,
                                     numbering_system=_current.digits))


def date(when: float, with_time: bool = False) -> str:
    """A local time as the language writes dates (English: ``2026-12-02 14:05``)."""
    moment = datetime.fromtimestamp(when)
    if _current.lang == ENGLISH:
        return moment.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")
    if with_time:
        text = format_datetime(moment, "short", locale=_current.lang)
    else:
        text = format_date(moment, "short", locale=_current.lang)
    # The line keeps its logical order for the terminal to lay out: no bidi marks.
    return _in_digits(_western(text)).translate(_NO_MARKS)


_NO_MARKS = str.maketrans("", "", "\u200e\u200f\u061c")
"""Bidirectional marks (LRM, RLM, ALM), which CLDR puts in some date patterns."""


def _western(text: str) -> str:
    """Any decimal digit in `text` as 0-9 (Babel's dates may hold a locale's own)."""
    return "".join(str(int(ch)) if ch.isdecimal() else ch for ch in text)


def _fill(text: str, fields: Mapping[str, object]) -> str:
    shown = {k: number(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
             for k, v in fields.items()}
    return text.format(**shown) if fields else text


def _own_digits(text: str) -> str:
    """A translation's own digits (Persian's in its rule lines) as 0-9 with ``latn``."""
    return _western(text) if _current.digits == "latn" else text


def _(message: str, /, **fields: object) -> str:
    """`message` in the current language, its ``{fields}`` filled in."""
    return _fill(_own_digits(_catalog().gettext(message)), fields)


def gettext(message: str) -> str:
    """`message` in the current language, as it is: for callers that format it
    themselves (argparse, with %)."""
    return _catalog().gettext(message)


def N_(message: str) -> str:
    """Marks `message` for the catalog where it is defined; `_()` translates it later."""
    return message


def ngettext(singular: str, plural: str, n: int, /, **fields: object) -> str:
    """The form of a counted message for `n`, with ``{n}`` and the other fields filled."""
    return _fill(_own_digits(_catalog().ngettext(singular, plural, n)), {"n": n, **fields})
