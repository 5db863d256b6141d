"""Every ``--json`` goes through one writer (judgekit.data.jsonfile.print_json): valid UTF-8
JSON whatever the strings hold, a lone surrogate (a file name of bytes that are not UTF-8 reads
as ``\\udcff``) written as its JSON escape so a reader gets the same string back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judgekit.data.jsonfile import json_text

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / "judgekit" / "cli"


def test_json_text_escapes_lone_surrogates_and_keeps_other_text():
    value = {"path": "j\udcff.csv", "label": "CS\ud800", "text": "é 中 🙂", "x": float("nan")}
    text = json_text(value)
    text.encode("utf-8")  # no lone surrogate left: encodable
    assert "\\udcff" in text and "é 中 🙂" in text and "NaN" not in text
    assert json.loads(text) == {**value, "x": None}


def test_no_command_writes_json_but_through_the_one_writer():
    """``--json`` printers call print_json; json.dumps/json.dump in judgekit/cli only build
    command-line overrides (audit) or the human console's own text (errors headline)."""
    allowed = {"audit.py", "errors_calibration.py", "run.py"}
    for path in CLI.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name not in allowed:
            assert not re.search(r"json\.dumps?\(", text), path.name


@pytest.mark.skipif(sys.platform == "win32", reason="file names of raw bytes are POSIX")
def test_estimate_json_of_a_file_named_with_a_non_utf8_byte_is_valid_utf8(tmp_path: Path):
    rows = "".join(f"i{k},judge,{'CS' if k % 3 else 'CA'}\n" for k in range(60))
    humans = "".join(f"i{k},h,{'CS' if k % 4 else 'CA'}\n" for k in range(30))
    judge = os.path.join(os.fsencode(tmp_path), b"j\xff.csv")
    with open(judge, "wb") as handle:
        handle.write(b"item,rater,label\n" + rows.encode())
    (tmp_path / "h.csv").write_text("item,rater,label\n" + humans, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", "calibrate", "estimate", "--judge", judge, "--human",
         str(tmp_path / "h.csv"), "--target", "share:CS", "--json"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    doc = json.loads(done.stdout.decode("utf-8"))  # strict UTF-8: a raw 0xff byte would fail
    assert os.fsencode(doc["signature"]["inputs"]["judge"]["path"]).endswith(b"j\xff.csv")
