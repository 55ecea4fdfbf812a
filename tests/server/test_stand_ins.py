"""The two stand-ins that break the server's cycles where it is assembled
(`service/assembly.py`): `OtherProcesses` for the relay (the sessions, accounts and
moderation are made before it) and `Sweeps` for the takeover (the relay is made
before it). Once joined, each passes every question on and hands its answer back;
asked before, or joined twice, it says so loudly, not a silent "nobody elsewhere".
(The wiring itself, across real processes: tests/cluster/test_cluster_accounts.py,
test_cluster_moderation.py, test_cluster_failover.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet.defer import Deferred, succeed

from pisyedili.server.net.sweeps import Sweeps
from pisyedili.server.people.accounts import Account
from pisyedili.server.people.moderation import ALONE, Gathered
from pisyedili.server.people.processes import OtherProcesses
from pisyedili.server.people.session import Session
from pisyedili.server.table.runner import TableRunner


class Relay:
    """A relay that says what it was asked, and answers as a process of a cluster."""

    def __init__(self, session: Session) -> None:
        self.asked: list[tuple[str, Any]] = []
        self._session = session

    def disconnected(self, session: Session) -> bool:
        self.asked.append(("disconnected", session))
        return True

    def reconnected(self, session: Session) -> bool:
        self.asked.append(("reconnected", session))
        return False

    def forgotten(self, session: Session) -> bool:
        self.asked.append(("forgotten", session))
        return True

    def table_id(self, session: Session) -> int | None:
        self.asked.append(("table_id", session))
        return 7

    def left_table(self, table: TableRunner, player_id: str) -> None:
        self.asked.append(("left_table", player_id))

    def account_registered(self, account: Account) -> None:
        self.asked.append(("account_registered", account))

    def account_session(self, account: int, caller: Session) -> Deferred[Session | None]:
        self.asked.append(("account_session", (account, caller)))
        return succeed(self._session)

    def tell_sanction(self, message: dict[str, Any]) -> Deferred[Gathered]:
        self.asked.append(("tell_sanction", message))
        return succeed(ALONE)


def _result(d: Deferred[Any]) -> Any:
    results: list[Any] = []
    d.addCallback(results.append)
    assert len(results) == 1
    return results[0]


def test_the_other_processes_pass_each_question_on_to_the_relay_once_it_joined() -> None:
    session, caller = Session("1", "Ayşe", "t1"), Session("2", "Can", "t2")
    account = Account(5, "Ayşe", False, False)
    elsewhere, relay = OtherProcesses(), Relay(session)
    with pytest.raises(RuntimeError, match="before the relay joined"):
        elsewhere.table_id(session)
    elsewhere.join(relay)
    assert elsewhere.disconnected(session) is True
    assert elsewhere.reconnected(session) is False
    assert elsewhere.forgotten(session) is True
    assert elsewhere.table_id(session) == 7
    elsewhere.account_registered(account)
    assert _result(elsewhere.account_session(5, caller)) is session
    assert _result(elsewhere.tell_sanction({"op": "keep"})) is ALONE
    assert relay.asked == [("disconnected", session), ("reconnected", session),
                           ("forgotten", session), ("table_id", session),
                           ("account_registered", account),
                           ("account_session", (5, caller)),
                           ("tell_sanction", {"op": "keep"})]
    with pytest.raises(RuntimeError, match="joined twice"):
        elsewhere.join(relay)


class Takeover:
    def __init__(self) -> None:
        self.gone_told: list[str] = []
        self.sweep: Deferred[None] = Deferred()

    def gone(self, process: str) -> None:
        self.gone_told.append(process)

    def settled(self) -> Deferred[None]:
        return self.sweep

    def taking(self) -> bool:
        return True


def test_the_sweeps_pass_a_process_gone_and_a_wait_on_to_the_takeover_once_it_joined() -> None:
    sweeps, takeover = Sweeps(), Takeover()
    with pytest.raises(RuntimeError, match="before the takeover joined"):
        sweeps.gone("p2")
    sweeps.join(takeover)
    sweeps.gone("p2")
    assert takeover.gone_told == ["p2"]
    assert sweeps.settled() is takeover.sweep
    assert sweeps.taking() is True
    with pytest.raises(RuntimeError, match="joined twice"):
        sweeps.join(takeover)
