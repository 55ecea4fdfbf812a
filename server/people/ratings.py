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
updates. New subjects start at the model's defaults (mu 25, sigma 25/3). Players read
a rating on a chess-like scale derived from mu and sigma (`rating_scale.py`), by which
the ladder sorts, settled ratings first; every seat is told its change
(`rating_change`) once the match is rated, and each rating keeps its history.

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
from pisyedili.server.people.rating_scale import PROVISIONAL_SIGMA, display, provisional
from pisyedili.server.store import Archive, Store, Viewer
from pisyedili.server.store.archive import not_kept
from pisyedili.server.table.effects import MatchOver, Message
from pisyedili.server.table.seats import bot_name

log = Logger()

MODEL = PlackettLuce()
"""The model with its defaults: ratings are comparable only under one set of them."""
DEFAULT_RULES = "classic"
RECENT = 10
HISTORY = 100
"""The points of a rating's history a profile shows: its latest rated matches."""

Rating = tuple[float, float]
"""(mu, sigma)."""


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
         now: float) -> dict[str, tuple[Rating, Rating]]:
    """Update the ratings of one rated match's `subjects` (by seat); each subject's
    (mu, sigma) before and after."""
    rows = store.ratings(match.rules, subjects)
    teams = [[MODEL.rating(*rows.get(subject, (None, None)))] for subject in subjects]
    rated = MODEL.rate(teams, ranks=ranks(match))
    before = {subject: (team[0].mu, team[0].sigma)
              for subject, team in zip(subjects, teams, strict=True)}
    by_subject: dict[str, list[Rating]] = defaultdict(list)
    for subject, (new,) in zip(subjects, rated, strict=True):
        by_subject[subject].append((new.mu, new.sigma))
    won = {subjects[seat] for seat in match.winners if not left(match.players[seat])}
    result = {}
    for subject, values in by_subject.items():
        mu = sum(v[0] for v in values) / len(values)
        sigma = sum(v[1] for v in values) / len(values)
        result[subject] = (before[subject], (mu, sigma))
        store.save_rating(match.rules, subject, mu, sigma, mu - 3 * sigma, subject in won,
                          now)
    return result


def rating_change(match: MatchOver, match_id: int, subjects: list[str],
                  changes: dict[str, tuple[Rating, Rating]]) -> Message:
    """The `rating_change` that tells a rated match's table how each seat's rating
    moved, as players read it (`rating_scale`)."""
    seats = []
    for player, subject in zip(match.players, subjects, strict=True):
        (mu, _), (new_mu, new_sigma) = changes[subject]
        seats.append({"seat": player["seat"], "name": player["name"], "before": display(mu),
                      "after": display(new_mu), "provisional": provisional(new_sigma)})
    return {"type": "rating_change", "table": match.table_id, "match": match_id,
            "rules": match.rules, "seats": seats}


def record(store: Store, match: MatchOver, accounts: dict[str, int],
           rated: bool) -> tuple[int, Message | None]:
    """Keep the match, then note its accounts and (rated) rate it; the match's id, and
    (rated) the `rating_change` for its table."""
    match_id = store.record_match(match)
    subjects = [subject_of(p, accounts) for p in match.players]
    told = None
    with store.transaction():
        store.note_match_accounts(match_id, [
            (p["seat"], accounts[p["name"]])
            for p in match.players if p["kind"] == "human" and p["name"] in accounts], rated)
        if rated:
            known = [s for s in subjects if s is not None]
            if len(known) == len(subjects):
                changes = rate(store, match, known, match.finished_at)
                told = rating_change(match, match_id, known, changes)
            else:  # cannot happen through the protocol: a guest cannot sit there
                log.warn("match {id}: a seat had no account; not rated", id=match_id)
    return match_id, told


def _scaled(mu: float, sigma: float) -> Message:
    """The fields every rating on the wire has: what players read (`display`,
    `provisional`) and the model's figures (`rating` for older clients)."""
    return {"display": display(mu), "provisional": provisional(sigma),
            "rating": round(mu - 3 * sigma, 3), "mu": round(mu, 3), "sigma": round(sigma, 3)}


def leaderboard(store: Store, rules: str, limit: int,
                everyone: bool = False) -> list[Message]:
    """The ladder's rows: settled ratings by `display`, then (`everyone`) the
    provisional ones."""
    out = []
    for rank, row in enumerate(store.ladder(rules, limit, PROVISIONAL_SIGMA, everyone), 1):
        entry: Message = {"rank": rank, **_scaled(row.mu, row.sigma),
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
    subject = f"a:{account}"
    ratings = [{"rules": r.rules, **_scaled(r.mu, r.sigma), "matches": r.matches,
                "wins": r.wins, "rank": r.above + 1,
                "history": [{"at": p.at, "display": display(p.mu)}
                            for p in store.rating_history(subject, r.rules, HISTORY)]}
               for r in store.ratings_of(subject, PROVISIONAL_SIGMA)]
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

    def on_match(self, match: MatchOver) -> Deferred[Message | None]:
        """Keep `match` (and rate it); what its table is to be told then: the
        `rating_change` of a rated match, None for a casual one or a failure (logged)."""
        rated = match.rated
        seated = {}
        for p in match.players:
            account = self._accounts.find(p["name"]) if p["kind"] == "human" else None
            if account is not None and account.name == p["name"]:
                seated[p["name"]] = account.id

        def kept(done: tuple[int, Message | None]) -> Message | None:
            log.info("store: match {id} kept (table {table}, rated={rated})",
                     id=done[0], table=match.table_id, rated=rated)
            return done[1]

        d = self._archive.use(lambda store: record(store, match, seated, rated))
        return d.addCallbacks(kept, lambda f: not_kept(f, match.table_id))

    def account(self, name: str) -> Account | None:
        """The account a `profile` asks for by name (or a look-alike of it)."""
        return self._accounts.find(name)


def leaderboard_page(store: Store, rules: str, limit: int,
                     everyone: bool = False) -> Message:
    """The `leaderboard` answer, read on the store's thread."""
    return {"type": "leaderboard", "rules": rules,
            "rows": leaderboard(store, rules, limit, everyone)}


def profile_page(store: Store, account_id: int, name: str, viewer: Viewer,
                 bot: bool = False) -> Message:
    """The `profile` answer, read on the store's thread."""
    return profile(store, account_id, name, viewer, bot)
