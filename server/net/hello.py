"""The hello policy: who a new connection is, and its `welcome`.

A `hello` agrees on the protocol version (checked by `parse_hello`) and the optional
features, then names the player: a new session under an accepted name (suffixed if
the name is taken or registered), or, with a resume token, the session it left, taken
over from any connection still holding it. An address that is banned, or that holds
its cap of sessions, is refused and closed. Every refusal of a hello closes: a client
that cannot say hello has nothing else to say.
"""

from __future__ import annotations

import functools
import importlib.metadata
from typing import TYPE_CHECKING, Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.handshake import Hello
from pisyedili.protocol.messages import announced_limits, make_welcome
from pisyedili.server.cluster import unavailable, until_sure
from pisyedili.server.net.handlers import table_of
from pisyedili.server.people import names
from pisyedili.server.store.base import Unreachable

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.people.session import Session

log = Logger()

BAD_TOKEN = "that resume token is unknown or has expired"

AGREED_CACHE = 256
"""Distinct `hello.features` requests whose agreed set is kept for sharing: bounded, since
a client may ask for any list of names."""


@functools.cache
def server_version() -> str:
    """The installed package's version, read once: the metadata lookup costs about a
    third of a millisecond, which was half of every `hello`."""
    try:
        return importlib.metadata.version("pisyedili")
    except importlib.metadata.PackageNotFoundError:
        return "0"


WELCOMED = ("{address} welcomed as player {player} ({name!r}), resumed={resumed}, "
            "client={client!r}")
WELCOMED_RENAMED = ("{address} welcomed as player {player} ({name!r}, asked for {asked!r}), "
                    "resumed={resumed}, client={client!r}")
"""The log line of a `welcome`; a new player whose name was taken gets a suffixed one."""


def answer(conn: Connection, hello: Hello) -> None:
    """Welcome the connection that said `hello`, or refuse it (and close)."""
    rid = hello.id
    token = hello.token
    name = hello.name  # a resumed session keeps its name: this one is not looked at
    if token is None:
        try:
            name = names.accept(name)  # blank, invisible, a bot's: refused
        except names.BadName as e:
            conn.close("bad_field", f"name: {e}", rid, field="name")
            return
    conn.features = conn.server.agreed(hello.features)
    sessions = conn.server.sessions
    banned = conn.server.moderation and conn.server.moderation.address_banned(
        conn.address)
    if banned:
        conn.close(banned.code, banned.message, rid, **banned.extra)
        return
    if token is not None:
        if sessions.find(token) is not None and conn.server.cluster.lease_in_doubt:
            sure = Deferred.fromCoroutine(_until_sure(conn))
            sure.addCallback(lambda _: _resume(conn, hello, token))
            sure.addErrback(_claim_failed, conn, rid)
            conn.wait_for(sure)
            return
        resuming = _resume(conn, hello, token)
        if resuming is not None:
            resuming.addErrback(_claim_failed, conn, rid)
            conn.wait_for(resuming)
        return
    cap = conn.server.limits.max_sessions_per_address
    if sessions.opened_from(conn.address) >= cap:
        log.info("hello from {address} refused: {cap} sessions open from there",
                 address=conn.address, cap=cap)
        conn.close("too_many_sessions", f"this address has {cap} sessions open, "
                   "the most allowed; a dropped one lasts until its grace period "
                   "ends (or resume one with its token)", rid, limit=cap)
        return
    if conn.server.cluster.shared:
        claimed = Deferred.fromCoroutine(_claim(conn, name))
        claimed.addCallback(lambda got: _open_claimed(conn, hello, name, *got))
        claimed.addErrback(_claim_failed, conn, rid)
        conn.wait_for(claimed)
        return
    session = sessions.open(name, conn, conn.address)
    _welcome(conn, hello, session, name)


def _resume(conn: Connection, hello: Hello, token: str) -> Deferred[Any] | None:
    """Welcome the session of `token` back, held here or (asked of the cluster) by
    another process: what to wait for, if the cluster is asked."""
    if conn.closing:
        return None
    sessions = conn.server.sessions
    existing = sessions.find(token)
    if existing is None and conn.server.relay is not None:
        moved = conn.server.relay.resume(conn, token)  # held by another process?
        moved.addCallback(lambda found: _resumed_elsewhere(conn, hello, found))
        return moved
    if existing is None:
        conn.send_error("bad_token", BAD_TOKEN, hello.id)
        return None
    session = sessions.resume(token, conn)
    assert session is not None
    # A lobby subscription belongs to a connection: a resumed one asks again.
    conn.server.lobby.unsubscribe(session)
    _welcome(conn, hello, session, session.name)
    return None


async def _until_sure(conn: Connection) -> None:
    """Fires once this process knows again what it homes (its lease renewed, or its
    keys checked after a pause past its lease): until then, a session held here may
    have been taken over elsewhere (its record and its table), and a welcome from the
    copy here would name no table, or one it left. Refused (`cluster_unavailable`) if
    that takes more than `DOUBT_WAIT` leases (`until_sure`)."""
    if not await until_sure(conn.server.cluster, cast(IReactorTime, conn.server.clock)):
        raise unavailable("this hello")


async def _claim(conn: Connection, name: str) -> tuple[str, str]:
    """A player id and the first of `name`, `name 2`... that no process holds."""
    cluster, sessions = conn.server.cluster, conn.server.sessions
    player_id = str(await cluster.next_id("player"))
    for candidate, keys in sessions.candidates(name):
        if await cluster.claim_name(player_id, keys):
            return player_id, candidate
    raise AssertionError("candidates never end")


def _open_claimed(conn: Connection, hello: Hello, asked: str, player_id: str,
                  name: str) -> None:
    """The claim came back: open the session, unless the connection went meanwhile."""
    if conn.closing:
        conn.server.cluster.release_name(player_id, names.keys(name))
        return
    session = conn.server.sessions.open(name, conn, conn.address, player_id=player_id)
    _welcome(conn, hello, session, asked)


def _resumed_elsewhere(conn: Connection, hello: Hello, session: Session | None) -> None:
    """The cluster answered for a token this process did not know."""
    if session is None:
        conn.send_error("bad_token", BAD_TOKEN, hello.id)
    elif not conn.closing:
        conn.server.lobby.unsubscribe(session)
        _welcome(conn, hello, session, session.name)


def _claim_failed(failure: Failure, conn: Connection, rid: int | None) -> None:
    error = failure.value
    if isinstance(error, Unreachable):
        # A resume that reads the shared journal while it is out of reach: an outage,
        # refused as one (the client tries again), not a defect.
        log.warn("hello from {address} refused for now: the store could not be read "
                 "({why}); told cluster_unavailable, to try again", address=conn.address,
                 why=str(error))
        error = unavailable("this hello")
    if isinstance(error, ProtocolError):  # a refusal (the cluster out of reach)
        conn.close(error.code, error.message, rid, **error.extra)
        return
    log.failure("hello from {address}: the cluster did not answer", failure,
                address=conn.address)
    conn.close("internal_error", "the server failed to handle hello", rid)


def _welcome(conn: Connection, hello: Hello, session: Session, name: str) -> None:
    """Send `welcome` to a connection now holding `session` (`name`: the one asked)."""
    rid, token, sessions = hello.id, hello.token, conn.server.sessions
    conn.session = session
    conn.handshake_done()
    # The one line a hello logs (a line costs about as much as the rest of hello).
    renamed = token is None and name != session.name
    log.info(WELCOMED_RENAMED if renamed else WELCOMED, address=conn.address,
             player=session.player_id, name=session.name, resumed=token is not None,
             client=hello.client, **({"asked": name} if renamed else {}))
    at = table_of(session) if token is not None else None
    elsewhere = sessions.elsewhere.table_id(session) \
        if token is not None and at is None and sessions.elsewhere is not None else None
    welcome = make_welcome(
        server=conn.server.name, version=server_version(),
        player=int(session.player_id), name=session.name, token=session.token,
        features=sorted(conn.features),
        limits={**announced_limits(), **conn.server.limits.to_wire()},
        resumed=token is not None, table=at.id if at is not None else elsewhere, id=rid)
    if session.account is not None and "accounts" in conn.features:
        welcome["registered"] = True
        accounts = conn.server.accounts
        if accounts is not None and accounts.is_operator(session.account):
            welcome["operator"] = True  # as `account` said at the login, or since
    if conn.server.lobby.test_decks:
        welcome["test_decks"] = True  # so nobody mistakes it for a server to play on
    conn.send(welcome)
    if at is not None or elsewhere is not None:
        sessions.rejoin(session)  # the table sends its snapshot after this welcome
