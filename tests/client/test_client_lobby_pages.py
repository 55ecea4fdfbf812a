"""A paged lobby: the client shows the whole list's length and which rows it holds,
reads other pages with `/lobby PAGE|next|prev`, and applies deltas as protocol.md says
(updates and removes to rows it holds, adds where their ids put them: a new table only
when its page reaches the end)."""

from __future__ import annotations

from typing import Any

import pytest_twisted
from client_kit import OPTIONS, Inbox, Msg, message
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint

from pisyedili.client import render
from pisyedili.client.bot import EXIT_OK, BotConfig, connect
from pisyedili.client.parse import Context, Invalid, Request, parse_input
from pisyedili.client.render import Look, plain
from pisyedili.client.state import ClientState
from pisyedili.client.wire import Link
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.table import commands as cmd

wireclient = sibling("server", "wireclient")  # the network tests' loopback server
Seated = sibling("bots", "bots_kit").Seated  # a bot that tells when it sat down

ASCII = Look(unicode=False)


def row(tid: int, **changes: Any) -> Msg:
    return {"id": tid, "name": f"t{tid}", "rules": "classic", "options": OPTIONS, "seats": 3,
            "taken": 1, "free": 2, "bots": 0, "spectators": 0, "phase": "waiting",
            "private": False, **changes}


def page(offset: int, count: int, total: int, **extra: Any) -> Msg:
    """A schema-valid `lobby` page: tables `offset + 1` on (ids count from 1)."""
    return message("lobby", tables=[row(offset + i + 1) for i in range(count)], total=total,
                   offset=offset, **extra)


def update(op: str, tid: int, **changes: Any) -> Msg:
    if op == "remove":
        return message("lobby_update", op=op, table=tid)
    return message("lobby_update", op=op, table=tid, summary=row(tid, **changes))


def status(st: ClientState) -> str:
    return "\n".join(plain(f) for f in st.status(0.0))


def test_the_status_line_says_the_total_and_the_rows_shown() -> None:
    st = ClientState(look=ASCII)
    lines = [plain(f) for f in st.handle(page(0, 200, 450, id=2), 0.0)]
    assert status(st) == "lobby: 450 tables, showing 1-200; /help for commands"
    assert lines[0] == "Tables 1-200 of 450 (page 1 of 3):"
    assert "/lobby next" in lines[-1]
    st.handle(page(400, 50, 450), 0.0)
    assert status(st) == "lobby: 450 tables, showing 401-450; /help for commands"
    assert st.lobby_page == 200, "a short last page does not change the page size"


def test_a_whole_list_reads_as_before() -> None:
    st = ClientState(look=ASCII)
    lines = [plain(f) for f in st.handle(page(0, 3, 3), 0.0)]
    assert lines[0] == "Tables:" and not any("/lobby" in ln for ln in lines)
    assert status(st) == "lobby: 3 tables; /help for commands"
    old = ClientState(look=ASCII)  # a server that does not page: no total, no offset
    old.handle(message("lobby", tables=[row(1), row(2)]), 0.0)
    assert status(old) == "lobby: 2 tables; /help for commands"
    assert old.lobby_total is None


def test_a_page_past_the_end_says_so() -> None:
    st = ClientState(look=ASCII)
    [line] = st.handle(page(400, 0, 350), 0.0)
    assert "the lobby has 350 tables" in plain(line) and "/lobby 1" in plain(line)
    assert status(st) == "lobby: 350 tables, showing none; /help for commands"


def test_deltas_on_a_middle_page() -> None:
    st = ClientState(look=ASCII)
    st.handle(page(200, 200, 450), 0.0)
    st.handle(update("update", 250, taken=2), 0.0)
    assert st.lobby[250]["taken"] == 2
    st.handle(update("update", 5, taken=3), 0.0)
    assert 5 not in st.lobby, "a row of another page is not ours to hold"
    added = st.handle(update("add", 451), 0.0)
    assert 451 not in st.lobby and st.lobby_total == 451
    assert "#451" in plain(added[0]), "a new table is still announced"
    st.handle(update("remove", 3), 0.0)
    st.handle(update("remove", 300), 0.0)
    assert 300 not in st.lobby and len(st.lobby) == 199 and st.lobby_total == 449
    assert status(st) == "lobby: 449 tables, showing 201-399; /help for commands"


def test_an_add_joins_the_last_page() -> None:
    st = ClientState(look=ASCII)
    st.handle(page(400, 50, 450), 0.0)
    st.handle(update("add", 451), 0.0)
    assert list(st.lobby)[-1] == 451 and st.lobby_total == 451
    st.handle(update("remove", 451), 0.0)
    st.handle(update("add", 452), 0.0)
    assert list(st.lobby)[-1] == 452 and len(st.lobby) == 51 and st.lobby_total == 451


def test_a_table_listed_again_takes_its_place_by_id() -> None:
    """An `add` of an older table (in a cluster, its process came back after it was
    taken for gone) joins the page its id falls in, at its place in id order."""
    whole = ClientState(look=ASCII)
    whole.handle(page(0, 3, 3), 0.0)
    whole.handle(update("remove", 2), 0.0)
    whole.handle(update("add", 2), 0.0)
    assert list(whole.lobby) == [1, 2, 3] and whole.lobby_total == 3
    middle = ClientState(look=ASCII)
    middle.handle(page(200, 200, 450), 0.0)
    middle.handle(update("remove", 250), 0.0)
    middle.handle(update("add", 250), 0.0)
    assert list(middle.lobby)[48:51] == [249, 250, 251] and middle.lobby_total == 450
    middle.handle(update("remove", 5), 0.0)
    middle.handle(update("add", 5), 0.0)
    assert 5 not in middle.lobby and middle.lobby_total == 450, "another page's"
    first = ClientState(look=ASCII)
    first.handle(page(0, 200, 450), 0.0)
    first.handle(update("remove", 1), 0.0)
    first.handle(update("add", 1), 0.0)
    assert list(first.lobby)[:2] == [1, 2]


def test_lobby_pages_are_asked_by_number_or_next_and_prev() -> None:
    st = ClientState(look=ASCII)
    st.handle(page(0, 200, 450), 0.0)
    ctx = st.context()
    assert parse_input("/lobby", ctx) == Request({"type": "lobby_subscribe"})
    assert parse_input("/lobby 2", ctx) == Request({"type": "lobby_subscribe", "offset": 200})
    assert parse_input("/lobby next", ctx) == parse_input("/lobby 2", ctx)
    assert parse_input("/lobby 3", ctx) == Request({"type": "lobby_subscribe", "offset": 400})
    assert parse_input("/lobby 1", ctx) == Request({"type": "lobby_subscribe"})
    for refused in ("/lobby prev", "/lobby 4", "/lobby 0", "/lobby two", "/lobby 1 2"):
        assert isinstance(parse_input(refused, ctx), Invalid), refused
    st.handle(page(400, 50, 450), 0.0)
    ctx = st.context()
    assert parse_input("/lobby", ctx) == Request({"type": "lobby_subscribe", "offset": 400})
    assert parse_input("/lobby prev", ctx) == Request({"type": "lobby_subscribe",
                                                       "offset": 200})
    assert isinstance(parse_input("/lobby next", ctx), Invalid)
    whole = Context()
    assert parse_input("/lobby", whole) == Request({"type": "lobby_subscribe"})
    assert isinstance(parse_input("/lobby next", whole), Invalid)


def test_help_lists_the_lobby_pages() -> None:
    text = "\n".join(plain(f) for f in render.help_lines("lobby", 80))
    assert "/lobby [PAGE|next|prev]" in text


# ------------------------------------------------------------------------ loopback


class _Quiet:
    """A session's peer for tables opened on the server directly."""

    def send_message(self, msg: object) -> None:
        pass

    def replaced(self) -> None:
        pass


def open_tables(server: Any, private: int, public: int) -> None:
    """`private` private tables, then `public` two-seat ones with a seat open, each
    with its host seated: opened on the server itself, which is quick."""
    for i in range(private + public):
        session = server.factory.sessions.open(f"host{i}", _Quiet())
        table = server.factory.lobby.create(session, "classic", 2, None, None, i < private)
        table.handle(cmd.Join(session.player_id, session.name))


@pytest_twisted.ensureDeferred
async def test_the_client_reads_page_two_and_the_bot_sits_down_there() -> None:
    limits = ServerLimits(rate=10_000, burst=10_000, max_tables_per_address=10_000)
    server = await wireclient.Server.start(limits=limits)
    link: Link | None = None
    try:
        open_tables(server, private=200, public=5)
        st, inbox = ClientState(look=ASCII), Inbox(reactor)

        def hear(msg: Msg) -> None:
            st.handle(msg, 0.0)
            inbox(msg)

        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.port.getHost().port)
        link = Link(endpoint, "pager", hear, clock=reactor, retry=lambda attempt: 0.0)  # type: ignore[arg-type]
        link.start()
        await inbox.wait_type("welcome")
        await link.request({"type": "lobby_subscribe"}).addTimeout(10, reactor)
        assert status(st) == "lobby: 205 tables, showing 1-200; /help for commands"
        ask = parse_input("/lobby next", st.context())
        assert isinstance(ask, Request) and ask.msg == {"type": "lobby_subscribe", "offset": 200}
        await link.request(dict(ask.msg)).addTimeout(10, reactor)
        assert status(st) == "lobby: 205 tables, showing 201-205; /help for commands"
        assert list(st.lobby) == [201, 202, 203, 204, 205]

        mark = len(inbox.messages)
        bot = Seated(BotConfig(level="easy", name="seeker", seed=3))
        playing = connect(reactor, TCP4ClientEndpoint(  # type: ignore[arg-type]
            reactor, "127.0.0.1", server.port.getHost().port), bot, retry=lambda a: 0.0)
        snapshot = await bot.seated.addTimeout(10, reactor)
        assert snapshot["table"]["id"] == 201, "the first open seat, on the second page"
        await inbox.wait(lambda m: m["type"] == "lobby_update" and m["table"] == 201
                         and m["summary"]["free"] == 0, mark)
        assert st.lobby[201]["free"] == 0, "the row we hold follows the delta"
        bot.stop()
        assert await playing.addTimeout(10, reactor) == EXIT_OK
    finally:
        if link is not None:
            await link.stop().addTimeout(10, reactor)
        await server.stop()
