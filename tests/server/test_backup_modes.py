"""A PostgreSQL backup to a file is as private as a SQLite one (0600): the pg_dump
line `backup --db URL FILE` prints, and the one docs/operating.md shows, run pg_dump
under umask 077, whatever the umask of the shell they are pasted into. (The SQLite
backup's mode: tests/server/test_store_files.py.)"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import fork_kit
import pg_kit
import pytest
from process_output import SERVER

BACKSTOP = 60.0
OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"


def _printed_command(db: str, dest: Path) -> str:
    done = fork_kit.run([sys.executable, "-c", SERVER, "backup", "--db", db, str(dest)],
                        capture_output=True, text=True, timeout=BACKSTOP, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = [line.strip() for line in done.stderr.splitlines() if "--file=" in line]
    return str(line)


def _run_as_pasted(line: str, cwd: Path) -> None:
    """The line in a shell whose umask is the usual 022."""
    done = subprocess.run(["sh", "-c", f"umask 022; {line}; umask"], cwd=cwd,
                          capture_output=True, text=True, timeout=BACKSTOP, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0022", "the line changed the umask of its shell"


def test_the_printed_pg_dump_line_writes_a_dump_only_its_owner_reads(
        postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    if shutil.which("pg_dump") is None:
        pytest.fail("pg_dump is missing: install postgresql-client", pytrace=False)
    dest = tmp_path / "pisyedili.dump"
    line = _printed_command(postgres.store(), dest)
    _run_as_pasted(line, tmp_path)
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert dest.read_bytes().startswith(b"PGDMP")  # a custom-format dump, not empty


def test_every_pg_dump_line_of_the_docs_runs_under_umask_077() -> None:
    lines = [line for line in OPERATING.read_text(encoding="utf-8").splitlines()
             if re.search(r"\bpg_dump\b.*--file", line)]
    assert lines, "docs/operating.md shows no pg_dump line"
    for line in lines:
        assert line.startswith("(umask 077 && exec pg_dump "), line
