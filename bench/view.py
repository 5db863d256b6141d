"""``judgekit view`` at scale: the report of a synthetic 100,000-record run, built and opened in
headless Chromium (Debian's, as the page tests drive it).

The run is a classify run by a jury of two judges over 50,000 items (so compare mode pairs the
judges over 50,000 units): records shaped as ``judgekit run`` writes them (``Record`` JSON,
rationales of 60-200 characters, 3% unscored with their raw answer and reason, 1% errors), with
its summary.json (``usage_summary``), labels.csv and items.jsonl (the judged texts, 60-200
characters each, as ``judgekit run`` writes them and the detail pane shows them). Measured:
build time (reading the run, agreement and kappa, writing the page), file size, and time until
the table is interactive (from the browser being asked to load the file until the page's
start-up has rendered the summary, the first page of rows and compare mode), then the time of a
few interactions.
Usage::

    python bench/view.py [--records 100000] [--rounds 3]

Ends with ``view: <seconds> s to interactive at 100k (target < 1; baseline ...)``: the browser
first opens a blank page (its own start-up, the baseline), then the report; the build line
compares with reading records.jsonl by ``json.loads`` alone, in the same run.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from judgekit.data.jsonfile import write_json  # noqa: E402
from judgekit.run_usage import usage_summary  # noqa: E402
from judgekit.runlog import Record  # noqa: E402
from judgekit.view import build_report  # noqa: E402

LABELS = ("positive", "negative", "neutral")
WORDS = ("clean", "friendly", "cold", "late", "noisy", "quiet", "spacious", "dated", "helpful",
         "slow", "warm", "bright")  # fmt: skip


def synthetic_run(out: Path, n_records: int, seed: int = 0) -> None:
    """Write records.jsonl, labels.csv, items.jsonl and summary.json of a 2-judge classify run."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    records, labels, texts = [], [], []
    for index in range(n_records // 2):
        item = f"review-{index:06d}"
        said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 28)))
        texts.append({"id": item, "text": f"Review {index}: the room was {said}."})
        truth = rng.choice(LABELS)
        for judge in ("judge-a", "judge-b"):
            label = truth if rng.random() < 0.8 else rng.choice(LABELS)
            why = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 28)))
            raw = f'{{"label": "{label}", "rationale": "The guest found it {why}."}}'
            fate = rng.random()
            status, reason, parsed = (
                "ok",
                None,
                {"label": label, "rationale": f"The guest found it {why}."},
            )
            if fate < 0.03:
                status, parsed = "unscored", None
                reason = "schema: label: Input should be 'positive', 'negative' or 'neutral'"
                raw = raw.replace(label, "mixed")
            elif fate < 0.04:
                status, parsed, raw = "error", None, None
                reason = "transient: EndpointError: HTTP 503 from 127.0.0.1:8000"
            records.append(Record(
                key=f"judge|{judge}|{item}|s0|5e1f{judge[-1]}c0d", stage="judge", role="judge",
                route=f"hosted_vllm/{judge}", model=judge, prompt_id="classify/default",
                prompt_hash="e2a6cb21a636", params={"temperature": 0.0, "max_tokens": 512},
                schema_name="ClassifyJudgment", status=status, reason=reason, raw=raw,
                parsed=parsed, attempts=1 + (status != "ok"), reasks=int(status == "unscored"),
                latency_s=round(rng.uniform(0.05, 2.5), 4), tokens_in=rng.randint(80, 400),
                tokens_out=rng.randint(15, 60), cache_hit=rng.random() < 0.1,
                served_by=f"hosted_vllm/{judge}@127.0.0.1:8000",
                meta={"item": item, "index": index, "sample": 0},
            ))  # fmt: skip
            if status == "ok":
                labels.append((item, judge, label))
    with (out / "records.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(r.model_dump_json() + "\n" for r in records)
    with (out / "items.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(t) + "\n" for t in texts)
    with (out / "labels.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item", "rater", "label"])
        writer.writerows(labels)
    usage = usage_summary(records)
    failed = {"judgment_unscored": usage["status"]["unscored"],
              "judgment_error": usage["status"]["error"]}  # fmt: skip
    write_json(out / "summary.json", {
        "signature": {"judgekit": "bench", "pipeline": "classify", "labels": list(LABELS),
                      "judges": [{"route": f"hosted_vllm/{j}", "name": j}
                                 for j in ("judge-a", "judge-b")],
                      "prompts": {"classify/default": "e2a6cb21a636"}, "n_items": n_records // 2},
        "items": {"planned": n_records, "judged": len(labels),
                  "excluded": {k: v for k, v in failed.items() if v}},
        "usage": usage,
        "files": {"records": "records.jsonl", "labels": "labels.csv", "items": "items.jsonl"},
    })  # fmt: skip


TIMED = {  # interactions, each timed inside the page (ms, synchronous re-render included)
    "filter status=unscored": "var s=document.querySelector('select[data-facet=\"status\"]');"
    "s.value=String(JK.tables[0].values('status').indexOf('unscored'));"
    "s.dispatchEvent(new Event('change'));",
    "clear the filter": "var s=document.querySelector('select[data-facet=\"status\"]');"
    "s.value='';s.dispatchEvent(new Event('change'));",
    "search 'spacious dated'": "JK.state.search='spacious dated';applyFilters();",
    "sort by latency": "document.querySelector('#items th[data-col=\"latency_s\"]').click();",
    "next page": "document.querySelector('#pager button:last-child').click();",
    "open a detail": "select(JK.state.pos + 1);",
}


def open_page(page: Path) -> tuple[float, float, float, dict[str, float]]:
    """(wall seconds from load to interactive, in-page ms from navigation start to ready,
    wall seconds of a blank page in the same browser, ms per interaction) of one fresh browser
    that opens a blank page (its renderer's start-up, the baseline), then ``page``."""
    from browser import chrome

    with chrome() as driver:
        driver.set_page_load_timeout(120)
        blank = page.with_name("blank.html")
        blank.write_text("<!doctype html><title>blank</title>", encoding="utf-8")
        started = time.perf_counter()
        driver.get(blank.as_uri())  # the browser's own start-up, paid before any report opens
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        driver.get(page.as_uri())
        while driver.execute_script("return document.documentElement.dataset.ready") != "1":
            time.sleep(0.01)
        wall = time.perf_counter() - started
        in_page = driver.execute_script("return window.judgekitReady")
        while driver.execute_script("return document.documentElement.dataset.loaded") != "1":
            time.sleep(0.01)  # the bulk (raw answers, item texts) of a large report
        loaded = time.perf_counter() - started
        driver.execute_script("showTab('items');")
        timings = {}
        for name, script in TIMED.items():
            timings[name] = driver.execute_script(
                f"var t=performance.now();{script}return performance.now()-t;"
            )
        count = driver.execute_script("return document.getElementById('count').textContent")
        assert "of" in count, count
    return wall, in_page, baseline, timings | {"all data loaded (from load)": loaded * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="judgekit-bench-view-"))
    run = base / "run"
    made = time.perf_counter()
    synthetic_run(run, args.records)
    print(f"synthetic run: {args.records:,} records in {time.perf_counter() - made:.1f} s "
          f"({(run / 'records.jsonl').stat().st_size / 1e6:.1f} MB records.jsonl)")  # fmt: skip
    parsed = time.perf_counter()  # baseline: reading the records with nothing else done
    with (run / "records.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            json.loads(line)
    parsed = time.perf_counter() - parsed
    builds, walls, blanks, per_action = [], [], [], []
    for round_ in range(args.rounds):
        cpu = time.process_time()
        info = build_report([run], base / "report.html", n_resamples=200)
        cpu = time.process_time() - cpu
        wall, in_page, blank, timings = open_page(info.path)
        builds.append(info.seconds)
        walls.append(wall)
        blanks.append(blank)
        per_action.append(timings)
        print(f"round {round_ + 1}: build {info.seconds:.2f} s ({cpu:.2f} s CPU), "
              f"{info.bytes / 1e6:.1f} MB; "
              f"interactive after {wall:.2f} s (in page: {in_page / 1000:.2f} s from navigation "
              f"start; a blank page first {blank:.2f} s); "
              + ", ".join(f"{k} {v:.0f} ms" for k, v in timings.items()),
              flush=True)  # fmt: skip
    size = info.bytes / 1e6
    build = statistics.median(builds)
    print(f"file {size:.1f} MB (target < 30), build {build:.2f} s (target < 5; baseline: "
          f"json.loads of records.jsonl {parsed:.2f} s), medians of "
          f"{args.rounds}; interactions (median ms): " + ", ".join(
              f"{k} {statistics.median(t[k] for t in per_action):.0f}" for k in TIMED))  # fmt: skip
    print(
        f"view: {statistics.median(walls):.2f} s to interactive at "
        f"{args.records // 1000}k (target < 1; baseline: a blank page in the same fresh "
        f"browser {statistics.median(blanks):.2f} s)"
    )


if __name__ == "__main__":
    main()
