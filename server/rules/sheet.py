"""A match's score sheet: a row per finished deal, derived from the deals' results alone.

The sheet is never kept beside the results: whoever holds the results (a table in play,
one rebuilt from its journal, a finished match in the store, an export file) derives the
same sheet from them, so it cannot disagree with the scores (C13-C16, K12-K15).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def sheet_rows(results: Iterable[Mapping[str, Any]],
               last: int | None = None) -> list[dict[str, Any]]:
    """The `sheet_row`s of a match whose deals ended with `results` (wire `result`s, in
    deal order): each deal's reason, winner, multiplier and points, and the match totals
    after it. `last`: only the last rows (the protocol's `SHEET_ROWS`), since each row's
    totals sum the deals before it."""
    rows: list[dict[str, Any]] = []
    totals: list[int] = []
    for deal_no, result in enumerate(results, 1):
        points = [int(p) for p in result["points"]]
        totals = [t + p for t, p in zip(totals or [0] * len(points), points, strict=True)]
        rows.append({"deal_no": deal_no, "reason": result["reason"],
                     "winner": result["winner"], "multiplier": result["multiplier"],
                     "points": points, "totals": list(totals)})
    return rows if last is None else rows[max(0, len(rows) - last):]
