"""Fragments and the terminal's columns: the style sheet, `plain`, and the layout
(`wrap`, `flow`, `fit`) every screen is cut to.

The screen is laid out for a given width: the status area cannot scroll, so whatever
does not fit one line flows onto the next (`flow`, `wrap`) rather than being cut off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.styles import Style
from prompt_toolkit.utils import get_cwidth

Fragments = list[tuple[str, str]]
Dict = Mapping[str, Any]


@dataclass(frozen=True)
class Look:
    """How cards are drawn: Unicode suit symbols or ASCII letters; colour or not."""

    unicode: bool = True
    color: bool = True


DEFAULT_LOOK = Look()
"""Unicode suits in colour: the default of the formatters that take a look."""


_COLOURS = {
    "suit-red": "#e03030 bold",
    "suit-black": "bold",  # the terminal's own foreground: readable on dark and light
    "warn": "#e03030",
    "dim": "#888888",
    "me": "#30a0e0 bold",
    "turn": "reverse bold",
    "error": "#e03030",
    "good": "#30b030 bold",
    "title": "bold underline",
    "bottom-toolbar": "noreverse",
}
_PLAIN = {"suit-red": "bold", "suit-black": "bold", "warn": "bold", "me": "bold",
          "turn": "reverse bold", "title": "bold underline", "bottom-toolbar": "noreverse",
          "good": "bold"}


def make_style(look: Look) -> Style:
    """The style sheet: hearts and diamonds red; with `NO_COLOR`, no colour at all."""
    return Style.from_dict(_COLOURS if look.color else _PLAIN)


def plain(fragments: Iterable[tuple[str, str]]) -> str:
    """The text a person reads, without styles (tests, logs, dumb terminals)."""
    return "".join(text for _, text in fragments)


# --------------------------------------------------------------------------- layout


def columns(fragments: Iterable[tuple[str, str]]) -> int:
    """Terminal columns the fragments take (a suit symbol is one, a wide glyph two)."""
    return get_cwidth(plain(fragments))


def _regroup(chars: Sequence[tuple[str, str]]) -> Fragments:
    out: Fragments = []
    for style, ch in chars:
        if out and out[-1][0] == style:
            out[-1] = (style, out[-1][1] + ch)
        else:
            out.append((style, ch))
    return out


def continued(look: Look) -> str:
    """What starts each continuation row of a log line (`wrap`'s `mark`)."""
    return "┆ " if look.unicode else "| "


def wrap(line: Fragments, width: int, indent: int | None = None,
         mark: str = "") -> list[Fragments]:
    """`line` broken at spaces into rows of at most `width` columns.

    Rows after the first start with `indent` columns (default: the line's own leading
    spaces plus two, so a continuation reads as one), the last of them `mark` if given:
    in the log, where every line starts with who said it, a wrapped row without a mark
    could pass for a line of its own (a padded chat line faking another player's).
    A word wider than a row is the only thing ever cut.
    """
    if columns(line) <= width or width < 8:
        return [line]
    chars = [(style, ch) for style, text in line for ch in text]
    lead = len(plain(line)) - len(plain(line).lstrip(" "))
    hang = max(min(lead + 2 if indent is None else indent, width // 2), get_cwidth(mark))
    start = [p for p in [("", " " * (hang - get_cwidth(mark))), ("class:dim", mark)] if p[1]]
    words: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]] = []
    spaces: list[tuple[str, str]] = []
    word: list[tuple[str, str]] = []
    for sc in chars:
        if sc[1] == " ":
            if word:
                words.append((spaces, word))
                spaces, word = [], []
            spaces.append(sc)
        else:
            word.append(sc)
    if word:
        words.append((spaces, word))
    rows: list[list[tuple[str, str]]] = []
    row: list[tuple[str, str]] = []
    used, has_word = 0, False
    for spaces, word in words:
        size = sum(get_cwidth(ch) for _, ch in word)
        if has_word and used + len(spaces) + size > width:
            rows.append(row)
            row, used, has_word, spaces = list(start), hang, False, []
        row += spaces
        used += len(spaces)
        for sc in word:
            w = get_cwidth(sc[1])
            if used + w > width and (has_word or used > hang):
                rows.append(row)
                row, used = list(start), hang
            row.append(sc)
            used += w
            has_word = True
    rows.append(row)
    return [_regroup(r) for r in rows]


def flow(head: Fragments, items: Sequence[Fragments], width: int, gap: str = "  ",
         indent: int | None = None) -> list[Fragments]:
    """`head` then `items` separated by `gap`, as many rows as they need: an item is
    never split, and rows after the first are indented (default: under the first item)."""
    hang = min(columns(head) if indent is None else indent, width // 2)
    rows: list[Fragments] = []
    row: Fragments = list(head)
    used, empty = columns(head), True
    for item in items:
        size = columns(item)
        if not empty and used + len(gap) + size > width:
            rows.append(row)
            row, used, empty = [("", " " * hang)], hang, True
        if not empty:
            row.append(("", gap))
            used += len(gap)
        row += item
        used += size
        empty = False
    rows.append(row)
    return [piece for r in rows for piece in wrap(r, width, hang)]


def one_line(items: Iterable[Fragments], gap: str = "  ") -> Fragments:
    """`items` on one line, `gap` between them (`flow` gives them rows instead)."""
    out: Fragments = []
    for item in items:
        if out:
            out.append(("", gap))
        out += item
    return out


def fit(lines: Iterable[Fragments], width: int) -> list[Fragments]:
    """Every line wrapped to `width`."""
    return [row for line in lines for row in wrap(line, width)]



def sep(look: Look) -> str:
    return " · " if look.unicode else " | "
