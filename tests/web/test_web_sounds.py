"""The web client's sounds: the committed files are what the generator makes, and each
is a short, small WAV (the page fetches them from the server alone)."""

from __future__ import annotations

import wave
from pathlib import Path

from pisyedili.client import make_sounds

COMMITTED = Path(make_sounds.__file__).resolve().parent / "web" / "sounds"


def test_the_committed_sounds_are_the_generators_output(tmp_path: Path) -> None:
    assert make_sounds.main(tmp_path) == 0
    for name in make_sounds.SOUNDS:
        made = (tmp_path / f"{name}.wav").read_bytes()
        assert made == (COMMITTED / f"{name}.wav").read_bytes(), f"run make_sounds for {name}"


def test_each_sound_is_short_and_small() -> None:
    for name in make_sounds.SOUNDS:
        path = COMMITTED / f"{name}.wav"
        assert path.stat().st_size < 8000
        with wave.open(str(path), "rb") as w:
            assert w.getnchannels() == 1
            assert 0.1 < w.getnframes() / w.getframerate() < 0.5
    assert "MIT" in (COMMITTED / "README.md").read_text(encoding="utf-8")
