"""Import speed of ``judgekit batch import``: 100,000 answers to records, cache entries, report.

A classify run of ``--n`` items (one judge, ``openai/gpt-4o-mini``: nothing is sent) is
exported (``judgekit batch export``, 8 shards); its answers are written as OpenAI batch output
files (one a shard: a valid label and rationale per request, with usage), then imported the way
``judgekit batch import`` does (``judgekit.run`` with the import executor: every line read and
checked, each answer matched to its task and request hash, validated by the online
structured-output path, recorded, cached; then the run's report). The figure is the import
phase's rate (records written per second, from the results files to the last record);
the whole command, report included, is timed too. The baseline, measured in the same run on the
same files, is the floor any importer pays: each line decoded (``json.loads``), a record built
from it (pydantic) and appended to a run log, with no matching, no validation of the answer and
no cache (issue 38 point 4's "plain JSON parse"); ``json.loads`` of every line alone is shown
too. Usage::

    python bench/batch_import.py [--n 100000]

Ends with ``batch_import: <records/s> records/s (<ratio>x of plain JSON parse ...; target ...)``.

Where the time goes (cProfile of the import phase, 20,000 answers, loaded shared 2-core
machine; cProfile inflates every call): rendering each task's prompt (``runner.tasks()``) about
a quarter, the result line decoded a second time (the index checks every line first, then reads
each back by offset) and its ``Reply``, the request hash of the stale check (the body built
again and hashed), the record (``ModelState.record``) and its run-log line and cache entry,
each a tenth or less. Under cProfile ``os.pread`` of each result line looked the largest part
(the writer threads holding the GIL): the files are now memory-mapped, but at 100,000 answers
without the profiler the import costs the same CPU time either way (3,016 and 3,177 records
per CPU second, loaded shared machine): the pread was the profiler's, not the import's.
Profiled again at 3,030 records/s (20,000 answers, loaded shared machine): no step holds more
than about a tenth of the import; the largest, a task's prompt rendered with ``string.Template``
(placeholders found, template built, each call), costs 7.8 us of CPU a record, 5.1 us with both
cached per text, about 1% of the 220-330 us of CPU a record costs: not worth a change. The rest is
pydantic validation of the answer and the record, ``json.loads`` of each line (twice: index,
then read back) and the request hash; the gap to a plain parse is the sum of these steps.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import pin  # noqa: E402
from judgekit.batch.exporter import ExportBatch  # noqa: E402
from judgekit.batch.importer import ImportResults  # noqa: E402
from judgekit.engine import run  # noqa: E402
from judgekit.runlog import Record, RunLog  # noqa: E402

LABELS = ["positive", "negative", "neutral"]
WORDS = ["clean", "friendly", "noisy", "cold", "late", "quiet", "spotless", "rude", "helpful"]


def write_items(path: Path, n: int) -> None:
    rng = random.Random(0)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            text = f"Review {i}: the room was " + " and ".join(rng.sample(WORDS, 3)) + "."
            handle.write(json.dumps({"id": f"r{i:06d}", "text": text}) + "\n")


def write_config(folder: Path, items: Path) -> Path:
    path = folder / "classify.yaml"
    path.write_text(
        "pipeline: classify\njudge:\n  model: openai/gpt-4o-mini\n"
        f"classify:\n  items: {items}\n  labels: [{', '.join(LABELS)}]\n"
        f"cache:\n  dir: {folder / 'cache'}\n",
        encoding="utf-8",
    )
    return path


def answer_files(manifest_dir: Path, shards: list[str], out: Path) -> list[Path]:
    """One OpenAI batch output file per shard: an answer for every request line."""
    files = []
    for number, name in enumerate(shards):
        target = out / f"output-{number}.jsonl"
        with open(manifest_dir / name, "rb") as src, open(target, "w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                key = json.loads(line)["custom_id"]
                content = json.dumps({"label": LABELS[i % 3], "rationale": "Short and clear."})
                body = {
                    "id": f"chatcmpl-{number}-{i}", "object": "chat.completion",
                    "created": 0, "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 95, "completion_tokens": 14, "total_tokens": 109},
                }  # fmt: skip
                response = {"status_code": 200, "request_id": f"req_{i}", "body": body}
                row = {"id": f"batch_req_{i}", "custom_id": key, "response": response}
                dst.write(json.dumps(row) + "\n")
        files.append(target)
    return files


class TimedImport(ImportResults):
    """The import executor, with the CPU seconds of its import phase (the machine may be
    shared: CPU time says what the import itself costs)."""

    cpu_s = 0.0

    def execute(self, runner, session, emit):  # type: ignore[no-untyped-def]
        started = time.process_time()
        try:
            return super().execute(runner, session, emit)
        finally:
            self.cpu_s = time.process_time() - started


def baseline(files: list[Path], out: Path) -> tuple[float, int]:
    """(wall seconds, CPU seconds, records) of the floor: decode each line, build a record,
    append it."""
    log = RunLog(out)
    started, cpu = time.perf_counter(), time.process_time()
    count = 0
    for path in files:
        with open(path, "rb") as handle:
            for line in handle:
                row = json.loads(line)
                body = row["response"]["body"]
                log.append(Record(
                    key=row["custom_id"], stage="judge", role="judge", route="openai/gpt-4o-mini",
                    model="gpt-4o-mini", prompt_id="classify/default", prompt_hash="-",
                    status="ok", raw=body["choices"][0]["message"]["content"],
                ))  # fmt: skip
                count += 1
    log.close()
    return time.perf_counter() - started, time.process_time() - cpu, count


def plain_parse(files: list[Path]) -> tuple[float, int]:
    """(wall seconds, lines) of ``json.loads`` of every line of ``files``, nothing else."""
    started, count = time.perf_counter(), 0
    for path in files:
        with open(path, "rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
    return time.perf_counter() - started, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="items (one answer each)")
    args = parser.parse_args()
    pin(0)
    with tempfile.TemporaryDirectory(prefix="judgekit-batch-bench-") as tmp:
        folder = Path(tmp)
        items = folder / "items.jsonl"
        write_items(items, args.n)
        cfg = write_config(folder, items)
        started = time.perf_counter()
        exporter = ExportBatch(folder / "export", shards=8)
        run(cfg, out=folder / "run", executor=exporter, preflight=False)
        export_s = time.perf_counter() - started
        manifest = exporter.manifest
        assert manifest is not None and len(manifest.tasks) == args.n
        files = answer_files(folder / "export", [s.file for s in manifest.shards], folder)
        importer = TimedImport(files)
        started = time.perf_counter()
        result = run(cfg, out=folder / "run", executor=importer, preflight=False)
        command_s = time.perf_counter() - started
        counts = importer.counts
        assert counts.imported == {"ok": args.n} and result.summary_data is not None
        assert result.summary_data["items"]["judged"] == args.n
        base_s, base_cpu, base_n = baseline(files, folder / "baseline")
        parse_s, parse_n = plain_parse(files)
        rate, base_rate = args.n / counts.seconds, base_n / base_s
    print(f"export of {args.n:,} tasks (8 shards, manifest): {export_s:.1f} s "
          f"({args.n / export_s:,.0f} requests/s)")  # fmt: skip
    per_cpu = args.n / importer.cpu_s
    print(f"import phase: {counts.seconds:.1f} s wall, {importer.cpu_s:.1f} s CPU "
          f"({per_cpu:,.0f} records per CPU second); the whole command (the import, the "
          f"pipeline's resume of every record, the report): {command_s:.1f} s")  # fmt: skip
    print(f"baseline (json.loads + Record + RunLog.append, same files): {base_s:.1f} s wall, "
          f"{base_cpu:.1f} s CPU")  # fmt: skip
    print(
        f"batch import: {rate:,.0f} records/s for {args.n:,} answers (target: none set in "
        f"issue 27; baseline {base_rate:,.0f} records/s in the same run, "
        f"{rate / base_rate:.2f}x of it)"
    )
    parse_rate = parse_n / parse_s
    print(f"plain json.loads of every line alone: {parse_rate:,.0f} lines/s")
    print(
        f"batch_import: {rate:,.0f} records/s ({rate / base_rate:.2f}x of plain JSON parse "
        f"with a record appended, {base_rate:,.0f}/s in the same run; {per_cpu:,.0f} records "
        "per CPU second; target: none set in issue 38 point 4, which measured 1,567/s, 0.09x)"
    )


if __name__ == "__main__":
    main()
