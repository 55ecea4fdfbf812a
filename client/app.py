"""The terminal client: one prompt, an event log above it, a status area below it.

prompt_toolkit owns the terminal: `prompt_async` reads a line while the bottom toolbar
shows the status (hand, top card, penalty, turn and time left, counts, stock, scores)
and log lines print above the prompt.  Everything the screen shows comes from
`ClientState`, laid out for the terminal's width at each redraw; everything typed goes
through `parse`.  Twisted runs on the same asyncio loop, so server messages arrive
while the prompt waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import DummyHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output
from prompt_toolkit.renderer import print_formatted_text as print_fragments
from twisted.internet.defer import Deferred
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol import passwords
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_CHAT, MAX_PASSWORD

from . import cards, i18n, render, replay
from .i18n import _, ngettext
from .parse import (
    COMMANDS,
    Chat,
    Invalid,
    Local,
    Move,
    NeedSuit,
    Request,
    Secret,
    move_input,
    parse_input,
    parse_suit_answer,
)
from .render import Fragments, Look, plain
from .state import ClientState
from .terminal_text import visible, visible_fragments
from .token_store import ServerLogins
from .wire import Link, Message, NotConnected, RequestFailed

log = Logger()

MAX_LOG = 2000
LEAVE_WAIT = 2.0
"""Seconds `close` waits for the server to confirm `leave_table` before hanging up."""
CONFIRM_WINDOW = 5.0
"""Seconds within which a second Ctrl-C (or `/quit`, `/leave`) confirms leaving a match."""


def status_rows(rows: int) -> int:
    """The most rows the status area takes of a terminal `rows` high: a third of them
    (at least three) stay for the log and one for the prompt, so the others' moves are
    seen."""
    return max(rows - 1 - max(rows // 3, 3), 2)


def input_limit(line: str) -> int:
    """The most characters `line` can usefully hold: a chat line's (`MAX_CHAT`, the
    server's limit), after the command in front of it if any (`/say `, `/announce `).
    Every other request is shorter."""
    body = line.lstrip()
    head = len(line) - len(body)
    if body.startswith("/"):
        word = body.split(maxsplit=1)[0]
        head += len(word) + len(body[len(word):]) - len(body[len(word):].lstrip())
    return head + MAX_CHAT


class _Completer(Completer):
    """Tab offers exactly the legal moves the server sent, or the commands after `/`."""

    def __init__(self, app: ClientApp) -> None:
        self.app = app

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor.lstrip()
        low = text.lower()
        if self.app.pending_jack is not None:
            options = [(s, render.suit_name(s)) for s in cards.SUITS]
        elif low.startswith("/"):
            options = [(f"/{c.name}", render.about(c)) for c in COMMANDS]
        else:
            look = self.app.state.look
            shown: dict[str, str] = {}
            for m in self.app.state.legal:
                shown.setdefault(move_input(m), visible(render.plain(render.move(m, look))))
            options = list(shown.items())
        for value, meta in options:
            if value.startswith(low):
                yield Completion(value, start_position=-len(text), display_meta=meta)


def _replay_keys(app: ClientApp) -> KeyBindings:
    """In a replay, with nothing typed: arrows step through moves, PageDown and PageUp
    through deals, End to the deal's result (`REPLAY_COMMANDS`)."""
    keys = KeyBindings()
    idle = Condition(lambda: app.replay is not None and not app.session.default_buffer.text)
    for key, word in (("right", "n"), ("left", "b"), ("pagedown", "nd"), ("pageup", "pd"),
                      ("end", "end")):

        def step(event: KeyPressEvent, word: str = word) -> None:
            app.replay_step(word)

        keys.add(key, filter=idle)(step)
    return keys
@dataclass
class _Ask:
    """Passwords being asked for, one hidden prompt each."""

    secret: Secret
    prompts: tuple[str, ...]
    answers: list[str] = field(default_factory=list)


class ClientApp:
    """Glue between the prompt, the state and a `Link`."""

    def __init__(
        self,
        look: Look,
        name: str,
        *,
        input: Input | None = None,
        output: Output | None = None,
        now: Callable[[], float] = time.monotonic,
        bell: bool = False,
        order: str = "suit",
    ) -> None:
        self.state = ClientState(look=look, name=name, hand_order=order)
        self.style = render.make_style(look)
        self.now = now
        self.bell = bell
        """Ring the terminal bell when a decision becomes ours."""
        self.link: Link | None = None
        self.pending_jack: str | None = None
        self.log: list[str] = []
        self.changed = asyncio.Event()
        self._output = output
        self._unprinted: list[Fragments] = []
        self._printing: asyncio.Future[None] | None = None
        """Lines waiting for the terminal's cursor report before they print."""
        self._quit = False
        self._resyncing = False
        self._link_ended = False
        self._armed: tuple[str, float] | None = None
        self._armed_key = "Ctrl-C"
        """What asked for the armed action (Ctrl-C, Ctrl-D or /quit): the prompt asks
        for it again."""
        """(`quit` or `leave`, when): leaving a match was asked once, not yet confirmed."""
        self.subscribe_lobby = True
        """Ask for the table list after `welcome` (offline play has no use for it)."""
        self.quit_from_match = False
        """The player quit during a running match: the saved resume token is kept, so a
        restart comes back as the same player (cli.py drops it after a lobby quit)."""
        self.keep_seat_on_quit = False
        """Quitting mid-match hangs up without leaving the table, so the seat is held
        for a later `pisyedili play --continue` (offline play that keeps its match)."""
        self.resume_note: str | None = None
        """A line for /help on how sessions are kept across restarts (none offline)."""
        self.replay: replay.Viewer | None = None
        """The finished match being replayed, if one is: the status area shows it."""
        self.replay_only = False
        """`pisyedili replay FILE`: no server, and leaving the replay ends the program."""
        self.replay_to_log = False
        """Print the replay's screen above the prompt at each step too: for an output that
        is not a terminal (a pipe, a file), where the status area cannot be redrawn."""
        self.logins: ServerLogins | None = None
        """The logins remembered for this server (network games only)."""
        self.insecure: str | None = None
        """Set when the connection is neither TLS nor loopback: what to call it when
        warning that a password would cross the network in clear."""
        self._asking: _Ask | None = None
        self._cut = False
        """The line being typed was cut to its limit already (and the player told)."""
        self.session: PromptSession[str] = PromptSession(
            message=self._message,
            bottom_toolbar=self._toolbar,
            completer=_Completer(self),
            complete_while_typing=False,
            refresh_interval=1.0,
            key_bindings=_replay_keys(self),
            style=self.style,
            input=input,
            output=output,
        )
        self.session.default_buffer.on_text_changed += self._bound_input

    # ------------------------------------------------------------------ screen

    def _size(self) -> tuple[int, int]:
        """(rows, columns) of the terminal, as prompt_toolkit sees it now."""
        try:
            size = self.session.output.get_size()
            return max(size.rows, 1), max(size.columns, 20)
        except Exception:  # an output that cannot tell (closed, not a terminal)
            return 24, 80

    def _message(self) -> FormattedText:
        armed = self._armed_action()
        if armed == "quit":  # in the words of what the player did: Ctrl-C, Ctrl-D, /quit
            return FormattedText([("class:warn", _("leave the match? {key} again> ",
                                                   key=self._armed_key))])
        if armed == "leave":
            return FormattedText([("class:warn", _("leave the match? /leave again> "))])
        if self.replay is not None:
            return FormattedText([("class:title", _("replay")), ("", "> ")])
        if self.pending_jack is not None:
            jack = render.card(self.pending_jack, self.state.look)
            return FormattedText([*jack, ("", _(" names which suit? (c d h s, Enter "
                                                "cancels) "))])
        if self.state.my_turn:
            return FormattedText([("class:good", _("your move> "))])
        if self.state.held_by_bot():
            return FormattedText([("class:warn", _("(a bot plays for you) > "))])
        return FormattedText([("", "> " if self.state.at_table else _("lobby> "))])

    def _link_state(self) -> str:
        if self.link is None:
            return ""
        if self._link_ended:
            return "gone"
        if self.link.connected:
            return ""
        return "reconnecting" if self.state.player is not None else "connecting"

    def status_lines(self) -> list[Fragments]:
        """The status area, laid out for the terminal's width; names and words from the
        server or a file shown as `visible` makes them."""
        rows, width = self._size()
        if self.replay is not None:
            lines = replay.screen(self.replay, self.state.look, width)
        else:
            lines = self.state.status(self.now(), width, self._link_state(),
                                      status_rows(rows))
        return [visible_fragments(line) for line in lines]

    def _status(self) -> Fragments:
        out: Fragments = []
        for i, line in enumerate(self.status_lines()):
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

        Every line passes through `visible` here, before it is wrapped (so its width is
        what the terminal will show): whatever the server, a file or a log event put in
        it reaches the terminal as text, never as a control sequence.
        """
        line = visible_fragments(line)
        self.log.append(render.plain(line))
        del self.log[:-MAX_LOG]
        self._unprinted.append(line)
        if len(self._unprinted) == 1:
            try:
                asyncio.get_running_loop().call_soon(self._print)
            except RuntimeError:  # no loop running (before start, after the end)
                self._print()

    def _print(self) -> None:
        app = self.session.app
        if app.is_running and app.renderer.waiting_for_cpr:
            # The terminal is telling where the cursor was: a redraw that used that
            # answer after these lines moved the cursor would overrun the screen's end
            # and scroll the lines above it away.
            if self._printing is None:
                self._printing = asyncio.ensure_future(self._print_after_cursor_report())
            return
        lines, self._unprinted = self._unprinted, []
        if not lines:
            return
        width = self._size()[1]
        out: Fragments = []
        mark = render.continued(self.state.look)  # a wrapped row is not a line of its own
        for line in lines:
            for row in render.wrap(line, width, mark=mark):  # at spaces, not mid-word
                out += [*row, ("", "\n")]
        if not app.is_running:
            print_formatted_text(FormattedText(out), style=self.style, output=self._output,
                                 end="")
            return
        # Above a running prompt, prompt_toolkit's own printing suspends the prompt and
        # puts the terminal back in cooked mode meanwhile, where a key pressed at that
        # moment is the terminal's, not ours: Ctrl-D is swallowed as end of file and
        # Ctrl-C becomes a signal.  Bots and the server print often, so the prompt is
        # erased, the lines written and the prompt drawn again, with the keyboard ours
        # throughout.
        app.renderer.erase()
        print_fragments(app.output, FormattedText(out), self.style, color_depth=app.color_depth)
        app.output.flush()
        app.renderer.request_absolute_cursor_position()
        app.invalidate()

    async def _print_after_cursor_report(self) -> None:
        await self.session.app.renderer.wait_for_cpr_responses()
        self._printing = None
        self._print()

    def _refresh(self) -> None:
        self.changed.set()
        app = self.session.app
        if app.is_running:
            app.invalidate()

    # -------------------------------------------------------------- connection

    def attach(self, link: Link) -> None:
        self.link = link
        self._link_ended = False

        def ended(result: object) -> object:
            if self.link is link:
                self._link_ended = True
                self._refresh()
            return result

        link.when_ended().addCallback(ended)

    def on_message(self, msg: Message) -> None:
        kind = msg.get("type")
        was_mine = self.state.my_turn
        self.state.width = self._size()[1]  # a deal's end lays its sheet out for it
        try:
            lines = self.state.handle(msg, self.now())
        except Exception:
            # The schema checked the envelope, not every key of a view: a server that
            # sends what we cannot draw costs one message, never the connection.
            log.failure("cannot show a {kind} message", kind=kind)
            lines = [[("class:error", _("(could not show a {kind} message from the server)",
                                        kind=kind))]]
        for line in lines:
            self.show(line)
        if kind == "welcome" and not msg.get("resumed") and not msg.get("registered"):
            self._auto_login()
        if kind == "welcome" and not self.state.at_table and self.subscribe_lobby:
            self._send({"type": "lobby_subscribe"})
        if kind == "error" and self.pending_jack is not None:
            self.pending_jack = None
        if self.bell and self.state.my_turn and not was_mine:
            self.session.output.bell()
        self._refresh()

    def on_status(self, text: str) -> None:
        self.show([("class:dim", f"* {text}")])
        self._refresh()

    def on_unreadable(self, error: ProtocolError) -> None:
        """A server message we cannot read may have been a step of the game: at a table,
        ask for a fresh snapshot rather than play on from a stale picture."""
        self.on_status(_("ignored a server message I cannot read ({code})", code=error.code))
        if self.state.at_table and not self._resyncing:
            self.resync()

    def resync(self) -> None:
        d = self._send({"type": "resync"})
        if d is not None:
            self._resyncing = True

            def done(reply: object) -> object:
                self._resyncing = False
                return reply

            d.addBoth(done)

    def _send(self, msg: dict[str, Any]) -> Deferred[Message | None] | None:
        """Send a request. Its reply reaches the screen through `on_message` anyway;
        the Deferred is for callers that act on it, and fires with None when no reply
        will come (handled here, so no Deferred is left failing unheard)."""
        if self.link is None:
            self.show([("class:error", _("not connected"))])
            return None
        try:
            d = self.link.request(msg)
        except ProtocolError as exc:
            self.show(render.refusal({"code": exc.code, "message": exc.message},
                                     self.state.look))
            return None

        def failed(failure: Failure) -> None:
            if not isinstance(failure.value, RequestFailed):
                failure.raiseException()  # a bug in a callback: let it be logged
            # A lost connection says so itself, and an unreadable reply was reported by
            # `on_unreadable`: only a request that never left needs a word.
            if isinstance(failure.value, NotConnected):
                self.show([("class:dim", self._not_sent())])
                self._refresh()

        return d.addErrback(failed)

    def _not_sent(self) -> str:
        """Why a request was not sent: the link is still (re)connecting, or it has
        stopped for good and only the player can start another."""
        if not self._link_ended:
            return _("* not connected yet; the request was not sent")
        if self.keep_seat_on_quit:
            return _("* the connection has ended for good, so nothing is sent any more. "
                     "/quit leaves; `pisyedili play --continue` then takes the match up "
                     "again.")
        return _("* the connection has ended for good (the reason is above), so nothing is "
                 "sent any more. /quit leaves; to reconnect, run pisyedili again with the "
                 "same server and --name.")

    def _leave(self) -> Deferred[Message | None] | None:
        d = self._send({"type": "leave_table"})
        if d is None:
            return None

        def left(reply: Message | None) -> Message | None:
            if reply is not None and reply["type"] == "ok":
                self.state.left_table()
                self.show([("class:dim", _("you left the table"))])
                if not self._quit:
                    self._send({"type": "lobby_subscribe"})  # back in the lobby: the tables
                self._refresh()
            return reply

        return d.addCallback(left)

    # ------------------------------------------------------------------- input

    def _bound_input(self, buffer: Buffer) -> None:
        """Keep the line being typed to one line no longer than the longest it can send
        (`input_limit`): a paste of pages would otherwise be echoed whole into the
        scrollback, and refused by the server. Its line breaks become spaces. (A
        password is cut silently: at its limit it is no password anyone typed.)"""
        text = buffer.text
        if not text:
            self._cut = False
            return
        one = " ".join(text.splitlines()) if "\n" in text or "\r" in text else text
        limit = MAX_PASSWORD if self._asking is not None else input_limit(one)
        if len(one) <= limit and one == text:
            return
        kept = one[:limit]
        buffer.document = Document(kept, min(buffer.cursor_position, len(kept)))
        if len(one) > limit and not self._cut and self._asking is None:
            self._cut = True
            self.show([("class:warn", _("Only the first {count} characters were kept: a "
                                        "chat line holds at most {chat}.", count=limit,
                                        chat=MAX_CHAT))])

    def _armed_action(self) -> str | None:
        """What a second Ctrl-C, `/quit` or `/leave` would confirm now, if anything."""
        if self._armed is not None and self.now() - self._armed[1] > CONFIRM_WINDOW:
            self._armed = None
        return self._armed[0] if self._armed is not None else None

    def _want_out(self, action: str, key: str, armed: str | None) -> None:
        """`quit` or `leave` (asked for by `key`): at once, unless it gives up a match
        in progress; that takes a second ask within `CONFIRM_WINDOW` seconds."""
        if armed == action or not self.state.in_match() or self._link_ended:
            self._armed = None
            if action == "quit":
                self._quit = True
                self.quit_from_match = self.state.in_match()
            else:
                self._leave()
            return
        self._armed = (action, self.now())
        self._armed_key = key
        if action == "quit" and self.keep_seat_on_quit:
            what = _("The match is on: it is kept, and `pisyedili play --continue` takes "
                     "it up again.")
        else:
            what = _("The match is on: leaving hands your seat to a bot for good.")
        seconds = f"{CONFIRM_WINDOW:g}"
        if action == "leave":
            again = _("To leave, type /leave again within {seconds} seconds; anything else "
                      "stays.", seconds=seconds)
        elif key == "/quit":
            again = _("To quit, type /quit again (or press Ctrl-C) within {seconds} seconds; "
                      "anything else stays.", seconds=seconds)
        else:
            again = _("To quit, press {key} again (or type /quit) within {seconds} seconds; "
                      "anything else stays.", key=key, seconds=seconds)
        self.show([("class:warn", f"{what} {again}")])

    def interrupt(self, key: str) -> None:
        """Ctrl-C or Ctrl-D at the prompt: cancel the suit question, else quit."""
        armed = self._armed_action()
        if self.pending_jack is not None:
            self.pending_jack = None
            self.show([("class:dim", _("The jack stays in your hand."))])
        else:
            self._want_out("quit", key, armed)
        self._refresh()

    def submit(self, text: str) -> None:
        """Act on one line the player typed."""
        armed, self._armed = self._armed_action(), None  # any line answers "leave?"
        self._cut = False  # the next line is told of its own cut
        if self.pending_jack is not None:
            jack, self.pending_jack = self.pending_jack, None
            suit = parse_suit_answer(text)
            if suit is None:
                if text.strip():
                    self.show([("class:error", _("Not a suit; the jack stays in your "
                                                 "hand."))])
                return
            self._send({"type": "move", "move": {"kind": "play", "card": jack, "suit": suit}})
            return
        if self.replay is not None and not text.lstrip().startswith("/"):
            self.replay_step(text)
            return
        parsed = parse_input(text, self.state.context())
        if parsed is None:
            return
        if isinstance(parsed, Move):
            self._send({"type": "move", "move": dict(parsed.move)})
        elif isinstance(parsed, NeedSuit):
            self.pending_jack = parsed.card
        elif isinstance(parsed, Request):
            if parsed.msg.get("type") == "leave_table":
                self._want_out("leave", "/leave", armed)
            elif parsed.msg.get("type") == "resync":
                self.resync()
            elif parsed.msg.get("type") == "history":
                if self._has_history():
                    self._send(self._history_request(dict(parsed.msg)))
            elif parsed.msg.get("type") == "logout":
                self._logout(dict(parsed.msg))
            elif parsed.msg.get("type") == "answer_invite":
                self._answer_invite(dict(parsed.msg))
            else:
                self._send(dict(parsed.msg))
        elif isinstance(parsed, Secret):
            self._ask(parsed)
        elif isinstance(parsed, Chat):
            scope = "table" if self.state.at_table else "lobby"
            self._send({"type": "chat", "text": parsed.text, "scope": scope})
        elif isinstance(parsed, Invalid):
            self.show(render.with_cards(parsed.message, self.state.look, "class:error")
                      if parsed.cards else [("class:error", parsed.message)])
        elif isinstance(parsed, Local):
            self._local(parsed, armed)
        self._refresh()

    def _answer_invite(self, msg: dict[str, Any]) -> None:
        """Answer an invitation; once answered (or found over) it is ours no more. The
        server tells the inviter, not us: we drop it on the reply."""
        d = self._send(msg)
        if d is None:
            return

        def answered(reply: Message | None) -> Message | None:
            if reply is not None and (reply.get("type") != "error"
                                      or reply.get("code") == "no_such_invite"):
                self.state.invites.pop(msg["invite"], None)
            return reply

        d.addCallback(answered)

    def _local(self, cmd: Local, armed: str | None) -> None:
        look, width = self.state.look, self._size()[1]
        if cmd.name == "quit":
            self._want_out("quit", "/quit", armed)
        elif cmd.name == "replay":
            self.fetch_match(int(cmd.arg), self.start_replay)
        elif cmd.name == "export":
            self._export(cmd.arg)
        elif cmd.name == "help":
            where = "replay" if self.replay is not None else self.state.place()
            for line in render.help_lines(cmd.arg, width, look, where):
                self.show(line)
            if self.resume_note and not cmd.arg:
                self.show([("class:dim", self.resume_note)])
        elif cmd.name == "rules":
            for line in render.rules_lines(*self.state.rules()):
                self.show(line)
        elif cmd.name == "moves":
            legal = self.state.legal
            self.show([("", _("legal: ")), *render.legal_hint(legal, look, self.state.hand())]
                      if legal else [("class:dim", _("it is not your turn"))])
        elif cmd.name == "log":
            # The page fits above the status area and the prompt, as they stand now.
            rows = self._size()[0] - len(self.status_lines()) - 1
            deal = (self.state.view or {}).get("deal_no")
            self.state.width = width
            for line in render.log_page(self.state.deal_log, int(cmd.arg or 1), rows, width,
                                        deal, look):
                self.show(line)
        elif cmd.name == "score":
            sheet = (replay.sheet_lines(self.replay, look, width) if self.replay is not None
                     else self.state.sheet_lines(width))
            for line in sheet:
                self.show(line)
        elif cmd.name == "sort":
            order = cmd.arg or ("rank" if self.state.hand_order == "suit" else "suit")
            self.state.hand_order = order
            self.show([("class:dim", _("Your hand is sorted by rank; the numbers beside the "
                                       "cards follow.") if order == "rank" else
                        _("Your hand is sorted by suit; the numbers beside the cards "
                          "follow."))])
        elif cmd.name == "bell":
            self.bell = cmd.arg == "on" if cmd.arg else not self.bell
            self.show([("class:dim", _("Bell on: the terminal rings when it is your turn.")
                        if self.bell else _("Bell off."))])
        elif cmd.name == "lang":
            self._language(cmd.arg)

    def _language(self, code: str) -> None:
        """`/lang CODE`: every line from now on, and the status area at once, in it."""
        if code:
            i18n.set_language(code)
            self.show([("class:good", _("The screen speaks English now."))])
            return
        listed = ", ".join(f"{c} {i18n.NAMES[c]}" for c in i18n.CHOICES)
        self.show([("class:dim", _("Languages: {languages}; /lang CODE picks one.",
                                   languages=listed))])

    # --------------------------------------------------------------- replays

    def start_replay(self, match: replay.MatchReplay) -> None:
        """Show `match` in the status area, from its first deal as dealt."""
        self.replay = replay.Viewer(match)
        deals = ngettext("{n} deal", "{n} deals", len(match.deals))
        if self.state.look.unicode:
            keys = _("{deals}: n or → steps, b or ← goes back, nd/pd for deals, q leaves; "
                     "/help replay for all.", deals=deals)
        else:
            keys = _("{deals}: n steps, b goes back, nd/pd for deals, q leaves; /help "
                     "replay for all.", deals=deals)
        self.show([("class:title", _("Replay of match #{id}", id=match.id)),
                   ("", f", {keys}")])
        self._replay_logged()
        self._refresh()

    def _replay_logged(self) -> None:
        if self.replay is not None and self.replay_to_log:
            for line in replay.screen(self.replay, self.state.look, self._size()[1]):
                self.show(line)

    def replay_step(self, text: str) -> None:
        """One typed word (or key) of a replay."""
        if self.replay is None:
            return
        said = replay.replay_command(text, self.replay)
        if said == "quit":
            self.replay = None
            self.show([("class:dim", _("left the replay"))])
            if self.replay_only:
                self._quit = True
        elif said:
            self.show([("class:dim", said)])
        else:
            self._replay_logged()
        self._refresh()

    def _has_history(self) -> bool:
        if self.link is None or not self.link.connected:
            self.show([("class:error", _("Not connected: match history comes from a "
                                         "server."))])
            return False
        if "history" not in self.link.features:
            self.show([("class:error", _("This server keeps no match history."))])
            return False
        return True

    def _history_request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """`/history` as sent: offline, "mine" is every match kept (each `play` is a
        session of its own, and the server lists a session's own matches as "mine")."""
        if self.state.local_history and msg.get("of") == "mine":
            msg["of"] = "recent"
        return msg

    def fetch_match(self, match_id: int,
                    then: Callable[[replay.MatchReplay], None]) -> Deferred[None] | None:
        """Fetch a whole finished match, deal by deal and page by page, check it, and
        hand it to `then`; a refusal was shown already (as every reply is)."""
        if not self._has_history():
            return None
        link = self.link
        assert link is not None
        self.show([("class:dim", _("* fetching match #{id}", id=match_id))])

        async def fetch() -> replay.MatchReplay | None:
            replies: list[Message] = []
            deal, start, deals = 1, 0, 1
            while deal <= deals:
                ask: dict[str, Any] = {"type": "replay", "match": match_id, "deal": deal}
                if start:
                    ask["from"] = start
                reply = await link.request(ask)
                if reply["type"] != "replay":
                    return None
                replies.append(reply)
                deals = int(reply["match"]["deals"])
                got = int(reply["from"]) + len(reply["record"]["moves"])
                if got < int(reply["move_count"]) and got > start:
                    start = got
                else:
                    deal, start = deal + 1, 0
            return replay.from_replies(replies)

        def fetched(match: replay.MatchReplay | None) -> None:
            if match is not None:
                then(match)
            self._refresh()

        def failed(failure: Failure) -> None:
            if isinstance(failure.value, replay.ReplayError):
                self.show([("class:error", _("Cannot replay match #{id}: {error}",
                                             id=match_id, error=str(failure.value)))])
            elif isinstance(failure.value, RequestFailed):
                self.show([("class:error", _("Match #{id} did not arrive: {error}",
                                             id=match_id, error=str(failure.value)))])
            else:
                failure.raiseException()  # a bug: let it be logged
            self._refresh()

        return Deferred.fromCoroutine(fetch()).addCallbacks(fetched, failed)

    def _export(self, arg: str) -> None:
        """`/export ID FILE` fetches the match and saves it; `/export FILE` saves the
        one being replayed."""
        first, by_id, rest = arg.partition("\n")  # `ID\nFILE`, or just `FILE`
        if by_id:
            self.fetch_match(int(first), lambda match: self._save(match, rest))
        elif self.replay is not None:
            self._save(self.replay.match, first)
        else:
            self.show([("class:error", _("Usage: {usage} (or /export FILE during a replay)",
                                         usage="/export ID FILE"))])

    def _save(self, match: replay.MatchReplay, path: str) -> None:
        try:
            replay.save(match, path)
        except OSError as exc:
            self.show([("class:error", _("Could not save match #{id} to {path}: {error}",
                                         id=match.id, path=path,
                                         error=str(exc.strerror or exc)))])
            return
        self.show([("class:good", _("saved match #{id} to {path}", id=match.id, path=path)),
                   ("class:dim", _(" (pisyedili replay {path} opens it)", path=path))])
    # ---------------------------------------------------------------- accounts

    def _ask(self, secret: Secret) -> None:
        """Start asking for the password(s) `secret` needs, at a hidden prompt."""
        prompts = {"register": (_("New password: "), _("Again: ")),
                   "login": (_("Password for {name}: ", name=secret.name),),
                   "passwd": (_("Current password: "), _("New password: "), _("Again: "))}
        self._asking = _Ask(secret, prompts[secret.kind])
        if self.insecure is not None:
            self.show([("class:error", _("Warning: the connection to {server} is not "
                                         "encrypted: the password would cross the network "
                                         "in clear. Connect with tls:HOST:PORT if the server "
                                         "offers TLS. An empty line cancels.",
                                         server=self.insecure))])
        else:
            self.show([("class:dim", _("(an empty line cancels)"))])

    @property
    def secret_prompt(self) -> str | None:
        """What the hidden prompt asks now, if a password is wanted."""
        ask = self._asking
        return None if ask is None else ask.prompts[len(ask.answers)]

    def answer_secret(self, text: str) -> None:
        """One hidden answer; the request goes once all are in (never echoed or kept)."""
        ask = self._asking
        if ask is None:
            return
        if not text:
            self._asking = None
            self.show([("class:dim", _("cancelled"))])
            return
        ask.answers.append(text)
        if len(ask.answers) < len(ask.prompts):
            return
        self._asking = None
        kind, answers = ask.secret.kind, ask.answers
        if kind in ("register", "passwd") and answers[-1] != answers[-2]:
            self.show([("class:error", _("The two passwords differ; nothing was sent."))])
            return
        if kind in ("register", "passwd"):  # the server's rules, before a hash is spent
            refused = passwords.problem(passwords.normalise(answers[-1]))
            if refused is not None:
                why = plain(render.refusal({"code": refused[0], "message": refused[1]},
                                           self.state.look))
                self.show([("class:error", _("{why}; nothing was sent.", why=why))])
                return
        msg: dict[str, Any] = {"type": kind}
        if kind == "register":
            msg["password"] = answers[0]
        elif kind == "login":
            msg.update(name=ask.secret.name, password=answers[0])
        else:
            msg.update(old=answers[0], new=answers[1])
        self._account_request(msg)

    async def _read_secret(self, prompt: str) -> str:
        """One line at the prompt, hidden as it is typed and kept out of the history."""
        buffer = self.session.default_buffer
        history, buffer.history = buffer.history, DummyHistory()
        try:
            return await self.session.prompt_async(prompt, is_password=True)
        finally:
            buffer.history = history
            self.session.message = self._message
            self.session.is_password = False

    def _account_request(self, msg: dict[str, Any], saved: bool = False) -> None:
        """Send an account request; keep the login token its `account` answer carries,
        under the account's name (a `bad_login` for a saved token means it was revoked:
        forget it)."""
        d = self._send(msg)
        if d is None:
            return

        def answered(reply: Message | None) -> None:
            if reply is None or self.logins is None:
                return
            if reply.get("type") == "account" and reply.get("login"):
                self.logins.save(str(reply["name"]), str(reply["login"]))
            elif saved and reply.get("code") == "bad_login":
                self.logins.delete(str(msg["name"]))
                self.show([("class:dim", _("* the saved login was revoked; /login again"))])
                self._refresh()

        d.addCallback(answered)

    def _auto_login(self) -> None:
        """Log in with the login saved for this client's own name, never another's: on
        a computer friends share, `--name Zeynep` must not become Ayşe."""
        saved = self.logins.mine() if self.logins is not None else None
        if saved is not None:
            self._account_request({"type": "login", "name": saved.name,
                                   "token": saved.token}, saved=True)

    def _logout(self, msg: dict[str, Any]) -> None:
        """Revoke the login of the account this session is logged in to, and forget it
        here whatever the server says."""
        account = self.state.name if self.state.registered else None
        saved = (self.logins.load(account)
                 if self.logins is not None and account is not None else None)
        if saved is not None:
            msg["token"] = saved.token
            assert self.logins is not None
            self.logins.delete(saved.name)
        self._send(msg)

    # -------------------------------------------------------------------- loop

    async def run(self) -> None:
        """Read lines until `/quit`, Ctrl-D or Ctrl-C (confirmed during a match), then
        leave cleanly."""
        self.show([("class:dim", _("Type /help for commands. Ctrl-D or /quit leaves."))])
        while not self._quit:
            try:
                text = await self.session.prompt_async()
            except KeyboardInterrupt:
                self.interrupt("Ctrl-C")
                continue
            except EOFError:
                self.interrupt("Ctrl-D")
                continue
            self.submit(text)
            while self.secret_prompt is not None:
                try:
                    secret = await self._read_secret(self.secret_prompt)
                except (KeyboardInterrupt, EOFError):
                    secret = ""
                self.answer_secret(secret)
                self._refresh()
        await self.close()

    async def close(self) -> None:
        """Leave the table (so the seat is not held for us) and stop reconnecting."""
        if self._printing is not None:
            await self._printing  # the last lines, before the program ends
        if self.link is None:
            return
        loop = asyncio.get_running_loop()
        keep = self.keep_seat_on_quit and self.quit_from_match
        if self.link.connected and self.state.at_table and not keep:
            left = self._leave()
            if left is not None:
                try:
                    await asyncio.wait_for(left.asFuture(loop), LEAVE_WAIT)
                except TimeoutError:
                    pass  # a silent server: hang up anyway
        await self.link.stop().asFuture(loop)
