"""Every reader of a whole ``records.jsonl`` (the viewer's, ``judgekit.load_run``'s record
table, the grid's) goes through ``judgekit.record_file.read_record_lines``: one set of rules
(the last line of a key wins, a cut last line dropped) and the same located error for a bad
line, naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.calibration.grid import read_records as grid_records
from judgekit.errors import InputError
from judgekit.results import read_records as table_records
from judgekit.runlog import Record
from judgekit.view.data import read_records as view_records


def record(key: str, status: str = "ok", **kw: object) -> dict:
    base = {"key": key, "stage": "judge", "role": "judge", "route": "hosted_vllm/m", "model": "m",
            "prompt_id": "classify/default", "prompt_hash": "abc", "status": status,
            "meta": {"item": key}}  # fmt: skip
    return base | kw


def write(run: Path, lines: list[str]) -> Path:
    run.mkdir(exist_ok=True)
    (run / "records.jsonl").write_text("".join(lines), encoding="utf-8")
    return run / "records.jsonl"


READERS = {
    "view": lambda run: view_records(run / "records.jsonl"),
    "load_run": table_records,
    "grid": grid_records,
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(
    ("line", "field"),
    [("not json", None), ('{"status": "ok"}', "key"), ('{"key": "b", "status": "fine"}', "status"),
     (json.dumps(record("b", latency_s="slow")), "latency_s"),
     (json.dumps(record("b", meta="item b")), "meta")],
)  # fmt: skip
def test_each_reader_names_the_file_line_and_field_of_a_bad_line(
    tmp_path: Path, reader: str, line: str, field: str | None
) -> None:
    path = write(tmp_path / "run", [json.dumps(record("a")) + "\n", "\n", line + "\n"])
    with pytest.raises(InputError) as err:
        READERS[reader](tmp_path / "run")
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 3, field)


def test_the_readers_agree_on_which_records_are_current(tmp_path: Path) -> None:
    """A key recorded again keeps its last line at that line's place; a line cut by a crash is
    not a record; a field a line lacks holds Record's default in the tables of records."""
    lines = [record("a", "error", reason="transient: 503"), record("b", cost=0.25),
             record("a", raw='{"label": "x"}', parsed={"label": "x"})]  # fmt: skip
    write(tmp_path / "run", [json.dumps(r) + "\n" for r in lines] + ['{"key": "c", "st'])
    expected = [Record.model_validate(r) for r in lines[1:]]
    assert grid_records(tmp_path / "run") == expected
    table = table_records(tmp_path / "run")
    assert list(table.columns) == list(Record.model_fields)
    assert table.to_dict("records") == [r.model_dump() for r in expected]
    assert table.loc[1, "params"] == {} and table.loc[1, "cost"] == 0.0  # the defaults
    assert [r["key"] for r in view_records(tmp_path / "run" / "records.jsonl")[0]] == ["b", "a"]
