"""`pisyedili.server.rules.COMPILED` against the modules the tests import: in CI's pass
against the compiled wheel, it proves that the suite ran the compiled engine."""

from __future__ import annotations

import importlib
import os
import sysconfig
from pathlib import Path

from packaging_kit import CHECKOUT, extension_stem, load_backend

import pisyedili.server.rules as rules

backend = load_backend()


def test_the_engine_flag_tells_the_modules_apart() -> None:
    """COMPILED is true exactly when every module of the build's list is an extension
    module; a run that must test the compiled engine (CI's second pass) sets
    PISYEDILI_EXPECT_COMPILED=1, so it cannot test the interpreted one unawares."""
    files = [importlib.import_module(m).__file__ or "" for m in backend.COMPILED]
    assert {bool(extension_stem(f)) for f in files} == {rules.COMPILED}, files
    if os.environ.get("PISYEDILI_EXPECT_COMPILED") == "1":
        assert rules.COMPILED, files
        # From the installed wheel, not from a build folder of the checkout.
        site = Path(sysconfig.get_paths()["platlib"]).resolve()
        assert all(Path(f).resolve().is_relative_to(site) for f in files), (files, site)
        assert not [f for f in files if Path(f).resolve().is_relative_to(CHECKOUT / "build")]
