"""Reading a plain-text file of one segment per line (hypotheses, references, sources): the
one reader of such files, shared by MT scoring, test sets and the CLI."""

from __future__ import annotations

import codecs
from pathlib import Path

from sacrebleu.utils import smart_open

from judgekit.errors import InputError


def read_lines(path: str | Path) -> list[str]:
    """Read one segment per line as sacrebleu's command line does (``\\n`` only, rstrip; .gz ok);
    a UTF-8 byte-order mark at the start of the file is dropped, as the label readers drop it.

    Raises:
        InputError: the file is missing or not UTF-8 (with the line number).
    """
    if not Path(path).is_file():
        raise InputError(path, "file not found")
    data = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        with smart_open(str(path)) as handle:
            data = handle.buffer.read() if hasattr(handle, "buffer") else handle.read().encode()
    data = data.removeprefix(codecs.BOM_UTF8)  # a byte-order mark is no text of line 1
    lines: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            lines.append(raw.decode("utf-8").rstrip())
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not valid UTF-8 ({exc.reason})", line=number) from None
    if lines and lines[-1] == "" and data.endswith(b"\n"):
        lines.pop()  # the newline that ends the last line opens no segment
    if not data:
        raise InputError(path, "the file is empty: expected one segment per line")
    return lines
