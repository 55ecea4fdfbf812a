"""The operators' requests (`kick`, `mute`, `unmute`, `ban`, `unban`, `close_table`,
`announce`): what people/moderation.py keeps, applied to the connections and tables
it covers. Each is answered `ok` once the store has it: an action answered is one a
restart keeps; its `done` says what was done, for the operator's screen. In a cluster
each reaches the players and tables of every process: what the operator's own process
cannot act on is asked of every live process (`Relay.ask_all`), acted on there, and
each one's answer counted in the `done` (the connections a ban closed, the players an
announcement reached), which names a process that did not answer in time."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.cluster import unavailable
from pisyedili.server.net.handlers import Handler, answer_off_reactor
from pisyedili.server.people import names
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.moderation import ALONE, Gathered, Moderation, Sanction, until
from pisyedili.server.people.session import Session
from pisyedili.server.store.base import Unreachable
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier
    from pisyedili.server.net.tcp import ServerFactory
    from pisyedili.server.table.runner import TableRunner

log = Logger()

KEEP_FAILED = "the action took effect but could not be kept"
"""The `internal_error` message of an action whose store write failed."""

_UNDONE = {"mute": "unmuted", "ban": "unbanned"}


def _answer(conn: Connection, written: Deferred[Any], reply: Replier, done: str) -> None:
    """`ok` saying `done` once the store has the action (`answer_off_reactor`: the
    operator's later requests wait for it)."""
    answer_off_reactor(conn, reply, written, lambda _: _ok(done), KEEP_FAILED)


def _lift(conn: Connection, moderation: Moderation, reply: Replier, kind: str,
          account: int | None, player: int | None, network: str | None, by: str,
          target: str) -> None:
    """Lift the sanctions of `kind` on that target, and say whether there was one."""
    lifted, written = moderation.lift(kind, account, player, network, by, target)
    answer_off_reactor(conn, reply, written,
                       lambda g: _ok(_lifted_text(kind, target, lifted) + g.said()),
                       KEEP_FAILED)


def _lifted_text(kind: str, target: str, lifted: bool) -> str:
    return f"{_UNDONE[kind]} {target}" if lifted \
        else f"{target} had no {kind} in force; nothing to lift"


def _with(reason: str) -> str:
    return f": {reason}" if reason else ""


def _online(factory: ServerFactory, name: str) -> Session | None:
    wanted = set(names.keys(name))
    return next((s for s in factory.sessions.each() if wanted & set(names.keys(s.name))),
                None)


def _ask_all(factory: ServerFactory, message: dict[str, Any]) -> Deferred[Gathered]:
    """What every other live process did of `message` (`Relay.ask_all`); nobody to ask
    for a process alone."""
    relay = factory.relay
    return succeed(ALONE) if relay is None else relay.ask_all(message)


def found_here(factory: ServerFactory, name: str) -> dict[str, Any]:
    """A process's answer to `find`: the session of that name it holds (a visitor's
    home answers for it), as a `Target` elsewhere needs it, or nothing."""
    session = _online(factory, name)
    if session is None:
        return {}
    return {"found": {"p": session.player_id, "name": session.name,
                      "addr": session.address, "a": session.account}}


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


def _end_session(factory: ServerFactory, session: Session) -> None:
    """Forget the session, whose connection was told why and closed (its seat passes to
    a bot mid-match, as for anyone who leaves)."""
    factory.lobby.unsubscribe(session)
    factory.sessions.forget(session)


def _operator(conn: Connection, s: Session) -> tuple[Moderation, Accounts]:
    """The server's moderation and accounts, or `not_operator` for anyone else."""
    moderation = conn.server.moderation
    accounts = conn.server.accounts
    if moderation is None or accounts is None or not accounts.is_operator(s.account):
        raise ProtocolError("not_operator", "only a server operator may do this")
    return moderation, accounts


def _network(text: str) -> str:
    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise ProtocolError("bad_network", f"{text[:64]!r} is not an IP address or range",
                            field="network") from None


def _reason(msg: Message) -> str:
    return str(msg.get("reason", "")).strip()


def _kick(conn: Connection, s: Session, msg: Message,
          reply: Replier) -> Message | None:
    moderation, _ = _operator(conn, s)
    target = _online(conn.server, msg["name"])
    nobody = ProtocolError("no_such_player", f"nobody named {msg['name']!r} is here")
    reason = _reason(msg)
    if target is None and conn.server.cluster.shared:  # connected to another process?
        found = conn.server.cluster.name_holder(names.keys(msg["name"]))
        kicked = found.addCallback(_kick_elsewhere, conn.server, moderation, s.name,
                                   msg["name"], reason, nobody, conn.address)
        answer_off_reactor(conn, reply, kicked, _ok, KEEP_FAILED)
        return None
    if target is None or target is s:
        raise nobody
    _remove(conn.server, target, reason, s.name, conn.address, tell_elsewhere=True)
    _answer(conn, moderation.log_action(s.name, "kick", target.name, reason), reply,
            f"kicked {target.name}{_with(reason)}")
    return None


def _tell_table_elsewhere(factory: ServerFactory, session: Session, action: str,
                          reason: str) -> None:
    """If `session` (held here) sits at a table of another process, that table is told
    through the cluster (`kicked_elsewhere` there), before the seat's `leave` goes to
    it as the session ends: one link carries both, in order."""
    relay = factory.relay
    if relay is None or relay.table_id(session) is None:
        return
    told: dict[str, Any] = {"k": "kick", "p": session.player_id, "reason": reason}
    if action != "kick":
        told["action"] = action
    factory.cluster.tell_all(told)


def _remove(factory: ServerFactory, session: Session, reason: str, by: str,
            spare: str | None, tell_elsewhere: bool = False) -> int:
    """A kick of a session held here: its player kept out for a while
    (`Moderation.kick`; not a guest at the operator's address `spare`), its table's
    other members told, its connections closed with `kicked` (the reason, and the wait
    before coming back), its session ended; how many were closed. With
    `tell_elsewhere`, a table of another process is told too (`_tell_table_elsewhere`)."""
    if tell_elsewhere:
        _tell_table_elsewhere(factory, session, "kick", reason)
    _tell_table(factory, session, "kick", reason)
    moderation = factory.moderation
    assert moderation is not None  # only an operator kicks
    kick = moderation.kick(session.account, session.address, reason, by, spare)
    told = moderation.kept_out(kick) if kick is not None else ProtocolError(
        "kicked", "an operator removed you from the server" + _with(reason),
        **({"reason": reason} if reason else {}))
    connections = _connections_of(factory, session)
    for proto in connections:
        proto.close(told.code, told.message, **told.extra)
    _end_session(factory, session)
    return len(connections)


def _kick_elsewhere(player: str | None, factory: ServerFactory, moderation: Moderation,
                    by: str, name: str, reason: str, nobody: ProtocolError,
                    spare: str) -> Deferred[str]:
    """A kick of a player whose session another process holds (`player`, from its
    name's keys in the cluster): every process is asked, as of a ban; its own closes it
    (`kicked_elsewhere`). Its table, if it is here, is told here: the operator's
    process hears nothing of what it tells the others. The `done`, once the store has
    the action."""
    if player is None:
        raise nobody
    told = {"k": "kick", "p": player, "reason": reason, "by": by, "spare": spare}
    kicked_elsewhere(factory, told)
    asked = _ask_all(factory, told)
    written = moderation.log_action(by, "kick", name, reason)
    return _kept(written, asked, lambda g: f"kicked {name}{_with(reason)}{g.said()}")


def kicked_elsewhere(factory: ServerFactory, message: dict[str, Any]) -> dict[str, Any]:
    """A kick made through another process, of player `p`: removed here if its
    session is held here (`_remove`; every process heard of the kick, its table's
    too); if it only sits at a table here, from another process, that table's other
    members are told (its home ends the session, and the seat goes to a bot with the
    `leave` that follows). A ban's (`action`) comes from the player's home, which
    closed it: only its table is told, since the ban's own tell ends it anywhere else."""
    player, reason = str(message["p"]), str(message.get("reason", ""))
    action = str(message.get("action", "kick"))
    session = factory.sessions.by_id(player)
    if session is None:
        return {}
    if factory.relay is not None and factory.relay.is_visitor(player):
        _tell_table(factory, session, action, reason)
    elif action == "kick":
        spare = message.get("spare")
        return {"closed": _remove(factory, session, reason, str(message.get("by", "")),
                                  spare if isinstance(spare, str) else None)}
    return {}


@dataclass(frozen=True)
class Target:
    """Whom a request by name is about: the account (or None: a guest), the session it
    has here (or None: an account's session elsewhere, or a guest connected to another
    process), the name as it is spelled (the operator may have typed a look-alike), and
    a guest's player id and address key (what its mute and ban name)."""

    account: int | None
    session: Session | None
    name: str
    player: int | None = None
    address: str | None = None


def _here(session: Session) -> Target:
    return Target(session.account, session, session.name, int(session.player_id),
                  session.address)


Acting = Callable[[Target], Deferred[str]]
"""What a request does to its target, at once: the `done` to answer with, once the
store's write is in (and the other processes said what they did)."""


def _on_target(conn: Connection, accounts: Accounts, name: str, reply: Replier,
               act: Acting) -> None:
    """`act` on the account of `name`, or failing that on the connected guest of that
    name; answered `ok` once its write is in. An account the registry holds is acted
    on at once, within the request; a name it lacks is asked of the store first (an
    account made by `pisyedili-server operator add` while the server runs), then the
    guests connected here."""

    async def acting() -> str:
        done: str = await act(await _target(conn, accounts, name))
        return done

    answer_off_reactor(conn, reply, acting(), _ok, KEEP_FAILED)


async def _target(conn: Connection, accounts: Accounts, name: str) -> Target:
    found = accounts.find(name)
    if found is None:
        try:
            found = await accounts.lookup(name)
        except Exception as e:
            if isinstance(e, Unreachable):  # an outage
                log.warn("the account of {name!r} could not be read: the store could not "
                         "be read ({why}); answered internal_error", name=name, why=str(e))
            else:
                log.failure("reading the account of {name!r}", name=name)
            raise ProtocolError("internal_error", "the server could not read its "
                                "accounts; nothing changed") from None
    if found is not None:
        return Target(found.id, accounts.session_of(found.id), found.name)
    session = _online(conn.server, name)
    if session is not None:
        return _here(session)
    gathered = await _ask_all(conn.server, {"k": "find", "name": name})
    held = next((a["found"] for a in gathered.answers if "found" in a), None)
    if held is None:
        raise ProtocolError("no_such_player", f"nobody named {name!r} is here, and no "
                            "account has that name")
    account = held.get("a")
    return Target(account if isinstance(account, int) else None, None, str(held["name"]),
                  int(held["p"]), str(held["addr"]))


def _ok(done: str) -> Message:
    return {"type": "ok", "done": done}


def _guest(target: Target) -> int | None:
    """The player id a guest's sanction names (an account's names its account)."""
    return None if target.account is not None else target.player


def _kept(written: Deferred[Any], told: Deferred[Gathered],
          done: Callable[[Gathered], str]) -> Deferred[str]:
    """`done`, said of what the other processes did, once the store has the action."""
    return written.addCallback(lambda _: told).addCallback(done)


def _mute(conn: Connection, s: Session, msg: Message,
          reply: Replier) -> Message | None:
    moderation, accounts = _operator(conn, s)
    reason = _reason(msg)
    expires = moderation.expiry(msg.get("minutes"))

    def mute(target: Target) -> Deferred[str]:
        sanction = Sanction("mute", target.account, _guest(target), None, reason, s.name,
                            expires)
        lasting = until(expires)
        written, told = moderation.keep(sanction, "mute", msg["name"], lasting)
        tell_muted(conn.server, sanction)
        return _kept(written, told,
                     lambda g: f"muted {target.name} {lasting}{_with(reason)}{g.said()}")

    _on_target(conn, accounts, msg["name"], reply, mute)
    return None


def tell_muted(factory: ServerFactory, sanction: Sanction) -> int:
    """Tell each session here that `sanction` (a mute) covers, at once, with its reason
    and time left (`muted`): a player learns of it before its next line is refused. A
    visitor's home tells it. How many were told."""
    relay = factory.relay
    notice: Message = {"type": "muted", **sanction.said(factory.clock.seconds())}
    told = 0
    for session in factory.sessions.each():
        if relay is not None and relay.is_visitor(session.player_id):
            continue
        if sanction.covers_account(session.account) or (
                sanction.player_id is not None
                and str(sanction.player_id) == session.player_id):
            session.send(notice)
            told += 1
    return told


def _unmute(conn: Connection, s: Session, msg: Message,
            reply: Replier) -> Message | None:
    moderation, accounts = _operator(conn, s)

    def unmute(target: Target) -> Deferred[str]:
        lifted, written = moderation.lift("mute", target.account, _guest(target), None,
                                          s.name, target.name)
        return written.addCallback(
            lambda g: _lifted_text("mute", target.name, lifted) + g.said())

    _on_target(conn, accounts, msg["name"], reply, unmute)
    return None


def _ban(conn: Connection, s: Session, msg: Message,
         reply: Replier) -> Message | None:
    moderation, accounts = _operator(conn, s)
    reason = _reason(msg)
    expires = moderation.expiry(msg.get("minutes"))

    def ban(sanction: Sanction, target: str, shown: str) -> Deferred[str]:
        if sanction.account == s.account or sanction.covers_network(conn.address):
            raise ProtocolError("bad_field", "that ban would cover you", field="name"
                                if "name" in msg else "network")
        here = enforce_ban(conn.server, sanction)
        written, told = moderation.keep(sanction, "ban", target, until(expires))

        def done(gathered: Gathered) -> str:
            closed = here + gathered.total("closed")
            gone = f"; {closed} connection{'s' if closed != 1 else ''} closed"
            return f"banned {shown} {until(expires)}{_with(reason)}{gone}{gathered.said()}"

        return _kept(written, told, done)

    if "network" in msg:
        network = _network(msg["network"])
        banned = ban(Sanction("ban", None, None, network, reason, s.name, expires),
                     network, network)
        answer_off_reactor(conn, reply, banned, _ok, KEEP_FAILED)
        return None

    def ban_named(target: Target) -> Deferred[str]:
        if target.account is not None:
            return ban(Sanction("ban", target.account, None, None, reason, s.name,
                                expires), msg["name"], target.name)
        assert target.address is not None  # a guest's, here or elsewhere
        network = _network(target.address)
        return ban(Sanction("ban", None, None, network, reason, s.name, expires),
                   msg["name"], f"{target.name} (address {network})")

    _on_target(conn, accounts, msg["name"], reply, ban_named)
    return None


def enforce_ban(factory: ServerFactory, sanction: Sanction) -> int:
    """Close every connection here that `sanction` (a ban) covers, telling each why and
    its table's other members, wherever that table is (as for a kick), and end its
    session; how many were closed."""
    told = "you are banned from this server" + _with(sanction.reason)
    said = sanction.said(factory.clock.seconds())  # the reason, the time it has left
    closed = 0
    for proto in list(factory.protocols):
        session = proto.session
        if (session is not None and sanction.account is not None
                and session.account == sanction.account) \
                or sanction.covers_network(proto.address):
            if session is not None:
                _tell_table_elsewhere(factory, session, "ban", sanction.reason)
                _tell_table(factory, session, "ban", sanction.reason)
            proto.close("banned", told, **said)
            closed += 1
            if session is not None:
                _end_session(factory, session)
    return closed


def _unban(conn: Connection, s: Session, msg: Message,
           reply: Replier) -> Message | None:
    moderation, accounts = _operator(conn, s)
    if "network" in msg:
        account, network = None, _network(msg["network"])
        target = network
    else:
        found = accounts.find(msg["name"])
        if found is None:
            raise ProtocolError("no_such_player", f"no account is named {msg['name']!r}")
        account, network, target = found.id, None, found.name
    _lift(conn, moderation, reply, "ban", account, None, network, s.name, target)
    return None


def _close_table(conn: Connection, s: Session, msg: Message,
                 reply: Replier) -> Message | None:
    moderation, _ = _operator(conn, s)
    table_id, reason = int(msg["table"]), _reason(msg)
    missing = ProtocolError("no_such_table", f"there is no table {table_id}")
    table = conn.server.lobby.by_id(table_id)
    if (table is None or table.closed) and conn.server.relay is not None:
        holder = conn.server.cluster.locate(table_id)  # held by another process?
        closed = holder.addCallback(_close_at, conn.server, moderation, s.name,
                                    table_id, reason, missing)
        answer_off_reactor(conn, reply, closed, _ok, KEEP_FAILED)
        return None
    if table is None or table.closed:
        raise missing
    members = _close_here(conn.server, table, reason)
    _answer(conn, moderation.log_action(s.name, "close_table", str(table.id), reason),
            reply, f"closed table {table.id} ({_members(members)}){_with(reason)}")
    return None


def _members(told: int) -> str:
    return f"{told} member{'s' if told != 1 else ''} told"


def _close_here(factory: ServerFactory, table: TableRunner, reason: str) -> int:
    """Close `table`, held here: each member is told `table_closed` (one connected to
    another process through its relayed connection here), then leaves it; the last
    to leave closes it. The number of members told."""
    notice: Message = {"type": "table_closed", "table": table.id}
    if reason:
        notice["reason"] = reason
    members = table.core.members()
    for member in members:
        session = factory.sessions.by_id(member)
        if session is not None:
            session.send(notice)
        table.handle(cmd.Leave(member))
    return len(members)


def _close_at(holder: str | None, factory: ServerFactory, moderation: Moderation,
              by: str, table_id: int, reason: str, missing: ProtocolError) -> Deferred[str]:
    """A table another process holds (`holder`, from the cluster) is closed there
    (`closed_elsewhere` there, asked of every process: the one that holds it now
    answers). The `done`, once the store has the action."""
    if holder is None or holder == factory.cluster.process:
        raise missing
    told = _ask_all(factory, {"k": "close_table", "t": table_id, "reason": reason})
    written = moderation.log_action(by, "close_table", str(table_id), reason)
    return _kept(written, told, lambda g: f"closed table {table_id} (held by another "
                 f"process; {_members(g.total('members'))}){_with(reason)}{g.said()}")


def closed_elsewhere(factory: ServerFactory, message: dict[str, Any]) -> dict[str, Any]:
    """An operator on another process closed table `t`, held here (unless it closed
    meanwhile, or is not here): the members told."""
    table = factory.lobby.by_id(int(message["t"]))
    if table is None or table.closed:
        return {}
    return {"members": _close_here(factory, table, str(message.get("reason", "")))}


def _announce(conn: Connection, s: Session, msg: Message,
              reply: Replier) -> Message | None:
    moderation, _ = _operator(conn, s)
    text = msg["text"].strip()
    notice: Message = {"type": "announcement", "text": text, "by": s.name}
    if conn.server.relay is not None and not conn.server.cluster.reachable:
        raise unavailable("an announcement to every process")
    # Every process's players, each told by its own.
    elsewhere = _ask_all(conn.server, {"k": "announce", "m": notice})
    here = announce_here(conn.server, notice)

    def done(gathered: Gathered) -> str:
        told = here + gathered.total("told")
        return f"announced to {told} player{'s' if told != 1 else ''}{gathered.said()}"

    written = moderation.log_action(s.name, "announce", "everyone", text)
    answer_off_reactor(conn, reply, _kept(written, elsewhere, done), _ok, KEEP_FAILED)
    return None


def announce_here(factory: ServerFactory, notice: Message) -> int:
    """An announcement to every session this process holds, but a visitor's (a player
    connected to another process, at a table here: that process tells it). The number
    of sessions told."""
    relay, told = factory.relay, 0
    for session in factory.sessions.each():
        if relay is None or not relay.is_visitor(session.player_id):
            session.send(notice)
            told += 1
    return told


HANDLERS: dict[str, Handler] = {
    "kick": _kick,
    "mute": _mute,
    "unmute": _unmute,
    "ban": _ban,
    "unban": _unban,
    "close_table": _close_table,
    "announce": _announce,
}
