"""Run records: a line cut short by a crash is dropped; recorded keys are final on resume."""

from __future__ import annotations

from pathlib import Path

from judgekit.run_usage import usage_summary
from judgekit.runlog import Record, RunLog


def rec(key: str, status: str = "ok", **kw) -> Record:
    base = dict(key=key, stage="judge", role="judge", route="local/x", model="x",
                prompt_id="p", prompt_hash="h", status=status)  # fmt: skip
    return Record(**{**base, **kw})


def test_resume_keeps_records_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    log.append(rec("a", tokens_in=10, tokens_out=2))
    log.append(rec("b", "unscored", reason="schema: valid: too short", raw="[true]"))
    log.close()
    with open(tmp_path / "records.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"key": "c", "stage": "jud')  # kill -9 in the middle of a write
    log = RunLog(tmp_path)
    assert log.resumed == 2 and set(log.records) == {"a", "b"}
    log.append(rec("c"))
    log.close()
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(line.endswith("}") for line in lines)
    assert RunLog(tmp_path).get("b").raw == "[true]"


def test_usage_summary_counts_equal_records() -> None:
    records = [rec("a", tokens_in=10, tokens_out=2, cost=0.5), rec("b", "error", reason="x: y"),
               rec("c", "unscored", reason="schema: z", cache_hit=False)]  # fmt: skip
    summary = usage_summary(records)
    assert summary["calls"] == 3
    assert summary["status"] == {"ok": 1, "unscored": 1, "error": 1}
    assert summary["by_model"]["judge|x"]["tokens_in"] == 10
    assert summary["by_model"]["judge|x"]["cost_usd"] == 0.5
    assert summary["reasons"] == {"x": 1, "schema": 1}


def test_task_keys_of_parts_with_pipes_never_collide() -> None:
    from judgekit.runlog import join_key

    keys = {
        join_key("judge", "x", "a|b", "s0"),
        join_key("judge", "x|a", "b", "s0"),
        join_key("judge", "x\\", "|b", "s0"),
        join_key("judge", "x\\|", "b", "s0"),
    }
    assert len(keys) == 4
    assert join_key("judge", "m", "item-1", "s0") == "judge|m|item-1|s0"  # plain parts stay as is


def test_usage_counts_records_and_the_requests_behind_them() -> None:
    def rec(key: str, attempts: int) -> Record:
        return Record(key=key, stage="judge", role="judge", route="r", model="m",
                      prompt_id="p", prompt_hash="h", status="ok", attempts=attempts)  # fmt: skip

    summary = usage_summary([rec("a", 1), rec("b", 3), rec("c", 0)])  # c: a cache hit
    assert (summary["calls"], summary["requests"]) == (3, 4)
