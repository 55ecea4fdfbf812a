"""The English words a player meets at a table, lobby and history, for the tests that
play in another language through a real client and find none of them on screen
(tests/client/test_client_no_english_tmux.py, tests/web/test_web_no_english.py)."""

from __future__ import annotations

import re

ENGLISH = frozenset((
    "classic", "cardiva", "easy", "medium", "hard", "offline", "bot", "bots", "table",
    "tables", "seat", "seats", "deck", "decks", "deal", "deals", "points", "options",
    "rules", "empty_stock", "end_deal", "match_end", "turn_seconds", "players", "ten",
    "reverse", "reverses", "bounce", "bounces", "reshuffle", "untimed", "invite", "code",
    "private", "level", "waiting", "playing", "ready", "stock", "match", "matches",
    "refused", "server", "history", "replay", "leaderboard", "rating", "won", "lost",
    "NAME", "SECONDS", "FILE", "SEAT", "SEATS", "RULES", "TABLE", "CODE", "TEXT", "PAGE",
    "TOPIC", "LEVEL", "REASON", "MINUTES", "RANGE", "ID",
))
"""Placeholders count in capitals only; other words in any case."""

OWN_WORDS = {"tr": frozenset({"cardiva", "bot"})}
"""Words a language writes as English does: Cardiva is a Turkish app's own name, and a
bot is a bot in Turkish."""


def english_words(text: str, lang: str) -> list[str]:
    """Each word of `ENGLISH` in `text` (with its line), for a page or screen in `lang`."""
    allowed = OWN_WORDS.get(lang, frozenset())
    found = []
    text = re.sub(r"\bpisyedili replay\b", " ", text)  # a command, typed as it is
    for line in text.splitlines():
        for word in re.findall(r"[A-Za-z_]+", line):
            if word.lower() in allowed:
                continue
            if word in ENGLISH or (word.lower() in ENGLISH and not word.isupper()):
                found.append(f"{word!r} in {line.strip()!r}")
    return found
