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

So ``build_editable`` copies the dropin file into the editable wheel, where a normal
wheel has it: it installs into ``site-packages/twisted/plugins/`` next to Twisted's own
plugins, is listed (hash and size) in the wheel's RECORD, and ``pip uninstall`` removes
it. The dropin only names ``pisyedili.server.tap``, which the editable finder serves
from the checkout, so the server code stays editable; a change to the dropin file
itself needs the install command run again.

``build_sdist`` adds this file to the source distribution (setuptools' sdist does not
include the files of ``backend-path``), so a wheel can be built from the sdist. Every
other hook is setuptools.build_meta's, unchanged, and ``pip install .`` wheels are
setuptools' own (the dropin is the ``twisted.plugins`` package listed in pyproject.toml).
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
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


def build_editable(
    wheel_directory: str,
    config_settings: ConfigSettings = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable wheel, with the twistd dropin file added to it."""
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
