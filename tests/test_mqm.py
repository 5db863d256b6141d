"""MQM scoring against Google's published TED table, and the reader on hand-made rows."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import shared_path
from typer.testing import CliRunner

import judgekit.cli.mqm  # noqa: F401
import judgekit.cli.score  # noqa: F401
from judgekit.cli import app
from judgekit.errors import InputError
from judgekit.metrics import mqm

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"


def _tsv(tmp_path, *rows: str):
    path = tmp_path / "mqm.tsv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def _read_table(path):
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_ted_ende_system_mqm_reproduces_published_table():
    rows = mqm.read_mqm_tsv(shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv"))
    expected = _read_table(shared_path("mqm", "expected_system_mqm_ted.tsv"))
    got = {s.system: s for s in mqm.system_mqm(rows)}
    assert len(expected) == 10
    for row in expected:
        system = got[row["system_in_tsv"]]
        assert system.score == pytest.approx(float(row["published_mqm_README"]), abs=0.01)
        assert system.score == pytest.approx(float(row["recomputed_mqm"]), abs=1e-6)
        assert system.total == pytest.approx(float(row["total_error_weight"]), abs=1e-6)
        assert system.n_segments == int(row["n_segments"]) == 529
    assert [s.system for s in mqm.system_mqm(rows)][:2] == ["ref", "Facebook-AI"]  # best first


@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_sxs_per_rater_scores_match_the_derived_file(pair):
    # The derived file leaves out Source-issue and HOTW rows; 3 raters per item.
    rows = mqm.read_mqm_tsv(shared_path("mqm", f"google_sxs_mqm_wmt23_{pair}.3raters.sample.tsv"))
    derived = _read_table(
        shared_path("mqm", f"google_sxs_mqm_wmt23_{pair}.per_rater_segment_scores.tsv")
    )
    expected = {
        (r["system"], r["doc"], r["docSegId"], r["rater"]): float(r["mqm_weighted"])
        for r in derived
    }
    weights = mqm.MQMWeights(exclude_categories=["Source issue"])
    segments = mqm.segment_mqm(rows, weights)
    n = 0
    for seg in segments:
        assert len(seg.rater_scores) == 3
        for rater, score in seg.rater_scores.items():
            assert score == pytest.approx(expected[(seg.system, seg.doc, seg.seg_id, rater)])
            n += 1
        assert seg.score == pytest.approx(sum(seg.rater_scores.values()) / 3)
    assert n == {"ende": 300, "zhen": 1800}[pair]


def test_weights_hand_computed(tmp_path):
    path = _tsv(
        tmp_path,
        "S\td\t1\t1\tr1\tsrc\t<v>Ein</v> Test.\tAccuracy/Mistranslation\tMajor",
        "S\td\t1\t1\tr1\tsrc\tEin Test<v>.</v>\tFluency/Punctuation\tMinor",
        "S\td\t1\t1\tr2\tsrc\tEin <v>Test</v>.\tStyle/Awkward\tMinor",
        "S\td\t1\t2\tr1\tsrc\t<v>A test.</v>\tNon-translation!\tMajor",
        "S\td\t1\t3\tr1\tsrc\tGut.\tNo-error\tNo-error",
        "S\td\t1\t3\tr2\tsrc\tGut<v>.</v>\tFound\tHOTW-test",
        "T\td\t1\t1\tr1\tsrc\tGut.\tFluency/Grammar\tNeutral",
    )
    rows = mqm.read_mqm_tsv(path)
    segs = {(s.system, s.seg_id): s for s in mqm.segment_mqm(rows)}
    assert segs[("S", "1")].rater_scores == pytest.approx({"r1": 5.1, "r2": 1.0})
    assert segs[("S", "1")].score == pytest.approx(3.05)  # mean over the two raters
    assert segs[("S", "2")].score == 25.0
    assert segs[("S", "3")].rater_scores == {"r1": 0.0, "r2": 0.0}  # HOTW row left out
    systems = {s.system: s for s in mqm.system_mqm(rows)}
    assert systems["S"].score == pytest.approx((3.05 + 25 + 0) / 3)
    assert systems["S"].n_ratings == 5
    assert systems["T"].score == 0.0

    flat = mqm.load_weights(
        '{"rules": [], "severity": {"Major": 10, "Minor": 2, "No-error": 0, "Neutral": 0}}'
    )
    segs = {(s.system, s.seg_id): s for s in mqm.segment_mqm(rows, flat)}
    assert segs[("S", "1")].rater_scores == {"r1": 12.0, "r2": 2.0}
    assert segs[("S", "2")].score == 10.0
    assert "major:10" in flat.signature() and "excl:hotw-test" in flat.signature()


def test_unknown_severity_names_line_and_field(tmp_path):
    path = _tsv(
        tmp_path,
        "S\td\t1\t1\tr1\tsrc\tok\tNo-error\tNo-error",
        "S\td\t1\t2\tr1\tsrc\t<v>x</v>\tAccuracy/Addition\tSevere",
    )
    with pytest.raises(InputError) as info:
        mqm.system_mqm(mqm.read_mqm_tsv(path))
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, "severity")


def test_reader_offsets_and_markers(tmp_path):
    rows = mqm.read_mqm_tsv(shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv"))
    first = rows[0]
    assert (first.system, first.doc, first.seg_id, first.rater) == (
        "Facebook-AI",
        "talk.1",
        "1",
        "rater1",
    )
    assert first.target[first.start : first.end] == "in Betracht zu ziehen"
    assert (first.start, first.end) == (72, 93) and "<v>" not in first.target
    omissions = [r for r in rows if r.source_start is not None]
    assert len(omissions) == 9 and all(r.start is None for r in omissions)
    assert omissions[0].source[omissions[0].source_start : omissions[0].source_end] == "I think"
    unclosed = [
        r
        for r in rows
        if r.system == "metricsystem1" and r.seg_id == "475" and r.category == "Fluency/Punctuation"
    ]
    assert unclosed[0].target[unclosed[0].start :] == "?" and unclosed[0].end == len(
        unclosed[0].target
    )

    assert mqm.strip_span_markers("ab<v>cd</v>e") == ("abcde", 2, 4)
    assert mqm.strip_span_markers("abc") == ("abc", None, None)
    with pytest.raises(ValueError, match="comes before"):
        mqm.strip_span_markers("a</v>b<v>c")
    bad = _tsv(tmp_path, "S\td\t1\t1\tr1\tsrc\t<v>a</v> <v>b</v>\tStyle/Awkward\tMinor")
    with pytest.raises(InputError) as info:
        mqm.read_mqm_tsv(bad)
    assert (info.value.line, info.value.field) == (2, "target")


def test_reader_rejects_bad_files(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("system\tdoc\tseg_id\trater\tsource\ttarget\tcategory\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        mqm.read_mqm_tsv(path)
    assert (info.value.line, info.value.field) == (1, "severity")
    short = _tsv(tmp_path, "S\td\t1\t1\tr1\tsrc\ttarget\tNo-error")
    with pytest.raises(InputError, match="8 fields, header has 9") as info:
        mqm.read_mqm_tsv(short)
    assert info.value.line == 2
    with pytest.raises(InputError, match="invalid JSON"):
        mqm.load_weights("{not json")
    with pytest.raises(InputError) as info:
        mqm.load_weights('{"severity": {"Major": "heavy"}}')
    assert info.value.field == "severity.Major"
    with pytest.raises(InputError, match="weights file not found"):
        mqm.load_weights(str(tmp_path / "none.json"))


def test_target_spans_per_rating():
    rows = mqm.read_mqm_tsv(shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv"))
    spans = mqm.target_spans(rows)
    assert len(spans) == 5290  # 10 systems x 529 segments, one rater each
    assert spans[("Facebook-AI", "talk.1", "1", "rater1")][0][:3] == (72, 93, "Minor")
    assert sum(len(v) for v in spans.values()) == 2875  # rows with a target-side <v> span


runner = CliRunner()


def test_cli_mqm_score(tmp_path):
    tsv = shared_path("mqm", "google_mqm_ted_ende.systems-subset.tsv")
    result = runner.invoke(app, ["mqm", "score", str(tsv), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    scores = {s["system"]: s["score"] for s in payload["systems"]}
    assert scores["Nemo"] == pytest.approx(2.14, abs=0.01)
    assert scores["ref"] == pytest.approx(0.91, abs=0.01)
    assert payload["signature"].startswith("mqm|major:5|minor:1|")

    table = runner.invoke(app, ["mqm", "score", str(tsv)])
    assert table.exit_code == 0 and "eTranslation" in table.output and "1.969" in table.output

    weights = tmp_path / "w.json"
    weights.write_text(json.dumps({"rules": []}), encoding="utf-8")
    small = _tsv(tmp_path, "S\td\t1\t1\tr1\tsrc\tEin Test<v>.</v>\tFluency/Punctuation\tMinor")
    result = runner.invoke(
        app, ["mqm", "score", str(small), "--weights", str(weights), "--json", "--segments"]
    )
    payload = json.loads(result.output)
    assert payload["systems"][0]["score"] == 1.0  # no punctuation rule: a plain Minor
    assert payload["segments"][0]["rater_scores"] == {"r1": 1.0}


def test_cli_mqm_items_writes_the_same_items_as_the_library(tmp_path):
    from judgekit.pipelines.error_typing import items_from_mqm

    tsv = shared_path("mqm", "google_mqm_ted_zhen.systems-subset.tsv")
    out = tmp_path / "items.jsonl"
    args = ["mqm", "items", str(tsv), str(out), "--systems", "refB,ref", "--n-segments", "3"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "wrote 6 items" in result.output
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = items_from_mqm(tsv, systems=["refB", "ref"], n_segments=3)
    assert [w["id"] for w in written] == [i.id for i in expected]
    assert written[0]["translation"] == expected[0].translation
    missing = runner.invoke(app, [*args[:3], str(out), "--systems", "nobody", "--n-segments", "3"])
    assert missing.exit_code != 0 and not out.with_suffix(".tmp").exists()
