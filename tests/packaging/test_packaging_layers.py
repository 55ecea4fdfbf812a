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
