"""The terminal client: one prompt, an event log above it, a status area below it.

prompt_toolkit owns the terminal: `prompt_async` reads a line while the bottom toolbar
shows the status (hand, top card, penalty, turn and time left, counts, stock, scores)
and log lines print above the prompt.  Everything the screen shows comes from
`ClientState`; everything typed goes through `parse`.  Twisted runs on the same asyncio
loop, so server messages arrive while the prompt waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output
from twisted.logger import Logger

from pisyedili.protocol.errors import ProtocolError

from . import cards, render
from .connection import Connection
from .parse import (
    COMMANDS,
    Chat,
    Invalid,
    Local,
    Move,
    NeedSuit,
    Request,
    move_input,
    parse_input,
    parse_suit_answer,
)
from .render import Fragments, Look
from .state import ClientState

log = Logger()

MAX_LOG = 2000


class _Completer(Completer):
    """Tab offers exactly the legal moves the server sent, or the commands after `/`."""

    def __init__(self, app: ClientApp) -> None:
        self.app = app

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor.lstrip()
        low = text.lower()
        if self.app.pending_jack is not None:
            options = [(s, cards.SUIT_NAMES[s]) for s in cards.SUITS]
        elif low.startswith("/"):
            options = [(f"/{c.name}", c.about) for c in COMMANDS]
        else:
            look = self.app.state.look
            shown: dict[str, str] = {}
            for m in self.app.state.legal:
                shown.setdefault(move_input(m), render.plain(render.move(m, look)))
            options = list(shown.items())
        for value, meta in options:
            if value.startswith(low):
                yield Completion(value, start_position=-len(text), display_meta=meta)


class ClientApp:
    """Glue between the prompt, the state and a `Connection`."""

    def __init__(
        self,
        look: Look,
        name: str,
        *,
        input: Input | None = None,
        output: Output | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.state = ClientState(look=look, name=name)
        self.style = render.make_style(look)
        self.now = now
        self.conn: Connection | None = None
        self.pending_jack: str | None = None
        self.log: list[str] = []
        self.changed = asyncio.Event()
        self._output = output
        self._unprinted: list[Fragments] = []
        self._quit = False
        self.subscribe_lobby = True
        """Ask for the table list after `welcome` (offline play has no use for it)."""
        self.session: PromptSession[str] = PromptSession(
            message=self._message,
            bottom_toolbar=self._toolbar,
            completer=_Completer(self),
            complete_while_typing=False,
            refresh_interval=1.0,
            style=self.style,
            input=input,
            output=output,
        )

    # ------------------------------------------------------------------ screen

    def _message(self) -> FormattedText:
        if self.pending_jack is not None:
            jack = render.card(self.pending_jack, self.state.look)
            return FormattedText([*jack, ("", " names which suit? (c d h s, Enter cancels) ")])
        if self.state.my_turn:
            return FormattedText([("class:good", "your move> ")])
        return FormattedText([("", "> " if self.state.at_table else "lobby> ")])

    def _status(self) -> Fragments:
        out: Fragments = []
        for i, line in enumerate(self.state.status(self.now())):
            if i:
                out.append(("", "\n"))
            out += line
        return out

    def _toolbar(self) -> FormattedText:
        return FormattedText(self._status())

    def status_text(self) -> str:
        """The status area as plain text (tests, and anyone scripting the client)."""
        return render.plain(self._status())

    def show(self, line: Fragments) -> None:
        """Add a line to the log above the prompt.

        Lines are printed in batches, once per turn of the event loop: printing above a
        running prompt redraws it, and a burst of events (a bot's turn, a deal's end)
        should cost one redraw, not one per line.
        """
        self.log.append(render.plain(line))
        del self.log[:-MAX_LOG]
        self._unprinted.append(line)
        if len(self._unprinted) == 1:
            try:
                asyncio.get_running_loop().call_soon(self._print)
            except RuntimeError:  # no loop running (before start, after the end)
                self._print()

    def _print(self) -> None:
        lines, self._unprinted = self._unprinted, []
        if not lines:
            return
        out: Fragments = []
        for line in lines:
            out += [*line, ("", "\n")]
        print_formatted_text(FormattedText(out), style=self.style, output=self._output,
                             end="")

    def _refresh(self) -> None:
        self.changed.set()
        app = self.session.app
        if app.is_running:
            app.invalidate()

    # -------------------------------------------------------------- connection

    def attach(self, conn: Connection) -> None:
        self.conn = conn

    def on_message(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        asked = self.conn.request_of(msg.get("id")) if self.conn is not None else None
        if kind == "ok" and asked is not None and asked.get("type") == "leave_table":
            self.state.left_table()
            self.show([("class:dim", "you left the table")])
            if not self._quit:
                self._send({"type": "lobby_subscribe"})  # back in the lobby: show the tables
        try:
            lines = self.state.handle(msg, self.now())
        except Exception:
            # The schema checked the envelope, not every key of a view: a server that
            # sends what we cannot draw costs one message, never the connection.
            log.failure("cannot show a {kind} message", kind=kind)
            lines = [[("class:error", f"(could not show a {kind} message from the server)")]]
        for line in lines:
            self.show(line)
        if kind == "welcome" and not self.state.at_table and self.subscribe_lobby:
            self._send({"type": "lobby_subscribe"})
        if kind == "error" and self.pending_jack is not None:
            self.pending_jack = None
        self._refresh()

    def on_status(self, text: str) -> None:
        self.show([("class:dim", f"* {text}")])
        self._refresh()

    def _send(self, msg: dict[str, Any]) -> int | None:
        if self.conn is None:
            self.show([("class:error", "not connected")])
            return None
        try:
            return self.conn.send(msg)
        except ProtocolError as exc:
            self.show([("class:error", exc.message)])
            return None

    # ------------------------------------------------------------------- input

    def submit(self, text: str) -> None:
        """Act on one line the player typed."""
        if self.pending_jack is not None:
            jack, self.pending_jack = self.pending_jack, None
            suit = parse_suit_answer(text)
            if suit is None:
                if text.strip():
                    self.show([("class:error", "Not a suit; the jack stays in your hand.")])
                return
            self._send({"type": "move", "move": {"kind": "play", "card": jack, "suit": suit}})
            return
        parsed = parse_input(text, self.state.context())
        if parsed is None:
            return
        if isinstance(parsed, Move):
            self._send({"type": "move", "move": dict(parsed.move)})
        elif isinstance(parsed, NeedSuit):
            self.pending_jack = parsed.card
        elif isinstance(parsed, Request):
            self._send(dict(parsed.msg))
        elif isinstance(parsed, Chat):
            scope = "table" if self.state.at_table else "lobby"
            self._send({"type": "chat", "text": parsed.text, "scope": scope})
        elif isinstance(parsed, Invalid):
            self.show([("class:error", parsed.message)])
        elif isinstance(parsed, Local):
            self._local(parsed)
        self._refresh()

    def _local(self, cmd: Local) -> None:
        if cmd.name == "quit":
            self._quit = True
        elif cmd.name == "help":
            for line in render.help_lines():
                self.show(line)
        elif cmd.name == "rules":
            for line in render.rules_lines(*self.state.rules()):
                self.show(line)
        elif cmd.name == "moves":
            legal = self.state.legal
            self.show([("", "legal: "), *render.legal_hint(legal, self.state.look)] if legal
                      else [("class:dim", "it is not your turn")])

    # -------------------------------------------------------------------- loop

    async def run(self) -> None:
        """Read lines until `/quit`, Ctrl-D or Ctrl-C, then leave cleanly."""
        self.show([("class:dim", "Type /help for commands. Ctrl-D or /quit leaves.")])
        while not self._quit:
            try:
                text = await self.session.prompt_async()
            except (EOFError, KeyboardInterrupt):
                self._quit = True
            self.submit(text)
        await self.close()

    async def close(self) -> None:
        """Leave the table (so the seat is not held for us) and stop reconnecting."""
        if self.conn is None:
            return
        if self.conn.connected and self.state.at_table:
            self._send({"type": "leave_table"})
            await asyncio.sleep(0.05)  # let the request reach the socket before closing
        await self.conn.stop().asFuture(asyncio.get_running_loop())
