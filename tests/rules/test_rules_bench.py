"""The engine benchmark's command line: one JSON line of figures, a ratio with OpenSpiel."""

from __future__ import annotations

import json

import pytest

from pisyedili.server.bench import engine as bench
from pisyedili.server.rules import COMPILED


def test_engine_bench_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--rules", "cardiva", "--players", "3", "--seconds", "0.05", "--quiet"]
    assert bench.main(argv) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["rules"] == "cardiva" and line["players"] == 3 and line["quiet"]
    assert line["deals"] >= 1 and line["moves"] > line["deals"]
    assert line["moves_per_s"] > 0
    assert line["compiled"] is COMPILED  # which engine the figures are of


def test_engine_bench_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--players", "9", "--seconds", "0.05"]) == 2
    assert bench.main(["--seconds", "0"]) == 2


def test_openspiel_comparison_reports_both_drivers(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyspiel")  # an optional benchmark dependency, never a project one
    assert bench.main(["--players", "4", "--seconds", "0.2", "--openspiel"]) == 0
    ref, lean, ours, quiet = (json.loads(x) for x in capsys.readouterr().out.splitlines())
    assert (ref["driver"], lean["driver"]) == ("reference", "lean")
    assert (ours["quiet"], quiet["quiet"]) == (False, True)
    assert min(ref["moves"], lean["moves"], ours["moves"], quiet["moves"]) > 0
    assert ours["compiled"] is quiet["compiled"] is COMPILED and "compiled" not in lean
    for line in (ours, quiet):
        rate = line["moves"] / line["seconds"]
        assert line["ratio_to_openspiel"] == pytest.approx(rate / lean["moves_per_s"], rel=0.01)
