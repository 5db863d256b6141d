"""Inputs of ``judgekit contrast delta`` and ``recall``: the manifest, the translations and the
metric names (Cultivar, paper 000; see docs/localisation.md).

Translations come either from ``--manifest M --hyp-dir D`` (``D/<model>/<test set id>.txt``;
``M`` may be ``ntrex128`` for the built-in NTREX-128 pairs) or from one pair given file by file
(``--orig-ref``, ``--loc-ref``, ``--orig-hyp``, ``--loc-hyp``, ``--locale``). A translation file
whose line count differs from its references raises :class:`~judgekit.errors.InputError` naming
both files.
"""

from __future__ import annotations

from pathlib import Path

from judgekit.data.lines import read_lines
from judgekit.data.locales import Locale, parse_flores, parse_locale
from judgekit.data.testsets import Manifest, TestSet, load_manifest, ntrex128_manifest
from judgekit.errors import InputError


def manifest_of(spec: str) -> Manifest:
    """The test-set manifest ``spec`` names (``ntrex128`` or a manifest file)."""
    if spec == "ntrex128" and not Path(spec).exists():
        return ntrex128_manifest()
    return load_manifest(spec)


def _read_hyp(path: Path, testset: TestSet, n_refs: int) -> list[str]:
    hyps = read_lines(path)
    if len(hyps) != n_refs:
        ref = testset.reference or testset.data
        raise InputError(path, f"has {len(hyps)} lines but the references {ref} have {n_refs}")
    return hyps


def contrast_inputs(
    manifest: str | None,
    hyp_dir: Path | None,
    pair: dict[str, Path | None],
    model: str,
    locale: str | None,
    tgt_lang: str | None,
) -> tuple[Manifest, dict[tuple[str, str], list[str]], list[str]]:
    """Manifest, translations by (model, set id), and the (model, pair) cells without files."""
    given = {k: v for k, v in pair.items() if v is not None}
    if manifest is not None:
        if given or hyp_dir is None:
            raise InputError(None, "give --manifest with --hyp-dir, or the single-pair options")
        found = manifest_of(manifest)
        if not hyp_dir.is_dir():
            raise InputError(hyp_dir, "not a folder", field="--hyp-dir")
        hyps: dict[tuple[str, str], list[str]] = {}
        lengths: dict[str, int] = {}
        for model_dir in sorted(p for p in hyp_dir.iterdir() if p.is_dir()):
            for t in found.testsets.values():
                file = model_dir / f"{t.id}.txt"
                if file.is_file():
                    if t.id not in lengths:
                        lengths[t.id] = len(t.read().references)
                    hyps[model_dir.name, t.id] = _read_hyp(file, t, lengths[t.id])
        models = sorted({m for m, _ in hyps})
        if not models:
            raise InputError(hyp_dir, "no <model>/<test set id>.txt files for this manifest")
        missing = [
            f"{m}: {loc.id} vs {orig.id}"
            for m in models
            for loc, orig in found.pairs()
            if ((m, loc.id) in hyps) != ((m, orig.id) in hyps)
        ]
        return found, hyps, missing
    need = [k for k in pair if pair[k] is None]
    if need or locale is None:
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in need + ([] if locale else ["locale"]))
        raise InputError(None, f"missing {flags} (or use --manifest with --hyp-dir)")
    loc = parse_locale(locale, field="--locale", need_location=True)
    tgt = parse_flores(tgt_lang, field="--tgt-lang") if tgt_lang else loc.flores
    src = loc.flores if tgt != loc.flores else "und_Zzzz"
    orig_locale = Locale(loc.language, loc.script)
    sets = {
        "original": TestSet("original", src, tgt, orig_locale, reference=pair["orig_ref"]),
        loc.id: TestSet(loc.id, src, tgt, loc, "original", reference=pair["loc_ref"]),
    }
    built = Manifest(sets)
    hyps = {}
    for key, set_id in (("orig_hyp", "original"), ("loc_hyp", loc.id)):
        if key in pair:
            hyps[model, set_id] = _read_hyp(
                pair[key], sets[set_id], len(sets[set_id].read().references)
            )
    return built, hyps, []
