"""The request handlers, one module per area; server/net/dispatch.py maps types to them.

A handler is called with a valid request from a welcomed connection whose feature (if
the request has one) was agreed on: it returns its reply, hands the `Replier` to a
table that will, or hands the slow step its answer waits on to `answer_later`. A
`ProtocolError` it raises is its refusal. This module holds what every area shares.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from twisted.internet.defer import Deferred

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.people.session import Session
from pisyedili.server.store import Store
from pisyedili.server.table.effects import Message
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier

T = TypeVar("T")

Handler = Callable[["Connection", Session, Message, "Replier"], "Message | None"]
"""A request handler: returns its reply, hands the `Replier` to a table that will, or
to `Connection.answer_later` with the slow step its answer waits on."""

OK: Message = {"type": "ok"}

REQUEST_FAILED = "the server failed to handle this request"
"""The `internal_error` message of a request that failed unexpectedly."""
STORE_READ_FAILED = "the server failed to read its store"
"""The `internal_error` message of a store read that failed."""


def table_of(session: Session) -> TableRunner | None:
    """The session's table, unless it has closed (then the session is at none)."""
    table = session.table
    if table is not None and table.closed:
        session.table = None
        return None
    return table


def require_table(session: Session) -> TableRunner:
    """The session's table, or the `not_at_table` refusal."""
    table = table_of(session)
    if table is None:
        raise ProtocolError("not_at_table", "you are not at a table")
    return table


def answer_off_reactor(conn: Connection, reply: Replier,
                       work: Deferred[T] | Coroutine[Any, Any, T],
                       answer: Callable[[T], Message | None],
                       failed: str = REQUEST_FAILED) -> None:
    """Reply with `answer(result)` once `work` (a store call on its thread, a hash on
    the thread pool: anything off the reactor) is done; None: nothing to send. Through
    `Connection.answer_later`: later requests wait for it, a `ProtocolError` is the
    refusal, any other failure is logged with its traceback and answered
    `internal_error` saying `failed`."""
    done = work if isinstance(work, Deferred) else Deferred.fromCoroutine(work)
    conn.answer_later(done.addCallback(answer), reply, failed)


def answer_from_store(conn: Connection, reply: Replier,
                      query: Callable[[Store], Message]) -> None:
    """Answer with what `query` reads on the store's thread (`answer_off_reactor`)."""
    archive = conn.server.archive
    if archive is None or not archive.available:
        raise ProtocolError("history_unavailable",
                            "this server keeps no finished matches now")
    answer_off_reactor(conn, reply, archive.query(query), _as_it_is, STORE_READ_FAILED)


def _as_it_is(msg: Message) -> Message:
    return msg
