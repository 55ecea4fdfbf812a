"""What a process's relay holds (`relay.py`), and what both of its sides use:
where each player of this process is, the visitors at its tables, the hand-overs
under way, and the acts asked of every process. `forwarding.py` and `handover.py`
build on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.cluster import Cluster
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.moderation import Gathered
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.forwarding import Reply, Visitor, Waiting
    from pisyedili.server.net.sweeps import Sweeping
    from pisyedili.server.net.tcp import ServerFactory

log = Logger()

ASK_SECONDS = 3.0
"""How long an act asked of every live process (`Relay.ask_all`) waits for their
answers: one paused or stalled answers late or never, and the act is answered with
what came, naming the processes that were silent."""


@dataclass
class _Asked:
    """An act asked of every live process: who has yet to answer, and what came."""

    waiting: set[str]
    answers: list[dict[str, Any]]
    done: Deferred[Gathered]
    timer: Delayed


class RelayState:
    """The state of a relay, and the parts of it both sides use."""

    def __init__(self, cluster: Cluster, sessions: Sessions, clock: Clock,
                 server: ServerFactory | None = None, *, shared_store: bool = False,
                 sweeps: Sweeping | None = None) -> None:
        self.cluster = cluster
        self.shared_store = shared_store
        self._sessions = sessions
        self._clock = clock
        self._server = server
        self._at: dict[str, tuple[int, str]] = {}  # home: player -> (table, owner)
        self._waiting: dict[str, Waiting] = {}  # home: player -> the reply awaited
        self._requests = 0  # home: the requests sent to owners, which number them
        self._visitors: dict[str, Visitor] = {}  # owner: player -> its visit
        self._replies: dict[str, list[Reply]] = {}
        """Owner: player -> the replies to its requests not written yet, oldest first."""
        self._handing: dict[str, tuple[Deferred[dict[str, Any]], Delayed, str]] = {}
        """New home: player -> the old home's answer to a hand-over awaited, and that
        home."""
        self._hand_asks: dict[tuple[str, str], dict[str, Any]] = {}
        """Old home: (player, asker) -> a hand asked of this process, until `holdings`
        answer it (while the lease is in doubt, once the keys are checked)."""
        self._hand_answers: dict[str, dict[str, Any]] = {}
        """Old home: player -> the `handed` answer of its hand-over to a resume, told
        again if that process asks again (the answer was lost, or came too late)."""
        self._stopping = False
        """This process stops: it hands its sessions on (`hand_all`)."""
        self._handing_out: dict[str, tuple[str, dict[str, Any]]] = {}
        """Stopping: player -> the process its session was handed to, not answered yet,
        and what it was told."""
        self._out_done: Deferred[None] | None = None
        self._restoring: dict[str, list[dict[str, Any]]] = {}
        """Owner: player -> the hand-overs asked of it, and its home's word (`cmd`), while
        a takeover here places it at its table: handled once it is placed
        (`restored`)."""
        self._placing: dict[str, TableRunner] = {}
        """Owner: player -> the table a takeover here is placing it at, until placed."""
        self._taken: dict[str, TableRunner] = {}
        """Owner: player -> a table taken over here, until the player's home says back."""
        self._untold: dict[str, str] = {}
        """Owner: player -> the home of a visitor let go while the cluster was out of
        reach (its word to the home went nowhere), told once it is back."""
        self._departed: set[str] = set()
        """Processes taken for gone: a request to a table one of them held is refused at
        once, not sent where nobody reads it, until the table's new holder says where
        it is (or the process itself, woken after a pause, answers a join)."""
        self._asked: dict[int, _Asked] = {}  # an act asked of every process, by round
        self._rounds = 0
        self.gone_hooks: tuple[Callable[[str], None], ...] = \
            () if sweeps is None else (sweeps.gone,)
        """Told, after this relay, that a process is gone (`service/takeover.py`)."""
        self.settled: Callable[[], Deferred[None]] | None = \
            None if sweeps is None else sweeps.settled
        """A sweep for tables nobody holds, fired once done (`service/takeover.py`)."""
        self.taking: Callable[[], bool] = (lambda: False) if sweeps is None \
            else sweeps.taking
        """Whether a takeover here has members still to place (`service/takeover.py`)."""
        self._refusals: set[tuple[object, object]] = set()
        """The kinds and versions of the messages refused here, each said once."""
        self._sanctions_retry: Delayed | None = None  # the next read of them, if one failed
        self._sanctions_failing = False  # the last read of them failed (said once)

    # -- accounts, on one shared store ---------------------------------------------------

    @property
    def accounts(self) -> Accounts | None:
        return self._server.accounts if self._server is not None else None

    def _account(self, session: Session) -> dict[str, Any]:
        """The account fields of a message about `session` (none for a guest, or when
        each process has a store, and so account ids, of its own)."""
        if not self.shared_store or session.account is None:
            return {}
        accounts = self.accounts
        operator = accounts is not None and accounts.is_operator(session.account)
        bot = accounts is not None and accounts.is_bot(session.account)
        return {"a": session.account, "op": operator, "bot": bot}

    def _account_of(self, message: dict[str, Any]) -> int | None:
        """The account a message says its player is logged in to, known here from now
        on (its name is the player's, as registered)."""
        account, accounts = message.get("a"), self.accounts
        if not self.shared_store or not isinstance(account, int) or accounts is None:
            return None
        accounts.learn(account, message["name"], bool(message.get("op", False)),
                       bool(message.get("bot", False)))
        return account

    def _at_here(self, home: str, player_id: str, table: TableRunner) -> None:
        """Tell `home` its player sits at `table` here: the home says `back` (and the
        player gets a snapshot) once its connection is there."""
        self.cluster.send(home, {"k": "at", "p": player_id, "t": table.id,
                                 "owner": self.cluster.process, "back": True})

    def _at_no_table(self, home: str, player_id: str, released: bool = False) -> None:
        """Tell `home` its player sits at no table here (any more); `released`: not of
        its own doing (its seat was let go while its home could not be told), so the
        home tells its player (`table_lost`)."""
        self.cluster.send(home, {"k": "at", "p": player_id, "t": None,
                                 **({"lost": "seat_released"} if released else {})})

    # -- acts asked of every process (the operators') --------------------------------------

    def ask_all(self, message: dict[str, Any]) -> Deferred[Gathered]:
        """Ask every other live process to act on `message` (`_act` there) and say
        what it did: their answers, once all came or `ASK_SECONDS` passed (then the
        silent ones are named). While the cluster is out of reach nobody is asked."""
        if not self.cluster.reachable:
            return succeed(Gathered(reached=False))
        live = self.cluster.live_processes()
        asked = live.addCallback(self._ask_each, message)
        asked.addErrback(lambda _: Gathered(reached=False))  # (lost as it asked)
        return asked

    def _ask_each(self, processes: list[str], message: dict[str, Any]
                  ) -> Deferred[Gathered]:
        if not processes:
            return succeed(Gathered())
        self._rounds += 1
        number = self._rounds
        timer = self._clock.callLater(ASK_SECONDS, self._asked_over, number)
        asked = self._asked[number] = _Asked(set(processes), [], Deferred(), timer)
        for process in processes:
            self.cluster.send(process, {"k": "ask", "r": number,
                                        "from": self.cluster.process, "m": message})
        return asked.done

    def _answered(self, message: dict[str, Any]) -> None:
        asked = self._asked.get(message["r"])
        if asked is None or message["from"] not in asked.waiting:
            return  # (late: its round was answered without it)
        asked.waiting.discard(message["from"])
        asked.answers.append(message["a"])
        if not asked.waiting:
            self._asked_over(message["r"])

    def _asked_over(self, number: int) -> None:
        asked = self._asked.pop(number, None)
        if asked is None:
            return
        if asked.timer.active():
            asked.timer.cancel()
        if asked.waiting:
            log.warn("cluster: processes {silent} did not answer an operator's act within "
                     "{seconds:g} s", silent=sorted(asked.waiting), seconds=ASK_SECONDS)
        asked.done.callback(Gathered(tuple(asked.answers), tuple(sorted(asked.waiting))))
