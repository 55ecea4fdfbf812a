"""Views, events and results → prompt_toolkit formatted text.

Pure functions of the server's dicts (docs/architecture.md, "view keys"; docs/protocol.md
for the messages) and a `Look` (Unicode suits or ASCII, colour or not).  They return
lists of `(style, text)` fragments; `plain()` flattens them for tests and logs.  Keys
the server may leave out are read with defaults, so an older or newer server degrades
the picture rather than crashing the client.

One module a screen: `text` (fragments and layout), `cards` (cards, hands, moves),
`table` (seats, events, results, the status area), `lobby` (tables and finished
matches), `help` (help, refusals, rules, ladder, profiles).  The names below are the
public surface: callers import this package, not its modules.
"""

from .cards import (
    card,
    card_list,
    card_text,
    hand,
    hand_items,
    hand_lines,
    legal_hint,
    legal_items,
    move,
    suit,
    suit_text,
)
from .help import (
    HELP_TOPICS,
    help_lines,
    ladder_lines,
    profile_lines,
    refusal,
    rules_lines,
    with_cards,
)
from .lobby import LOBBY_PAGE, history, lobby, lobby_pages, lobby_span, lobby_table, match_row
from .table import (
    Moment,
    deal_result,
    event,
    link_note,
    log_page,
    match_result,
    progress,
    seat_changes,
    seat_names,
    spread,
    status,
    table_items,
    table_summary,
    time_left,
)
from .text import (
    Dict,
    Fragments,
    Look,
    columns,
    counted,
    fit,
    flow,
    make_style,
    plain,
    plural,
    sep,
    wrap,
)

__all__ = [
    "HELP_TOPICS", "LOBBY_PAGE", "Dict", "Fragments", "Look", "Moment", "card", "card_list",
    "card_text", "columns", "counted", "deal_result", "event", "fit", "flow", "hand",
    "hand_items", "hand_lines", "help_lines", "history", "ladder_lines", "legal_hint",
    "legal_items", "link_note", "lobby", "lobby_pages", "lobby_span", "lobby_table",
    "log_page", "make_style", "match_result", "match_row", "move", "plain", "plural",
    "profile_lines", "progress", "refusal", "rules_lines", "seat_changes", "seat_names",
    "sep", "spread", "status", "suit", "suit_text", "table_items", "table_summary",
    "time_left", "with_cards", "wrap",
]
