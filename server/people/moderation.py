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

A kick keeps its player out for `kick_seconds` (`--kick-seconds`), so that it is not a
reconnect away from its seat: the account (refused at `login`), or a guest's address
(refused at `hello`), with `kicked`. It is a sanction of its own kind, kept and shared
like a ban. Every refusal and closing error of a sanction carries its `reason` (if the
operator gave one) and `retry_after` (the seconds it has left; absent: until lifted), and
a muted session is told at once (`muted`), so a player always knows why and for how long.
"""

from __future__ import annotations

import datetime
import ipaddress
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.clock import Clock
from pisyedili.server.people.session import Session
from pisyedili.server.store import Archive, SanctionRow, Store
from pisyedili.server.store.base import Unreachable

log = Logger()


def _kick_not_kept(failure: Failure) -> None:
    """A kick the store could not keep: it holds here all the same, until it ends (or
    this process stops). The store out of reach is an outage, said with its message;
    anything else a defect, with its traceback."""
    error = failure.value
    if isinstance(error, Unreachable):
        log.warn("a kick could not be kept in the store ({why}): it holds in this "
                 "process's memory until it ends", why=str(error))
    else:
        log.failure("keeping a kick", failure)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


KICK_SECONDS = 300.0
"""How long a kick keeps its player out by default: long enough that reconnecting at
once does not undo it, short enough to stay a warning (a ban is for longer)."""


class Sanction(SanctionRow):
    """A ban, mute or kick in force: the store's row, and what it covers."""

    __slots__ = ()

    def active(self, now: float) -> bool:
        return self.expires_at is None or self.expires_at > now

    def covers_account(self, account: int | None) -> bool:
        return self.account is not None and self.account == account

    def said(self, now: float) -> dict[str, Any]:
        """The fields a player is told it by: `reason` if there is one, `retry_after`
        (whole seconds left, at least 1) unless it stands until lifted."""
        fields: dict[str, Any] = {}
        if self.reason:
            fields["reason"] = self.reason
        if self.expires_at is not None:
            fields["retry_after"] = max(1, math.ceil(self.expires_at - now))
        return fields

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


def _kept_out(store: Store, s: Sanction, at: float) -> None:
    with store.transaction():
        store.add_sanction(s, at)


def _lift(store: Store, kind: str, account: int | None, player_id: int | None,
          network: str | None, at: float, by: str, target: str) -> None:
    with store.transaction():
        store.lift_sanctions(kind, account, player_id, network, at)
        store.log_action(at, by, "un" + kind, target, "")


def until(expires_at: float | None) -> str:
    """How long a sanction stands, in words."""
    if expires_at is None:
        return "until lifted"
    when = datetime.datetime.fromtimestamp(expires_at, datetime.UTC)
    return f"until {when:%Y-%m-%d %H:%M} UTC"


class SanctionsElsewhere(Protocol):
    """The other processes that share this store (`net/relay.py`)."""

    def tell_sanction(self, message: dict[str, Any]) -> Deferred[Gathered]:
        """A sanction put in force or lifted here, told to each (`heard` there): what
        each did of it."""


class Moderation:
    """Sanctions in force (in memory, kept in the store) and the operator requests."""

    def __init__(self, archive: Archive, clock: Clock,
                 loaded: list[Sanction] | None = None,
                 kick_seconds: float = KICK_SECONDS, *,
                 elsewhere: SanctionsElsewhere | None = None) -> None:
        """Its `account_banned` is what `Accounts` checks a login with."""
        self._archive = archive
        self._clock = clock
        self.kick_seconds = kick_seconds
        self.sanctions = list(loaded or ())
        self._elsewhere = elsewhere
        """The other processes that share this store, when there are any."""

    def _active(self, kind: str) -> list[Sanction]:
        now = self._clock.seconds()
        self.sanctions = [s for s in self.sanctions if s.active(now)]
        return [s for s in self.sanctions if s.kind == kind]

    # -- checks (the network's hooks: hello, chat, login) ---------------------------------

    def account_banned(self, account: int) -> ProtocolError | None:
        """The refusal of a login to `account`: banned, or kept out after a kick."""
        ban = next((s for s in self._active("ban") if s.covers_account(account)), None)
        if ban is not None:
            return ProtocolError("banned", _worded(ban, "this account is banned"),
                                 **self._said(ban))
        kick = next((s for s in self._active("kick") if s.covers_account(account)), None)
        return None if kick is None else self.kept_out(kick)

    def address_banned(self, key: str) -> ProtocolError | None:
        """The refusal of a `hello` from the address key `key`: banned, or a guest's
        address kept out after a kick."""
        ban = next((s for s in self._active("ban") if s.covers_network(key)), None)
        if ban is not None:
            return ProtocolError("banned", _worded(ban, "your address is banned"),
                                 **self._said(ban))
        kick = next((s for s in self._active("kick") if s.covers_network(key)), None)
        return None if kick is None else self.kept_out(kick)

    def kept_out(self, kick: Sanction) -> ProtocolError:
        """`kicked`: the refusal of a kicked player back too soon, or its kick's own."""
        assert kick.expires_at is not None  # a kick always ends
        when = datetime.datetime.fromtimestamp(kick.expires_at, datetime.UTC)
        return ProtocolError("kicked", f"an operator removed you from the server; you may "
                             f"come back after {when:%H:%M} UTC" + _with(kick.reason),
                             **self._said(kick))

    def _said(self, sanction: Sanction) -> dict[str, Any]:
        return sanction.said(self._clock.seconds())

    def muted(self, session: Session) -> ProtocolError | None:
        mute = next((s for s in self._active("mute")
                     if (s.account is not None and s.account == session.account)
                     or (s.player_id is not None and str(s.player_id) == session.player_id)),
                    None)
        return None if mute is None else ProtocolError(
            "muted", _worded(mute, "you are muted"), **self._said(mute))

    def kick(self, account: int | None, address: str, reason: str, by: str,
             spare: str | None = None) -> Sanction | None:
        """Keep a kicked player out for `kick_seconds`: its account, or a guest's
        address; in memory now, in the store and the other processes soon (the kick
        itself is logged by the operator's process, once). A guest at the operator's
        own address (`spare`) is not kept out (None): the operator would be too."""
        network = None if account is not None else str(
            ipaddress.ip_network(address, strict=False))
        sanction = Sanction("kick", account, None, network, reason, by,
                            self._clock.seconds() + self.kick_seconds)
        if spare is not None and sanction.covers_network(spare):
            log.info("the kick by {by!r} keeps nobody out: the guest shares the "
                     "operator's address {address}", by=by, address=network)
            return None
        self.sanctions.append(sanction)
        self._told({"op": "keep", "s": list(sanction)})
        written = self._store(_kept_out, sanction, self._clock.seconds())
        written.addErrback(_kick_not_kept)
        return sanction

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
        return succeed(ALONE) if self._elsewhere is None \
            else self._elsewhere.tell_sanction(message)

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


def _worded(sanction: Sanction, what: str) -> str:
    """`what` (a ban, a mute), until when and why, in words."""
    return f"{what} {until(sanction.expires_at)}{_with(sanction.reason)}"


def _with(reason: str) -> str:
    return f": {reason}" if reason else ""


def _logged(by: str, action: str, target: str, detail: str) -> None:
    """The server log's line for a moderation action: every one, lifts included."""
    log.info("operator {by!r}: {action} {target} ({detail})", by=by, action=action,
             target=target, detail=detail)
