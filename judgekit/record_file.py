"""Reading a run's whole ``records.jsonl`` at once: the one reader of the run log's file for
whoever needs every record (``judgekit view``, ``judgekit.load_run``'s record table).

The rules are :class:`judgekit.runlog.RunLog`'s: the last line of a key wins (a resumed run may
record a task again with ``--retry-errors``) and keeps the position of that last line, a last
line cut short by a crash (no newline) is dropped and counted, blank lines are skipped, and any
other line that is not a :class:`~judgekit.runlog.Record` is one
:class:`~judgekit.errors.InputError` naming the file, the line and the first bad field.

Speed: each line is parsed and validated in one call of pydantic's Rust validator, straight
into a plain dict of the record fields (:data:`RECORD_FIELDS`, a ``TypedDict`` made from
``Record``'s fields, so the two cannot drift apart): no JSON parse then validation, no model
object per record. Only a line that fails is looked at again, to name its first bad field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, NoReturn, NotRequired

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from pydantic_core import from_json
from typing_extensions import TypedDict  # pydantic needs this one below Python 3.12

from judgekit.errors import InputError
from judgekit.runlog import Record

STATUSES = ("ok", "unscored", "error")


def _record_fields() -> type:
    """A ``TypedDict`` with :class:`Record`'s fields (those with a default not required),
    extra keys kept: a line validates as it would as a ``Record``, and stays the dict it was."""
    fields = {
        name: info.annotation if info.is_required() else NotRequired[info.annotation]  # type: ignore[valid-type]
        for name, info in Record.model_fields.items()
    }
    return with_config(ConfigDict(extra="allow"))(TypedDict("RecordFields", fields))  # type: ignore[operator]


RECORD_FIELDS = _record_fields()
_ONE = TypeAdapter(RECORD_FIELDS)


@dataclass
class RecordLines:
    """What :func:`read_record_lines` read: ``records`` (the current record of every key, as
    dicts with the fields their line holds, in the file order of their last line), ``cut``
    (1 when a last line cut short by a crash was dropped, else 0), ``replaced`` (lines
    superseded by a later line of the same key) and ``lines`` (the 1-based line of each record,
    aligned with ``records``: for a reader's own errors about a record, such as a run of
    another pipeline)."""

    records: list[dict[str, Any]]
    cut: int = 0
    replaced: int = 0
    lines: list[int] = field(default_factory=list)


def read_record_lines(path: str | Path) -> RecordLines:
    """Every current record of the ``records.jsonl`` at ``path`` (module doc).

    Raises:
        InputError: the file cannot be read, or a complete line is not JSON, not an object with
            a ``key``, has a ``status`` other than ok / unscored / error, or a field without the
            type of :class:`judgekit.runlog.Record` (names the file, the line and the field).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]  # "\n" only: U+2028 is text
    try:  # every line at once, mapped in C; a blank or bad line: line by line below
        rows = list(map(_ONE.validator.validate_json, lines))
        numbers = list(range(1, len(rows) + 1))
    except ValidationError:
        rows, numbers = _rows_of(path, lines)
    keys = list(map(itemgetter("key"), rows))
    cut = int(end < len(data))
    if len(set(keys)) == len(keys):  # no key recorded twice: every line is current
        return RecordLines(rows, cut, 0, numbers)
    current: dict[str, tuple[int, dict[str, Any]]] = {}
    for key, number, row in zip(keys, numbers, rows, strict=True):
        current.pop(key, None)  # the record takes the place of its last line
        current[key] = number, row
    return RecordLines([row for _, row in current.values()], cut, len(rows) - len(current),
                       [number for number, _ in current.values()])  # fmt: skip


def _rows_of(path: Path, lines: list[bytes]) -> tuple[list[dict[str, Any]], list[int]]:
    """The records of ``lines`` one by one, blank lines skipped, and their 1-based lines
    (module doc).

    Raises:
        InputError: the first line that is not a record (:func:`_raise_error`)."""
    validate = _ONE.validator.validate_json
    rows, numbers = [], []
    for number, line in enumerate(lines, 1):
        try:
            rows.append(validate(line))
        except ValidationError:
            if line.strip():
                _raise_error(path, number, line)
            continue
        numbers.append(number)
    return rows, numbers


def _raise_error(path: Path, number: int, line: bytes) -> NoReturn:
    """Raise the InputError of line ``number`` (``line``), which is not a record (module doc)."""
    try:
        data = from_json(line)
    except ValueError:
        raise InputError(path, "not JSON (not a judgekit record)", line=number) from None
    if not isinstance(data, dict) or not isinstance(data.get("key"), str):
        raise InputError(path, "not a judgekit record", line=number, field="key")
    if data.get("status") not in STATUSES:
        raise InputError(path, "status must be ok, unscored or error", line=number, field="status")
    try:
        _ONE.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(
            path, f"not a judgekit record ({where}: {first['msg']})", line=number,
            field=str(first["loc"][0]) if first["loc"] else None,
        ) from None  # fmt: skip
    raise InputError(path, "not a judgekit record", line=number)  # pragma: no cover


def with_defaults(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` (as :func:`read_record_lines` reads them) with every
    :class:`~judgekit.runlog.Record` field a line lacks set to its default (a fresh one per
    record where the default is made by a factory, ``{}``); records that hold every field
    are the same dicts, the others updated in place."""
    fields = Record.model_fields
    names = fields.keys()
    for record in records:
        if names <= record.keys():
            continue
        for name in names - record.keys():
            record[name] = fields[name].get_default(call_default_factory=True)
    return records
