"""``judgekit calibrate compare``: which judge to keep, with significance, per facet.

:func:`compare` reads the human side and the judges (:mod:`judgekit.calibration.compare.inputs`),
splits the items by facet value (``--by``: a column of the label file, the language pair of
score files, the domain of an MT-Metrics-Eval ``docs`` file), compares the judges in each facet
value (label judges: :mod:`judgekit.calibration.compare.labels`; score judges:
:mod:`judgekit.calibration.compare.scores`), ranks them in clusters and tests whether each
judge's statistic differs between facet values (:func:`judgekit.calibration.compare.results.
facet_tests`). Score files of several language pairs are always compared per language pair
(systems differ between pairs).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgekit.calibration.compare.inputs import (
    LabelSource,
    SourceSpec,
    check_overlap,
    expand,
    is_score_path,
    parse_spec,
    read_docs,
    read_labels,
    read_scores,
)
from judgekit.calibration.compare.labels import label_facet
from judgekit.calibration.compare.results import FacetTest, Pair, Row, build_family, facet_tests
from judgekit.calibration.compare.scores import ScoreMatrix, score_facet
from judgekit.data.languages import facet_value
from judgekit.errors import InputError, JudgekitError
from judgekit.labels.table import LabelTable
from judgekit.metrics.meta_eval import SPA_PERMUTATIONS, SPA_SEED
from judgekit.metrics.perm_both import PermutationSettings
from judgekit.signature import Signature

LEVELS = ("item", "system", "segment")
WMT_EXCLUDED = ("refA", "synthetic_ref")  # MT-Metrics-Eval meta_info: std ref, outlier (WMT23)
ALL = "all"


@dataclass
class CompareOptions:
    """The settings of a comparison (every one is in the signature)."""

    levels: tuple[str, ...] = LEVELS
    by: str | None = None
    lps: list[str] = field(default_factory=list)
    docs: str | None = None
    tie_policy: str = "exclude"
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    permutations: PermutationSettings = field(default_factory=PermutationSettings)
    alpha: float = 0.05
    correction: str = "none"
    spa_permutations: int = SPA_PERMUTATIONS
    spa_seed: int = SPA_SEED
    exclude_systems: tuple[str, ...] = WMT_EXCLUDED
    common: bool = False

    def parameters(self) -> dict[str, Any]:
        out = asdict(self)
        out["permutations"] = self.permutations.to_dict()
        return out


@dataclass
class CompareResult:
    """Rows, pairs and facet tests of a comparison, with its ``kind`` ("labels" or "scores"),
    ``counts`` per facet value, ``notes`` and ``signature``."""

    kind: str
    rows: list[Row]
    pairs: list[Pair]
    facet_tests: list[FacetTest]
    counts: dict[str, dict[str, int]]
    notes: list[str]
    signature: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document: signature, rows, pairs, counts, notes (the cells of every
        judge and pair where coverage differs, items left out...) and facet_tests with ``--by``."""
        out: dict[str, Any] = {
            "signature": self.signature,
            "rows": [r.public() for r in self.rows],
            "pairs": [p.public() for p in self.pairs],
            "counts": self.counts,
            "notes": self.notes,
        }
        if self.facet_tests:
            out["facet_tests"] = [t.to_dict() for t in self.facet_tests]
        return out


def _signature(files: list[Path], options: CompareOptions, kind: str) -> dict[str, Any]:
    targets = [
        path / ("segments.csv" if (path / "segments.csv").is_file() else "labels.csv")
        if path.is_dir()
        else path
        for path in files
    ]
    parameters = {"kind": kind, **options.parameters()}
    signature = Signature.for_files(
        "calibrate compare", targets, parameters=parameters, seed=options.seed
    )
    return signature.as_dict()


def _families(found, facet: str, options: CompareOptions, rows, pairs, table) -> None:
    for family in found:
        r, p = build_family(
            family,
            facet,
            alpha=options.alpha,
            correction=options.correction,
            confidence=options.confidence,
        )
        rows += r
        pairs += p
        for j, value in family.values.items():
            table[(j, family.level, family.statistic)] = (value, family.dists.get(j))


# -- labels ---------------------------------------------------------------------------------------
def _label_inputs(human: SourceSpec, judges: list[SourceSpec]):
    source = read_labels(human, human=True)
    if source.table is not None:
        humans = source.table
    else:
        frame = pd.DataFrame({"gold": source.labels["gold"]}, dtype=object)
        humans = LabelTable(frame, str(source.path))
    found: dict[str, pd.Series] = {}
    sources: list[LabelSource] = [source]
    for spec in judges:
        judge = read_labels(spec)
        sources.append(judge)
        for name, labels in judge.labels.items():
            if name in found:
                raise InputError(judge.path, f"judge '{name}' given twice", field="--judge")
            found[name] = labels
    shared = [r for r in humans.raters if str(r) in found]
    if shared:
        humans = humans.drop(shared)
    if humans.n_raters == 0:
        raise InputError(source.path, "no human raters (the judges' raters were dropped)")
    return humans, found, sources


def _facet_of(by: str, humans: LabelTable, sources: list[LabelSource]) -> tuple[dict, LabelTable]:
    if by in [str(r) for r in humans.raters]:  # a wide file's column
        column = humans.frame[[r for r in humans.raters if str(r) == by][0]]
        values = {str(i): facet_value(by, v, path=humans.source) for i, v in column.items()}
        values = {i: v for i, v in values.items() if v is not None}
        return values, humans.drop([r for r in humans.raters if str(r) == by])
    values: dict[str, str] = {}
    for source in sources:
        for item, facets in source.facets.items():
            if by in facets:
                values.setdefault(item, facets[by])
    if not values:
        raise InputError(sources[0].path, f"no column '{by}' for --by in the label files")
    return values, humans


def compare_labels(human: SourceSpec, judges: list[SourceSpec], options: CompareOptions):
    """Label judges (module doc); returns (rows, pairs, per-facet tables, counts, notes)."""
    humans, found, sources = _label_inputs(human, judges)
    found = {name: check_overlap(name, labels, humans) for name, labels in found.items()}
    groups = {ALL: list(humans.frame.index)}
    notes: list[str] = []
    if options.by:
        values, humans = _facet_of(options.by, humans, sources)
        groups = {}
        for item in humans.frame.index:
            if str(item) in values:
                groups.setdefault(values[str(item)], []).append(item)
        missing = sum(str(i) not in values for i in humans.frame.index)
        if missing:
            notes.append(f"{missing} items have no '{options.by}' value (left out)")
    rows: list[Row] = []
    pairs: list[Pair] = []
    tables, counts = {}, {}
    for facet, items in groups.items():
        part = LabelTable(humans.frame.loc[items], humans.source)
        keep = {str(i) for i in items}
        judged = {j: s[s.index.isin(keep)] for j, s in found.items()}
        result = label_facet(
            judged,
            part,
            facet=facet,
            tie_policy=options.tie_policy,  # type: ignore[arg-type]
            n_resamples=options.n_resamples,
            confidence=options.confidence,
            seed=options.seed,
            permutations=options.permutations,
            common=options.common,
        )
        tables[facet] = {}
        _families(result.families, facet, options, rows, pairs, tables[facet])
        rows += result.ceiling
        counts[facet] = {"items": result.n_items, "ties": result.n_ties}
        notes += [f"{facet}: {n}" for n in result.notes]
    return rows, pairs, tables, counts, notes, [s.path for s in sources]


# -- scores ---------------------------------------------------------------------------------------
def _judge_name(spec: SourceSpec, path: Path, lp: str | None) -> str:
    if spec.name:
        return spec.name
    name = path.name.removesuffix(".seg.score.tsv")
    if lp and name.startswith(lp + "."):
        name = name[len(lp) + 1 :]
    return name if name != path.name else path.stem


def _matrix(source, systems: list[str], segments: list[str]) -> ScoreMatrix:
    table = source.seg.pivot(index="system", columns="segment", values="score")
    table = table.reindex(index=systems, columns=segments)
    sys = None
    if source.sys is not None:
        sys = np.array([source.sys.get(s, np.nan) for s in systems], dtype=float)
    return ScoreMatrix(table.to_numpy(dtype=float), sys)


def _segment_order(keys: pd.Series) -> list[str]:
    unique = list(dict.fromkeys(keys))
    numeric = all(k.isdigit() for k in unique)
    return sorted(unique, key=int) if numeric else unique


def _score_language(lp, human, judges: dict[str, Any], options: CompareOptions, notes):
    systems = [
        s
        for s in dict.fromkeys(human.seg["system"])
        if all(s in set(j.seg["system"]) for j in judges.values())
    ]
    dropped = [s for s in systems if s in options.exclude_systems]
    systems = [s for s in systems if s not in options.exclude_systems]
    if dropped:
        notes.append(f"{lp or ALL}: systems excluded: {', '.join(dropped)}")
    segments = _segment_order(human.seg["segment"])
    h = _matrix(human, systems, segments)
    js = {name: _matrix(src, systems, segments) for name, src in judges.items()}
    parts = {lp or ALL: np.arange(len(segments))}
    if options.by and options.by != "language":
        facets = human.facets
        if options.docs:
            docs = options.docs.replace("{lp}", lp) if lp else options.docs
            facets = read_docs(Path(docs))
        values = [facets.get(seg, {}).get(options.by) for seg in segments]
        if all(v is None for v in values):
            raise InputError(
                human.path,
                f"no '{options.by}' for --by (a score table column, "
                "or --docs for MT-Metrics-Eval files)",
            )
        parts = {}
        for k, v in enumerate(values):
            if v is not None:
                parts.setdefault(f"{lp}:{v}" if lp else v, []).append(k)
    out = {}
    for facet, cols in parts.items():
        keep = np.asarray(cols)
        out[facet] = (
            ScoreMatrix(h.seg[:, keep], h.sys),
            {n: ScoreMatrix(m.seg[:, keep], m.sys) for n, m in js.items()},
        )
    return out


def compare_scores(human: SourceSpec, judges: list[SourceSpec], options: CompareOptions):
    """Score judges (module doc); returns (rows, pairs, per-facet tables, counts, notes)."""
    levels = tuple(x for x in options.levels if x in ("system", "segment"))
    expanded = expand(human, options.lps)
    humans = {lp: read_scores(p, s, lp) for lp, p, s in expanded}
    per_lp: dict[str | None, dict[str, Any]] = {lp: {} for lp in humans}
    files = [f for _, p, s in expanded for f in (p, s) if f is not None]
    for spec in judges:
        for lp, path, sys_path in expand(spec, options.lps):
            if lp not in per_lp:
                raise InputError(path, f"language pair {lp} has no --human file", field="--judge")
            name = _judge_name(spec, path, lp)
            if name in per_lp[lp]:
                raise InputError(path, f"judge '{name}' given twice for {lp}", field="--judge")
            per_lp[lp][name] = read_scores(path, sys_path, lp)
            files += [path] + ([sys_path] if sys_path else [])
    rows: list[Row] = []
    pairs: list[Pair] = []
    tables, counts, notes = {}, {}, []
    for lp, human_source in humans.items():
        if not per_lp[lp]:
            raise InputError(human_source.path, f"no judge for {lp or 'these scores'}")
        for facet, (h, js) in _score_language(lp, human_source, per_lp[lp], options, notes).items():
            result = score_facet(
                h,
                js,
                facet=facet,
                levels=levels,
                n_resamples=options.n_resamples,
                seed=options.seed,
                permutations=options.permutations,
                spa_permutations=options.spa_permutations,
                spa_seed=options.spa_seed,
                common=options.common,
            )
            tables[facet] = {}
            _families(result.families, facet, options, rows, pairs, tables[facet])
            counts[facet] = result.counts
            notes += [f"{facet}: {n}" for n in result.notes]
    return rows, pairs, tables, counts, notes, files


def compare(human: str, judges: list[str], options: CompareOptions | None = None) -> CompareResult:
    """Compare ``judges`` (``[NAME=]PATH`` specs) against ``human`` (module doc).

    Raises:
        InputError: a bad spec or file (file, line, field), labels and scores mixed.
        JudgekitError: nothing to compare (no shared item, too few systems).
    """
    options = options or CompareOptions()
    if not judges:
        raise InputError(None, "give at least one --judge", field="--judge")
    human_spec = parse_spec(human, "--human")
    judge_specs = [parse_spec(j, "--judge") for j in judges]
    first = expand(human_spec, options.lps)[0][1]
    kind = "scores" if is_score_path(first) else "labels"
    for spec in judge_specs:
        path = expand(spec, options.lps)[0][1]
        if path.exists() and is_score_path(path) != (kind == "scores"):
            raise InputError(
                path,
                f"a {'label' if kind == 'scores' else 'score'} input among "
                f"{kind} judges: compare labels with labels, scores with scores",
            )
    run = compare_scores if kind == "scores" else compare_labels
    if kind == "labels" and "item" not in options.levels:
        raise JudgekitError("label judges are compared at --level item")
    if kind == "scores" and not set(options.levels) & {"system", "segment"}:
        raise JudgekitError("score judges are compared at --level system or segment")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # an undefined statistic is NaN with its reason in the row's note (never a raw warning)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        rows, pairs, tables, counts, notes, files = run(human_spec, judge_specs, options)
    tests = facet_tests(tables) if len(tables) > 1 else []
    return CompareResult(kind, rows, pairs, tests, counts, notes, _signature(files, options, kind))
