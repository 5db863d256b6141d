"""The viewer's Python side without a browser: reading run directories, the page's data
(escaping, columns, summary blocks), and bad input reported as one located error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import run_main

from judgekit.errors import InputError
from judgekit.view.data import read_records, read_run
from judgekit.view.page import embed_json, render_markdown, render_page
from judgekit.view.profiles import profile
from judgekit.view.rows import encode_rows, meta_of
from judgekit.view.summary import summary_blocks


def record(key: str, status: str = "ok", **kw: object) -> dict:
    base = {"key": key, "stage": "judge", "role": "judge", "route": "hosted_vllm/m", "model": "m",
            "prompt_id": "classify/default", "prompt_hash": "abc", "status": status,
            "meta": {"item": key, "index": 0, "sample": 0}}  # fmt: skip
    return base | kw


def write(path: Path, lines: list[dict], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in lines) + tail, encoding="utf-8")
    return path


def test_last_line_of_a_key_wins_and_a_cut_last_line_is_dropped(tmp_path: Path) -> None:
    path = write(tmp_path / "records.jsonl",
                 [record("a", "error"), record("b"), record("a", "ok", raw="{}")],
                 tail='{"key": "c", "sta')  # fmt: skip
    records, cut, replaced = read_records(path)
    assert [(r["key"], r["status"]) for r in records] == [("b", "ok"), ("a", "ok")]
    assert (cut, replaced) == (1, 1)


@pytest.mark.parametrize(
    ("line", "field"), [("not json", None), ('{"status": "ok"}', "key"),
                        ('{"key": "a", "status": "fine"}', "status")],
)  # fmt: skip
def test_a_bad_record_line_is_one_located_error(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record("a")) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_records(path)
    assert err.value.line == 2 and err.value.field == field and err.value.path == str(path)


@pytest.mark.parametrize(
    ("change", "field"),
    [({"meta": "item a"}, "meta"), ({"stage": 3}, "stage"), ({"latency_s": "slow"}, "latency_s"),
     ({"reason": {"why": 1}}, "reason"), ({"model": None}, "model")],
)  # fmt: skip
def test_a_record_field_of_the_wrong_type_is_one_located_error(
    tmp_path: Path, change: dict, field: str
) -> None:
    path = write(tmp_path / "records.jsonl", [record("a"), record("b") | change])
    with pytest.raises(InputError) as err:
        read_records(path)
    assert err.value.line == 2 and err.value.field == field and err.value.path == str(path)


def test_view_of_a_folder_that_is_not_a_run_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = run_main("view", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path}: not a run directory: no records.jsonl in it"


def test_data_cannot_close_its_script_element() -> None:
    payload = {"raw": "</script><img src=x onerror=alert(1)><!--", "n": 1}
    text = embed_json(payload)
    assert "<" not in text and json.loads(text) == payload
    assert json.loads(embed_json({"x": [float("nan"), 1.5]})) == {"x": [None, 1.5]}
    page = render_page({"runs": [], "x": payload["raw"]}, "t</title><b>")
    assert page.count("</script>") == 2  # the data element's and the script's own
    assert "<b>" not in page and "t&lt;/title&gt;" in page


def test_markdown_notes_pass_no_html() -> None:
    html = render_markdown("| a |\n|---|\n| <script>alert(1)</script> |\n")
    assert "<table>" in html and "<script>" not in html and "&lt;script&gt;" in html


def test_records_as_columns_keep_everything_once(tmp_path: Path) -> None:
    answer = {"label": "x", "rationale": "r"}
    rows = [
        record("a", raw=json.dumps(answer), parsed=answer),
        record("b", "unscored", raw="nope", reason="malformed_json: bad", attempts=2, reasks=1),
        record("c", raw='```{"label": "y"}```', parsed={"label": "y"}),
    ]
    table = encode_rows(rows, profile("classify"))
    assert table["n"] == 3 and table["num"]["parsed_is_raw"] == [1, 0, 0]
    assert table["parsed"] == {"2": {"label": "y"}}  # a's parsed is its raw JSON, b has none
    assert table["cat"]["label"] == {"v": ["x", None, "y"], "c": [0, 1, 2]}
    assert table["cat"]["model"] == {"v": ["m"], "c": None}  # one value: no codes
    assert table["cat"]["sample_index"] == {"v": [0], "c": None}
    assert table["num"]["attempts"] == [0, 2, 0]
    assert table["cat"]["reason_kind"]["v"] == [None, "malformed_json"]
    assert table["text"]["reason"] == [None, "malformed_json: bad", None]
    # item and sample are columns already; the rest column-wise, read back per row
    assert table["meta"] == {"names": ["index"], "cols": {"index": {"v": [0, 0, 0]}}}
    assert [meta_of(table, i) for i in range(3)] == [{"index": 0}] * 3


def test_every_summary_value_carries_its_path() -> None:
    summary = {
        "items": {"planned": 4, "judged": 3, "excluded": {"judgment_unscored": 1}},
        "labels": {"judge-a": {"pos": 2, "neg": 1}, "judge-b": {"pos": 3}},
        "rates": {"by_lang": [{"lang": "de", "rate": 0.5}, {"lang": "fr"}]},
        "usage": {"calls": 4, "served_by": {"m@127.0.0.1:80": 4}},
    }
    blocks = {tuple(b["path"]): b for b in summary_blocks(summary)}
    items = blocks[("items",)]["items"]  # names readable, paths as in summary.json
    assert ["excluded: judgment unscored", 1, ["items", "excluded", "judgment_unscored"]] in items
    labels = blocks[("labels",)]
    assert labels["columns"] == ["", "pos", "neg"] and labels["rows"][1] == ["judge-b", 3, None]
    assert labels["row_paths"] == [["labels", "judge-a"], ["labels", "judge-b"]]
    assert labels["absent"] == [[1, 2]]  # judge-b has no "neg": no value, no path
    assert blocks[("rates", "by_lang")]["absent"] == [[1, 1]]
    served = blocks[("usage",)]["items"][1]
    assert served[2] == ["usage", "served_by", "m@127.0.0.1:80"]  # a key with dots stays one key
    assert list(blocks)[-1] == ("usage",)  # usage after the pipeline's own parts
    assert list(blocks)[0] == ("headline",)  # the headline before everything


def test_the_headline_leads_with_the_pipelines_figures_and_names_are_readable() -> None:
    from judgekit.view.summary import readable

    summary = {
        "items": {"planned": 6, "judged": 5, "excluded": {"judgment_unscored": 1}},
        "spilling_rate": 0.52, "spilling_rate_ci": [0.4, 0.64],
        "rates": {"by_model": [{"model": "a", "n_items": 3, "spilling_rate": 0.6,
                                "std_item_rate": 0.1, "excluded": {"x_y": 1}},
                               {"model": "b", "n_items": 2, "spilling_rate": 0.4}]},
    }  # fmt: skip
    first, *rest = summary_blocks(summary, "spilling")
    assert first["path"] == ["headline"] and first["items"][0] == [
        "spilling rate [95% CI]", 0.52, ["spilling_rate"], [0.4, 0.64],
        [["spilling_rate_ci", 0], ["spilling_rate_ci", 1]],
    ]  # fmt: skip
    assert [r[0] for r in first["items"][1:3]] == ["spilling rate, a", "spilling rate, b"]
    table = next(b for b in rest if b["path"] == ["rates", "by_model"])
    assert table["headers"] == ["model", "items", "spilling rate", "SD of item rates", "excluded"]
    assert table["rows"][0][4] == {"x_y": 1}  # the value itself; the page writes it in words
    assert readable("cs_ci_low") == "CS CI low" and readable("macro_f1") == "macro-F1"
    pairwise = summary_blocks({"judges": [{"source": "run", "judge": "j", "subset": "all",
                                           "accuracy": 0.8, "accuracy_low": 0.7,
                                           "accuracy_high": 0.9}]}, "pairwise")  # fmt: skip
    assert pairwise[0]["items"][0][1:4] == [0.8, ["judges", 0, "accuracy"], [0.7, 0.9]]


@pytest.mark.parametrize("summary", [{"signature": "x"}, {"usage": "x"}, {"usage": [1]}])
def test_a_summary_whose_signature_or_usage_is_not_an_object_is_located(
    tmp_path: Path, summary: dict
) -> None:
    write(tmp_path / "records.jsonl", [record("a")])
    (tmp_path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(InputError, match="must be an object") as err:
        read_run(tmp_path)
    assert err.value.path == str(tmp_path / "summary.json") and err.value.field in summary


@pytest.mark.parametrize("name", ["records.jsonl", "summary.json", "labels.csv", "notes.md"])
def test_the_report_never_overwrites_one_of_its_inputs(tmp_path: Path, name: str) -> None:
    from judgekit.view import build_report

    write(tmp_path / "records.jsonl", [record("a")])
    (tmp_path / "summary.json").write_text("{}", encoding="utf-8")
    (tmp_path / "labels.csv").write_text("item,rater,label\na,m,x\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# notes\n", encoding="utf-8")
    before = (tmp_path / name).read_bytes()
    with pytest.raises(InputError, match="an input of this report") as err:
        build_report([tmp_path], tmp_path / "." / name)
    assert err.value.path == str(tmp_path / "." / name)
    assert (tmp_path / name).read_bytes() == before


def test_judge_pairs_beyond_the_limit_are_said_to_be_left_out(tmp_path: Path) -> None:
    from judgekit.view import build_report

    runs = []
    for n in range(9):  # 9 sources: 36 pairs, 28 compared
        run = tmp_path / f"run{n}"
        run.mkdir()
        write(run / "records.jsonl", [record("a")])
        (run / "labels.csv").write_text(f"item,rater,label\na,judge{n},x\n", encoding="utf-8")
        runs.append(run)
    info = build_report(runs, tmp_path / "r.html", n_resamples=0)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    data = json.loads(html.split('id="judgekit-data">', 1)[1].split("</script>", 1)[0])
    assert info.pairs == 28 and len(data["pairs"]) == 28
    assert "8 of 36 judge pairs are not compared" in " ".join(data["runs"][0]["warnings"])


def test_a_note_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    write(tmp_path / "records.jsonl", [record("a")])
    (tmp_path / "notes.md").write_bytes(b"# caf\xe9\n")  # Latin-1
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_run(tmp_path)
    assert err.value.path == str(tmp_path / "notes.md")


def test_a_run_without_summary_still_reads(tmp_path: Path) -> None:
    write(tmp_path / "records.jsonl", [record("a")])
    run = read_run(tmp_path)
    assert run.summary == {} and run.pipeline == "" and run.labels is None and len(run.records) == 1


def test_bad_human_labels_are_one_located_error(tmp_path: Path) -> None:
    from judgekit.view import build_report

    run = tmp_path / "run"
    run.mkdir()
    write(run / "records.jsonl", [record("a", raw='{"label": "x"}', parsed={"label": "x"})])
    humans = tmp_path / "humans.csv"
    humans.write_text("item,who,label\na,h1,x\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        build_report([run], tmp_path / "r.html", labels=humans)
    assert err.value.path == str(humans) and err.value.field == "rater"
    assert not (tmp_path / "r.html").exists()  # nothing half-written


def test_a_line_with_two_records_is_a_located_error_and_extra_fields_are_kept(
    tmp_path: Path,
) -> None:
    """The one-call validation of the whole file never shifts a line: two values on one line
    are an error on that line; a field Record does not know stays in the record."""
    from judgekit.record_file import read_record_lines

    one = json.dumps(record("a") | {"extra": [1, 2]})
    path = tmp_path / "records.jsonl"
    path.write_text(one + "\n", encoding="utf-8")
    assert read_record_lines(path).records == [json.loads(one)]
    path.write_text(one + "\n" + one + ", " + json.dumps(record("b")) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_record_lines(path)
    assert err.value.line == 2 and "not JSON" in str(err.value)
