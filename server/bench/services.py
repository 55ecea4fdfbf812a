"""Throwaway Redis and PostgreSQL servers for `pisyedili-bench load` (and the tests).

The bench is never imported by the server, so it carries its own small starters
instead of asking the operator for a Redis and a PostgreSQL to measure against (it
takes their URLs too). Each runs from a temporary folder on a free loopback port with
nothing kept (no Redis snapshots, PostgreSQL with fsync off: the figures are the
server's, not the disk's), and is stopped and deleted at the end of the run.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Self

START_TIMEOUT = 60.0
RUN_AS = "nobody"
"""Who runs PostgreSQL when the bench runs as root: initdb refuses root."""
PG_USER = "pisyedili"


class NotInstalled(RuntimeError):
    """A server program this machine does not have (the message says how to get it)."""


def free_port() -> int:
    """A loopback port free a moment ago: for servers that cannot name the port they
    bound (redis-server and postgres take a number)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def proc_children(pid: int) -> list[int]:
    """Every descendant of `pid` (Linux /proc; empty elsewhere)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in glob.glob(f"/proc/{parent}/task/*/children"):
            try:
                kids = [int(x) for x in Path(task).read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def end_process(proc: subprocess.Popen[Any]) -> None:
    """Ask a process to stop, and kill it if it has not in 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class RedisServer:
    """A redis-server of our own on a free loopback port; `url` is its database 0.

    `keep`: its data is written to an append-only file (each write synced), so that
    one killed (`kill`) and started again (`start`) on the same port and folder comes
    back with it; otherwise it keeps nothing. The cluster tests start theirs here too."""

    def __init__(self, keep: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise NotInstalled("redis-server is not installed (Debian: apt-get install "
                               "redis-server)")
        self.binary, self.keep = binary, keep
        self.folder = tempfile.mkdtemp(prefix="pisyedili-redis-")
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        """Run it, and wait until it answers (one that is loading its file does not)."""
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.folder, "--save", "", "--appendonly",
             "yes" if self.keep else "no", "--appendfsync", "always",
             "--protected-mode", "yes"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while not _ping(self.port):  # bounded by START_TIMEOUT
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL, as a crash would; its folder stays, for `start` again."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            end_process(self.proc)
            self.proc = None
        shutil.rmtree(self.folder, ignore_errors=True)


def flush_redis(url: str) -> None:
    """Empty the database `url` names (each cluster round starts from nothing)."""
    from pisyedili.server.cluster import ClusterAddress

    at = ClusterAddress.parse(url)

    def command(*args: str) -> bytes:
        return b"*%d\r\n" % len(args) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)

    with socket.create_connection((at.host, at.port), timeout=10) as sock:
        sock.sendall(command("SELECT", str(at.db)) + command("FLUSHDB"))
        reply = b""
        while reply.count(b"\r\n") < 2:  # +OK twice, or an error
            chunk = sock.recv(256)
            if not chunk:
                break
            reply += chunk
    if not reply.startswith(b"+OK\r\n+OK"):
        raise RuntimeError(f"cannot empty {url}: {reply[:200]!r}")


def pg_bindir() -> Path | None:
    """The newest PostgreSQL's binaries on this machine, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


class Postgres:
    """A PostgreSQL to make fresh stores on: a throwaway cluster (`start`) or the server
    a URL names (its user may create schemas). Each `store()` is a schema of its own
    in one database: the store's tables are unqualified, so a schema is as empty and
    as separate for it as a new database, and costs a millisecond where CREATE
    DATABASE costs a second on a busy machine. The tests start theirs here too."""

    def __init__(self, url: str, folder: Path | None = None,
                 bin_dir: Path | None = None) -> None:
        self.url = url
        self.folder = folder
        """Our cluster's folder, or None for a server we were given."""
        self._bin = bin_dir
        self._names = itertools.count()
        self._prefix = f"pisyedili_bench_{os.getpid()}_"
        self.schemas: list[str] = []

    @classmethod
    def start(cls) -> Self:
        """A new cluster in a folder of its own, running; RuntimeError if it cannot."""
        bin_dir = pg_bindir()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install "
                               "postgresql), and no --postgres-url was given")
        folder = Path(tempfile.mkdtemp(prefix="pisyedili-pg-"))
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise RuntimeError("this runs as root and runuser is missing")
            shutil.chown(folder, RUN_AS)
        pg = cls(f"postgresql://{PG_USER}@127.0.0.1:{free_port()}/postgres", folder, bin_dir)
        try:
            pg._run("initdb", "-D", str(folder / "data"), "-U", PG_USER, "-A", "trust",
                    "-E", "UTF8", "--no-sync", "--no-instructions")
            pg.resume()
        except BaseException:
            pg.stop()
            raise
        return pg

    def resume(self) -> None:
        """Start our cluster (again, after `halt`), and wait until it takes connections."""
        assert self.folder is not None
        port = self.url.rsplit(":", 1)[1].split("/", 1)[0]
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "log"),
                  "-o", f"-p {port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                  "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                  "-w", "-t", str(int(START_TIMEOUT)), "start")

    def halt(self) -> None:
        """Stop our cluster at once, as a crash or an operator's `pg_ctl stop` would; its
        folder stays, for `resume`."""
        assert self.folder is not None
        self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")

    def _run(self, tool: str, *args: str) -> None:
        assert self._bin is not None
        command = [str(self._bin / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=self.folder, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")

    def pids(self) -> list[int]:
        """The postmaster and its backends (our own cluster only: on a server we were
        given the processes are not ours to count)."""
        if self.folder is None:
            return []
        try:
            head = (self.folder / "data" / "postmaster.pid").read_text().split("\n", 1)[0]
        except OSError:
            return []
        return [int(head), *proc_children(int(head))]

    def sql(self, statement: str) -> None:
        """Run one statement with `psql` (the bench, like the rest of the server, leaves
        database drivers to the store)."""
        bin_dir = self._bin or pg_bindir()
        psql = str(bin_dir / "psql") if bin_dir else shutil.which("psql")
        if psql is None or not Path(psql).exists():
            raise RuntimeError("psql is not installed (Debian: apt-get install "
                               "postgresql-client)")
        done = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url,
                               "-c", statement], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")

    def store(self) -> str:
        """A new, empty store's URL."""
        name = f"{self._prefix}{next(self._names)}"
        self.sql(f"CREATE SCHEMA {name}")
        self.schemas.append(name)
        sep = "&" if "?" in self.url else "?"
        return f"{self.url}{sep}options=-csearch_path%3D{name}"

    def stop(self) -> None:
        """Stop and delete our cluster; on a server we were given, drop our schemas."""
        if self.folder is not None:
            with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
                if (self.folder / "data" / "postmaster.pid").exists():
                    self._run("pg_ctl", "-D", str(self.folder / "data"), "-m",
                              "immediate", "-w", "stop")
            shutil.rmtree(self.folder, ignore_errors=True)
            return
        for name in self.schemas:
            with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
                self.sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
