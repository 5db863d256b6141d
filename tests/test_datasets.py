"""Public data sets by name: downloads from a loopback HTTP server serving archives built from
../shared/data, checked against their sha256; a transfer cut short, a wrong checksum and a
refusing server leave nothing behind; files placed by hand; trust on first download; verify;
the ``judgekit data`` commands."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import shared_path
from data_server import DataServer
from ports import hold_port
from typer.testing import CliRunner

from judgekit.cli import app, data_args
from judgekit.datasets import registry as registry_module
from judgekit.datasets.fetch import ensure_file, ensure_set
from judgekit.datasets.home import LICENCE_FILE, STAMP, entry, read_stamp
from judgekit.datasets.refs import resolve_ref
from judgekit.datasets.registry import DataFile, DataSet
from judgekit.datasets.status import file_states, verify
from judgekit.errors import InputError, JudgekitError

GEMBA = ("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
MEMBERS = ("en-de.mqm.sys.score.tsv", "en-de.GEMBA-MQM-src.sys.score.tsv")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def served():
    """Real WMT23 score files (tar.gz), LLMBar Natural items (zip) and an NTREX file (plain),
    from ../shared/data, on a loopback server; the test set's registry entry names them."""
    scores = {m: shared_path(*GEMBA, m).read_bytes() for m in MEMBERS}
    llmbar = shared_path("judge-vs-human", "llmbar", "dataset.Natural.json").read_bytes()
    docs = shared_path("ntrex128", "DOCUMENT_IDS.tsv").read_bytes()
    archive, archive_zip = tar_gz(scores), zipped({"Natural/dataset.json": llmbar})
    routes = {"/wmt23.tar.gz": (archive, "ok"), "/llmbar.zip": (archive_zip, "ok"),
              "/DOCUMENT_IDS.tsv": (docs, "ok"), "/cut.txt": (docs, "truncate"),
              "/refused.txt": (docs, "refuse")}  # fmt: skip
    with DataServer(routes) as srv:
        files = [
            DataFile(m, srv.url("/wmt23.tar.gz"), sha(d), len(d), m, sha(archive), len(archive))
            for m, d in scores.items()
        ]
        files.append(DataFile("Natural/dataset.json", srv.url("/llmbar.zip"), sha(llmbar),
                              len(llmbar), "Natural/dataset.json", sha(archive_zip)))  # fmt: skip
        files.append(
            DataFile("DOCUMENT_IDS.tsv", srv.url("/DOCUMENT_IDS.tsv"), sha(docs), len(docs))
        )
        loop = DataSet("loop", "loopback test set", "MIT", "https://example.org/licence",
                       "the tests", "127.0.0.1", tuple(files), "from ../shared/data")  # fmt: skip
        yield srv, loop, {**scores, "Natural/dataset.json": llmbar, "DOCUMENT_IDS.tsv": docs}


def one_file(loop: DataSet, path: str, **changes: object) -> DataSet:
    """A one-file set made from ``loop``'s file ``path`` with ``changes`` (url, sha256...)."""
    item = loop.file(path)
    fields = {**item.__dict__, **changes}
    return DataSet("one", "one file", "MIT", "https://example.org/licence", "the tests",
                   "127.0.0.1", (DataFile(**fields),))  # fmt: skip


def leftovers(folder: Path) -> list[str]:
    """Every file in ``folder`` but the stamp (temporaries and partial files included)."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and p.name != STAMP)


def test_a_set_comes_from_its_archives_checked_stamped_with_its_licence(served, tmp_path):
    srv, loop, data = served
    lines: list[str] = []
    path = resolve_ref("data:loop/en-de.mqm.sys.score.tsv", registry={"loop": loop},
                       home=tmp_path, echo=lines.append)  # fmt: skip
    assert path == tmp_path / "loop" / "en-de.mqm.sys.score.tsv"
    assert path.read_bytes() == data["en-de.mqm.sys.score.tsv"]
    # the archive's other member came with it; the archive itself is gone
    assert (tmp_path / "loop" / MEMBERS[1]).read_bytes() == data[MEMBERS[1]]
    assert not (tmp_path / "loop" / ".downloads" / "wmt23.tar.gz").exists()
    assert srv.hits["/wmt23.tar.gz"] == 1
    assert lines[:2] == [
        "fetched data:loop/en-de.mqm.sys.score.tsv (0.0 MB, sha256 checked)",
        "data set loop: licence MIT (https://example.org/licence)",
    ]
    assert "Licence: MIT" in (tmp_path / "loop" / LICENCE_FILE).read_text()
    stamped = entry(tmp_path / "loop", MEMBERS[0])
    assert stamped.official is True and stamped.sha256 == sha(data[MEMBERS[0]])
    # the whole set: the zip member and the plain file too; the licence is not shown again
    folder = resolve_ref("data:loop", registry={"loop": loop}, home=tmp_path, echo=lines.append)
    assert (folder / "Natural" / "dataset.json").read_bytes() == data["Natural/dataset.json"]
    assert (folder / "DOCUMENT_IDS.tsv").read_bytes() == data["DOCUMENT_IDS.tsv"]
    assert sum("licence" in line for line in lines) == 1
    # used from the data home from now on: no request
    resolve_ref("data:loop/Natural", registry={"loop": loop}, home=tmp_path, echo=lines.append)
    assert srv.hits["/wmt23.tar.gz"] == 1 and srv.hits["/llmbar.zip"] == 1
    assert [s.state for s in verify(loop, tmp_path)] == ["official"] * 4


def test_a_transfer_cut_short_is_retried_and_never_kept(served, tmp_path):
    srv, loop, _ = served
    cut = one_file(loop, "DOCUMENT_IDS.tsv", url=srv.url("/cut.txt"))
    with pytest.raises(JudgekitError, match="cut short") as err:
        ensure_file(cut, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print, retries=1)
    assert srv.hits["/cut.txt"] == 2  # one try and one retry
    target = tmp_path / "one" / "DOCUMENT_IDS.tsv"
    assert f"save it as {target}" in str(err.value) and srv.url("/cut.txt") in str(err.value)
    assert leftovers(tmp_path / "one") == [] and read_stamp(tmp_path / "one")["files"] == {}


def test_a_wrong_checksum_keeps_nothing_and_says_which_file(served, tmp_path):
    srv, loop, _ = served
    wrong = one_file(loop, "DOCUMENT_IDS.tsv", sha256=sha(b"another file"))
    with pytest.raises(JudgekitError, match="sha256") as err:
        ensure_file(wrong, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print, retries=0)
    assert srv.url("/DOCUMENT_IDS.tsv") in str(err.value) and sha(b"another file") in str(err.value)
    assert leftovers(tmp_path / "one") == [] and not (tmp_path / "one" / STAMP).exists()
    # an archive member with a wrong checksum: the archive is fine, the member is not kept
    member = one_file(loop, MEMBERS[0], sha256=sha(b"x"))
    with pytest.raises(JudgekitError, match=f"member {MEMBERS[0]} has not the pinned sha256"):
        ensure_file(member, MEMBERS[0], home=tmp_path / "m", echo=print, retries=0)
    assert leftovers(tmp_path / "m" / "one") == []


def test_a_refusing_server_and_no_server_say_where_to_place_the_file(served, tmp_path):
    srv, loop, _ = served
    refused = one_file(loop, "DOCUMENT_IDS.tsv", url=srv.url("/refused.txt"))
    with pytest.raises(JudgekitError, match="HTTP 403"):
        ensure_file(refused, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print, retries=0)
    # a port nothing listens on: the connection is refused; held (bound, never listening) for
    # the call, or another process (the other pytest worker's servers) could be given it
    with hold_port() as probe:
        port = probe.getsockname()[1]
        offline = one_file(loop, "DOCUMENT_IDS.tsv", url=f"http://127.0.0.1:{port}/x.tsv")
        with pytest.raises(JudgekitError, match="no connection") as err:
            ensure_file(offline, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print, retries=0)
    message = str(err.value)
    assert f"http://127.0.0.1:{port}/x.tsv" in message
    assert f"save it as {tmp_path / 'one' / 'DOCUMENT_IDS.tsv'}" in message
    assert loop.file("DOCUMENT_IDS.tsv").sha256 in message
    assert leftovers(tmp_path / "one") == []
    assert not (tmp_path / "one").exists()  # nor the empty folder made for the file


def test_files_placed_by_hand_are_checked(served, tmp_path):
    srv, loop, data = served
    single = one_file(loop, "DOCUMENT_IDS.tsv")
    target = tmp_path / "one" / "DOCUMENT_IDS.tsv"
    target.parent.mkdir(parents=True)
    target.write_bytes(data["DOCUMENT_IDS.tsv"])
    before = srv.hits["/DOCUMENT_IDS.tsv"]
    assert ensure_file(single, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print) == target
    assert srv.hits["/DOCUMENT_IDS.tsv"] == before  # the official file: used, not fetched
    assert entry(tmp_path / "one", "DOCUMENT_IDS.tsv").origin == "placed by hand"
    # other bytes placed by hand: deleted (the message says which), then fetched
    (tmp_path / "one" / STAMP).unlink()
    target.write_bytes(b"not the file\n")
    lines: list[str] = []
    ensure_file(single, "DOCUMENT_IDS.tsv", home=tmp_path, echo=lines.append)
    assert lines[0].startswith(f"{target}: not the file that was checked or pinned; deleted")
    assert target.read_bytes() == data["DOCUMENT_IDS.tsv"]
    assert srv.hits["/DOCUMENT_IDS.tsv"] == before + 1


def test_an_unpinned_file_needs_trust_and_its_sha256_is_recorded(served, tmp_path):
    srv, loop, data = served
    unpinned = one_file(loop, "DOCUMENT_IDS.tsv", sha256=None, size=None)
    with pytest.raises(JudgekitError, match="no pinned checksum.*--trust"):
        ensure_file(unpinned, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print)
    assert leftovers(tmp_path / "one") == []
    lines: list[str] = []
    ensure_set(unpinned, home=tmp_path, trust=True, echo=lines.append)
    expected = sha(data["DOCUMENT_IDS.tsv"])
    assert any(f"sha256 of what came: {expected} (recorded)" in line for line in lines)
    assert entry(tmp_path / "one", "DOCUMENT_IDS.tsv").official is None
    assert [s.state for s in file_states(unpinned, tmp_path)] == ["trusted"]


def test_verify_finds_a_changed_file_and_the_next_use_fetches_it_again(served, tmp_path):
    srv, loop, data = served
    single = one_file(loop, "DOCUMENT_IDS.tsv")
    path = ensure_file(single, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print)
    text = bytearray(path.read_bytes())
    text[0:3] = b"xyz"  # same size: only a hash finds it
    path.write_bytes(bytes(text))
    assert [s.state for s in file_states(single, tmp_path)] == ["official"]
    (state,) = verify(single, tmp_path)
    assert state.state == "changed" and sha(bytes(text)) in state.detail
    before = srv.hits["/DOCUMENT_IDS.tsv"]
    ensure_file(single, "DOCUMENT_IDS.tsv", home=tmp_path, echo=print)
    assert path.read_bytes() == data["DOCUMENT_IDS.tsv"]
    assert srv.hits["/DOCUMENT_IDS.tsv"] == before + 1


def test_unknown_names_list_what_is_known(served, tmp_path):
    _, loop, _ = served
    with pytest.raises(InputError, match=r"unknown data set 'nope' \(known: loop\)"):
        resolve_ref("data:nope/x.tsv", registry={"loop": loop}, home=tmp_path)
    with pytest.raises(InputError, match="no such file in 'loop' .its files: en-de.mqm.sys"):
        resolve_ref("data:loop/nope.tsv", registry={"loop": loop}, home=tmp_path)
    with pytest.raises(InputError, match="cannot leave"):
        resolve_ref("data:loop/../x", registry={"loop": loop}, home=tmp_path)


def test_every_registered_file_is_pinned_or_says_why():
    for dataset in registry_module.REGISTRY.values():
        assert dataset.licence and dataset.citation and dataset.source
        for item in dataset.files:
            assert item.url.startswith("https://"), item
            if item.sha256 is None:
                assert "no pinned checksum" in dataset.notes
            else:
                assert len(item.sha256) == 64 and int(item.sha256, 16) >= 0
                assert item.size and item.size > 0


def test_the_data_commands(served, tmp_path, monkeypatch):
    srv, loop, data = served
    monkeypatch.setitem(registry_module.REGISTRY, "loop", loop)
    monkeypatch.setenv("JUDGEKIT_DATA", str(tmp_path))
    runner = CliRunner()
    listed = runner.invoke(app, ["data", "list"])
    assert listed.exit_code == 0 and "loop " in listed.stdout and str(tmp_path) in listed.stdout
    empty = runner.invoke(app, ["data", "verify"])  # an empty data home: said, not silent
    assert empty.exit_code == 0 and empty.stdout.startswith("nothing to verify: no data set")
    missing = runner.invoke(app, ["data", "path", "loop/DOCUMENT_IDS.tsv"])
    assert missing.exit_code == 1
    assert missing.stdout.strip() == str(tmp_path / "loop" / "DOCUMENT_IDS.tsv")
    got = runner.invoke(app, ["data", "get", "loop"])
    assert got.exit_code == 0, got.output
    assert f"loop: 4 files in {tmp_path / 'loop'}" in got.stdout
    assert "data set loop: licence MIT" in got.stderr
    assert "4/4 official" in runner.invoke(app, ["data", "list"]).stdout
    assert runner.invoke(app, ["data", "path", "loop"]).exit_code == 0
    (tmp_path / "loop" / "DOCUMENT_IDS.tsv").write_text("changed\n")
    verified = runner.invoke(app, ["data", "verify", "loop"])
    assert verified.exit_code == 1 and "DOCUMENT_IDS.tsv: changed" in verified.stdout
    # a file given as data:NAME/path to any command is its local path
    args = data_args(["score", "data:loop/DOCUMENT_IDS.tsv", "--refs=data:loop/Natural"])
    assert args == ["score", str(tmp_path / "loop" / "DOCUMENT_IDS.tsv"),
                    f"--refs={tmp_path / 'loop' / 'Natural'}"]  # fmt: skip
    assert data_args(["data", "path", "data:loop"]) == ["data", "path", "data:loop"]
    spec = ["--human", "data:loop/{lp}.seg.score.tsv,data:loop/{lp}.sys.score.tsv"]
    assert data_args(spec) == spec  # compare specs are read by the library
