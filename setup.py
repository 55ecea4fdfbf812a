"""setuptools' setup script, for what pyproject.toml cannot say: the extension modules
of a wheel built with PISYEDILI_MYPYC (none in any other build; see _build_backend.py)."""

from setuptools import setup

import _build_backend

setup(**_build_backend.setup_arguments())
