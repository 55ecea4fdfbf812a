"""`register`, `login`, `logout` and `passwd`: the account requests of people/accounts.py
applied to the connection (who it is after a login, a take-over of the account's
other session)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast

from twisted.internet.interfaces import ISSLTransport

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.net.handlers import Handler, answer_off_reactor
from pisyedili.server.people.accounts import Accounts, Caller, TakeOver, is_local
from pisyedili.server.people.session import Session
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


def _accounts(conn: Connection) -> Accounts:
    accounts = conn.server.accounts
    if accounts is None:
        raise ProtocolError("accounts_unavailable", "this server keeps no accounts")
    return accounts


def is_bot(conn: Connection, session: Session) -> bool:
    """Whether the session is logged in to a bot's account (a table shows it as a bot,
    and one without `bot_accounts` seats it not)."""
    accounts = conn.server.accounts
    return accounts is not None and accounts.is_bot(session.account)


def _caller(conn: Connection, session: Session) -> Caller:
    """The connection as an account request sees it."""
    transport = conn.transport
    secure = bool(ISSLTransport.providedBy(transport)) or (
        transport is not None and is_local(cast(Any, transport).getPeer()))
    return Caller(session, conn.address, secure, lambda: conn.session)


def _answer(conn: Connection, reply: Replier, accounts: Accounts,
            work: Coroutine[Any, Any, Message | TakeOver | None]) -> None:
    """Answer with what `work` returns (or its refusal) once it is done, if the
    connection still holds a session then; a take-over is applied to the connection
    first (`answer_off_reactor`: later requests wait for it)."""
    def applied(result: Message | TakeOver | None) -> Message | None:
        if result is None or conn.session is None:
            return None
        if isinstance(result, TakeOver):
            _take_over(conn, result.session)
            reply(accounts.describe(result.session, result.login))
            conn.server.sessions.rejoin(result.session)  # its table's snapshot follows
            return None
        return result

    answer_off_reactor(conn, reply, work, applied)


def _take_over(conn: Connection, other: Session) -> None:
    """The connection's session gives way to the account's other session `other`."""
    session = conn.session
    assert session is not None
    sessions = conn.server.sessions
    conn.server.lobby.unsubscribe(session)
    sessions.forget(session)
    sessions.take_over(other, conn)
    conn.session = other


def _register(conn: Connection, s: Session, msg: Message,
              reply: Replier) -> Message | None:
    accounts = _accounts(conn)
    _answer(conn, reply, accounts, accounts.register(_caller(conn, s), msg["password"],
                                                     bool(msg.get("bot", False))))
    return None


def _login(conn: Connection, s: Session, msg: Message,
           reply: Replier) -> Message | None:
    accounts = _accounts(conn)
    _answer(conn, reply, accounts, accounts.login(_caller(conn, s), msg["name"],
                                                  msg.get("password"), msg.get("token")))
    return None


def _logout(conn: Connection, s: Session, msg: Message,
            reply: Replier) -> Message | None:
    accounts = _accounts(conn)
    _answer(conn, reply, accounts, accounts.logout(s, msg.get("token"),
                                                   bool(msg.get("everywhere", False))))
    return None


def _passwd(conn: Connection, s: Session, msg: Message,
            reply: Replier) -> Message | None:
    accounts = _accounts(conn)
    _answer(conn, reply, accounts, accounts.passwd(_caller(conn, s), msg["old"], msg["new"]))
    return None


HANDLERS: dict[str, Handler] = {
    "register": _register,
    "login": _login,
    "logout": _logout,
    "passwd": _passwd,
}
