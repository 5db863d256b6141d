"""``review make --selection``: pages for exactly the selection's items; the import keeps the
inclusion probabilities beside the labels."""

from __future__ import annotations

import json
from pathlib import Path

from test_review import SEGMENTS, export, jsonl
from typer.testing import CliRunner

from judgekit.calibration.design.selection import Selected, read_selection, write_selection
from judgekit.cli import app
from judgekit.cli import review as _  # noqa: F401  (registers `review`)
from judgekit.review.campaign import read_campaign


def test_make_from_a_selection_and_import_keeps_probabilities(tmp_path: Path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    ids = [s["id"] for s in SEGMENTS]
    chosen = [Selected(ids[-1], 0.25, "all", "uncertainty 0.4", "active"),
              Selected(ids[0], 0.5, "all", "uncertainty 0.9", "active")]  # fmt: skip
    sel = tmp_path / "selection.csv"
    write_selection(sel, chosen)
    runner = CliRunner()
    page = tmp_path / "c" / "alice.html"
    made = runner.invoke(app, ["review", "make", str(items), "--task", "mqm", "--rater", "alice",
                               "-o", str(page), "--selection", str(sel)])  # fmt: skip
    assert made.exit_code == 0, made.output
    campaign = read_campaign(tmp_path / "c")
    assert [i.id for i in campaign.items] == [ids[-1], ids[0]]  # exactly those, in its order
    assert read_selection(tmp_path / "c" / "selection.csv") == chosen
    answers = {i.id: {"no_errors": True, "errors": []} for i in campaign.items}
    rater = tmp_path / "alice.json"
    made_page = type("Made", (), {"campaign": campaign})()
    rater.write_text(json.dumps(export(made_page, answers)), encoding="utf-8")
    out = tmp_path / "labels"
    done = runner.invoke(app, ["review", "import", str(rater), "--campaign",
                               str(tmp_path / "c"), "--out", str(out)])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert read_selection(out / "selection.csv") == chosen
    args = ["review", "make", str(items), "--task", "mqm", "--rater", "bob", "-o", str(page)]
    both = runner.invoke(app, [*args, "--selection", str(sel), "--sample", "1"])
    assert both.exit_code != 0 and "--selection alone" in str(both.exception)
