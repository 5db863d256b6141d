"""Fetching a data set's files into the data home, checked against their pinned sha256.

Downloads go through pooch (``Pooch.fetch``): streamed to a temporary file beside the
target, hashed, and moved into place only when the sha256 matches, with ``retries`` further
tries after a failed transfer or a wrong checksum; a partial or corrupted download is never
kept, so never used. An archive member (``DataFile.member``) is downloaded as its archive
(checked likewise), extracted to a temporary file, hashed and renamed into place; the archive
is then deleted.

A file already in the set's folder is used as is when its stamp entry is there and its size
still matches (:mod:`judgekit.datasets.home`). One that is there without a stamp entry (placed
by hand) is hashed: the official file is stamped and used, anything else is deleted and
fetched again, and the message says which file. A file without a pinned checksum is fetched
only with ``trust=True`` (trust on first download): the sha256 of what came is recorded and
shown, and ``judgekit data verify`` checks the file against it later.

The set's licence is printed (through ``echo``) when its first file arrives, and stored in
``LICENCE.txt`` beside the files.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from judgekit.data.digest import file_sha256
from judgekit.datasets.home import (
    checked,
    entry,
    licence_shown,
    record,
    set_folder,
    write_licence,
)
from judgekit.datasets.registry import DataFile, DataSet
from judgekit.errors import JudgekitError

Echo = Callable[[str], None]
TIMEOUT = 60.0  # seconds without a byte before a transfer is abandoned
RETRIES = 2  # further tries after a failed transfer or a wrong checksum


def stderr_echo(message: str) -> None:
    """The default ``echo``: one line on stderr."""
    print(message, file=sys.stderr, flush=True)


def ensure_file(
    dataset: DataSet,
    path: str,
    *,
    home: Path | None = None,
    trust: bool = False,
    echo: Echo | None = None,
    retries: int = RETRIES,
    timeout: float = TIMEOUT,
) -> Path:
    """The local path of file ``path`` of ``dataset``, fetched first where needed (module doc).

    Raises:
        InputError: ``path`` is not a file of the set (the message lists its files).
        JudgekitError: the download failed (the message names the URL, the reason and where
            to place the file by hand), its sha256 is not the pinned one (nothing is kept),
            or the file has no pinned checksum and ``trust`` is False.
    """
    echo = echo or stderr_echo
    item = dataset.file(path)
    folder = set_folder(dataset.name, home)
    target = folder / item.path
    found = entry(folder, item.path)
    if found and target.is_file() and target.stat().st_size == found.size:
        return target
    if target.is_file():
        if item.sha256 and file_sha256(target) == item.sha256:
            record(folder, item.path, checked(target, "placed by hand", item.sha256))
            _notice(dataset, folder, echo)
            return target
        target.unlink()
        record(folder, item.path, None)
        echo(f"{target}: not the file that was checked or pinned; deleted, fetching it again")
    if item.sha256 is None and not trust:
        raise JudgekitError(
            f"data:{dataset.name}/{item.path} has no pinned checksum (see `judgekit data list`); "
            f"`judgekit data get {dataset.name} --trust` fetches {item.url} and records the "
            "sha256 of what comes"
        )
    if item.member:
        _fetch_members(dataset, item, folder, echo, retries, timeout)
    else:
        _download(item.url, item.sha256, target, retries, timeout)
        record(folder, item.path, checked(target, item.url, item.sha256))
    size = target.stat().st_size / 1e6
    if item.sha256 is None:
        sha = entry(folder, item.path).sha256  # type: ignore[union-attr]
        echo(f"{target}: no pinned checksum; sha256 of what came: {sha} (recorded)")
    else:
        echo(f"fetched data:{dataset.name}/{item.path} ({size:.1f} MB, sha256 checked)")
    _notice(dataset, folder, echo)
    return target


def ensure_set(
    dataset: DataSet,
    prefix: str = "",
    *,
    home: Path | None = None,
    trust: bool = False,
    echo: Echo | None = None,
    retries: int = RETRIES,
    timeout: float = TIMEOUT,
) -> Path:
    """Every file of ``dataset`` (or those under folder ``prefix``), fetched where needed;
    returns the set's folder (or ``prefix`` within it). Raises as :func:`ensure_file`."""
    chosen = [f for f in dataset.files if not prefix or f.path.startswith(prefix.rstrip("/") + "/")]
    if not chosen:
        dataset.file(prefix)  # raises, listing the set's files
    for item in chosen:
        ensure_file(dataset, item.path, home=home, trust=trust, echo=echo, retries=retries,
                    timeout=timeout)  # fmt: skip
    folder = set_folder(dataset.name, home)
    return folder / prefix if prefix else folder


def _download(url: str, sha256: str | None, target: Path, retries: int, timeout: float) -> None:
    """Download ``url`` to ``target`` with pooch, checking ``sha256`` (module doc). A failed
    transfer leaves nothing behind: not the file, nor the empty folders made for it."""
    import pooch
    import requests

    made = [p for p in (target.parent, *target.parent.parents) if not p.exists()]  # deepest first
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # pooch announces every download on stderr; judgekit says less
    done = False
    try:
        fetcher = pooch.create(
            path=target.parent,
            base_url=url.rsplit("/", 1)[0] + "/",
            registry={target.name: f"sha256:{sha256}" if sha256 else None},
            urls={target.name: url},
            retry_if_failed=retries,
        )
        fetcher.fetch(
            target.name, downloader=pooch.HTTPDownloader(progressbar=False, timeout=timeout)
        )
        done = True
    except ValueError:  # pooch: the sha256 of the download is not the known one
        raise JudgekitError(
            f"{url}: the download's sha256 is not the pinned {sha256}; it was deleted, nothing "
            f"was kept as {target}"
        ) from None
    except requests.exceptions.RequestException as exc:
        raise JudgekitError(
            f"cannot download {url} ({_reason(exc)}); offline? get it another way and save it "
            f"as {target}" + (f" (sha256 {sha256})" if sha256 else "") + ", then run again"
        ) from None
    finally:
        logger.setLevel(level)
        for folder in made if not done else []:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


def _reason(exc: Exception) -> str:
    """A short reason for a failed transfer (requests' messages run to several lines)."""
    import requests

    if isinstance(exc, requests.exceptions.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} {exc.response.reason}"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "the transfer was cut short"
    if isinstance(exc, requests.exceptions.Timeout):
        return "timed out"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return "no connection: the server refused it or cannot be reached"
    return type(exc).__name__


def _fetch_members(
    dataset: DataSet, item: DataFile, folder: Path, echo: Echo, retries: int, timeout: float
) -> None:
    """Download ``item``'s archive, extract every member of the set it holds (each hashed and
    renamed into place), stamp them, delete the archive."""
    archive = folder / ".downloads" / item.url.rsplit("/", 1)[-1]
    _download(item.url, item.archive_sha256, archive, retries, timeout)
    try:
        for member in [f for f in dataset.files if f.url == item.url and f.member]:
            target = folder / member.path
            _extract(archive, member, target)
            record(folder, member.path, checked(target, item.url, member.sha256))
    finally:
        archive.unlink(missing_ok=True)


def _extract(archive: Path, member: DataFile, target: Path) -> None:
    """Extract ``member.member`` of ``archive`` (tar, any compression, or zip) to ``target``
    through a temporary file; raise when it is absent or its sha256 is not the pinned one."""
    temp = target.with_name(f".{target.name}.part")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(temp, "wb") as out:
            if zipfile.is_zipfile(archive):
                with zipfile.ZipFile(archive) as zf, zf.open(member.member or "") as src:
                    _copy(src, out)
            else:
                with tarfile.open(archive) as tf:
                    src = tf.extractfile(member.member or "")
                    if src is None:
                        raise KeyError(member.member)
                    _copy(src, out)
        if member.sha256 and file_sha256(temp) != member.sha256:
            raise JudgekitError(
                f"{archive.name}: member {member.member} has not the pinned sha256 "
                f"{member.sha256}; nothing was kept as {target}"
            )
        temp.replace(target)
    except (KeyError, tarfile.TarError, zipfile.BadZipFile):
        raise JudgekitError(f"{archive.name}: no member {member.member} (or not an archive)"
                            ) from None  # fmt: skip
    finally:
        temp.unlink(missing_ok=True)


def _copy(src: object, out: object) -> None:
    import shutil

    shutil.copyfileobj(src, out, 1 << 20)  # type: ignore[arg-type]


def _notice(dataset: DataSet, folder: Path, echo: Echo) -> None:
    """On a set's first download: print its licence, source and citation, and store them."""
    if licence_shown(folder):
        return
    path = write_licence(dataset, folder, shown=True)
    echo(f"data set {dataset.name}: licence {dataset.licence} ({dataset.licence_url})")
    echo(f"  source: {dataset.source}")
    echo(f"  cite: {dataset.citation}")
    echo(f"  (stored in {path})")
