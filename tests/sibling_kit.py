"""A helper module of another test folder, imported by bare name and reused rather than
copied: pytest puts only the running test's own folder (and tests/) on the import path,
so a kit in a sibling folder (tests/server/wireclient.py, tests/rules/rules_kit.py) is
reached by adding that folder first."""

import importlib
import sys
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent


def sibling(folder: str, module: str) -> Any:
    """The module `module` of the test folder `folder` (a name under tests/)."""
    path = str(TESTS / folder)
    if path not in sys.path:
        sys.path.append(path)
    return importlib.import_module(module)
