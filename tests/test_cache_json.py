"""The response cache cannot run code: values are JSON text, an entry that is not JSON is a
counted miss, and an entry in the old pickle format (whose loading could run anything, as
``os.system``) is never unpickled: a miss, said once, replaced by the fresh answer as JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import diskcache
import pytest
from cli_inproc import run_main
from conftest import fault_spec, judge_task
from fault_server import FaultServer

from judgekit.config import load_config
from judgekit.llm.cache import ResponseCache, task_key
from judgekit.llm.client import LLMClient
from judgekit.pipelines.classify import ClassifyRun
from judgekit.runlog import RunLog

MODE_RAW, MODE_TEXT, MODE_PICKLE = 1, 3, 4  # diskcache's value modes


class Planted:
    """A pickle that runs a shell command when it is loaded (what anyone who can write to a
    shared cache directory could plant)."""

    def __init__(self, marker: Path, size: int = 0) -> None:
        self.command = f"touch {marker}"
        self.padding = "x" * size  # past diskcache's 32 KB: the pickle goes to its own file

    def __reduce__(self) -> tuple:
        return (os.system, (self.command + " # " + self.padding,))


def plant(directory: Path, key: str, value: object) -> None:
    """Write ``value`` at ``key`` the way an older judgekit (or anyone) would: diskcache's
    default storage, which pickles anything that is not a string or a number."""
    with diskcache.Cache(str(directory)) as raw:
        raw.set(key, value)


def rows(directory: Path) -> dict[str, tuple[int, object]]:
    with sqlite3.connect(directory / "cache.db") as db:
        return {k: (m, v) for k, m, v in db.execute("SELECT key, mode, value FROM Cache")}


def test_values_are_stored_as_json_text_and_read_back(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    small = {"raw": '{"label": "ne"}', "parsed": {"label": "ne"}}
    large = {"raw": "ü" * 40_000, "parsed": {"label": "positive"}}  # past 32 KB: its own file
    cache.set("small", small)
    cache.set("large", large)
    cache.close()
    stored = rows(tmp_path)
    assert stored["small"][0] == MODE_RAW and json.loads(stored["small"][1]) == small
    assert stored["large"][0] == MODE_TEXT  # JSON text in a file, not a pickle
    files = [p for p in tmp_path.rglob("*.val")]
    assert len(files) == 1 and json.loads(files[0].read_text(encoding="utf-8")) == large
    again = ResponseCache(tmp_path)
    assert again.get("small") == small and again.get("large") == large
    assert again.get_many(["small", "large", "absent"]) == {"small": small, "large": large}
    assert (again.unreadable, again.pickled) == (0, 0)
    again.close()


@pytest.mark.parametrize("size", [0, 40_000], ids=["inline", "in-a-file"])
def test_a_planted_pickle_is_never_loaded(tmp_path: Path, size: int) -> None:
    marker = tmp_path / "pwned"
    plant(tmp_path / "cache", "k", Planted(marker, size))
    assert rows(tmp_path / "cache")["k"][0] == MODE_PICKLE
    cache = ResponseCache(tmp_path / "cache")
    assert cache.get("k") is None and cache.get_many(["k"]) == {}
    assert not marker.exists()  # the command never ran
    assert (cache.pickled, cache.unreadable, cache.misses, cache.hits) == (2, 0, 2, 0)
    assert cache.stats()["pickled"] == 1
    cache.close()


def test_a_value_that_is_not_json_is_a_counted_miss(tmp_path: Path) -> None:
    for i, text in enumerate(['{"raw": "x", "parsed"', "not json", "NaN-ish {"]):
        plant(tmp_path, f"k{i}", text)  # strings are stored as they are
    plant(tmp_path, "n", 12)  # a number, not JSON text either
    cache = ResponseCache(tmp_path)
    assert cache.get_many(["k0", "k1", "k2", "n"]) == {} and cache.get("k1") is None
    assert (cache.unreadable, cache.pickled, cache.misses) == (5, 0, 5)
    cache.close()


def test_a_run_over_a_pickled_entry_calls_the_task_and_stores_its_answer_as_json(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "pwned"
    with FaultServer() as srv:
        model = fault_spec(srv)
        tasks = [judge_task(f"t{i}", "[[fault:ok]]", model) for i in range(3)]
        probe = LLMClient(RunLog(tmp_path / "probe"))
        prefix = probe.models.get(model).format(tasks[0].schema)[1]
        keys = [task_key(prefix, t.messages, 0) for t in tasks]
        plant(tmp_path / "cache", keys[0], Planted(marker))  # read by get_many (prefetch)
        plant(tmp_path / "cache", keys[1], Planted(marker, 40_000))  # read by get
        cache = ResponseCache(tmp_path / "cache")
        client = LLMClient(RunLog(tmp_path / "run"), cache)
        assert client.prefetch(tasks[:1]) == 0
        records = [asyncio.run(client.run(t)) for t in tasks]
        cache.flush()
        assert not marker.exists()
        assert [r.status for r in records] == ["ok"] * 3 and not any(r.cache_hit for r in records)
        assert client.calls_made == 3 and cache.pickled == 2
        stored = rows(tmp_path / "cache")
        assert {stored[k][0] for k in keys} == {MODE_RAW}  # replaced, as JSON text
        warm = LLMClient(RunLog(tmp_path / "warm"), cache)
        again = [asyncio.run(warm.run(t)) for t in tasks]
        assert all(r.cache_hit for r in again) and warm.calls_made == 0
        assert [r.parsed for r in again] == [r.parsed for r in records]
        cache.close()


def test_the_command_says_once_that_pickled_entries_were_not_read(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"i{i}", "text": f"review {i}"}) + "\n" for i in range(6)),
        encoding="utf-8",
    )
    with FaultServer() as srv:
        config = tmp_path / "run.yaml"
        config.write_text(
            f"pipeline: classify\ncache: {{dir: {tmp_path / 'cache'}}}\n"
            f"judge: {{model: hosted_vllm/fault-model, api_base: {srv.base_url}}}\n"
            f"classify: {{items: {items}, labels: [positive, negative, neutral]}}\n",
            encoding="utf-8",
        )
        tasks = list(ClassifyRun(load_config(config), None).tasks())  # type: ignore[arg-type]
        probe = LLMClient(RunLog(tmp_path / "probe"))
        prefix = probe.models.get(tasks[0].spec).format(tasks[0].schema)[1]
        for task in tasks[:4]:
            plant(tmp_path / "cache", task_key(prefix, task.messages, 0), Planted(marker))
        plant(tmp_path / "cache", task_key(prefix, tasks[4].messages, 0), "{not json")
        proc = run_main("run", str(config), "--out", str(tmp_path / "o"), env={"COLUMNS": "200"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert srv.total_requests == 6  # every planted entry was a miss
        # the same tasks in another run directory: every answer from the cache, none sent
        again = run_main("run", str(config), "--out", str(tmp_path / "o2"), env={"COLUMNS": "200"})
        assert again.returncode == 0 and srv.total_requests == 6, again.stderr
    assert not marker.exists()
    said = [line for line in proc.stdout.splitlines() if "pickle format" in line]
    assert said == [
        "4 cache entries were in the pickle format of earlier judgekit versions: never "
        "unpickled (a pickle can run code), their tasks were called again and the answers "
        "stored as JSON"
    ]
    assert "1 cache entries were not valid answers of their task's schema" in proc.stdout
    stats = run_main("cache", "stats", "--dir", str(tmp_path / "cache"))
    assert "6 entries" in stats.stdout and "pickle format" not in stats.stdout, stats.stdout
    said = " ".join(proc.stdout.split())
    assert "requests sent this run 6 (retries and re-asks included), tasks answered from the " \
           "cache 0;" in said  # fmt: skip
    said = " ".join(again.stdout.split())
    assert "requests sent this run 0 (retries and re-asks included), tasks answered from the " \
           "cache 6;" in said, said  # fmt: skip
