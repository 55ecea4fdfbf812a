"""What a person may write for others to read: the one rule for every human-written string.

Player names, table names, chat lines, announcements and moderation reasons are shown to
other people, so none of them may hide anything: no character that shows as nothing or
as a space, none that reorders what a terminal prints, none whose look differs from
device to device. A string is refused at its first such character, by class:

- Control characters (Cc: U+0000-U+001F, U+007F-U+009F, tab and newline among them),
  line and paragraph separators (Zl, Zp): refused. Every string is one line.
- Surrogates (Cs) and private-use characters (Co: each device draws its own):
  refused. Unassigned code points (Cn, judged by the running Python's Unicode version,
  `UNICODE_VERSION`) are refused in player names only: a server and its clients may
  run different Unicode versions, and an emoji newer than one side's tables must not
  make a chat line unreadable there.
- Format characters (Cf): refused. That is the zero-width space U+200B, the word
  joiner U+2060 and the invisible operators, the byte order mark U+FEFF, the soft
  hyphen, every bidirectional mark, embedding, override and isolate (LRM, RLM, ALM
  U+061C, U+202A-U+202E, U+2066-U+2069: they reorder what is shown, the "Trojan Source"
  trick), and the tag characters U+E0001-U+E007F (so an emoji flag of a region, such
  as England's, which is spelled with tags, is refused too). Two exceptions, in free
  text only (every string but a player name):
  - ZERO WIDTH NON-JOINER U+200C: Persian needs it inside words (می‌خواهم), and so do
    other scripts; it never stands in for a space.
  - ZERO WIDTH JOINER U+200D between two emoji (after a symbol, an emoji modifier or
    U+FE0F, before a symbol): the sequences that draw one emoji (👩‍💻, 🏳️‍🌈). Between
    letters it is refused: there it could make two look-alike words differ.
- The other Default_Ignorable_Code_Points, which are letters or marks that show as
  nothing: the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the combining grapheme
  joiner U+034F, the Mongolian free variation selectors, U+17B4-U+17B5 and the
  variation selectors: refused. One exception, in free text only: VARIATION SELECTOR-15
  and -16 (U+FE0E, U+FE0F), which choose text or emoji presentation, right after a
  symbol (❤️) or in a keycap (1️⃣: a digit, `#` or `*`, U+FE0F, U+20E3).
- Blank-looking characters that are not default-ignorable: U+2800 BRAILLE PATTERN
  BLANK, U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, U+16FE4 KHITAN SMALL SCRIPT FILLER:
  refused.
- Everything else (letters, marks, digits, punctuation, symbols, emoji, the space
  characters Zs) is accepted; free text must hold at least one character that is not a
  space or one of the joiners and selectors above (it must not be blank). A player name
  has rules of its own on top (`names.normalise`: NFC, no mark starting a word, a letter
  or digit, no look-alike of another name).

`refusal` applies the rule; it lives in the protocol package, pure and I/O-free, so the
schema (`StrT` text fields), the server's name rules and any client check the same way.

Character properties come from `unicodedata` (the running Python's Unicode version);
`_IGNORABLE` is Unicode's Default_Ignorable_Code_Point, from DerivedCoreProperties.txt
15.0.0 (the same set as 14.0.0), © Unicode, Inc., terms of use:
https://www.unicode.org/terms_of_use.html.
"""

from __future__ import annotations

import unicodedata

UNICODE_VERSION = unicodedata.unidata_version

ZWNJ = "\u200c"
ZWJ = "\u200d"
VS15, VS16 = "\ufe0e", "\ufe0f"
KEYCAP = "\u20e3"

_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a lone surrogate, not a character",
    "Co": "a private-use character, which looks different on every device",
    "Zl": "a line break",
    "Zp": "a paragraph break",
}

BIDI_CONTROLS = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                           *range(0x2066, 0x206A)})
"""The bidirectional marks, embeddings, overrides and isolates (all format characters):
named apart in a refusal, since what they do is reorder the text around them."""

_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""Default_Ignorable_Code_Point, adjacent ranges merged. Beyond the format characters
(refused by category anyway) it holds the Hangul fillers, which are letters (Lo) that
show as nothing, and the variation selectors and the grapheme joiner (Mn)."""

INVISIBLE = frozenset(cp for lo, hi in _IGNORABLE for cp in range(lo, hi + 1))

BLANK = frozenset({
    0x2800,  # BRAILLE PATTERN BLANK: a symbol (So) drawn as an empty cell
    0x1D159,  # MUSICAL SYMBOL NULL NOTEHEAD
    0x16FE4,  # KHITAN SMALL SCRIPT FILLER
})
"""Blank-looking characters that are not default-ignorable."""

_UNASSIGNED = f"not a character in Unicode {UNICODE_VERSION}"

_KEYCAP_BASES = frozenset("0123456789#*")
_EMOJI_MODIFIERS = range(0x1F3FB, 0x1F400)


def describe(ch: str) -> str:
    """A character as a refusal names it: its code point and Unicode name."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}"


def _is_symbol(ch: str) -> bool:
    return unicodedata.category(ch).startswith("S")


def _joins_emoji(text: str, i: int) -> bool:
    """Whether the ZWJ at `i` sits inside an emoji sequence."""
    if i == 0 or i + 1 >= len(text):
        return False
    before, after = text[i - 1], text[i + 1]
    return ((_is_symbol(before) or ord(before) in _EMOJI_MODIFIERS or before == VS16)
            and unicodedata.category(after) == "So")


def _presents(text: str, i: int) -> bool:
    """Whether the variation selector at `i` chooses the presentation of a symbol, or
    of a keycap's base."""
    if i == 0:
        return False
    before = text[i - 1]
    keycap = before in _KEYCAP_BASES and text[i + 1:i + 2] == KEYCAP
    return _is_symbol(before) or (keycap and text[i] == VS16)


def allowed_in_free_text(text: str, i: int) -> bool:
    """Whether `text[i]`, otherwise refused, is one of free text's exceptions."""
    ch = text[i]
    return (ch == ZWNJ or (ch == ZWJ and _joins_emoji(text, i))
            or (ch in (VS15, VS16) and _presents(text, i)))


def why_not(ch: str) -> str | None:
    """Why `ch` is refused in any human-written string, or None (context aside: see
    `allowed_in_free_text`)."""
    cp = ord(ch)
    if cp in BIDI_CONTROLS:
        return "an invisible formatting character that reorders the text around it"
    why = _REFUSED_CATEGORIES.get(unicodedata.category(ch))
    if why is not None:
        return why
    if cp in INVISIBLE:
        return "an invisible character"
    if cp in BLANK:
        return "a blank-looking character"
    return None


def refusal(text: str, *, name: bool = False) -> str | None:
    """What is wrong with `text` as something a person wrote for others, or None.

    `name`: a player name, which takes none of free text's exceptions (its own rules,
    `names.normalise`, come on top). Free text must not be blank either.
    """
    for i, ch in enumerate(text):
        why = why_not(ch)
        if why is None and name and unicodedata.category(ch) == "Cn":
            why = _UNASSIGNED
        if why is not None and (name or not allowed_in_free_text(text, i)):
            return f"must not contain {describe(ch)} ({why})"
    if not name and all(ch.isspace() or ch in (ZWNJ, ZWJ, VS15, VS16) for ch in text):
        return "must not be blank"
    return None
