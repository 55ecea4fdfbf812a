"""Finished matches, replayed: the export file, its checks, and the positions of a deal.

A match comes from the server's `replay` replies or from an exported file
(docs/replay.md); either way it is checked the same way before it is shown: the
summary and results against the protocol's shapes, every move replayed through the
rules engine (`pisyedili.server.rules`, pure Python and I/O-free) and the last
position's result compared with the one stored. So every position the viewer shows is
one the engine reached, every hand face up, and a tampered or damaged file is refused
with the place it went wrong rather than shown wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.shapes import MATCH_SUMMARY, RESULT
from pisyedili.server import rules as engine

from . import cards, render
from .i18n import _
from .render import Fragments, Look

FORMAT = "pisyedili-match"
VERSION = 1
"""The export format's version: bumped only when a reader of the old one could misread
the new one; fields may be added without it (readers ignore fields they do not know)."""

Msg = dict[str, Any]


class ReplayError(ValueError):
    """A match that cannot be replayed; the message says where and what is wrong."""


@dataclass(frozen=True)
class Position:
    """The deal after some of its moves: `deal` is the engine's state (every hand), and
    `move`/`seat`/`events` what the last move was, who made it and what it caused."""

    deal: engine.Deal
    move: Msg | None = None
    seat: int | None = None
    events: tuple[Msg, ...] = ()


@dataclass(frozen=True)
class MatchReplay:
    """A whole finished match: its `match_summary` and every deal's `deal_no`,
    `result` and `record` (all its moves), checked to replay to its results."""

    summary: Msg
    deals: tuple[Msg, ...]
    _positions: dict[int, list[Position]] = field(default_factory=dict, compare=False,
                                                  repr=False)

    @property
    def id(self) -> int:
        return int(self.summary["id"])

    def positions(self, index: int) -> list[Position]:
        """Every position of deal `index` (from 0): dealt, then after each move."""
        if index not in self._positions:
            self._positions[index] = _positions(self.deals[index]["record"])
        return self._positions[index]

    def totals_before(self, index: int) -> list[int]:
        """The match totals before deal `index` (from 0)."""
        totals = [0] * len(self.summary["players"])
        for deal in self.deals[:index]:
            totals = [t + p for t, p in zip(totals, deal["result"]["points"], strict=True)]
        return totals

    def sheet(self, deals: int) -> list[Msg]:
        """The score sheet of the match's first `deals` deals, from their results."""
        return engine.sheet_rows(d["result"] for d in self.deals[:deals])

    def names(self) -> dict[int, str]:
        """Seat → name, as the screen calls the seats: every one by name (no "you"), a
        bot account's marked as a bot's, a server bot named by its seat as at the table."""
        table = {"seats": [{"seat": p["seat"], "name": p["name"],
                            "kind": "bot" if p.get("kind") == "bot" else "human",
                            "bot": p.get("bot") is True}
                           for p in self.summary["players"]]}
        return render.seat_names(table, None)


def _positions(record_wire: Mapping[str, Any]) -> list[Position]:
    record = engine.DealRecord.from_wire(dict(record_wire))
    d = engine.deal_from_deck(record.options, record.dealer, list(record.deck), record.seed)
    out = [Position(d.copy())]
    for move in record.moves:
        seat = d.turn
        events = engine.apply(d, move)
        out.append(Position(d.copy(), engine.move_to_wire(move), seat, tuple(events)))
    return out


# -- building and checking ---------------------------------------------------------------


def _where(path: str, exc: Exception) -> ReplayError:
    text = exc.message if isinstance(exc, ProtocolError) else str(exc)
    return ReplayError(f"{path}: {text}" if path and not text.startswith(path) else text)


def check(summary: object, deals: object) -> MatchReplay:
    """A `MatchReplay` from plain data, or ReplayError naming the first thing wrong."""
    try:
        MATCH_SUMMARY.check(summary, "match")
    except ProtocolError as exc:
        raise _where("", exc) from None
    assert isinstance(summary, dict)
    if not isinstance(deals, list) or not deals:
        raise ReplayError("deals: must be a list of the match's deals, at least one")
    if len(deals) != summary["deals"]:
        raise ReplayError(f"deals: the match says {summary['deals']} deals were played, "
                          f"the file holds {len(deals)}")
    seats = len(summary["players"])
    if [p["seat"] for p in summary["players"]] != list(range(seats)):
        raise ReplayError("match.players: must list every seat once, in seat order")
    if summary["options"].get("players") not in (None, seats):
        raise ReplayError(f"match.options.players: says {summary['options']['players']}, "
                          f"the match has {seats} seats")
    checked: list[Msg] = []
    totals = [0] * seats
    for i, deal in enumerate(deals):
        path = f"deals[{i}]"
        checked.append(_check_deal(deal, i + 1, summary, path))
        totals = [t + p for t, p in zip(totals, deal["result"]["points"], strict=True)]
    if totals != [p["total"] for p in summary["players"]]:
        raise ReplayError(f"match.players: the totals {[p['total'] for p in summary['players']]}"
                          f" are not what the deals add up to, {totals}")
    return MatchReplay(dict(summary), tuple(checked))


def _check_deal(deal: object, number: int, summary: Msg, path: str) -> Msg:
    if not isinstance(deal, dict):
        raise ReplayError(f"{path}: must be a map with deal_no, result and record")
    if deal.get("deal_no") != number:
        raise ReplayError(f"{path}.deal_no: must be {number} (deals come in order, from 1)")
    try:
        RESULT.check(deal.get("result"), f"{path}.result")
    except ProtocolError as exc:
        raise _where(f"{path}.result", exc) from None
    wire = deal.get("record")
    try:
        record = engine.DealRecord.from_wire(wire)
    except (ValueError, TypeError) as exc:
        raise _where(f"{path}.record", exc) from None
    if record.options.rules != summary["rules"] or record.options.players != len(
            summary["players"]):
        raise ReplayError(f"{path}.record.options: a {record.options.rules} deal for "
                          f"{record.options.players}, in a {summary['rules']} match for "
                          f"{len(summary['players'])}")
    d = engine.deal_from_deck(record.options, record.dealer, list(record.deck), record.seed)
    for n, move in enumerate(record.moves):
        try:
            engine.apply(d, move)
        except engine.RuleError as exc:
            raise ReplayError(f"{path}.record.moves[{n}]: {engine.move_str(move)} cannot be "
                              f"played there: {exc.message}") from None
    if d.result is None:
        raise ReplayError(f"{path}.record.moves: the deal is not over after its "
                          f"{len(record.moves)} moves")
    if d.result.to_wire() != deal["result"]:
        raise ReplayError(f"{path}.result: the moves do not lead to this result (they lead "
                          f"to {json.dumps(d.result.to_wire())})")
    assert isinstance(wire, dict)
    return {"deal_no": number, "result": deal["result"], "record": wire}


def from_replies(replies: Sequence[Mapping[str, Any]]) -> MatchReplay:
    """A match from the server's `replay` replies: one or more pages per deal, in order."""
    if not replies:
        raise ReplayError(_("the server sent no deals"))
    summary = dict(replies[0]["match"])
    deals: list[Msg] = []
    for reply in replies:
        if reply["match"]["id"] != summary["id"]:
            raise ReplayError(_("the server's replies are of different matches"))
        if reply["from"] == 0:
            deals.append({"deal_no": reply["deal_no"], "result": reply["result"],
                          "record": {**reply["record"], "moves": list(reply["record"]["moves"])}})
        else:
            deals[-1]["record"]["moves"] += reply["record"]["moves"]
    return check(summary, deals)


# -- the file ------------------------------------------------------------------------------


def to_document(match: MatchReplay) -> Msg:
    """The export document (docs/replay.md): JSON kinds only."""
    return {"format": FORMAT, "version": VERSION, "match": match.summary,
            "deals": [dict(d) for d in match.deals]}


def from_document(data: object) -> MatchReplay:
    """A match from an export document, checked; ReplayError says what is wrong."""
    if not isinstance(data, dict):
        raise ReplayError(_("not a match export: the file must hold one JSON object"))
    if data.get("format") != FORMAT:
        raise ReplayError(_("not a match export: \"format\" must be {wanted}, not {found}",
                            wanted=repr(FORMAT), found=repr(data.get("format"))))
    version = data.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > VERSION
        fields = {"found": repr(version), "known": str(VERSION)}
        raise ReplayError(_("\"version\" {found} of the export format is not known here "
                            "(this program reads version {known}); a newer pisyedili wrote "
                            "it", **fields) if newer else
                          _("\"version\" {found} of the export format is not known here "
                            "(this program reads version {known})", **fields))
    return check(data.get("match"), data.get("deals"))


def save(match: MatchReplay, path: str | os.PathLike[str]) -> None:
    """Write the export file (UTF-8 JSON, one deal per line, readable in a diff)."""
    doc = to_document(match)
    deals = ",\n    ".join(json.dumps(d, ensure_ascii=False) for d in doc["deals"])
    head = {k: v for k, v in doc.items() if k != "deals"}
    text = json.dumps(head, ensure_ascii=False, indent=2)[:-2]
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"{text},\n  \"deals\": [\n    {deals}\n  ]\n}}\n")


def load(path: str | os.PathLike[str]) -> MatchReplay:
    """Read and check an export file; ReplayError (or OSError) says what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except UnicodeDecodeError as exc:
        raise ReplayError(_("not a match export: the file is not UTF-8 text ({why})",
                            why=exc.reason)) from None
    except json.JSONDecodeError as exc:
        raise ReplayError(_("not a match export: not JSON (line {line}, column {column}: "
                            "{why})", line=exc.lineno, column=exc.colno, why=exc.msg)) from None
    return from_document(data)


# -- stepping ------------------------------------------------------------------------------


class Viewer:
    """Where a person is in a match: a deal and a move of it, stepped either way."""

    def __init__(self, match: MatchReplay) -> None:
        self.match = match
        self.deal = 0
        """The deal shown, from 0."""
        self.step = 0
        """Moves of it made so far: 0 is the deal as dealt."""

    @property
    def positions(self) -> list[Position]:
        return self.match.positions(self.deal)

    @property
    def position(self) -> Position:
        return self.positions[self.step]

    @property
    def at_end(self) -> bool:
        return self.step == len(self.positions) - 1

    def next_move(self) -> bool:
        """One move on; at a deal's end, on to the next deal's start. False: the end."""
        if not self.at_end:
            self.step += 1
            return True
        return self.next_deal()

    def previous_move(self) -> bool:
        """One move back; at a deal's start, back to the previous deal's end."""
        if self.step:
            self.step -= 1
            return True
        if self.deal:
            self.deal -= 1
            self.step = len(self.positions) - 1
            return True
        return False

    def next_deal(self) -> bool:
        if self.deal + 1 >= len(self.match.deals):
            return False
        self.deal, self.step = self.deal + 1, 0
        return True

    def previous_deal(self) -> bool:
        """To the start of this deal, or of the one before when already there."""
        if self.step:
            self.step = 0
            return True
        if not self.deal:
            return False
        self.deal -= 1
        return True

    def goto_deal(self, number: int) -> bool:
        """To the start of deal `number` (from 1); False if there is none."""
        if not 1 <= number <= len(self.match.deals):
            return False
        self.deal, self.step = number - 1, 0
        return True

    def end_of_deal(self) -> None:
        self.step = len(self.positions) - 1




def sheet_lines(viewer: Viewer, look: Look, width: int = 80) -> list[Fragments]:
    """`/score` in a replay: the sheet up to the deal shown, that deal once it is over."""
    shown = viewer.deal + (1 if viewer.position.deal.over else 0)
    return render.score_sheet(viewer.match.sheet(shown), viewer.match.names(), look, width)


def replay_command(text: str, viewer: Viewer) -> str | None:
    """Act on one typed line in a replay; None when done, else a word for the player
    (a refusal, or `quit` to leave the replay)."""
    words = text.strip().lower().split()
    if not words or words[0] in ("n", "next"):
        return None if viewer.next_move() else _("This is the match's end (q leaves the "
                                                 "replay).")
    head = words[0]
    if head in ("b", "back", "prev", "previous"):
        return None if viewer.previous_move() else _("This is the match's start.")
    if head in ("nd", "]"):
        return None if viewer.next_deal() else _("This is the last deal.")
    if head in ("pd", "["):
        return None if viewer.previous_deal() else _("This is the first deal's start.")
    if head == "end":
        viewer.end_of_deal()
        return None
    if head in ("d", "deal") and len(words) == 2 and words[1].isdigit():
        if viewer.goto_deal(int(words[1])):
            return None
        return _("The match has deals 1 to {deals}.", deals=len(viewer.match.deals))
    if head in ("q", "quit"):
        return "quit"
    return _("In a replay: n next, b back, nd/pd next/previous deal, d N, end, q; /help "
             "replay.")


# -- the screen ----------------------------------------------------------------------------


def screen(viewer: Viewer, look: Look, width: int = 80) -> list[Fragments]:
    """The replay's status area: where we are, the table, every hand face up, the move
    just made and, at a deal's end, its result and the score sheet so far (and at the
    last one, the match's result)."""
    match, pos = viewer.match, viewer.position
    d = pos.deal
    view = engine.view(d, None)
    names = match.names()
    summary = match.summary
    deals = len(match.deals)
    moves = len(viewer.positions) - 1
    where = _("dealt") if not viewer.step else _("move {step} of {moves}", step=viewer.step,
                                                 moves=moves)
    head: list[Fragments] = [[("class:title", _("replay of match #{id}", id=summary["id"]))],
                             [("", render.rules_name(summary["rules"]))],
                             [("", _("deal {deal} of {deals}", deal=viewer.deal + 1,
                                     deals=deals))], [("", where)]]
    if not d.over:
        head += render.table_items(view, look)
    lines = render.flow([], head, width, render.sep(look), indent=2)
    totals = match.totals_before(viewer.deal)
    turn = d.to_act
    # At the deal's end the result shows every hand beside its points: not twice.
    for seat in range(0 if d.over else d.n):
        hand = cards.sort_hand([engine.CARD_STR[c] for c in d.hands[seat]])
        marker = ("▶ " if look.unicode else "> ") if seat == turn else "  "
        style = "class:turn" if seat == turn else ""
        label = marker + render.seat_line(names.get(seat, render.seat_label(seat)),
                                          render.cards_count(len(hand)),
                                          render.points_count(totals[seat]))
        items = [render.card(c, look) for c in hand] or [[("class:dim", _("(out)"))]]
        lines += render.flow([(style, label), ("", "  ")], items, width, " ",
                             indent=4)
    if view["phase"] == "muamele" and isinstance(view.get("muamele"), Mapping):
        lines += render.wrap(render.spread(view["muamele"], names, look), width)
    if pos.move is not None:
        said = [render.event(e, names, look, summary["rules"]) for e in pos.events
                if e.get("event") not in ("deal_end", "match_end")]
        shown = [line for line in said if line]
        if not shown:  # every move tells something; in case one does not, the move
            who = names.get(pos.seat, "?") if pos.seat is not None else "?"
            shown = [[("", f"{who}: "), *render.move(pos.move, look)]]
        lines += render.flow([("class:dim", _("last move: "))], shown, width, "; ", indent=4)
    if d.over:
        result = match.deals[viewer.deal]["result"]
        after = [t + p for t, p in zip(totals, result["points"], strict=True)]
        lines += [row for line in render.deal_result(result, after, names, look)
                  for row in render.wrap(line, width)]
        lines += [row for line in render.score_sheet(match.sheet(viewer.deal + 1), names,
                                                     look, width)
                  for row in render.wrap(line, width)]
        if viewer.deal + 1 == deals:
            lines += [row for line in render.match_result(after, summary["winners"], names,
                                                          can_rematch=False)
                      for row in render.wrap(line, width)]
    hint = (_("→/n next, ←/b back, PgDn/PgUp or nd/pd deals, d N, End, q leaves")
            if look.unicode else _("n next, b back, nd/pd deals, d N, end, q leaves"))
    lines += render.wrap([("class:dim", hint)], width)
    return lines
