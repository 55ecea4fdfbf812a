"""The prompt and its link: completion, requests typed, replies acted on, resyncs; keys
(Ctrl-C, Ctrl-D), the bell, /sort and /log; the status as the link and the match go.

The app is driven with recorded (schema-checked) server messages on an in-memory
transport, keys through a pipe, and a real terminal output of a fixed size where the
bytes written matter; the whole client against the real server is test_client_app.py.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import struct
from collections.abc import Iterator
from typing import Any, cast

import pytest
from client_kit import Msg, message, table, update, view, welcome
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.data_structures import Size
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_input, create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output
from transport_kit import written
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from pisyedili.client import render
from pisyedili.client.app import ClientApp
from pisyedili.client.render import Look
from pisyedili.client.wire import Link, WireProtocol
from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS


class Tap(StringTransport):
    """A string transport that answers some requests as a server would, a turn of the
    event loop later (as if over a socket)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.answers: dict[str, Msg] = {}
        self.proto: WireProtocol | None = None

    def write(self, data: bytes) -> None:
        super().write(data)  # type: ignore[no-untyped-call]
        request = decode(data[4:], CLIENT_FRAME_LIMITS)
        answer = self.answers.get(request.get("type", ""))
        if answer is not None and self.proto is not None:
            reply = frame({**answer, "id": request["id"]})
            asyncio.get_running_loop().call_soon(self.proto.dataReceived, reply)


class Wired:
    """An app with a link whose connection is a string transport."""

    def __init__(self, app: ClientApp) -> None:
        self.app = app
        self.link = Link(cast(IStreamClientEndpoint, object()), "tester", app.on_message,
                         clock=Clock(), on_status=app.on_status,  # type: ignore[arg-type]
                         on_unreadable=app.on_unreadable)
        app.attach(self.link)
        self.transport = Tap()
        self.proto = WireProtocol(self.link)
        self.transport.proto = self.proto
        self.proto.makeConnection(self.transport)  # type: ignore[no-untyped-call]
        [hello] = self.sent()
        self.hear(welcome(id=hello["id"]))

    def sent(self) -> list[Msg]:
        return written(self.transport)

    def hear(self, msg: Msg | bytes) -> None:
        self.proto.dataReceived(msg if isinstance(msg, bytes) else frame(msg))  # type: ignore[no-untyped-call]

    def reply(self, request: Msg, msg: Msg) -> None:
        self.hear({**msg, "id": request["id"]})


@pytest.fixture
def app() -> Iterator[ClientApp]:
    with create_pipe_input() as pipe:
        yield ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=DummyOutput())


def test_tab_completion_offers_exactly_the_legal_moves(app: ClientApp) -> None:
    app.state.legal = [{"kind": "play", "card": "7h"},
                       *({"kind": "play", "card": "Js", "suit": s} for s in "cdhs"),
                       {"kind": "draw"}]
    completer = app.session.completer
    assert completer is not None

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("") == ["7h", "js c", "js d", "js h", "js s", "draw"]
    assert complete("J") == ["js c", "js d", "js h", "js s"]
    assert complete("/re") == ["/ready", "/rematch", "/resync", "/replay", "/register"]
    app.state.legal = []
    assert complete("") == []


def test_a_view_the_client_cannot_draw_costs_one_message_not_the_game(
        app: ClientApp, monkeypatch: pytest.MonkeyPatch) -> None:
    def cannot(*args: object) -> None:
        raise KeyError("a key a newer server left out")

    monkeypatch.setattr(render, "table_summary", cannot)
    app.on_message(table(view_=None))
    assert "could not show a table message" in app.log[-1]
    monkeypatch.undo()
    app.on_message(message("chat", scope="lobby", name="ayse", text="hi", spectator=False))
    assert app.log[-1].endswith("ayse: hi")


def test_after_welcome_the_lobby_is_asked_for(app: ClientApp) -> None:
    w = Wired(app)
    [sub] = w.sent()
    assert sub["type"] == "lobby_subscribe"
    w.reply(sub, message("lobby", tables=[]))
    assert "No tables yet" in app.log[-1]


def joined(w: Wired, **extra: Any) -> None:
    w.sent()
    w.app.submit("/join 1")
    [join] = w.sent()
    assert join == {"type": "join_table", "table": 1, "id": join["id"]}
    w.reply(join, table(view_=view(), **extra))


def test_a_typed_move_is_sent_and_its_update_shown(app: ClientApp) -> None:
    w = Wired(app)
    joined(w, moves=[{"kind": "play", "card": "7h"}, {"kind": "draw"}])
    assert app.state.my_turn and "your move:" in app.status_text()
    app.submit("7h")
    [move] = w.sent()
    assert move["move"] == {"kind": "play", "card": "7h"}
    w.reply(move, message("ok"))  # the reply comes first, then the step it caused
    w.hear(update([{"event": "play", "seat": 0, "card": "7h"}],
                  view(turn=1, hand=["Qd", "2c", "Js"], top="7h", pile=["9c", "9h", "7h"])))
    assert app.log[-1] == "you played 7h" and not app.state.my_turn


def test_leaving_waits_for_the_servers_ok(app: ClientApp) -> None:
    w = Wired(app)
    joined(w)
    app.submit("/leave")
    assert w.sent() == [] and "type /leave again" in app.log[-1], "a match is on: confirm"
    app.submit("/leave")
    [leave] = w.sent()
    assert app.state.at_table, "still seated until the server agrees"
    w.reply(leave, message("ok"))
    assert not app.state.at_table and "you left the table" in app.log
    assert [m["type"] for m in w.sent()] == ["lobby_subscribe"]


def test_an_unreadable_message_at_the_table_asks_for_a_fresh_snapshot(app: ClientApp) -> None:
    w = Wired(app)
    joined(w)
    w.hear({"type": "update", "table": 1, "events": "garbled"})
    w.hear(struct.pack(">I", 1) + b"\xc1")  # a second one while the resync is out
    [resync] = w.sent()
    assert resync["type"] == "resync", "one resync, however many bad messages"
    assert sum("cannot read" in line for line in app.log) == 2
    w.reply(resync, table(view_=view(), moves=[{"kind": "draw"}]))
    assert app.state.my_turn
    app.submit("/resync")
    assert [m["type"] for m in w.sent()] == ["resync"]


def test_a_request_while_disconnected_is_not_sent_and_says_so(app: ClientApp) -> None:
    w = Wired(app)
    joined(w)
    w.proto.connectionLost()
    app.submit("/ready")
    assert w.sent() == []
    assert "not connected yet" in app.log[-1]


# ------------------------------------------------------------------ keys and screen


class Screen(Vt100_Output):
    """A real terminal output of a fixed size, written to a string."""

    def __init__(self, rows: int = 24, columns: int = 80) -> None:
        self.buffer = io.StringIO()
        super().__init__(self.buffer, lambda: Size(rows=rows, columns=columns), term="xterm")

    def text(self) -> str:
        """What was written, without escape sequences."""
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", self.buffer.getvalue())


def typed(app: ClientApp, pipe: PipeInput, keys: str) -> None:
    """Run the app's prompt loop on `keys` (it must end by quitting)."""
    async def main() -> None:
        pipe.send_text(keys)
        await asyncio.wait_for(app.run(), 10)

    asyncio.run(main())


def keyed_app(pipe: PipeInput, **kwargs: Any) -> ClientApp:
    return ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                     output=DummyOutput(), **kwargs)


def test_ctrl_d_at_the_very_first_prompt_quits_cleanly() -> None:
    with create_pipe_input() as pipe:
        app = keyed_app(pipe)
        typed(app, pipe, "\x04")  # Ctrl-D before anything was typed or heard
    assert "Ctrl-D or /quit leaves" in app.log[0]


@pytest.mark.parametrize("key", ["\x04", "\x03"])
def test_ctrl_d_and_ctrl_c_never_send_the_last_line_again(key: str) -> None:
    with create_pipe_input() as pipe:
        app = keyed_app(pipe)
        w = Wired(app)
        w.sent()
        typed(app, pipe, "/say hello\r" + key)
        assert [m["type"] for m in w.sent()] == ["chat"], "one chat, then a quit"


def test_ctrl_d_pressed_while_a_line_prints_above_the_prompt_still_quits() -> None:
    """On a real terminal: printing above a running prompt must keep the keyboard in raw
    mode, or a key pressed meanwhile is the terminal's (Ctrl-D an end of file that the
    prompt never sees, Ctrl-C a signal)."""
    termios = pytest.importorskip("termios")
    master, slave = os.openpty()
    canonical: list[bool] = []

    class Watched(Vt100_Output):
        def write_raw(self, data: str) -> None:
            if "printed while" in data and not canonical:
                canonical.append(bool(termios.tcgetattr(slave)[3] & termios.ICANON))
                os.write(master, b"\x04")  # the player presses Ctrl-D right now
            super().write_raw(data)

        def write(self, data: str) -> None:
            self.write_raw(data)

    async def main(app: ClientApp) -> None:
        running = asyncio.ensure_future(app.run())
        while not app.session.app.is_running:
            await asyncio.sleep(0.01)
        app.show([("", "a line printed while the prompt waits")])
        try:
            await asyncio.wait_for(running, 10)
        except TimeoutError:
            pass  # the key was lost: the assertions below say how

    with os.fdopen(slave, "r", closefd=False) as keyboard, \
            os.fdopen(os.dup(slave), "w") as terminal:
        output = Watched(terminal, lambda: Size(rows=24, columns=80), term="xterm",
                         enable_cpr=False)
        app = ClientApp(Look(unicode=False, color=False), "tester",
                        input=create_input(keyboard), output=output)
        try:
            asyncio.run(main(app))
        finally:
            os.close(master)
            os.close(slave)
    assert canonical == [False], "the line was printed with the terminal in cooked mode"
    assert app._quit, "Ctrl-D reached the prompt"


def in_a_match(app: ClientApp) -> Wired:
    w = Wired(app)
    joined(w, moves=[{"kind": "play", "card": "7h"}, {"kind": "draw"}])
    w.sent()
    w.transport.answers["leave_table"] = message("ok")
    return w


def test_ctrl_c_mid_match_asks_before_leaving() -> None:
    with create_pipe_input() as pipe:
        app = keyed_app(pipe)
        w = in_a_match(app)
        prompts: list[str] = []
        original = app._message

        def message_() -> Any:
            prompts.append(render.plain(original()))  # type: ignore[arg-type]
            return original()

        app.session.message = message_
        typed(app, pipe, "d\r\x03\x03")
        sent = [m["type"] for m in w.sent()]
    assert sent == ["move", "leave_table"], "one draw, then leaving: the draw was not resent"
    warning = next(line for line in app.log if "for good" in line)
    assert "press Ctrl-C again (or type /quit) within 5 seconds" in warning
    assert "leave the match? Ctrl-C again> " in prompts
    assert "you left the table" in app.log


@pytest.mark.parametrize(("key", "asked"), [("/quit", "/quit"), ("Ctrl-D", "Ctrl-D"),
                                            ("Ctrl-C", "Ctrl-C")])
def test_the_quit_prompt_names_what_the_player_did(key: str, asked: str) -> None:
    with create_pipe_input() as pipe:
        app = keyed_app(pipe)
        in_a_match(app)
        if key == "/quit":
            app.submit("/quit")
        else:
            app.interrupt(key)
        assert not app._quit, "mid-match, the first ask only asks"
        prompt = render.plain(app._message())  # type: ignore[arg-type]
    assert prompt == f"leave the match? {asked} again> "


def test_a_request_after_the_link_ended_for_good_says_what_to_do(app: ClientApp) -> None:
    """Once the link has stopped for good no retry is coming: "not connected yet" would
    have the player wait for nothing."""
    w = Wired(app)
    joined(w)
    w.hear({"type": "replaced", "message": "this session was resumed from another connection"})
    w.proto.connectionLost()  # what the link's loseConnection brings on a real socket
    assert app._link_state() == "gone"
    app.submit("/ready")
    assert w.sent() == []
    said = app.log[-1]
    assert "not connected yet" not in said
    assert "ended for good" in said and "/quit leaves" in said
    assert "run pisyedili again with the same server and --name" in said
    app.keep_seat_on_quit = True  # offline, a kept match is taken up by --continue
    app.submit("/ready")
    assert "pisyedili play --continue" in app.log[-1]
    app.submit("/quit")
    assert app._quit, "one /quit leaves: nothing is at stake any more"


def test_a_late_or_interrupted_confirmation_asks_again() -> None:
    clock = [0.0]
    with create_pipe_input() as pipe:
        app = keyed_app(pipe, now=lambda: clock[0])
        in_a_match(app)
        app.interrupt("Ctrl-C")
        assert render.plain(app._message()).startswith("leave the match?")  # type: ignore[arg-type]
        clock[0] = 6.0  # too late: the question lapsed
        assert render.plain(app._message()) == "your move> "  # type: ignore[arg-type]
        app.interrupt("Ctrl-C")
        assert not app._quit and sum("for good" in line for line in app.log) == 2
        app.submit("/moves")  # anything else answers "stay"
        app.interrupt("Ctrl-D")
        assert not app._quit
        app.submit("/quit")
        assert app._quit
        # Outside a match nothing is at stake: one Ctrl-C is enough.
        lobby = keyed_app(pipe)
        lobby.interrupt("Ctrl-C")
        assert lobby._quit


def test_the_bell_rings_when_a_decision_becomes_ours() -> None:
    screen = Screen()
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=screen, bell=True)
        w = Wired(app)
        joined(w)  # someone else's turn
        assert "\a" not in screen.buffer.getvalue()
        moves = [{"kind": "play", "card": "7h"}, {"kind": "draw"}]
        w.hear(update([{"event": "play", "seat": 2, "card": "9h"}], view(), moves=moves))
        assert screen.buffer.getvalue().count("\a") == 1
        w.hear(update([{"event": "draw", "seat": 0, "count": 1, "reason": "draw"}], view(),
                      moves=moves))
        assert screen.buffer.getvalue().count("\a") == 1, "the same turn rings once"
        app.submit("/bell")
        w.hear(update([], view(turn=1)))
        w.hear(update([], view(), moves=moves))
        assert screen.buffer.getvalue().count("\a") == 1, "/bell turned it off"
        assert "Bell off." in app.log[-1]


def test_printed_lines_wrap_between_words_at_the_terminals_width() -> None:
    screen = Screen(columns=40)
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=screen)
        app.show([("", "a stand-in bot plays for ayse until ayse acts, and more words")])
        app.submit("/help")
    lines = [ln for ln in screen.text().split("\n") if ln]
    assert lines[:2] == ["a stand-in bot plays for ayse until ayse", "| acts, and more words"]
    assert all(len(ln) <= 40 for ln in lines), lines
    assert app.log[0].startswith("a stand-in bot"), "the log keeps the line whole"


def test_sort_changes_what_a_number_means(app: ClientApp) -> None:
    w = Wired(app)
    w.sent()
    app.submit("/join 1")
    [join] = w.sent()
    hand = ["Kc", "2h", "7s"]
    w.reply(join, table(view_=view(hand=hand), moves=[{"kind": "play", "card": c}
                                                       for c in hand]))
    assert "hand 1:Kc  2:2h  3:7s" in app.status_text()
    app.submit("/sort rank")
    assert "hand 1:2h  2:7s  3:Kc" in app.status_text()
    assert "your move: 1:2h  2:7s  3:Kc" in app.status_text()
    app.submit("1")
    [move] = w.sent()
    assert move["move"] == {"kind": "play", "card": "2h"}, "the number seen is the card played"


def test_log_shows_this_deal_in_pages_that_fit() -> None:
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=Screen(rows=24, columns=80))
        w = Wired(app)
        joined(w)
        w.hear(update([{"event": "deal_start", "deal_no": 2, "dealer": 2}], view()))
        for i in range(40):
            w.hear(update([{"event": "play", "seat": i % 3, "card": "9h"}], view()))
        before = len(app.log)
        app.submit("/log")
        page = app.log[before:]
        room = 24 - len(app.status_lines()) - 1
        assert len(page) <= room and page[0].startswith("deal 2, page 1 of")
        assert page[-1] == "you played 9h", "the newest last"
        before = len(app.log)
        app.submit("/log 9")
        assert app.log[before + 1] == "-- deal 2 -- bot 3 dealt", "the oldest page"


def test_the_status_tells_when_the_server_is_gone(app: ClientApp) -> None:
    w = Wired(app)
    joined(w, moves=[{"kind": "draw"}], deadline=30)
    assert not app.status_text().startswith("disconnected")
    w.proto.connectionLost()
    assert app.status_text().startswith("disconnected - reconnecting | classic")
    assert "(30s)" not in app.status_text() and "(29s)" not in app.status_text()
    w.link.stop()
    assert app.status_text().startswith("disconnected | classic")


def test_the_status_counts_down_to_the_next_deal() -> None:
    clock = [0.0]
    with create_pipe_input() as pipe:
        app = keyed_app(pipe, now=lambda: clock[0])
        app.state.deal_pause = 4.0
        w = Wired(app)
        joined(w)
        result = {"reason": "out", "winner": 1, "multiplier": 1, "points": [25, 0, 9],
                  "hands": [["Qd"], [], ["9d"]]}
        w.hear(update([{"event": "deal_end", "result": result}],
                      view(phase="over", turn=None, result=result)))
        clock[0] = 1.2
        assert "deal 2 of 4 | deal over | next deal in 3s" in app.status_text()
        w.hear(update([{"event": "match_end", "totals": [37, 40, 9], "winners": [2]}],
                      view(phase="over", turn=None, result=result)))
        assert "match over: bot 3 won" in app.status_text()
        assert "next deal" not in app.status_text()


def test_a_long_paste_is_cut_to_what_a_line_can_send(app: ClientApp) -> None:
    """A paste of pages is neither echoed whole nor sent: the line keeps what a chat
    line can hold, behind its command; line breaks become spaces."""
    asyncio.run(_paste(app))  # the buffer reacts to a change on the running loop


async def _paste(app: ClientApp) -> None:
    w = Wired(app)
    w.sent()
    buffer = app.session.default_buffer
    buffer.insert_text("/say " + "word " * 1200)  # a paste of 6,005 characters
    assert buffer.text == ("/say " + "word " * 1200)[:305]
    assert app.log[-1] == "Only the first 305 characters were kept: a chat line holds at most 300."
    app.submit(buffer.text)
    [chat] = w.sent()
    assert chat["type"] == "chat" and len(chat["text"]) == 300 - 1, "within the server's limit"
    buffer.reset()

    buffer.insert_text("x" * 6000)  # plain text: chat as it is
    assert len(buffer.text) == 300
    buffer.reset()
    buffer.insert_text("good\ngame\r\nall")
    assert buffer.text == "good game all"

    app.submit("/register")  # a password may be longer than a chat line
    buffer.reset()
    buffer.insert_text("p" * 800)
    assert len(buffer.text) == 800
