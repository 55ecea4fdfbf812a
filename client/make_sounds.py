"""The web client's sounds, synthesised: `python -m pisyedili.client.make_sounds`.

Writes client/web/sounds/*.wav, a few short tones each, 8-bit mono at 11025 Hz, so
each file stays a few KB and the page needs nothing from outside the server. The
output is the same on every run (no randomness), so the committed files are exactly
what this script makes; a test checks that.
"""

from __future__ import annotations

import io
import math
import sys
import wave
from pathlib import Path

RATE = 11025
OUT = Path(__file__).resolve().parent / "web" / "sounds"

Note = tuple[float, float, float]
"""A tone: frequency (Hz), seconds, loudness 0..1."""

SOUNDS: dict[str, list[Note]] = {
    # Your turn: two rising notes, friendly and short.
    "turn": [(660.0, 0.09, 0.7), (880.0, 0.12, 0.7)],
    # A seven's penalty: a low falling pair, with an edge.
    "penalty": [(392.0, 0.10, 0.8), (262.0, 0.16, 0.8)],
    # The end of a deal: a rising arpeggio.
    "deal_end": [(523.0, 0.08, 0.6), (659.0, 0.08, 0.6), (784.0, 0.18, 0.6)],
}


def samples(notes: list[Note]) -> bytes:
    """The notes one after another, each with a 5 ms attack and an exponential decay
    (no clicks), a little of the octave above for colour."""
    out = bytearray()
    for freq, seconds, loud in notes:
        n = int(RATE * seconds)
        for i in range(n):
            t = i / RATE
            env = min(1.0, t / 0.005) * math.exp(-4.0 * t / seconds)
            wave_ = math.sin(2 * math.pi * freq * t) + 0.25 * math.sin(4 * math.pi * freq * t)
            value = loud * env * wave_ / 1.25
            out.append(max(0, min(255, round(128 + 127 * value))))
    return bytes(out)


def wav(notes: list[Note]) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(RATE)
        w.writeframes(samples(notes))
    return buf.getvalue()


def main(out: Path = OUT) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name, notes in SOUNDS.items():
        (out / f"{name}.wav").write_bytes(wav(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
