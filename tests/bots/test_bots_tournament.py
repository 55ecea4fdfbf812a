"""The tournament command: options, its table and its one JSON line."""

from __future__ import annotations

import json

import pytest

from pisyedili.server.bots.tournament import main


def test_prints_a_table_and_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rules", "cardiva", "--a", "hard", "--b", "medium", "--deals", "2",
                 "--players", "3", "--iterations", "10", "--seed", "4"]) == 0  # fmt: skip
    out = capsys.readouterr().out.strip().splitlines()
    assert out[1].split()[:2] == ["level", "win"]
    summary = json.loads(out[-1])
    assert summary["rules"] == "cardiva" and summary["players"] == 3
    assert summary["deals"] == 2 and summary["games"] == 6  # 3 seatings per deal
    assert summary["fair_share"] == pytest.approx(1 / 3, abs=1e-3)
    for side, level in (("a", "hard"), ("b", "medium")):
        s = summary[side]
        assert s["level"] == level
        lo, hi = s["ci95"]
        assert 0 <= s["win_rate"] <= 1 and lo <= s["win_rate"] <= hi
        assert set(s["decision_ms"]) == {"p50", "p90", "p99", "max"}
        assert s["decisions"] > 0


def test_two_jobs_give_the_same_figures_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--a", "medium", "--b", "easy", "--deals", "6", "--seed", "9"]
    assert main([*args, "--jobs", "1"]) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*args, "--jobs", "2", "--progress"]) == 0
    printed = capsys.readouterr()
    two = json.loads(printed.out.strip().splitlines()[-1])
    lines = printed.err.splitlines()
    assert lines[-1] == "6/6 deals played"
    # Each tenth but the last also gives the summary of the deals played so far.
    partial = [json.loads(x) for x in lines if x.startswith("{")]
    assert [p["deals"] for p in partial] == [1, 2, 3, 4, 5]
    assert partial[-1]["a"]["level"] == "medium"
    for side in ("a", "b"):
        assert one[side]["win_rate"] == two[side]["win_rate"]
        assert one[side]["mean_points"] == two[side]["mean_points"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--deals", "0"],
        ["--jobs", "0"],
        ["--players", "9"],
        ["--budget", "-1"],
        ["--rules", "cardiva", "--players", "6"],
    ],
)
def test_bad_options_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err
