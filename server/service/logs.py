"""JSON logs: one flat object per line, the shape jq, journald and log shippers read.

Twisted's `jsonFileLogObserver` writes events for Twisted to load back (the level as a
serialised constant, the unformatted `log_format`, `log_flattened`...), and no
rendered text. Here each event becomes `time` (ISO 8601, UTC), `level`, `message`
(rendered with `formatEvent`), `namespace`, the event's own fields, and `failure`
(a traceback) when it carries one.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import IO, Any, cast

from twisted.logger import FileLogObserver, ILogObserver, LogEvent, formatEvent, textFileLogObserver
from twisted.python.failure import Failure

RESERVED = ("time", "level", "message", "namespace", "failure")
"""Keys of every record; an event field of the same name comes out as `name_`."""


def iso_time(when: float) -> str:
    """`when` (seconds since the epoch) as ISO 8601 in UTC, e.g. 2026-05-02T20:14:07.123456Z."""
    stamp = datetime.fromtimestamp(when, UTC).isoformat(timespec="microseconds")
    return stamp.replace("+00:00", "Z")


def _plain(value: Any) -> Any:
    """`value` if JSON can hold it exactly, else its repr: one odd field must not cost the line."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _bookkeeping(key: str, value: Any, event: LogEvent) -> bool:
    """Keys that are not the caller's fields: Twisted's own, and what its legacy-observer
    wrapper writes into the shared event (it edits events in place)."""
    if key.startswith("log_"):
        return True
    if key == "message":
        return isinstance(value, tuple)
    if key == "time":
        return bool(value == event.get("log_time"))
    if key == "system":
        return bool(value == event.get("log_system", "-"))
    if key == "format":
        return value == "%(log_legacy)s" or event.get("log_namespace") == "log_legacy"
    if key == "failure":  # the legacy log.err's, or the wrapper's copy of log_failure
        return isinstance(value, Failure)
    if key == "isError":
        return "log_legacy" in event or event.get("log_namespace") == "log_legacy"
    if key == "why":
        return "log_failure" in event and "log_legacy" in event and value == formatEvent(event)
    return False


def event_record(event: LogEvent) -> dict[str, Any]:
    """The flat record for one event (see the module docstring)."""
    level = event.get("log_level")
    record: dict[str, Any] = {
        "time": iso_time(event.get("log_time") or time.time()),
        "level": getattr(level, "name", "info"),
        "message": formatEvent(event),
        "namespace": event.get("log_namespace"),
    }
    for key, value in event.items():
        if not isinstance(key, str) or _bookkeeping(key, value, event):
            continue
        record[key + "_" if key in RESERVED else key] = _plain(value)
    failure = event.get("log_failure", event.get("failure"))
    if isinstance(failure, Failure):
        try:
            record["failure"] = failure.getTraceback()
        except Exception:  # a broken failure still gets its line
            record["failure"] = repr(failure)
    return record


def json_line(event: LogEvent) -> str:
    """One event as one line of JSON; ASCII, so that any stream encoding can carry it."""
    return json.dumps(event_record(event)) + "\n"


class JsonLineObserver(FileLogObserver):
    """An ILogObserver writing each event to `out` as a JSON line (Twisted's file observer
    does the writing, and flushes each line so a pipe or the journal sees it at once)."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__(out, json_line)


def make_observer(fmt: str, out: IO[str]) -> ILogObserver:
    """The log observer for `--log-format`: JSON lines (`JsonLineObserver`) or Twisted's text."""
    if fmt == "json":
        return cast(ILogObserver, JsonLineObserver(out))
    return cast(ILogObserver, textFileLogObserver(out))
