"""The PEP 517 build backend: setuptools, plus the twistd dropin in editable wheels.

Why it exists. The packages install under one namespace through setuptools'
package-dir mapping (``pisyedili.server`` -> ``server/`` and so on), so an editable
install (``pip install -e .``) is done by setuptools with an import-hook finder, not
with a ``sys.path`` entry. Twisted finds plugins only by scanning ``sys.path`` entries
for ``twisted/plugins`` folders, so it never sees ``twisted/plugins/pisyedili_server.py``
in the checkout, and ``twistd pisyedili`` answers "Unknown command". setuptools has no
setting for this (its "strict" editable mode needs a ``--config-settings`` flag and a
link tree of symlinks or hard links under ``build/``; its "compat" mode puts the whole
checkout on ``sys.path``, which makes bare ``server`` and ``client`` importable).

docs/development.md ("The build backend") records the standard arrangements tried
instead and why each falls short.

So ``build_editable`` copies the dropin file into the editable wheel, where a normal
wheel has it: it installs into ``site-packages/twisted/plugins/`` next to Twisted's own
plugins, is listed (hash and size) in the wheel's RECORD, and ``pip uninstall`` removes
it. The dropin only names ``pisyedili.server.service.tap``, which the editable finder serves
from the checkout, so the server code stays editable; a change to the dropin file
itself needs the install command run again.

``build_sdist`` adds this file to the source distribution (setuptools' sdist does not
include the files of ``backend-path``), so a wheel can be built from the sdist. Every
other hook is setuptools.build_meta's, unchanged, and ``pip install .`` wheels are
setuptools' own (the dropin is the ``twisted.plugins`` package listed in pyproject.toml).

The translations. Every build of a wheel, editable ones too, first compiles the
catalogs (`compile_catalogs`, which runs ``client/catalogs.py``'s compile, loaded by its
path since the package is not installed yet): each ``client/locale/<lang>/LC_MESSAGES/
<domain>.po`` gets its ``.mo`` beside it, each ``web.po`` its
``client/web/locale/<lang>.json``. A wheel ships them as package data; an editable install
leaves them in the checkout, where the client reads them (git ignores them). So the
installs of the README speak every language without a step of their own. Babel is a
build requirement for this.

The compiled engine. With ``PISYEDILI_MYPYC=1`` (or ``require``) in the environment, a
wheel build (``pip install .``, ``pip wheel .``) also compiles the modules of `COMPILED`
with mypyc: the bots' search plays the rules engine thousands of times a decision, so
its speed is their strength (docs/bench.md). ``setup.py`` hands setuptools
the extension modules `setup_arguments` makes. mypyc names a module after its path under
a package root, and the package-dir mapping would make ``server/rules/deal.py`` the
module ``server.rules.deal``; so the sources are copied under their import names into
``build/mypyc/src/pisyedili/...`` (``pisyedili`` a namespace package, as installed) and
compiled from there, into one shared library named after `GROUP`, inside our package.
The ``.py`` files stay in the wheel beside the extension modules (the import system
picks the extension first; tracebacks still find the source). ``1`` falls back to the
pure Python wheel, with a warning on stderr, when compiling fails (no C compiler, no
mypy); ``require`` fails the build instead. Editable installs never compile: an
extension module built in place would shadow every later edit of its ``.py`` file.
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

ConfigSettings = dict[str, str | list[str]] | None

# The dropin, as a path in the source tree and in the wheel (the same, '/'-separated).
DROPIN = "twisted/plugins/pisyedili_server.py"
_ROOT = Path(__file__).resolve().parent

COMPILED = (
    "pisyedili.server.rules.cards",
    "pisyedili.server.rules.moves",
    "pisyedili.server.rules.tables",
    "pisyedili.server.rules.result",
    "pisyedili.server.rules.deal",
    "pisyedili.server.rules.view",
    "pisyedili.server.table.core",
    "pisyedili.protocol.types",
    "pisyedili.protocol.schema",
    "pisyedili.protocol.codec",
    "pisyedili.server.bots.knowledge",
    "pisyedili.server.bots.rollout",
    "pisyedili.server.bots.sampling",
    "pisyedili.server.bots.search",
    "pisyedili.server.bots.situation",
)
"""The modules a ``PISYEDILI_MYPYC`` wheel compiles: the engine's hot path, the hard
bot's search, which plays it, and the rest of a move's path through the server that
compiles as it is (the table core; the protocol's codec and schema). The one list.

Each module here must pass the whole suite compiled (CI runs the tests that cover them
both ways). Compiled code checks the annotated types of arguments on entry and of
attributes it reads, so what refuses bad input itself takes ``object``
(``deal.apply``, ``cards.parse_card``, a command's ``seat``...). A compiled class makes
instances only through ``__init__``, so what a snapshot holds pickles by its constructor
(``TableCore.__reduce__``, ``DealResult.__reduce__``): mypyc's own unpickling would call
``__init__`` with no arguments, and a frozen dataclass's refuses to assign."""

GROUP = "pisyedili.server.engine"
"""mypyc's group: its shared library installs as ``pisyedili/server/engine__mypyc.*.so``."""

VARIABLE = "PISYEDILI_MYPYC"
_MODES = {"": None, "0": None, "1": "1", "require": "require"}
# Where the sources are staged under their import names, the C is written, setuptools builds.
_STAGE = Path("build", "mypyc")
_compiling = False  # set while build_wheel runs setuptools for a compiled wheel


def mypyc_mode() -> str | None:
    """``PISYEDILI_MYPYC``: None (pure Python), "1" (compile, else pure) or "require"."""
    value = os.environ.get(VARIABLE, "").strip()
    if value not in _MODES:
        raise SystemExit(
            f"error: {VARIABLE}={value!r}: expected 1 (compile the engine, or build pure "
            "Python where compiling fails), require (compile or fail), or 0 (pure Python)"
        )
    return _MODES[value]


def _warn(message: str) -> None:
    print(f"\nWARNING: {message}\n", file=sys.stderr, flush=True)


def _pyproject() -> dict[str, Any]:
    with (_ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def mypy_requirement() -> str:
    """The test extra's mypy requirement (mypyc ships with mypy), bound and all."""
    extra = _pyproject()["project"]["optional-dependencies"]["test"]
    (found,) = (r for r in extra if re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0] == "mypy")
    return str(found)


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    """setuptools' requirements, and mypy when compiling (an isolated build env has none)."""
    requires = list(_setuptools.get_requires_for_build_wheel(config_settings))
    return [*requires, mypy_requirement()] if mypyc_mode() else requires


CATALOGS = Path("client", "catalogs.py")
"""The module that compiles the translation catalogs (Babel and the standard library only)."""


def compile_catalogs() -> list[Path]:
    """Every catalog's .mo and web JSON, written in the source tree before a wheel is
    made of it; returns what was written."""
    name = "_pisyedili_catalogs"
    spec = importlib.util.spec_from_file_location(name, _ROOT / CATALOGS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
        written: list[Path] = module.compile_all(_ROOT / "client", out=lambda line: None)
    finally:
        del sys.modules[name]
    return written


def compiler_problem() -> str | None:
    """Why no extension module could be compiled here, or None: the C compiler setuptools
    would use (``CC``, else this Python's own) cannot compile a file that includes
    ``Python.h``. Checked before mypyc runs, since mypyc's type check and C generation
    take most of a build's time and are wasted where nothing can compile their output.
    Windows finds its compiler otherwise (setuptools looks for MSVC), so it is not
    probed there."""
    if os.name == "nt":
        return None
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC")
    if not cc:
        return "this Python names no C compiler"
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder, "probe.c")
        probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n",
                         encoding="utf-8")
        try:
            done = subprocess.run(
                [*shlex.split(cc), "-I", sysconfig.get_paths()["include"], "-c", str(probe),
                 "-o", str(Path(folder, "probe.o"))],
                capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the C compiler {cc!r} could not be run: {exc}"
    if done.returncode != 0:
        return (f"the C compiler {cc!r} cannot compile against this Python's headers: "
                f"{done.stderr.strip()[-500:]}")
    return None


def build_wheel(
    wheel_directory: str,
    config_settings: ConfigSettings = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' wheel, the catalogs compiled into it; with ``PISYEDILI_MYPYC``, the
    `COMPILED` modules compiled too."""
    global _compiling
    compile_catalogs()
    mode = mypyc_mode()
    if mode is not None:
        _compiling = True
        try:
            if problem := compiler_problem():
                raise SystemExit(problem)
            return str(_setuptools.build_wheel(wheel_directory, config_settings,
                                               metadata_directory))
        except (Exception, SystemExit) as exc:
            if mode == "require":
                print(f"error: {VARIABLE}=require and compiling with mypyc failed: {exc}",
                      file=sys.stderr, flush=True)
                raise
            _warn(f"{VARIABLE}=1 but compiling the engine with mypyc failed ({exc}); "
                  "building the pure Python wheel instead, which plays the same, only "
                  "slower. Compiling needs a C compiler for this Python and mypy "
                  f"({mypy_requirement()}); {VARIABLE}=require makes this an error.")
        finally:
            _compiling = False
    return str(_setuptools.build_wheel(wheel_directory, config_settings, metadata_directory))


def packages() -> list[str]:
    """Every package: each folder with an ``__init__.py`` under a folder of the package-dir
    mapping, by its import name, and the dropin's. Derived, so that a new subpackage
    cannot work in an editable install and be left out of the wheel."""
    found = []
    for package, folder in _pyproject()["tool"]["setuptools"]["package-dir"].items():
        for init in sorted((_ROOT / folder).rglob("__init__.py")):
            found.append(".".join((package, *init.parent.relative_to(_ROOT / folder).parts)))
    return [*found, str(Path(DROPIN).parent).replace("/", ".")]


def setup_arguments() -> dict[str, Any]:
    """What ``setup.py`` adds to pyproject.toml's settings: the packages, and the extension
    modules of a compiled wheel build (none in editable, sdist and pure wheel builds)."""
    if not _compiling:
        return {"packages": packages()}
    # A build base of their own: setuptools leaves the extension modules in its build
    # folder, and a later pure wheel built from build/lib would otherwise pick them up.
    # Its lib folder goes too, for a module taken off the list; the object files stay.
    build_base = _ROOT / _STAGE / "build"
    for lib in build_base.glob("lib*"):
        shutil.rmtree(lib)
    return {
        "packages": packages(),
        "ext_modules": mypyc_extensions(),
        "options": {"build": {"build_base": os.path.relpath(build_base)}},
    }


def module_source(module: str) -> Path:
    """The source file of a module, through pyproject.toml's package-dir mapping."""
    mapping: dict[str, str] = _pyproject()["tool"]["setuptools"]["package-dir"]
    package = max((p for p in mapping if module.startswith(p + ".")), key=len)
    rest = module[len(package) + 1 :].split(".")
    return Path(mapping[package], *rest).with_suffix(".py")


def stage_sources(stage: Path) -> Path:
    """Copy the mapped packages' Python files under their import names; returns the root.

    mypy follows the compiled modules' imports into the rest, which it type-checks but
    does not compile. The copy is made afresh so that no deleted module lingers."""
    root = stage / "src"
    shutil.rmtree(root, ignore_errors=True)
    for package, folder in _pyproject()["tool"]["setuptools"]["package-dir"].items():
        shutil.copytree(
            _ROOT / folder,
            root.joinpath(*package.split(".")),
            ignore=lambda d, names: [
                n for n in names
                if not (n.endswith((".py", ".pyi")) or n == "py.typed" or Path(d, n).is_dir())
                or n == "__pycache__"
            ],
        )
    return root


def mypyc_extensions() -> list[Any]:
    """mypyc's Extension objects for `COMPILED`, generated from a staged copy.

    mypy reads a configuration of its own (written next to the staged sources), never
    the checkout's pyproject.toml, whose mypy_path reads the checkout's folders."""
    from mypyc.build import mypycify  # mypy is a build requirement only when compiling

    stage = _ROOT / _STAGE
    root = stage_sources(stage)
    config = stage / "mypy.ini"
    config.write_text(
        "[mypy]\n"
        # Relative to this file: mypy splits mypy_path at colons, even a drive letter's.
        f"mypy_path = $MYPY_CONFIG_FILE_DIR/{root.relative_to(stage).as_posix()}\n"
        "explicit_package_bases = True\n"
        "namespace_packages = True\n"
        # The modules mypy follows are type-checked by the project's own strict run.
        "follow_imports = silent\n"
        "ignore_missing_imports = True\n",
        encoding="utf-8",
    )
    paths = [Path(*m.split(".")).with_suffix(".py").as_posix() for m in COMPILED]
    for module, path in zip(COMPILED, paths, strict=True):
        if not (root / path).is_file():
            raise SystemExit(f"error: {module} is in COMPILED but {module_source(module)} "
                             "does not exist")
    # Compiled code names its source in tracebacks by the path mypyc was given, so it is
    # given pisyedili/server/rules/deal.py, which the traceback module then finds on
    # sys.path, in site-packages: mypycify runs in the staged tree, and the paths of the
    # Extension objects, relative to it, are made relative to the project again.
    here = Path.cwd()
    os.chdir(root)
    try:
        extensions = mypycify(["--config-file", str(config), *paths],
                              target_dir=os.path.relpath(stage / "c", root), group_name=GROUP)
    finally:
        os.chdir(here)

    def rebased(paths: list[str]) -> list[str]:
        return [p if os.path.isabs(p) else os.path.relpath(root / p, here) for p in paths]

    for extension in extensions:
        extension.sources = rebased(extension.sources)
        extension.include_dirs = rebased(extension.include_dirs)
        extension.depends = rebased(extension.depends)
    return list(extensions)


def build_editable(
    wheel_directory: str,
    config_settings: ConfigSettings = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable wheel, with the twistd dropin file added to it (and the
    catalogs compiled in the checkout)."""
    compile_catalogs()
    if mypyc_mode() is not None:
        _warn(f"{VARIABLE} is ignored by editable installs, which stay pure Python: an "
              "extension module built in place would shadow every later edit of its .py "
              "file. Build a wheel to compile the engine: pip install . (not -e).")
    name = str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
    add_to_wheel(Path(wheel_directory, name), DROPIN, (_ROOT / DROPIN).read_bytes())
    return name


def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    """setuptools' sdist, with this backend module added next to pyproject.toml."""
    name = str(_setuptools.build_sdist(sdist_directory, config_settings))
    backend = Path(__file__).resolve()
    add_to_sdist(Path(sdist_directory, name), backend.name, backend.read_bytes())
    return name


def record_hash(data: bytes) -> str:
    """The RECORD hash of a file's bytes: sha256, urlsafe base64 without padding."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def add_to_wheel(wheel: Path, arcname: str, data: bytes) -> None:
    """Rewrite ``wheel`` with one more file, listed in its RECORD.

    The file goes before the .dist-info entries and RECORD stays last, as the wheel
    specification recommends. A wheel that already has ``arcname`` is left as it is.
    """
    rewritten = wheel.with_name(wheel.name + ".tmp")
    with zipfile.ZipFile(wheel) as old:
        names = old.namelist()
        if arcname in names:
            return
        (record_name,) = (n for n in names if n.count("/") == 1 and n.endswith(".dist-info/RECORD"))
        record_info = old.getinfo(record_name)
        rows = list(csv.reader(io.StringIO(old.read(record_name).decode("utf-8"))))
        at = next((k for k, row in enumerate(rows) if row[:1] == [record_name]), len(rows))
        rows.insert(at, [arcname, record_hash(data), str(len(data))])
        record = io.StringIO()
        csv.writer(record, lineterminator="\n").writerows(rows)

        added = zipfile.ZipInfo(arcname, date_time=record_info.date_time)
        added.external_attr = (stat.S_IFREG | 0o644) << 16
        added.compress_type = zipfile.ZIP_DEFLATED
        kept = [info for info in old.infolist() if info.filename != record_name]
        split = next((k for k, i in enumerate(kept) if ".dist-info/" in i.filename), len(kept))
        with zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as new:
            for info in kept[:split]:
                new.writestr(info, old.read(info))
            new.writestr(added, data)
            for info in kept[split:]:
                new.writestr(info, old.read(info))
            new.writestr(record_info, record.getvalue().encode("utf-8"))
    os.replace(rewritten, wheel)


def add_to_sdist(sdist: Path, relname: str, data: bytes) -> None:
    """Rewrite the .tar.gz ``sdist`` with one more file in its top folder.

    The new member copies the metadata (owner, mode, time) of the sdist's pyproject.toml.
    An sdist that already has the file is left as it is.
    """
    rewritten = sdist.with_name(sdist.name + ".tmp")
    with tarfile.open(sdist, "r:gz") as old:
        members = old.getmembers()
        top = members[0].name.split("/")[0]
        if f"{top}/{relname}" in old.getnames():
            return
        added = copy.copy(old.getmember(f"{top}/pyproject.toml"))
        added.name, added.size = f"{top}/{relname}", len(data)
        with tarfile.open(rewritten, "w:gz", format=old.format) as new:
            for member in members:
                new.addfile(member, old.extractfile(member) if member.isfile() else None)
            new.addfile(added, io.BytesIO(data))
    os.replace(rewritten, sdist)
