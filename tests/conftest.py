"""Shared test settings: hypothesis profiles ("dev" by default, "ci" when CI is set),
and per-user folders of their own for the whole run.

The server keeps its database and the client its session tokens in the platform's
per-user folders (platformdirs). Tests, and the servers and clients they start as
processes, must never read or write the real ones, so the XDG variables point into a
throwaway folder before any test runs (on Linux, where the tests run).
"""

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

_HOME = tempfile.mkdtemp(prefix="pisyedili-tests-")


def pytest_configure(config: pytest.Config) -> None:
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = os.path.join(_HOME, name.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)
