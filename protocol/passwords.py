"""What a password may be: one rule, kept by the server and checked early by clients.

A password is compared as NFC, so one spelling typed on two keyboards (a precomposed
`ş` or `s` and a combining cedilla) is one password. A new one (`register`, `passwd`)
must have at least `MIN_PASSWORD` characters (code points, after NFC), not all of them
blank, and no control character (NUL, tab and line breaks included), surrogate or
bidirectional control: those cannot be typed back reliably, and a bidi control makes a
password show in another order than it is typed.
"""

from __future__ import annotations

import unicodedata

MIN_PASSWORD = 8
"""Characters a new password needs at least: short ones fall to the first guesses."""

BIDI_CONTROLS = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                           *range(0x2066, 0x206A)})
"""Unicode's Bidi_Control characters: marks, embeddings, overrides and isolates."""


def normalise(password: str) -> str:
    """`password` as it is hashed and checked: NFC."""
    return unicodedata.normalize("NFC", password)


def problem(password: str) -> tuple[str, str] | None:
    """Why `password` (normalised) cannot be a new password: an error code and a message
    (`bad_password`, `weak_password`), or None when it can."""
    for ch in password:
        if unicodedata.category(ch) in ("Cc", "Cs") or ord(ch) in BIDI_CONTROLS:
            what = "a bidirectional control" if ord(ch) in BIDI_CONTROLS else \
                "a control character"
            return "bad_password", f"a password must not contain U+{ord(ch):04X} ({what})"
    if len(password) < MIN_PASSWORD or not password.strip():
        return "weak_password", f"a password needs at least {MIN_PASSWORD} characters, " \
            "not all of them blank"
    return None
