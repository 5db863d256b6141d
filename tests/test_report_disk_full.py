"""Reports written on a full disk: every file goes through the one atomic writer
(judgekit.data.atomic), so a failed write names the file and leaves the previous version in
place, and ``judgekit view`` still opens the run. The disk is full_disk.py's ENOSPC budget.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd
import pytest
from fault_server import FaultServer
from full_disk import FullDisk
from test_disk_full import write_run

import judgekit
from judgekit.calibration.compare import CompareOptions, compare
from judgekit.errors import OutputError
from judgekit.metrics.perm_both import PermutationSettings
from judgekit.report.compare import write_compare
from judgekit.view.data import read_run

NO_SPACE = os.strerror(errno.ENOSPC)


def test_a_full_disk_at_items_jsonl_keeps_the_previous_one_and_view_opens_the_run(
    tmp_path: Path,
) -> None:
    with FaultServer() as srv:
        config, out = write_run(tmp_path, srv.base_url, 300), tmp_path / "out"
        judgekit.run(config, out=out)
        items = (out / "items.jsonl").read_bytes()
        (out / "summary.json").unlink()  # a rerun writes the report again
        with FullDisk(len(items) // 3, names={"items.jsonl"}), pytest.raises(OutputError) as e:
            judgekit.run(config, out=out)  # everything recorded: only the report is written
    assert str(e.value) == f"cannot write {out / 'items.jsonl'}: {NO_SPACE}"
    assert (out / "items.jsonl").read_bytes() == items  # whole: 300 lines, not a cut third
    assert len(items.splitlines()) == 300
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]
    run = read_run(out)  # what `judgekit view` reads
    assert len(run.records) == 300 and len(run.side["items.jsonl"]) == 300


def _compare(tmp_path: Path):
    items = [f"i{k}" for k in range(12)]
    humans = [
        (i, r, "ab"[(k + (r == "h3")) % 2]) for k, i in enumerate(items) for r in ["h1", "h2", "h3"]
    ]
    pd.DataFrame(humans, columns=["item", "rater", "label"]).to_csv(
        tmp_path / "humans.csv", index=False
    )
    judges = [(i, "j1", "ab"[k % 2]) for k, i in enumerate(items)]
    judges += [(i, "j2", "ab"[(k // 2) % 2]) for k, i in enumerate(items)]
    pd.DataFrame(judges, columns=["item", "rater", "label"]).to_csv(
        tmp_path / "judges.csv", index=False
    )
    options = CompareOptions(n_resamples=20, permutations=PermutationSettings(n_permutations=20))
    return compare(str(tmp_path / "humans.csv"), [str(tmp_path / "judges.csv")], options)


@pytest.mark.parametrize("name", ["compare_rows.csv", "compare_pairs.csv", "compare.png"])
def test_calibrate_compare_out_on_a_full_disk_keeps_the_previous_files(
    tmp_path: Path, name: str
) -> None:
    result, out = _compare(tmp_path), tmp_path / "out"
    write_compare(result, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert before[name]  # written whole the first time
    with FullDisk(16, names={name}), pytest.raises(OutputError) as e:
        write_compare(result, out)
    assert str(e.value) == f"cannot write {out / name}: {NO_SPACE}"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no empty or cut file
