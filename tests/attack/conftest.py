"""The standing attack suite: every fault an attacker found, and the abuse each surface
(HTTP, WebSocket, the TCP protocol, the terminal, the LAN announcement) must survive.

Each test here is marked `attack` (`pytest -m attack` runs the suite alone). When a
surface is added (an endpoint, a field a terminal prints, a message), its attack goes
here in the same change. The kits these tests share live beside the tests that first
needed them; their folders are put on the import path here, so that a module of this
folder can use them whichever test module the run collected first.
"""

import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent.parent
for _kit_folder in ("server", "web", "client"):
    _path = str(_TESTS / _kit_folder)
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if item.path.resolve().is_relative_to(here):
            item.add_marker(pytest.mark.attack)
