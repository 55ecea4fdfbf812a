"""Ratings: OpenSkill (Plackett-Luce) per rule set, for registered players and bot levels.
A bot account (`register.bot`: a program playing through its own connection) is rated
as any account is, beside the server's levels; the ladder marks its row `bot`.

A table is rated or casual, chosen when it is opened (`create_table.rated`); a rated
table seats registered players and bots only. When a rated match ends, its final
ranking (lower match total is better, C16 and K15; equal totals share a place) updates
the rating of every seat's subject: the account (`a:<id>`) or the bot level
(`bot:<level>`), so the ladder itself shows how strong each level plays.

Leaving a rated match before its end is a forfeit, as resigning is (lichess: leaving
is resigning): a seat whose player left (`left_at`: `leave_table`, or away past the
grace period and not back by the end) ranks below every seat that played on, whatever
the server bot that finished it scored, and an earlier leaver below a later one. Its
account never counts the match as won. Otherwise a leaver would be rated for the
bot's play, and the players who played on would lose rating to a bot. A level that
holds several seats of one match is one subject: it takes the mean of its seats'
updates. New subjects start at the model's defaults (mu 25, sigma 25/3); the ladder
sorts by the conservative estimate mu - 3 sigma (`ordinal`).

The update runs on the store's thread right after the match is recorded, in the same
call (its own transaction: the match's rows commit first, so a failed rating update
never loses the match; it is logged). Every match, rated or casual, notes which seats
were held by which accounts (`match_accounts`): a profile lists its player's matches
by account, not by name.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from openskill.models import PlackettLuce
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from pisyedili.server.people.accounts import Account, Accounts
from pisyedili.server.store import Archive, Store, Viewer
from pisyedili.server.table.effects import MatchOver, Message
from pisyedili.server.table.seats import bot_name

log = Logger()

MODEL = PlackettLuce()
"""The model with its defaults: ratings are comparable only under one set of them."""
DEFAULT_RULES = "classic"
RECENT = 10


def subject_of(player: dict[str, Any], accounts: dict[str, int]) -> str | None:
    """The rated subject of one seat of `MatchOver.players`, None for a guest."""
    if player["kind"] == "bot":
        return f"bot:{player['level']}"
    account = accounts.get(player["name"])
    return None if account is None else f"a:{account}"


def left(player: dict[str, Any]) -> bool:
    """Whether a seat of `MatchOver.players` (or a kept match's) was left mid-match."""
    return player.get("left_at") is not None


def ranks(match: MatchOver) -> list[float]:
    """Each seat's place in the rated result, 0 first: the seats that played on by
    their totals (equal totals share a place), then those that were left, the latest
    leaver first (equal times share a place)."""
    keys = [(1, -player["left_at"]) if left(player) else (0, match.totals[player["seat"]])
            for player in match.players]
    places = {key: place for place, key in enumerate(sorted(set(keys)))}
    return [float(places[key]) for key in keys]


def rate(store: Store, match: MatchOver, subjects: list[str],
         now: float) -> dict[str, tuple[float, float]]:
    """Update the ratings of one rated match's `subjects` (by seat); the new (mu, sigma)."""
    rows = store.ratings(match.rules, subjects)
    teams = [[MODEL.rating(*rows.get(subject, (None, None)))] for subject in subjects]
    rated = MODEL.rate(teams, ranks=ranks(match))
    by_subject: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for subject, (new,) in zip(subjects, rated, strict=True):
        by_subject[subject].append((new.mu, new.sigma))
    won = {subjects[seat] for seat in match.winners if not left(match.players[seat])}
    result = {}
    for subject, values in by_subject.items():
        mu = sum(v[0] for v in values) / len(values)
        sigma = sum(v[1] for v in values) / len(values)
        result[subject] = (mu, sigma)
        store.save_rating(match.rules, subject, mu, sigma, mu - 3 * sigma, subject in won,
                          now)
    return result


def record(store: Store, match: MatchOver, accounts: dict[str, int], rated: bool) -> int:
    """Keep the match, then note its accounts and (rated) rate it; the match's id."""
    match_id = store.record_match(match)
    subjects = [subject_of(p, accounts) for p in match.players]
    with store.transaction():
        store.note_match_accounts(match_id, [
            (p["seat"], accounts[p["name"]])
            for p in match.players if p["kind"] == "human" and p["name"] in accounts], rated)
        if rated:
            known = [s for s in subjects if s is not None]
            if len(known) == len(subjects):
                rate(store, match, known, match.finished_at)
            else:  # cannot happen through the protocol: a guest cannot sit there
                log.warn("match {id}: a seat had no account; not rated", id=match_id)
    return match_id


def leaderboard(store: Store, rules: str, limit: int) -> list[Message]:
    out = []
    for rank, row in enumerate(store.ladder(rules, limit), 1):
        entry: Message = {"rank": rank, "rating": round(row.ordinal, 3),
                          "mu": round(row.mu, 3), "sigma": round(row.sigma, 3),
                          "matches": row.matches, "wins": row.wins}
        if row.subject.startswith("bot:"):
            level = row.subject[4:]
            entry.update(name=bot_name(level), kind="bot", level=level)
        else:
            entry.update(name=row.name or "?", kind="player")
            if row.bot:
                entry["bot"] = True
        out.append(entry)
    return out


def profile(store: Store, account: int, name: str, viewer: Viewer,
            bot: bool = False) -> Message:
    """An account's ratings and kept matches as `viewer` may see them: its private
    matches count and show only for a viewer who played them too (`Store.account_matches`).
    `bot`: it is a bot's account, which the answer says."""
    ratings = [{"rules": r.rules, "rating": round(r.ordinal, 3), "mu": round(r.mu, 3),
                "sigma": round(r.sigma, 3), "matches": r.matches, "wins": r.wins,
                "rank": r.above + 1} for r in store.ratings_of(f"a:{account}")]
    matches = wins = 0
    recent: list[Message] = []
    for m in store.account_matches(account, viewer):
        won = m.seat in m.winners and not any(
            left(p) for p in m.players if p["seat"] == m.seat)
        matches += 1
        wins += won
        if len(recent) < RECENT:
            recent.append({"id": m.id, "rules": m.rules, "finished_at": m.finished_at,
                           "rated": m.rated, "seat": m.seat, "total": m.totals[m.seat],
                           "won": won, "players": [p["name"] for p in m.players]})
    return {"type": "profile", "name": name, "ratings": ratings, "matches": matches,
            "wins": wins, "recent": recent, **({"bot": True} if bot else {})}


class Ratings:
    """The lobby's `on_match`: keeps each match (rating the rated ones) on the store's
    thread, and answers `leaderboard` and `profile` from there."""

    def __init__(self, archive: Archive, accounts: Accounts) -> None:
        self._archive = archive
        self._accounts = accounts

    def on_match(self, match: MatchOver) -> Deferred[Any]:
        rated = match.rated
        seated = {}
        for p in match.players:
            account = self._accounts.find(p["name"]) if p["kind"] == "human" else None
            if account is not None and account.name == p["name"]:
                seated[p["name"]] = account.id
        d = self._archive.use(lambda store: record(store, match, seated, rated))
        d.addCallbacks(
            lambda match_id: log.info("store: match {id} kept (table {table}, rated={rated})",
                                      id=match_id, table=match.table_id, rated=rated),
            lambda f: log.failure("store: match at table {table} not kept", f,
                                  table=match.table_id))
        return d

    def account(self, name: str) -> Account | None:
        """The account a `profile` asks for by name (or a look-alike of it)."""
        return self._accounts.find(name)


def leaderboard_page(store: Store, rules: str, limit: int) -> Message:
    """The `leaderboard` answer, read on the store's thread."""
    return {"type": "leaderboard", "rules": rules, "rows": leaderboard(store, rules, limit)}


def profile_page(store: Store, account_id: int, name: str, viewer: Viewer,
                 bot: bool = False) -> Message:
    """The `profile` answer, read on the store's thread."""
    return profile(store, account_id, name, viewer, bot)
