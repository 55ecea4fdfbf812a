"""`--log-format json`: one flat JSON object per line, as jq and log shippers read it."""

from __future__ import annotations

import io
import json
import math
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from process_output import Output
from twisted.logger import ILogObserver, Logger, LogPublisher
from twisted.logger._legacy import LegacyLogObserverWrapper, publishToNewObserver
from twisted.python.failure import Failure
from twisted.python.log import textFromEventDict

from pisyedili.server.rules import COMPILED
from pisyedili.server.service.logs import JsonLineObserver, iso_time, make_observer


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def emit(*calls: tuple[str, tuple[Any, ...], dict[str, Any]],
         observer: Any = None) -> list[dict[str, Any]]:
    """Log each (method, args, kwargs) through a Logger into the json observer; parse lines."""
    out = io.StringIO()
    json_observer = make_observer("json", out)
    log = Logger(namespace="pisyedili.test", observer=observer(json_observer) if observer
                 else json_observer)
    for method, args, kwargs in calls:
        getattr(log, method)(*args, **kwargs)
    text = out.getvalue()
    assert text.endswith("\n") and "\x1e" not in text
    return [json.loads(line) for line in text.splitlines()]


def test_one_flat_object_per_line_with_level_message_and_fields() -> None:
    before = datetime.now(UTC)
    [record] = emit(("info", ("{address} welcomed as player {player} ({name!r})",),
                     {"address": "10.0.0.7", "player": 4, "name": "Ayşe"}))
    assert isinstance(record.pop("time"), str)
    assert record == {
        "level": "info",
        "message": "10.0.0.7 welcomed as player 4 ('Ayşe')",
        "namespace": "pisyedili.test",
        "address": "10.0.0.7",
        "player": 4,
        "name": "Ayşe",
    }
    [again] = emit(("info", ("x",), {}))
    assert again["time"].endswith("Z")
    when = datetime.fromisoformat(again["time"].replace("Z", "+00:00"))
    assert when.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= when <= datetime.now(UTC) + timedelta(seconds=1)


def test_every_level_by_name() -> None:
    records = emit(*((method, ("{m}",), {"m": method})
                     for method in ("debug", "info", "warn", "error", "critical")))
    assert [r["level"] for r in records] == ["debug", "info", "warn", "error", "critical"]
    assert [r["message"] for r in records] == [r["level"] for r in records]


def test_odd_fields_are_kept_as_repr_and_twisted_internals_left_out() -> None:
    [record] = emit(("warn", ("seed {seed}",),
                     {"seed": 9, "opaque": Opaque(), "nested": {"a": [1, 2.5, None]},
                      "nan": math.nan, "message": "the caller's own", "time": 3}))
    assert record["opaque"] == "<opaque>"
    assert record["nested"] == {"a": [1, 2.5, None]}
    assert record["nan"] == "nan"
    assert record["message"] == "seed 9" and record["message_"] == "the caller's own"
    assert record["time_"] == 3 and record["time"].endswith("Z")
    assert not [k for k in record if k.startswith("log_")]


def test_a_failure_carries_its_traceback() -> None:
    def boom() -> None:
        raise ValueError("the cards are wet")

    out = io.StringIO()
    log = Logger(namespace="pisyedili.server.net.connection", observer=JsonLineObserver(out))  # type: ignore[arg-type]
    try:
        boom()
    except ValueError:
        log.failure("request {kind} failed", kind="move")
    [record] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert record["level"] == "critical"
    assert record["message"] == "request move failed"
    assert record["kind"] == "move"
    assert record["failure"].startswith("Traceback")
    assert "ValueError: the cards are wet" in record["failure"]
    assert "in boom" in record["failure"]


def test_legacy_observers_editing_the_event_add_no_noise() -> None:
    """twistd may also feed legacy observers, whose wrapper writes old keys into the event."""
    def with_legacy(json_observer: ILogObserver) -> LogPublisher:
        return LogPublisher(LegacyLogObserverWrapper(lambda event: None), json_observer)  # type: ignore[arg-type]

    try:
        raise KeyError("k")
    except KeyError:
        records = emit(("info", ("plain {why}",), {"why": "mine"}),
                       ("failure", ("oops",), {}), observer=with_legacy)
    plain, failed = records
    assert set(plain) == {"time", "level", "message", "namespace", "why"}
    assert plain["why"] == "mine"
    assert set(failed) == {"time", "level", "message", "namespace", "failure"}


def test_text_logs_are_unchanged() -> None:
    out = io.StringIO()
    Logger(namespace="pisyedili.test", observer=make_observer("text", out)).info(
        "player {player} left", player=4)
    line = out.getvalue()
    assert line.endswith(" [pisyedili.test#info] player 4 left\n")
    assert not line.lstrip().startswith("{")


def test_iso_time_is_utc() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000000Z"
    assert iso_time(1777752847.25) == "2026-05-02T20:14:07.250000Z"


@pytest.mark.parametrize("runner", ["pisyedili-server", "twistd"])
def test_the_server_logs_json_lines_as_a_process(runner: str, tmp_path: Path) -> None:
    """Both ways of running the server: the console script, and twistd's plugin (where
    the service swaps twistd's observer for this one)."""
    script = shutil.which(runner, path=str(Path(sys.executable).parent))
    assert script, f"{runner} is not installed next to this Python"
    argv = [script] if runner == "pisyedili-server" else [script, "-n", "--pidfile=",
                                                          "pisyedili"]
    proc = subprocess.Popen(
        [*argv, "--listen", "tcp:0:interface=127.0.0.1", "--log-format", "json",
         "--seed", "5"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8")
    assert proc.stdout is not None and proc.stderr is not None
    output, error_output = Output(proc.stdout), Output(proc.stderr)
    try:
        output.wait_for(r'"message": ?"listening on')
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        errors = error_output.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [json.loads(line) for line in output.rest().splitlines()]
    # twistd passes the signal on as its exit status.
    assert proc.returncode in (0, -signal.SIGTERM if runner == "twistd" else 0), errors
    assert records and all({"time", "level", "message", "namespace"} <= set(r)
                           for r in records)
    assert not [k for r in records for k in r if k.startswith("log_")]
    [warning] = [r for r in records if r.get("seed") == 5]
    assert warning["level"] == "warn" and "PREDICTABLE" in warning["message"]
    assert warning["namespace"] == "pisyedili.server.service.server"
    assert any(r["message"].startswith("listening on tcp:0") for r in records)
    # Once, with the engine this process runs: the bots' speed depends on it.
    [engine] = [r for r in records if "compiled" in r]
    assert engine["compiled"] is COMPILED and engine["level"] == "info"
    assert engine["message"] == "rules engine: " + ("compiled (mypyc)" if COMPILED else
                                                    "interpreted")


def test_a_legacy_log_err_keeps_its_traceback() -> None:
    """Parts of Twisted still log through twisted.python.log: err() carries `failure`."""
    out = io.StringIO()
    try:
        raise ZeroDivisionError("no cards")
    except ZeroDivisionError:
        failure = Failure()  # type: ignore[no-untyped-call]
    publishToNewObserver(
        JsonLineObserver(out),  # type: ignore[arg-type]
        {"message": (), "isError": 1, "failure": failure, "why": "dealing", "time": 1.0,
         "system": "-"},
        textFromEventDict)
    [record] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert record["level"] == "critical" and record["namespace"] == "log_legacy"
    assert record["message"].startswith("dealing")
    assert "ZeroDivisionError: no cards" in record["failure"]
    assert set(record) == {"time", "level", "message", "namespace", "why", "failure"}
