"""The manifest of a batch export: which request each task key stands for.

Written beside the shards (``DIR/manifest.json``) and into the run directory
(``OUT/batch/exports/<export id>.json``), so an import finds it whatever happened to the export
directory. It holds the config hash, the prompts' template hashes, the shards (file, model,
route, requests, SHA-256) and, per task key, the hash of its request body
(:func:`judgekit.batch.requests.request_hash`). A batch answer names its task only by the key;
an answer whose key's request has changed since the export (an item's text edited: the key
stays, the request does not) is stale, and is never recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgekit.data.jsonfile import write_json
from judgekit.errors import InputError

FORMAT = "judgekit-batch-export/1"
EXPORTS = Path("batch") / "exports"  # in the run directory


class Shard(BaseModel):
    """One request file: ``file`` (relative to the manifest's directory), the ``model``
    (label) and ``route`` its requests are for, how many ``requests`` and its ``sha256``."""

    model_config = ConfigDict(extra="forbid")
    file: str
    model: str
    route: str
    requests: int = Field(ge=0)
    sha256: str


class Manifest(BaseModel):
    """What one export holds (see the module doc): ``directory`` is where its shards were
    written (absolute), ``tasks`` maps each task key to the hash of its request body, in export
    order."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["judgekit-batch-export/1"] = FORMAT
    export_id: str
    created: str
    run: str
    pipeline: str
    config_hash: str
    directory: str = ""
    prompts: dict[str, str] = Field(default_factory=dict)
    shards: list[Shard] = Field(default_factory=list)
    tasks: dict[str, str] = Field(default_factory=dict)


def write_manifest(manifest: Manifest, *paths: Path) -> None:
    """Write ``manifest`` to each of ``paths`` (atomically; directories made)."""
    data = manifest.model_dump(mode="json")
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, data)


def load_manifest(path: Path) -> Manifest:
    """Read one manifest.

    Raises:
        InputError: missing, not JSON, or not a judgekit batch manifest (the field named).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "file not found (a judgekit batch export manifest)") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 ({exc.reason})") from None
    try:
        return Manifest.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or None
        if first["type"] == "json_invalid":
            raise InputError(path, f"invalid JSON ({first['msg']})") from None
        raise InputError(
            path, f"not a judgekit batch manifest: {first['msg']}", field=where
        ) from None


def run_manifests(run_dir: Path, extra: Iterable[Path] = ()) -> list[Manifest]:
    """The manifests of every export of the run (``OUT/batch/exports/*.json``) and ``extra``
    ones, oldest first (by creation time, then name)."""
    folder = run_dir / EXPORTS
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    manifests = [load_manifest(p) for p in [*paths, *extra]]
    return sorted(manifests, key=lambda m: (m.created, m.export_id))


def expected_requests(manifests: Iterable[Manifest]) -> dict[str, str]:
    """``task key -> request hash`` over ``manifests`` (a later export's entry wins)."""
    out: dict[str, str] = {}
    for manifest in manifests:
        out.update(manifest.tasks)
    return out
