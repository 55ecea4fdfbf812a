"""Invitations to a table: who invited whom, until an answer, an expiry or a change of
the table ends each one, and the limits that keep them from being a flood.

An invitation is a notice, never a seat held: the table may fill or start meanwhile
(then it ends, `unavailable`), the inviter may leave it (`withdrawn`), and accepting
one joins the table as it is then. Each party is told how it ended (`invite_ended`):
the invitee unless it was the one who answered, the inviter unless it was the one who
left. The limits (docs/protocol.md, "Invitations"): a few
a minute from one address, a few a minute to one player, and one open at a time from
one inviter to one invitee; the refusal is `too_many_invites` with `retry_after`.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import Any

from twisted.logger import Logger

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.people.session import Session
from pisyedili.server.table.core import TablePhase
from pisyedili.server.table.runner import TableRunner

log = Logger()

INVITE_SECONDS = 60
"""How long an invitation stays open without an answer."""
WINDOW = 60.0
"""The span the rates below are counted over, in seconds."""
FROM_ADDRESS = 5
"""Invitations sent from one address per `WINDOW` (a new `hello` is a new player, so
the inviter's address is what a flood cannot shed)."""
TO_PLAYER = 3
"""Invitations one player receives per `WINDOW`."""
TRACKED = 4096
"""Past this many addresses or players counted, the ones with nothing in the window
are dropped: the counts never grow with everyone who ever sent one."""


@dataclass(eq=False)
class Invitation:
    id: int
    inviter: Session
    invitee: Session
    table: TableRunner
    timer: Delayed


class _Window:
    """How many times each key acted in the last `WINDOW` seconds."""

    def __init__(self, clock: Clock, most: int) -> None:
        self._clock = clock
        self._most = most
        self._times: dict[str, deque[float]] = {}

    def wait(self, key: str) -> float:
        """Seconds until `key` may act again; 0: it may now."""
        now = self._clock.seconds()
        times = self._times.get(key)
        if times is None:
            return 0.0
        while times and times[0] <= now - WINDOW:
            times.popleft()
        return 0.0 if len(times) < self._most else times[0] + WINDOW - now

    def count(self, key: str) -> None:
        now = self._clock.seconds()
        if key not in self._times and len(self._times) >= TRACKED:
            self._times = {k: t for k, t in self._times.items() if t and t[-1] > now - WINDOW}
        self._times.setdefault(key, deque()).append(now)


class Invitations:
    """The open invitations of this process's players, by id."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._open: dict[int, Invitation] = {}
        self._ids = itertools.count(1)
        self._from = _Window(clock, FROM_ADDRESS)
        self._to = _Window(clock, TO_PLAYER)

    def __len__(self) -> int:
        return len(self._open)

    def send(self, inviter: Session, invitee: Session, table: TableRunner,
             row: dict[str, Any]) -> None:
        """Open an invitation (the caller checked who and where) and tell the invitee,
        with the table's lobby `row`; `too_many_invites` over a limit."""
        pair = next((i for i in self._open.values()
                     if i.inviter is inviter and i.invitee is invitee), None)
        if pair is not None:
            raise ProtocolError("too_many_invites", f"your invitation to {invitee.name} is "
                                "open still", retry_after=self._left(pair), limit=1)
        for window, key, most, whose in (
                (self._from, inviter.address, FROM_ADDRESS, "from your address"),
                (self._to, invitee.player_id, TO_PLAYER, f"to {invitee.name}")):
            wait = window.wait(key)
            if wait > 0:
                raise ProtocolError("too_many_invites", f"at most {most} invitations a "
                                    f"minute {whose}", retry_after=round(wait, 3),
                                    limit=most)
        self._from.count(inviter.address)
        self._to.count(invitee.player_id)
        invite_id = next(self._ids)
        invite = Invitation(invite_id, inviter, invitee, table,
                            self._clock.callLater(INVITE_SECONDS, self._expired, invite_id))
        self._open[invite.id] = invite
        log.info("player {inviter} invites player {invitee} to table {table}",
                 inviter=inviter.player_id, invitee=invitee.player_id, table=table.id)
        invitee.send({"type": "invited", "invite": invite.id, "from": inviter.name,
                      "table": row, "expires_in": INVITE_SECONDS})

    def _left(self, invite: Invitation) -> float:
        return round(max(0.0, invite.timer.getTime() - self._clock.seconds()), 3)

    def held(self, invitee: Session, invite_id: int) -> Invitation:
        """The invitee's open invitation `invite_id`; `no_such_invite` if there is none."""
        invite = self._open.get(invite_id)
        if invite is None or invite.invitee is not invitee:
            raise ProtocolError("no_such_invite", "you hold no open invitation of that id")
        return invite

    def take(self, invitee: Session, invite_id: int) -> Invitation:
        """`held`, ended (the caller answers it)."""
        invite = self.held(invitee, invite_id)
        self._close(invite)
        return invite

    def answered(self, invite: Invitation, answer: str) -> None:
        """Tell the inviter how its invitation ended."""
        invite.inviter.send({"type": "invite_ended", "invite": invite.id, "reason": answer,
                             "name": invite.invitee.name})

    def _close(self, invite: Invitation) -> None:
        del self._open[invite.id]
        if invite.timer.active():
            invite.timer.cancel()

    def _end(self, invite: Invitation, reason: str | None, answer: str | None) -> None:
        self._close(invite)
        if reason is not None:
            invite.invitee.send({"type": "invite_ended", "invite": invite.id,
                                 "reason": reason})
        if answer is not None:
            self.answered(invite, answer)

    def _expired(self, invite_id: int) -> None:
        invite = self._open.get(invite_id)
        if invite is not None:
            self._end(invite, "expired", "expired")

    def table_changed(self, table: TableRunner) -> None:
        """A table changed or closed: its invitations end if the inviter left it or it
        has no seat to offer now."""
        core = table.core
        for invite in [i for i in self._open.values() if i.table is table]:
            if core.closed or not core.is_member(invite.inviter.player_id):
                self._end(invite, "withdrawn", None)
            elif core.phase != TablePhase.WAITING or not core.open_seats():
                self._end(invite, "unavailable", None)

    def lost(self, session: Session) -> None:
        """A player's connection dropped: the invitations it holds end (their inviters
        are told `gone`); those it sent stay while it keeps its seat."""
        for invite in [i for i in self._open.values() if i.invitee is session]:
            self._end(invite, None, "gone")

