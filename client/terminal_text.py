"""The one rule for text the program did not write itself on its way to a terminal.

A server's messages, players' names and chat, a LAN announcement, an exported match
file: any of them may hold characters a terminal acts on instead of showing. An ESC or
a C1 CSI (U+009B) starts a sequence that can retitle the window, clear the screen,
colour a fake prompt, write the clipboard (OSC 52) or hide a link (OSC 8); a carriage
return or a backspace overwrites what is already on the line (a chat line can erase its
sender's name); a bidirectional override or isolate reorders what follows it, so a line
reads other than it is. prompt_toolkit draws its own screen safely, but what it prints
above the prompt goes out with only ESC replaced.

So every such string passes through `visible` before a terminal sees it: each of those
characters is written as the escape Python would write (``\\x1b``, ``\\u202e``), plain
ASCII that every terminal shows and nobody can mistake for the real thing. Nothing is
dropped, so a player can see that something was there. No control character is let
through, not even tab or newline: the screen's layout is the program's, never the
sender's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from pisyedili.protocol.text import BIDI_CONTROLS


def _shown(ch: str) -> str:
    """One character as a terminal may be given it."""
    kind = unicodedata.category(ch)
    # Cc: C0, DEL and C1; Cs: a lone surrogate (a JSON file may hold one), which no
    # encoding can write; Zl, Zp: line and paragraph separators, which some terminals
    # and multiplexers take as a line break.
    if kind in ("Cc", "Cs", "Zl", "Zp") or ord(ch) in BIDI_CONTROLS:
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


def visible(text: str) -> str:
    """`text` with every character a terminal would act on written out as its escape
    (``\\x1b``, ``\\x9b``, ``\\u202e``): what is left only prints. Idempotent."""
    if text.isprintable():  # the common case: nothing to do (a space is printable)
        return text
    return "".join(map(_shown, text))


def visible_fragments(fragments: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """prompt_toolkit fragments with each text `visible`; the styles are the program's."""
    return [(style, visible(text)) for style, text in fragments]


def visible_lines(text: str) -> str:
    """Text of several lines, such as a formatted log event with a traceback: each line
    `visible`, the line breaks kept and tabs shown as spaces."""
    return "\n".join(visible(line.expandtabs(4)) for line in text.split("\n"))
