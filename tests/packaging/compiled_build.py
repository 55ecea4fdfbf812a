"""The compiled wheel's build, as a user makes it: an sdist of the checkout, then `pip
wheel` of that sdist in pip's isolated build environment, with PISYEDILI_MYPYC=require.

The packaging tests build it once a session. CI builds it at its very start instead
(`python tests/packaging/compiled_build.py FOLDER`, with any Python that has pip and
the backend's requirements), while the project installs: the mypyc build is the
longest single task of the suite and needs none of the project's environment. The
tests then read what that build left in FOLDER (the variable `BUILT` names it): its
wheel, pip's output and exit status, the same as their own build would give them; the
pass against the compiled engine installs the same wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
BUILT = "PISYEDILI_COMPILED_BUILD"
"""A folder where `main` left the compiled build, for the tests to check instead of
building their own."""


def env(**changes: str | None) -> dict[str, str]:
    """This process's environment without what would change a build, plus `changes`."""
    out = {k: v for k, v in os.environ.items() if k not in ("PISYEDILI_MYPYC", "PYTHONPATH")}
    out.update({k: v for k, v in changes.items() if v is not None})
    return out


def run(argv: list[str], environ: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=900, check=False)


def make_sdist(out: Path) -> Path:
    """The checkout's sdist, made by its build backend into `out`."""
    done = run([sys.executable, "-c",
                "import sys, _build_backend as b; b.build_sdist(sys.argv[1])", str(out)],
               env(), CHECKOUT)
    if done.returncode != 0:
        raise RuntimeError(done.stdout + done.stderr)
    (found,) = out.glob("pisyedili-*.tar.gz")
    return found


def pip_wheel(sdist: Path, out: Path, *options: str,
              **changes: str | None) -> subprocess.CompletedProcess[str]:
    """`pip wheel` of `sdist` into `out`, with pip's `options` and the variables `changes`."""
    return run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", *options,
                "-w", str(out), str(sdist)], env(**changes), out)


def build_compiled(sdist: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """The compiled wheel of `sdist` into `out`, in pip's isolated build environment,
    which must get mypy from the backend's requirements, as a user's build does."""
    return pip_wheel(sdist, out, PISYEDILI_MYPYC="require")


def record(out: Path, done: subprocess.CompletedProcess[str]) -> None:
    (out / "pip-output.txt").write_text(done.stdout + done.stderr)
    (out / "pip-status.txt").write_text(str(done.returncode))


def recorded(out: Path) -> subprocess.CompletedProcess[str]:
    """What `record` kept in `out`, as the build's finished process."""
    return subprocess.CompletedProcess(args=["pip", "wheel"],
                                       returncode=int((out / "pip-status.txt").read_text()),
                                       stdout=(out / "pip-output.txt").read_text(), stderr="")


def main(folder: str) -> int:
    """Build the compiled wheel into `folder` (made empty first), and record the build."""
    out = Path(folder).resolve()
    shutil.rmtree(out, ignore_errors=True)
    sdist_dir = out / "sdist"
    sdist_dir.mkdir(parents=True)
    done = build_compiled(make_sdist(sdist_dir), out)
    record(out, done)
    wheels = [p.name for p in out.glob("*.whl")]
    if done.returncode == 0 and wheels:
        sys.stdout.write(f"built {', '.join(wheels)} (pip's output: {out}/pip-output.txt)\n")
    else:  # the tests fail on this build too, but say why here first
        sys.stdout.write((done.stdout + done.stderr)[-4000:])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
