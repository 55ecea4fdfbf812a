"""Moderation: what an operator may do to a player, and how it sticks.

Operators are accounts: flagged in the store (`pisyedili-server operator add NAME`) or
named in the server's configuration (`--operator NAME`). They may kick a player, mute
one (no chat), ban an account or an address range, close a table and send every
connected player an announcement. A ban or mute may be timed (`minutes`) or stand
until lifted; both are kept in the store (`sanctions`), read back at start, so they
survive a restart. Every action is written to `moderation_log` and the server log with
the operator's name. Anyone else asking gets `not_operator`.

The server says what it did: the `ok` answering an operator carries `done`, the action
in words ("kicked Troll: spam"), and the other members of a kicked or banned player's
table get `player_removed`, so they do not just see a bot take the seat.

A guest has no account to hold a sanction: muting one mutes its session (for as long as
the session lives, a restart included), and banning one by name bans its address (an
IPv4 address, or its IPv6 /64: what the server counts connections by).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from pisyedili.server.clock import Clock
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.session import Session
from pisyedili.server.store import Archive, SanctionRow, Store

log = Logger()

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Sanction(SanctionRow):
    """A ban or mute in force: the store's row, and what it covers."""

    __slots__ = ()

    def active(self, now: float) -> bool:
        return self.expires_at is None or self.expires_at > now

    def covers_network(self, key: str) -> bool:
        """Whether this ban covers the address key `key` (limits.address_key)."""
        if self.network is None:
            return False
        try:
            mine = ipaddress.ip_network(self.network, strict=False)
            theirs = ipaddress.ip_network(key, strict=False)
        except ValueError:
            return False
        return mine.version == theirs.version and mine.overlaps(theirs)


@dataclass(frozen=True)
class Gathered:
    """What the other processes did of an act told to each of them: each one's answer
    (its counts), the live ones that did not answer in time, and whether they could be
    asked at all (not while the cluster is out of reach: each reads the sanctions from
    the shared store again once it is back). A process alone has nobody to ask."""

    answers: tuple[dict[str, Any], ...] = ()
    silent: tuple[str, ...] = ()
    reached: bool = True

    def total(self, key: str) -> int:
        """The sum of one count over the answers."""
        return sum(int(answer.get(key, 0)) for answer in self.answers)

    def said(self) -> str:
        """What the operator is told of the processes that did not answer: their
        share of the counts is missing."""
        if not self.reached:
            return ("; the other processes could not be asked (the cluster is out of "
                    "reach): they apply it once it is back")
        if not self.silent:
            return ""
        which = "process" if len(self.silent) == 1 else "processes"
        return f"; {which} {', '.join(self.silent)} did not answer in time (not counted)"


ALONE = Gathered()


def load(store: Store, now: float) -> list[Sanction]:
    """The bans and mutes in force at `now`."""
    return [Sanction(*row) for row in store.sanctions_in_force(now)]


def _keep(store: Store, s: Sanction, at: float, action: str, target: str,
          detail: str) -> None:
    with store.transaction():
        store.add_sanction(s, at)
        store.log_action(at, s.by, action, target, detail)


def _lift(store: Store, kind: str, account: int | None, player_id: int | None,
          network: str | None, at: float, by: str, target: str) -> None:
    with store.transaction():
        store.lift_sanctions(kind, account, player_id, network, at)
        store.log_action(at, by, "un" + kind, target, "")


def until(expires_at: float | None) -> str:
    """How long a sanction stands, in words."""
    if expires_at is None:
        return "until lifted"
    import datetime

    when = datetime.datetime.fromtimestamp(expires_at, datetime.UTC)
    return f"until {when:%Y-%m-%d %H:%M} UTC"


class Moderation:
    """Sanctions in force (in memory, kept in the store) and the operator requests."""

    def __init__(self, archive: Archive, accounts: Accounts, clock: Clock,
                 loaded: list[Sanction] | None = None) -> None:
        self._archive = archive
        self._accounts = accounts
        self._clock = clock
        self.sanctions = list(loaded or ())
        accounts.ban_check = self.account_banned
        self.tell: Callable[[dict[str, Any]], Deferred[Gathered]] | None = None
        """Tells the other processes that share this store of a sanction put in force
        or lifted here (`heard` there), when there are any: what each did of it."""

    def _active(self, kind: str) -> list[Sanction]:
        now = self._clock.seconds()
        self.sanctions = [s for s in self.sanctions if s.active(now)]
        return [s for s in self.sanctions if s.kind == kind]

    # -- checks (the network's hooks: hello, chat, login) ---------------------------------

    def account_banned(self, account: int) -> str | None:
        ban = next((s for s in self._active("ban") if s.account == account), None)
        return None if ban is None else f"this account is banned {until(ban.expires_at)}" \
            + (f": {ban.reason}" if ban.reason else "")

    def address_banned(self, key: str) -> str | None:
        ban = next((s for s in self._active("ban") if s.covers_network(key)), None)
        return None if ban is None else f"your address is banned {until(ban.expires_at)}" \
            + (f": {ban.reason}" if ban.reason else "")

    def muted(self, session: Session) -> str | None:
        mute = next((s for s in self._active("mute")
                     if (s.account is not None and s.account == session.account)
                     or (s.player_id is not None and str(s.player_id) == session.player_id)),
                    None)
        return None if mute is None else f"you are muted {until(mute.expires_at)}"

    # -- helpers ----------------------------------------------------------------------

    def _store(self, fn: Callable[..., None], *args: Any) -> Deferred[None]:
        """`fn(store, *args)` on the store's thread."""
        return self._archive.use(lambda store: fn(store, *args))

    def expiry(self, minutes: float | None) -> float | None:
        """When a sanction of `minutes` (None: until lifted) ends."""
        return None if minutes is None else self._clock.seconds() + 60.0 * minutes

    def keep(self, sanction: Sanction, action: str, target: str,
             detail: str) -> tuple[Deferred[Any], Deferred[Gathered]]:
        """Put `sanction` in force: in memory now, in the logs, in the store (the first
        Deferred fires once it is kept there) and in the other processes (the second,
        once they said what they did of it: a ban's connections closed there)."""
        self.sanctions.append(sanction)
        _logged(sanction.by, action, target, detail)
        told = self._told({"op": "keep", "s": list(sanction)})
        return (self._store(_keep, sanction, self._clock.seconds(), action, target, detail),
                told)

    def _told(self, message: dict[str, Any]) -> Deferred[Gathered]:
        return succeed(ALONE) if self.tell is None else self.tell(message)

    def lift(self, kind: str, account: int | None, player: int | None,
             network: str | None, by: str, target: str
             ) -> tuple[bool, Deferred[Gathered]]:
        """Lift the sanctions of `kind` on that target: in memory, in the store, in the
        logs, in the other processes; whether there was one, and the store's write (it
        fires once the other processes answered too, with what they said)."""
        lifted = self._lifted(kind, account, player, network)
        _logged(by, "un" + kind, target, "lifted" if lifted else "none in force")
        told = self._told({"op": "lift", "s": [kind, account, player, network]})
        written = self._store(_lift, kind, account, player, network,
                              self._clock.seconds(), by, target)
        kept: Deferred[Gathered] = written.addCallback(lambda _: told)
        return lifted, kept

    def _lifted(self, kind: str, account: int | None, player: int | None,
                network: str | None) -> bool:
        before = len(self.sanctions)
        self.sanctions = [x for x in self.sanctions if not (
            x.kind == kind and x.account == account and x.player_id == player
            and x.network == network)]
        return len(self.sanctions) < before

    def reload(self) -> Deferred[list[Sanction]]:
        """The sanctions in force read from the store again (a change told while the
        others could not be reached was kept there all the same); those new here."""
        def read(store: Store) -> list[Sanction]:
            return load(store, self._clock.seconds())

        def replace(found: list[Sanction]) -> list[Sanction]:
            known = set(self.sanctions)
            self.sanctions = found
            return [s for s in found if s not in known]

        read_back: Deferred[list[Sanction]] = self._archive.use(read)
        return read_back.addCallback(replace)

    def heard(self, message: dict[str, Any]) -> Sanction | None:
        """A sanction put in force (returned) or lifted by another process on the same
        store, which keeps it there: in force here too from now on."""
        if message["op"] == "lift":
            self._lifted(*message["s"])
            return None
        sanction = Sanction(*message["s"])
        self.sanctions.append(sanction)
        return sanction

    def log_action(self, by: str, action: str, target: str, detail: str) -> Deferred[Any]:
        _logged(by, action, target, detail)
        now = self._clock.seconds()
        return self._archive.use(lambda store: store.log_action(now, by, action, target,
                                                                detail))


def _logged(by: str, action: str, target: str, detail: str) -> None:
    """The server log's line for a moderation action: every one, lifts included."""
    log.info("operator {by!r}: {action} {target} ({detail})", by=by, action=action,
             target=target, detail=detail)
