"""Helpers for the packaging tests: the checkout's build backend, extension file names."""

from __future__ import annotations

import importlib.util
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType

CHECKOUT = Path(__file__).resolve().parents[2]


def load_backend() -> ModuleType:
    """The checkout's _build_backend.py (not importable from the tests' sys.path)."""
    spec = importlib.util.spec_from_file_location("_build_backend", CHECKOUT / "_build_backend.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def extension_stem(name: str) -> str | None:
    """``name`` without its extension-module suffix, or None if it is no extension module."""
    suffix = next((s for s in EXTENSION_SUFFIXES if name.endswith(s)), None)
    return name[: -len(suffix)] if suffix else None
