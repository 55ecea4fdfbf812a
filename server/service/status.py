"""`pisyedili-server status`: what runs, read from where the servers keep it.

With `--cluster`, the cluster's Redis says which processes are alive (their leases),
with their name, address, uptime, tables and sessions, and whether each drains. The
store alone cannot say whether a server runs (a server killed with -9 leaves its open
tables and sessions there, as a running one does), so without `--cluster` only the
store's open tables and sessions are shown, and the output says so.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pisyedili.server.cluster import ClusterAddress
from pisyedili.server.store import MEMORY, StoreError, is_url, open_store, public

if TYPE_CHECKING:
    from pisyedili.server.cluster.status import ProcessStatus

class StatusError(Exception):
    """Redis or the store could not be read: the message says why, in one line."""


UNKNOWN = "cannot tell whether a server is running: only --cluster shows live processes"


@dataclass
class StoreStatus:
    """The open tables and the sessions a store keeps for a restart."""

    where: str
    tables: list[int]
    sessions: int


def read_store(path: str) -> StoreStatus:
    """The store at `path`, read (never created: a missing file is an error); raises
    `StoreError` or `OSError` with the reason."""
    if path == MEMORY:
        raise StoreError("an in-memory database keeps nothing to read")
    if not is_url(path) and not Path(path).is_file():
        raise StoreError(f"no database at {path}")
    store = open_store(path)
    try:
        rows = store.read_journal()
    finally:
        store.close()
    return StoreStatus(public(path), sorted(t[0] for t in rows.tables), len(rows.sessions))


def gather(cluster: str | None, path: str | None, now: float) -> dict[str, Any]:
    """What `status` shows, as its `--json` prints it. Raises `StatusError`,
    `StoreError` or `OSError`."""
    report: dict[str, Any] = {"cluster": cluster, "processes": None, "store": None}
    if cluster is not None:
        processes = _read_cluster(ClusterAddress.parse(cluster))
        report["processes"] = [
            {**asdict(p), "uptime": None if p.started is None else max(0.0, now - p.started)}
            for p in processes]
    else:
        report["note"] = UNKNOWN
    if path is not None:
        report["store"] = asdict(read_store(path))
    return report


def _read_cluster(address: ClusterAddress) -> list[ProcessStatus]:
    try:  # the cluster's Redis client, an optional dependency
        from pisyedili.server.cluster.status import Unreachable, read_processes
    except ImportError as e:
        raise StatusError(f"--cluster needs pisyedili[cluster] installed ({e})") from None
    try:
        return read_processes(address)
    except Unreachable as e:
        raise StatusError(str(e)) from None


def render(report: dict[str, Any], out: IO[str]) -> None:
    """`report` (`gather`) as a table for people."""
    if report["processes"] is not None:
        processes: list[dict[str, Any]] = report["processes"]
        out.write(f"cluster {report['cluster']}: {len(processes)} live "
                  f"process{'' if len(processes) == 1 else 'es'}\n")
        rows = [["PROCESS", "NAME", "ADDRESS", "UP", "STATE", "SESSIONS", "TABLES"]]
        rows.extend([p["process"], p["name"] or "-", p["address"] or "-",
                     _duration(p["uptime"]), "draining" if p["draining"] else "serving",
                     str(p["sessions"]), _ids(p["tables"])] for p in processes)
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            out.write("  ".join([*cells, row[-1]]) + "\n")
    else:
        out.write(f"{report['note']}\n")
    stored = report["store"]
    if stored is not None:
        out.write(f"store {stored['where']}: {len(stored['tables'])} open tables "
                  f"({_ids(stored['tables'])}), {stored['sessions']} sessions\n")


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids)) or "-"


def _duration(seconds: float | None) -> str:
    """An uptime as people read it: "3d 4h", "2h 5m", "4m 10s", "12s"."""
    if seconds is None:
        return "?"
    left = int(seconds)
    days, left = divmod(left, 86400)
    hours, left = divmod(left, 3600)
    minutes, secs = divmod(left, 60)
    units = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    first = next((i for i, (n, _) in enumerate(units) if n), len(units) - 1)
    return " ".join(f"{n}{unit}" for n, unit in units[first:first + 2])


def status(cluster: str | None, path: str | None, as_json: bool,
           out: IO[str] | None = None) -> None:
    """Print the status; exit 1 with one line on stderr when Redis or the store
    cannot be read."""
    me = f"{sys.argv[0]} status"
    try:
        report = gather(cluster, path, time.time())
    except (StatusError, StoreError, OSError, ValueError) as e:
        print(f"{me}: {_one_line(e)}", file=sys.stderr)
        raise SystemExit(1) from None
    out = sys.stdout if out is None else out
    if as_json:
        json.dump(report, out, indent=2)
        out.write("\n")
    else:
        render(report, out)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split()) or type(error).__name__
