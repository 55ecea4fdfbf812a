"""The twistd dropin is installed where Twisted's plugin scan finds it.

The suite runs after the README's editable install (`pip install -e '.[test]'`), so this
checks the case an import-hook editable install gets wrong: `twistd pisyedili` answering
"Unknown command".
None of the checks may lean on the checkout being on sys.path (PYTHONPATH=. is no fix).
"""

import os
import subprocess
import sys
from pathlib import Path

from twisted.application.service import IServiceMaker
from twisted.plugin import IPlugin, getPlugins

CHECKOUT = Path(__file__).resolve().parents[2]


def _pisyedili_makers() -> list[IServiceMaker]:
    return [m for m in getPlugins(IServiceMaker) if m.tapname == "pisyedili"]


def test_get_plugins_yields_the_server_maker_once() -> None:
    (maker,) = _pisyedili_makers()
    assert IPlugin.providedBy(maker)
    assert maker.module == "pisyedili.server.service.tap"
    # The options class comes from the (editable or copied) package, and knows --listen.
    options = maker.options()
    options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1"])


def test_the_dropin_found_is_the_installed_copy() -> None:
    _pisyedili_makers()
    dropin = Path(sys.modules["twisted.plugins.pisyedili_server"].__file__ or "").resolve()
    twisted_plugins = Path(sys.modules["twisted.plugins"].__file__ or "").resolve().parent
    assert dropin.name == "pisyedili_server.py"
    # Installed next to Twisted's own plugins, not read from the checkout's twisted/plugins/.
    assert dropin.parent == twisted_plugins, dropin
    assert dropin != CHECKOUT / "twisted" / "plugins" / "pisyedili_server.py"


def _twistd() -> list[str]:
    """The twistd script of this environment (next to the interpreter), as a command."""
    scripts = Path(sys.executable).parent
    for name in ("twistd", "twistd.exe"):
        if (scripts / name).is_file():
            return [str(scripts / name)]
    return [sys.executable, "-c", "from twisted.scripts.twistd import run; run()"]


def _run_twistd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [*_twistd(), *args],
        cwd=cwd,  # not the checkout: the current folder must not supply the dropin
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_twistd_lists_pisyedili_among_its_commands(tmp_path: Path) -> None:
    done = _run_twistd("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pisyedili" in done.stdout.split("Commands:")[-1], done.stdout


def test_twistd_pisyedili_help_shows_the_server_options(tmp_path: Path) -> None:
    done = _run_twistd("pisyedili", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Unknown command" not in done.stdout + done.stderr
    assert "--listen" in done.stdout, done.stdout
    assert "--max-connections" in done.stdout, done.stdout
