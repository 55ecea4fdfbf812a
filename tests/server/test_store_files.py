"""The server's database is one server's own, and private to its owner.

Two real `pisyedili-server` processes on one file: the second refuses to start, naming
the file and the first one's pid, and exits non-zero; the first serves on. Every file
the server and `pisyedili-server backup` create (the database, SQLite's -wal and -shm,
the lock file, a backup) is 0600, and a folder made for them 0700, under a umask that
would otherwise leave them readable to everyone.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from process_output import Output, running

from pisyedili.server.store.files import (
    FileInUse,
    FileLock,
    lock_path,
    private_database,
    private_dir,
)
from pisyedili.server.store.sqlite import SqliteStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix modes and pids")

BACKSTOP = 30.0
UMASK_022 = "import os, sys; os.umask(0o022); sys.argv[0] = 'pisyedili-server'; "
SERVER = UMASK_022 + "from pisyedili.server.service.tap import main; main()"


def server(db: Path) -> AbstractContextManager[tuple[subprocess.Popen[str], Output]]:
    """A real server on `db` (umask 022), and its output as it comes."""
    return running(sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
                   "--db", str(db), "--no-announce")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_second_server_on_the_same_file_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite3"
    with server(db) as (first, first_out):
        port = int(first_out.wait_for(r"listening on .*port=(\d+)", BACKSTOP).group(1))
        with server(db) as (second, second_out):
            said = second_out.rest(BACKSTOP)
            assert second.wait(BACKSTOP) != 0, said
        assert str(db) in said and f"process {first.pid}" in said, said
        assert "listening on" not in said, said
        # The first one serves on, the file still its own.
        socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP).close()
        assert first.poll() is None
        assert lock_path(db).read_text().strip() == str(first.pid)
        first.kill()
        first.wait()
        assert "could not be written" not in first_out.rest(BACKSTOP)
    # The OS dropped the dead server's lock: the next one starts on the file.
    with server(db) as (third, third_out):
        third_out.wait_for(r"listening on", BACKSTOP)
        assert lock_path(db).read_text().strip() == str(third.pid)


def test_every_file_of_the_server_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "pisyedili"  # made by the server
    db = folder / "server.sqlite3"
    with server(db) as (_, out):
        out.wait_for(r"keeping finished matches in", BACKSTOP)
        names = sorted(p.name for p in folder.iterdir())
        assert names == ["server.sqlite3", "server.sqlite3-shm", "server.sqlite3-wal",
                         "server.sqlite3.lock"], names
        assert {p.name: mode(p) for p in folder.iterdir()} == dict.fromkeys(names, 0o600)
        assert mode(folder) == 0o700

        backup = tmp_path / "backups" / "copy.sqlite3"
        backup.parent.mkdir()
        done = subprocess.run(
            [sys.executable, "-c", SERVER, "backup", "--db", str(db), str(backup)],
            capture_output=True, text=True, timeout=BACKSTOP, check=False)
        assert done.returncode == 0, done.stderr
        assert mode(backup) == 0o600
        assert SqliteStore(backup).recent_matches() == []


def test_files_an_older_version_left_readable_are_made_private(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    SqliteStore(db).close()
    db.chmod(0o644)  # as versions before this one left it
    store = SqliteStore(db)
    try:
        store.recent_matches()
        files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
        assert [mode(path) for path in files] == [0o600] * 3
    finally:
        store.close()


def test_a_lock_is_one_holders_until_released(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite3"
    private_database(path)
    held = FileLock.acquire(path)
    with pytest.raises(FileInUse) as refused:
        FileLock.acquire(path)
    assert refused.value.pid == os.getpid() and refused.value.path == str(path)
    assert mode(lock_path(path)) == 0o600
    held.release()
    FileLock.acquire(path).release()


@pytest.mark.skipif(sys.platform == "win32", reason="no permission bits on Windows")
def test_every_folder_made_is_private_and_folders_found_are_left_alone(tmp_path: Path) -> None:
    found = tmp_path / "found"
    found.mkdir(mode=0o755)
    os.chmod(found, 0o755)
    old = os.umask(0o022)
    try:
        private_dir(found / "pisyedili" / "offline")
    finally:
        os.umask(old)
    assert stat.S_IMODE(found.stat().st_mode) == 0o755
    assert stat.S_IMODE((found / "pisyedili").stat().st_mode) == 0o700
    assert stat.S_IMODE((found / "pisyedili" / "offline").stat().st_mode) == 0o700
