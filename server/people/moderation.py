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
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.clock import Clock
from pisyedili.server.people import names
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.session import Session
from pisyedili.server.store import Archive, SanctionRow, Store
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection, Replier, ServerFactory

log = Logger()

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass
class Sanction:
    kind: str  # "ban" or "mute"
    account: int | None
    player_id: int | None
    network: str | None
    reason: str
    by: str
    expires_at: float | None

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


def load(store: Store, now: float) -> list[Sanction]:
    """The bans and mutes in force at `now`."""
    return [Sanction(*row) for row in store.sanctions_in_force(now)]


def _keep(store: Store, s: Sanction, at: float, action: str, target: str,
          detail: str) -> None:
    with store.transaction():
        store.add_sanction(SanctionRow(s.kind, s.account, s.player_id, s.network, s.reason,
                                       s.by, s.expires_at), at)
        store.log_action(at, s.by, action, target, detail)


def _lift(store: Store, kind: str, account: int | None, player_id: int | None,
          network: str | None, at: float, by: str, target: str) -> None:
    with store.transaction():
        store.lift_sanctions(kind, account, player_id, network, at)
        store.log_action(at, by, "un" + kind, target, "")


def _until(expires_at: float | None) -> str:
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

    def _active(self, kind: str) -> list[Sanction]:
        now = self._clock.seconds()
        self.sanctions = [s for s in self.sanctions if s.active(now)]
        return [s for s in self.sanctions if s.kind == kind]

    # -- checks (net.py's hooks) ----------------------------------------------------------

    def account_banned(self, account: int) -> str | None:
        ban = next((s for s in self._active("ban") if s.account == account), None)
        return None if ban is None else f"this account is banned {_until(ban.expires_at)}" \
            + (f": {ban.reason}" if ban.reason else "")

    def address_banned(self, key: str) -> str | None:
        ban = next((s for s in self._active("ban") if s.covers_network(key)), None)
        return None if ban is None else f"your address is banned {_until(ban.expires_at)}" \
            + (f": {ban.reason}" if ban.reason else "")

    def muted(self, session: Session) -> str | None:
        mute = next((s for s in self._active("mute")
                     if (s.account is not None and s.account == session.account)
                     or (s.player_id is not None and str(s.player_id) == session.player_id)),
                    None)
        return None if mute is None else f"you are muted {_until(mute.expires_at)}"

    # -- helpers ----------------------------------------------------------------------

    def _store(self, fn: Callable[..., None], *args: Any) -> Deferred[None]:
        """`fn(store, *args)` on the store's thread."""
        return self._archive.use(lambda store: fn(store, *args))

    def _expiry(self, msg: Message) -> float | None:
        minutes = msg.get("minutes")
        return None if minutes is None else self._clock.seconds() + 60.0 * minutes

    def _keep(self, conn: Connection, sanction: Sanction, action: str, target: str,
              detail: str, reply: Replier, done: str) -> None:
        self.sanctions.append(sanction)
        _logged(sanction.by, action, target, detail)
        self._answer(conn, self._store(_keep, sanction, self._clock.seconds(), action,
                                       target, detail), reply, done)

    def _lift(self, conn: Connection, kind: str, account: int | None, player: int | None,
              network: str | None, by: str, target: str, reply: Replier) -> None:
        """Lift the sanctions of `kind` on that target: in memory, in the store, in the
        logs, and say whether there was one."""
        before = len(self.sanctions)
        self.sanctions = [x for x in self.sanctions if not (
            x.kind == kind and x.account == account and x.player_id == player
            and x.network == network)]
        lifted = len(self.sanctions) < before
        _logged(by, "un" + kind, target, "lifted" if lifted else "none in force")
        done = _UNDONE[kind]
        self._answer(conn, self._store(_lift, kind, account, player, network,
                                       self._clock.seconds(), by, target), reply,
                     f"{done} {target}" if lifted
                     else f"{target} had no {kind} in force; nothing to lift")

    @staticmethod
    def _answer(conn: Connection, written: Deferred[Any], reply: Replier,
                done: str) -> None:
        """`ok` once the store has it: an action answered is one a restart keeps. `done`
        says what was done, for the operator's screen. The operator's later requests
        wait for it (`Connection.answer_later`)."""
        ok: Message = {"type": "ok", "done": done}
        conn.answer_later(written.addCallback(lambda _: ok), reply,
                          "the action took effect but could not be kept")

    def log_action(self, by: str, action: str, target: str, detail: str) -> Deferred[Any]:
        _logged(by, action, target, detail)
        now = self._clock.seconds()
        return self._archive.use(lambda store: store.log_action(now, by, action, target,
                                                                detail))


_UNDONE = {"mute": "unmuted", "ban": "unbanned"}


def _logged(by: str, action: str, target: str, detail: str) -> None:
    """The server log's line for a moderation action: every one, lifts included."""
    log.info("operator {by!r}: {action} {target} ({detail})", by=by, action=action,
             target=target, detail=detail)


def _with(reason: str) -> str:
    return f": {reason}" if reason else ""


def _online(factory: ServerFactory, name: str) -> Session | None:
    wanted = set(names.keys(name))
    return next((s for s in factory.sessions.each() if wanted & set(names.keys(s.name))),
                None)


def _connections_of(factory: ServerFactory, session: Session) -> list[Connection]:
    return [p for p in factory.protocols if p.session is session]


def _tell_table(factory: ServerFactory, session: Session, action: str, reason: str) -> None:
    """Tell the other members of `session`'s table that an operator removed it, before
    it leaves: otherwise they would only see a bot take the seat."""
    table = session.table
    if table is None or table.closed:
        return
    notice: Message = {"type": "player_removed", "table": table.id, "name": session.name,
                       "seat": table.core.seat_of(session.player_id), "action": action}
    if reason:
        notice["reason"] = reason
    for member in table.core.members():
        other = factory.sessions.by_id(member)
        if other is not None and other is not session:
            other.send(notice)


def end_session(factory: ServerFactory, session: Session) -> None:
    """Forget the session, whose connection was told why and closed (its seat passes to
    a bot mid-match, as for anyone who leaves)."""
    factory.lobby.unsubscribe(session)
    factory.sessions.forget(session)


def _operator(conn: Connection, s: Session) -> Moderation:
    moderation = conn.server.moderation
    accounts = conn.server.accounts
    if "moderation" not in conn.features:
        raise ProtocolError("feature_not_negotiated", "say features: ['moderation'] in hello "
                            "to use this", feature="moderation")
    if moderation is None or accounts is None or not accounts.is_operator(s.account):
        raise ProtocolError("not_operator", "only a server operator may do this")
    return moderation


def _network(text: str) -> str:
    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise ProtocolError("bad_network", f"{text[:64]!r} is not an IP address or range",
                            field="network") from None


def _reason(msg: Message) -> str:
    return str(msg.get("reason", "")).strip()


def handle_kick(conn: Connection, s: Session, msg: Message,
                reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    target = _online(conn.server, msg["name"])
    if target is None or target is s:
        raise ProtocolError("no_such_player", f"nobody named {msg['name']!r} is here")
    reason = _reason(msg)
    _tell_table(conn.server, target, "kick", reason)
    for proto in _connections_of(conn.server, target):
        proto.close("kicked", "an operator removed you from the server" + _with(reason))
    end_session(conn.server, target)
    moderation._answer(conn, moderation.log_action(s.name, "kick", target.name, reason), reply,
                       f"kicked {target.name}{_with(reason)}")
    return None


def _target(conn: Connection, moderation: Moderation,
            name: str) -> tuple[int | None, Session | None, str]:
    """The account of `name`, or failing that the connected guest of that name; and the
    name as it is spelled (the operator may have typed a look-alike)."""
    account = moderation._accounts.find(name)
    if account is not None:
        return account.id, moderation._accounts.session_of(account.id), account.name
    session = _online(conn.server, name)
    if session is None:
        raise ProtocolError("no_such_player", f"nobody named {name!r} is here, and no "
                            "account has that name")
    return session.account, session, session.name


def handle_mute(conn: Connection, s: Session, msg: Message,
                reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    account, session, name = _target(conn, moderation, msg["name"])
    player = None if account is not None or session is None else int(session.player_id)
    reason = _reason(msg)
    sanction = Sanction("mute", account, player, None, reason, s.name,
                        moderation._expiry(msg))
    until = _until(sanction.expires_at)
    moderation._keep(conn, sanction, "mute", msg["name"], until, reply,
                     f"muted {name} {until}{_with(reason)}")
    return None


def handle_unmute(conn: Connection, s: Session, msg: Message,
                  reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    account, session, name = _target(conn, moderation, msg["name"])
    player = None if account is not None or session is None else int(session.player_id)
    moderation._lift(conn, "mute", account, player, None, s.name, name, reply)
    return None


def handle_ban(conn: Connection, s: Session, msg: Message,
               reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    reason = _reason(msg)
    expires = moderation._expiry(msg)
    told = "you are banned from this server" + (f": {reason}" if reason else "")
    if "network" in msg:
        network = _network(msg["network"])
        sanction = Sanction("ban", None, None, network, reason, s.name, expires)
        target = network
    else:
        account, session, name = _target(conn, moderation, msg["name"])
        if account is not None:
            sanction = Sanction("ban", account, None, None, reason, s.name, expires)
        else:
            assert session is not None
            sanction = Sanction("ban", None, None, _network(session.address), reason,
                                s.name, expires)
        target = msg["name"]
    if sanction.account == s.account or sanction.covers_network(conn.address):
        raise ProtocolError("bad_field", "that ban would cover you", field="name"
                            if "name" in msg else "network")
    closed = 0
    for proto in list(conn.server.protocols):
        session = proto.session
        if (session is not None and sanction.account is not None
                and session.account == sanction.account) \
                or sanction.covers_network(proto.address):
            if session is not None:
                _tell_table(conn.server, session, "ban", reason)
            proto.close("banned", told)
            closed += 1
            if session is not None:
                end_session(conn.server, session)
    shown = target if "network" in msg else name
    if sanction.network is not None and "network" not in msg:
        shown = f"{name} (address {sanction.network})"
    gone = f"; {closed} connection{'s' if closed != 1 else ''} closed"
    moderation._keep(conn, sanction, "ban", target, _until(expires), reply,
                     f"banned {shown} {_until(expires)}{_with(reason)}{gone}")
    return None


def handle_unban(conn: Connection, s: Session, msg: Message,
                 reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    if "network" in msg:
        account, network = None, _network(msg["network"])
        target = network
    else:
        found = moderation._accounts.find(msg["name"])
        if found is None:
            raise ProtocolError("no_such_player", f"no account is named {msg['name']!r}")
        account, network, target = found.id, None, found.name
    moderation._lift(conn, "ban", account, None, network, s.name, target, reply)
    return None


def handle_close_table(conn: Connection, s: Session, msg: Message,
                       reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    table = conn.server.lobby.by_id(msg["table"])
    if table is None or table.closed:
        raise ProtocolError("no_such_table", f"there is no table {msg['table']}")
    reason = _reason(msg)
    notice: Message = {"type": "table_closed", "table": table.id}
    if reason:
        notice["reason"] = reason
    members = table.core.members()
    for member in members:
        session = conn.server.sessions.by_id(member)
        if session is not None:
            session.send(notice)
        table.handle(cmd.Leave(member))  # the last to leave closes it
    told = f"{len(members)} member{'s' if len(members) != 1 else ''} told"
    moderation._answer(conn, moderation.log_action(s.name, "close_table", str(table.id), reason),
                       reply, f"closed table {table.id} ({told}){_with(reason)}")
    return None


def handle_announce(conn: Connection, s: Session, msg: Message,
                    reply: Replier) -> Message | None:
    moderation = _operator(conn, s)
    text = msg["text"].strip()
    notice: Message = {"type": "announcement", "text": text, "by": s.name}
    sessions = conn.server.sessions.each()
    for session in sessions:
        session.send(notice)
    moderation._answer(conn, moderation.log_action(s.name, "announce", "everyone", text), reply,
                       f"announced to {len(sessions)} player{'s' if len(sessions) != 1 else ''}")
    return None
