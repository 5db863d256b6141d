"""The response cache: what the key covers, batched reads, processes sharing one directory,
and ``judgekit cache stats|clear``."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgekit.llm.cache import ResponseCache, cache_key

BASE_MESSAGES = [{"role": "user", "content": "judge this"}]
BASE = dict(
    route="hosted_vllm/Qwen/Qwen3-8B",
    messages=BASE_MESSAGES,
    params={"temperature": 0.0, "max_tokens": 64},
    schema={"type": "object", "properties": {"label": {"type": "string"}}},
    strategy="json_schema",
    sample_index=0,
    revision=None,
)


@pytest.mark.parametrize(
    ("field", "other"),
    [
        ("route", "hosted_vllm/Qwen/Qwen3-14B"),
        ("revision", "a1b2c3"),
        ("messages", [{"role": "user", "content": "judge that"}]),
        ("messages", [{"role": "system", "content": "x"}, *BASE_MESSAGES]),
        ("messages", [{"role": "user", "content": [{"type": "text", "text": "judge this"}]}]),
        ("params", {"temperature": 0.7, "max_tokens": 64}),
        ("schema", {"type": "object", "properties": {"score": {"type": "integer"}}}),
        ("strategy", "tools"),
        ("sample_index", 1),  # deliberate repeats are not collapsed
    ],
)
def test_the_key_covers_everything_that_changes_an_answer(field, other) -> None:
    assert cache_key(**BASE) != cache_key(**{**BASE, field: other})


def test_the_key_is_canonical_and_secret_free() -> None:
    reordered = {**BASE, "params": {"max_tokens": 64, "temperature": 0.0},
                 "messages": [{"content": "judge this", "role": "user"}]}  # fmt: skip
    assert cache_key(**BASE) == cache_key(**reordered)
    assert len(cache_key(**BASE)) == 64  # a digest: nothing of the inputs, no key, no URL


def test_get_many_matches_get_and_sees_queued_writes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    for i in range(1200):
        cache.set(f"k{i}", {"raw": str(i), "parsed": {"i": i}})
    queued = cache.get_many(["k0", "k1", "absent"])  # possibly still in the writer's queue
    assert set(queued) == {"k0", "k1"}
    cache.flush()
    keys = [f"k{i}" for i in range(0, 1300, 3)]
    found = cache.get_many(keys)
    assert found == {k: cache.get(k) for k in keys if cache.get(k) is not None}
    assert len(found) == 400
    cache.close()


def test_get_many_falls_back_if_diskcache_changes(tmp_path: Path, monkeypatch) -> None:
    from judgekit.llm import cache as module

    cache = ResponseCache(tmp_path)
    cache.set("a", {"raw": "1", "parsed": {}})
    cache.flush()
    # a table layout judgekit does not know: one get per key instead
    monkeypatch.setattr(module, "_MANY_SQL", module._MANY_SQL.replace("filename", "file_name"))
    assert cache.get_many(["a", "b"]) == {"a": {"raw": "1", "parsed": {}}}
    cache.close()


def _writer(directory: str, start: int) -> None:
    cache = ResponseCache(directory)
    for i in range(start, start + 1500):
        cache.set(f"key{i % 2000}", {"raw": f"r{i % 2000}", "parsed": {"n": i % 2000}})
    cache.close()


def test_processes_sharing_a_directory_do_not_corrupt_it(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 500, 1000)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    cache = ResponseCache(tmp_path)
    assert cache.check() == []
    assert cache.stats()["entries"] == 2000
    assert all(cache.get(f"key{i}")["raw"] == f"r{i}" for i in range(2000))
    cache.close()


def test_cache_stats_and_clear_commands(tmp_path: Path) -> None:
    import judgekit.cli.cache  # noqa: F401  (registers `judgekit cache`)
    from judgekit.cli import app

    cache = ResponseCache(tmp_path)
    for i in range(7):
        cache.set(f"k{i}", {"raw": "x", "parsed": {}})
    cache.close()
    runner = CliRunner()
    stats = runner.invoke(app, ["cache", "stats", "--dir", str(tmp_path), "--json"])
    assert stats.exit_code == 0, stats.output
    assert '"entries": 7' in stats.output
    refused = runner.invoke(app, ["cache", "clear", "--dir", str(tmp_path)], input="n\n")
    assert refused.exit_code == 1
    cleared = runner.invoke(app, ["cache", "clear", "--dir", str(tmp_path), "--yes"])
    assert cleared.exit_code == 0 and "removed 7 entries" in cleared.output
    cache = ResponseCache(tmp_path)
    assert cache.stats()["entries"] == 0
    cache.close()


def test_unreadable_entries_are_misses_not_crashes(tmp_path: Path) -> None:
    import sqlite3

    cache = ResponseCache(tmp_path)
    cache.set("big", {"raw": "x" * 60_000, "parsed": {}})  # over diskcache's inline limit: a file
    cache.set("bad", {"raw": "y", "parsed": {}})
    cache.set("good", {"raw": "z", "parsed": {}})
    cache.flush()
    assert set(cache.get_many(["big", "bad", "good"])) == {"big", "bad", "good"}
    # a file removed by a concurrent run, a value that is not a pickle
    (file,) = [p for p in tmp_path.rglob("*.val")]
    file.unlink()
    with sqlite3.connect(tmp_path / "cache.db") as con:
        con.execute("UPDATE Cache SET value = X'DEADBEEF' WHERE key = 'bad'")
    assert cache.get_many(["big", "bad", "good"]) == {"good": {"raw": "z", "parsed": {}}}
    assert cache.get("big") is None and cache.get("bad") is None
    cache.close()


def test_a_cache_that_cannot_be_opened_is_one_clear_error(tmp_path: Path) -> None:
    from judgekit.errors import JudgekitError

    (tmp_path / "cache.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(JudgekitError, match=f"cache {tmp_path} cannot be opened.*--no-cache"):
        ResponseCache(tmp_path)


def test_failed_writes_are_counted_and_never_hang_the_run(tmp_path: Path) -> None:
    import sqlite3
    import threading

    cache = ResponseCache(tmp_path)
    tries = []

    def read_only(*args, **kwargs):
        tries.append(1)
        raise sqlite3.OperationalError("attempt to write a readonly database")

    cache._cache.set = read_only
    for i in range(600):
        cache.set(f"k{i}", {"raw": "x", "parsed": {}})
    flushed = threading.Thread(target=cache.flush, daemon=True)
    flushed.start()
    flushed.join(10)
    assert not flushed.is_alive()  # the writer lives on
    assert cache.write_errors == 600 and "readonly" in cache.write_error
    assert len(tries) == 1  # after a failed write no more are tried (a lock would make each wait)
    cache.close()


def test_a_damaged_cache_gives_one_error_from_stats_check_and_clear(tmp_path: Path) -> None:
    import sqlite3

    import diskcache

    from judgekit.errors import JudgekitError

    cache = ResponseCache(tmp_path)

    def malformed(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    def locked(*args, **kwargs):
        raise diskcache.Timeout

    for name in ("clear", "check", "volume"):
        setattr(cache._cache, name, malformed)
    for call in (cache.clear, cache.check, cache.stats):
        with pytest.raises(JudgekitError, match="malformed.*remove that directory"):
            call()
    cache._cache.clear = locked
    with pytest.raises(JudgekitError, match="locked by another process.*try again"):
        cache.clear()
