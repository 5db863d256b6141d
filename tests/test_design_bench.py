"""bench/designs.py on real data (the 400 Global-MMLU-Lite CS/CA labels) with few draws: it runs
and prints the issue's target lines."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import shared_path

REPO = Path(__file__).resolve().parents[1]


def test_designs_bench_quick(capsys) -> None:
    shared_path("benchmark-items", "global-mmlu-lite-en")  # skips (fails under REQUIRE_DATA=1)
    sys.path.insert(0, str(REPO / "bench"))
    import designs

    out = designs.main(["--draws", "3", "--sets", "global-mmlu-lite"])
    printed = capsys.readouterr().out
    assert "designs global-mmlu-lite active n=50 coverage: mean " in printed
    assert "designs global-mmlu-lite stratified n=100 coverage" in printed and "(SE " in printed
    assert "(target mean >= 0.93" in printed and "over 3 draws" in printed
    assert "(before: " in printed and "of 1 real sets, 3 draws" in printed
    frame = out["global-mmlu-lite"]
    assert set(frame["design"]) == set(designs.DESIGNS)
    assert len(frame) == 2 * len(designs.DESIGNS)  # one population (400 items), n = 50 and 100
    assert frame["coverage"].between(0, 1).all() and (frame["half_width"] > 0).all()
    assert not frame["half_width"].isna().any()
