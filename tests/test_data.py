"""The shared JSONL reader: every bad line is one InputError naming the file and the line."""

from __future__ import annotations

import pytest

from judgekit.data import jsonl_objects
from judgekit.errors import InputError


def test_objects_with_their_line_numbers(tmp_path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": 1}\n\n  \n{"id": 2}\n')
    assert list(jsonl_objects(path)) == [(1, {"id": 1}), (4, {"id": 2})]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        (b'{"id": 1}\n{"id": \n', 2, "invalid JSON"),
        (b'{"id": 1}\n[1, 2]\n', 2, "expected a JSON object"),
        (b'{"id": 1}\n\n{"text": "caf\xe9"}\n', 3, "not UTF-8"),
    ],
)
def test_bad_lines_are_located(tmp_path, content: bytes, line: int, message: str) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        list(jsonl_objects(path))
    assert info.value.line == line and info.value.path == str(path)


def test_a_missing_file_is_named(tmp_path) -> None:
    with pytest.raises(InputError, match="file not found"):
        list(jsonl_objects(tmp_path / "absent.jsonl"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"n": ' + b"9" * 5000 + b"}\n", "invalid JSON"),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "invalid JSON"),
        (b'{"label": "\\ud800"}\n', "not a character"),
        (b"\n\n", "the file is empty"),
    ],
)
def test_hostile_lines_are_errors_not_tracebacks(tmp_path, content: bytes, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        list(jsonl_objects(path))


def test_a_directory_is_not_a_file(tmp_path) -> None:
    (tmp_path / "fr.jsonl").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        list(jsonl_objects(tmp_path / "fr.jsonl"))
