"""``judgekit calibrate compare``: judges against humans and against each other, with
significance and rank clusters (:mod:`judgekit.calibration.compare`).

The command function is registered by ``judgekit/cli/calibrate.py`` as
``calibrate_app.command("compare")(compare_command)``; this module registers nothing.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judgekit.cli.options import check_level
from judgekit.cli.output import plain_console

console = plain_console()

JUDGE_HELP = (
    "A judge: NAME=PATH (labels file, run directory, pairwise verdict table, score table, "
    "*.seg.score.tsv), NAME=SEG,SYS (a segment file and its system file), NAME=PATH::RATER "
    "(one rater of a file), or PATH alone (every rater of it). Repeat for each judge."
)


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _check(
    levels, tie_policy: str, correction: str, permutations: int, resamples: int, p_rule: str
) -> None:
    """One clear error for an unknown choice or a negative count."""
    from judgekit.calibration.compare import LEVELS
    from judgekit.errors import InputError
    from judgekit.labels.majority import TIE_POLICIES
    from judgekit.metrics.clusters import CORRECTIONS

    for name, value, choices in (
        ("--level", levels, LEVELS),
        ("--tie-policy", (tie_policy,), TIE_POLICIES),
        ("--correction", (correction,), CORRECTIONS),
        ("--p-rule", (p_rule,), ("plus-one", "mtme")),
    ):
        bad = [v for v in value if v not in choices]
        if bad:
            message = f"unknown {name} {bad[0]!r} (use {', '.join(choices)})"
            raise InputError(None, message, field=name)
    if permutations < 0 or resamples < 0:
        raise InputError(None, "--permutations and --n-resamples must be >= 0")


def compare_command(
    human: str = typer.Option(
        ...,
        help="Human side: labels file or run directory, pairwise "
        "verdict table (its gold labels), or scores (SEG[,SYS]).",
    ),
    judge: list[str] = typer.Option(..., "--judge", help=JUDGE_HELP),
    by: str | None = typer.Option(
        None,
        help="Facet: a column of the label file (language, "
        "subset, domain...), language (score files), domain (--docs).",
    ),
    level: list[str] = typer.Option(
        [], help="item (labels), system, segment (scores); default: all that apply. Repeatable."
    ),
    lp: list[str] = typer.Option([], help="Language pairs for '{lp}' in paths (en-de,zh-en)."),
    docs: str | None = typer.Option(
        None,
        help="MT-Metrics-Eval docs file (domain<TAB>doc a line) for --by domain; '{lp}' allowed.",
    ),
    tie_policy: str = typer.Option("exclude", help="Human ties: exclude|error|own_class."),
    n_resamples: int = typer.Option(
        1000, min=0, help="Bootstrap resamples for the CIs (0 = none)."
    ),
    permutations: int = typer.Option(1000, min=0, help="Permutations per paired test (0 = none)."),
    early_stop: bool = typer.Option(
        True, help="Stop a test early (blocks of 100, p < 0.02 or p > 0.5), as the WMT23 tasks did."
    ),
    p_rule: str = typer.Option(
        "plus-one",
        help="Permutation p-value: plus-one, (k+1)/(n+1), never 0 | mtme, k/n as MT-Metrics-Eval.",
    ),
    alpha: float = typer.Option(
        0.05, callback=check_level(), help="Significance level of the clusters."
    ),
    correction: str = typer.Option("none", help="Multiplicity: none (WMT) | holm | bonferroni."),
    seed: int = typer.Option(0, help="Seed of the bootstrap and the permutations."),
    confidence: float = typer.Option(0.95, callback=check_level(), help="CI level."),
    exclude_systems: str = typer.Option(
        ",".join(("refA", "synthetic_ref")),
        help="Systems left out (WMT23: the reference, synthetic_ref).",
    ),
    all_systems: bool = typer.Option(False, "--all-systems", help="Keep every system."),
    common: bool = typer.Option(
        False,
        "--common",
        help="Every judge on the cells (items) all judges scored (like for like).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    out: Path | None = typer.Option(None, help="Write compare.json, CSVs and compare.png here."),
) -> None:
    """Which judge? Judges compared against humans and each other: statistics with bootstrap
    CIs, paired permutation tests, rank clusters, per facet."""
    from judgekit.calibration.compare import LEVELS, CompareOptions, compare
    from judgekit.metrics.perm_both import PermutationSettings
    from judgekit.report.compare import print_compare, write_compare

    levels = tuple(_split(level)) or LEVELS
    _check(levels, tie_policy, correction, permutations, n_resamples, p_rule)
    options = CompareOptions(
        levels=levels, by=by, lps=_split(lp), docs=docs, tie_policy=tie_policy,
        n_resamples=n_resamples, confidence=confidence, seed=seed, alpha=alpha,
        correction=correction,
        permutations=PermutationSettings(permutations, early_stop=early_stop, seed=seed,
                                         p_rule=p_rule.replace("-", "_")),
        exclude_systems=() if all_systems else tuple(_split([exclude_systems])), common=common,
    )  # fmt: skip
    result = compare(human, judge, options)
    if json_out:
        from judgekit.data.jsonfile import print_json

        print_json(result.to_json(), indent=2)
    else:
        print_compare(result, console)
    if out is not None:
        written = write_compare(result, out)
        target = console if not json_out else plain_console(stderr=True)
        target.print(f"wrote {', '.join(p.name for p in written)} to {out}")
