"""The layers of docs/architecture.md hold: import-linter checks the contracts in
pyproject.toml over the whole import graph, indirect imports included."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(config), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_every_layer_contract_is_kept() -> None:
    done = _lint(ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken", done.stdout), done.stdout


def test_a_forbidden_import_is_caught(tmp_path: Path) -> None:
    """The same graph under a contract the server must break: the check is live."""
    config = tmp_path / "layers.toml"
    config.write_text(
        '[tool.importlinter]\n'
        'root_packages = ["pisyedili.server"]\n'
        'include_external_packages = true\n'
        '[[tool.importlinter.contracts]]\n'
        'name = "the service runs without Twisted"\n'
        'type = "forbidden"\n'
        'source_modules = ["pisyedili.server.service"]\n'
        'forbidden_modules = ["twisted"]\n', encoding="utf-8")
    done = _lint(config)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pisyedili.server.service is not allowed to import twisted" in done.stdout


STORE_CONTRACT = "only the store touches a database"


def test_only_the_store_imports_sqlite(tmp_path: Path) -> None:
    """The contract that keeps SQLite (and the SQLite backend) behind the store's
    interface is there, and live: given the store itself as one more source, it
    catches the backend's own `import sqlite3`."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lint = config["tool"]["importlinter"]
    (contract,) = [c for c in lint["contracts"] if c["name"].startswith(STORE_CONTRACT)]
    assert {"sqlite3", "pisyedili.server.store.sqlite"} <= set(contract["forbidden_modules"])
    sources = set(contract["source_modules"])
    assert {"pisyedili.server.people", "pisyedili.server.net",
            "pisyedili.server.service", "pisyedili.server.table"} <= sources
    assert not any(s.startswith("pisyedili.server.store") for s in sources)
    rows = [f'"{s}"' for s in [*sorted(sources), "pisyedili.server.store.journal",
                                "pisyedili.server.store.sqlite"]]
    probe = tmp_path / "store.toml"
    probe.write_text(
        '[tool.importlinter]\n'
        'root_packages = ["pisyedili.server"]\n'
        'include_external_packages = true\n'
        '[[tool.importlinter.contracts]]\n'
        f'name = "{STORE_CONTRACT}"\n'
        'type = "forbidden"\n'
        f'source_modules = [{", ".join(rows)}]\n'
        'forbidden_modules = ["sqlite3"]\n'
        'allow_indirect_imports = true\n', encoding="utf-8")
    done = _lint(probe)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pisyedili.server.store.sqlite is not allowed to import sqlite3" in done.stdout
    assert "pisyedili.server.store.journal is not allowed" not in done.stdout


LAYERS_CONTRACT = "the server's packages are layers"


def test_the_server_packages_are_layers() -> None:
    """Every package and top-level module of the server has its place in one order,
    and the places docs/architecture.md describes hold: the network above the people,
    the people above the store, the store above the tables whose journal it
    implements, the rules and the clock at the bottom."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lint = config["tool"]["importlinter"]
    (contract,) = [c for c in lint["contracts"] if c["name"].startswith(LAYERS_CONTRACT)]
    assert contract["type"] == "layers"
    assert contract["containers"] == ["pisyedili.server"]
    assert contract["exhaustive"] is True
    place = {name.strip(): i for i, layer in enumerate(contract["layers"])
             for name in layer.split("|")}
    order = ["service", "net", "people", "store", "table", "rules", "clock"]
    assert [place[name] for name in order] == sorted(place[name] for name in order)
    assert len({place[name] for name in order}) == len(order), "each in a layer of its own"
