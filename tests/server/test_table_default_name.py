"""A table opened without a name is named after its host as data (`named_for`), beside
the English name old clients show, in its lobby row and its snapshot, and so it stays
over a restart (the journal keeps it with the table's setup)."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from test_restart import crash, start


@pytest_twisted.ensureDeferred
async def test_a_default_name_is_the_hosts_name_and_stays_so_over_a_restart(
        tmp_path: Path) -> None:
    path = tmp_path / "named.sqlite3"
    first = await start(path)
    try:
        host = await first.connect("Deniz")
        snap = await host.ok("create_table", rules="classic", seats=2)
        assert (snap["table"]["name"], snap["table"]["named_for"]) == ("Deniz's table", "Deniz")
        other = await first.connect("Zeynep")
        named = await other.ok("create_table", rules="classic", seats=2, name="Akşam")
        assert "named_for" not in named["table"]
    finally:
        await crash(first)

    second = await start(path)
    try:
        lobby = await (await second.connect("Ece")).request("lobby_subscribe")
        rows = {row["name"]: row for row in lobby["tables"]}
        assert rows["Deniz's table"]["named_for"] == "Deniz"
        assert "named_for" not in rows["Akşam"]
    finally:
        await second.stop()
