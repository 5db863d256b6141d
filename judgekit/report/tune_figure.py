"""The tune figure (matplotlib, Agg): each candidate's select-split figure, and the chosen
judge's test figure with its CI beside it, so the optimism is visible (issue 35)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from judgekit.calibration.tune.choose import Ranking
from judgekit.calibration.tune.report import TestReport
from judgekit.data.atomic import save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def tune_figure(ranking: Ranking, rep: TestReport, path: Path) -> Path:
    """Write a PNG: horizontal bars of the select figures (best on top; all items in the nested
    mode), the chosen judge's test figure (the pooled held-out figure) as a point with its
    bootstrap CI, titled with the gain and the looks. Returns ``path``.

    Raises OutputError (from :func:`judgekit.data.atomic.save_figure`) if it cannot be written.
    """
    names = [name for name, _ in ranking.figures][::-1]
    values = [value for _, value in ranking.figures][::-1]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(names)))
    colors = ["tab:orange" if n == rep.chosen else "tab:blue" for n in names]
    bars = "select" if rep.mode == "split" else "all items (the choice)"
    ax.barh(names, values, color=colors, alpha=0.6, label=bars)
    row = names.index(rep.chosen)
    low, high = rep.test_ci
    ax.errorbar(
        [rep.test_figure], [row], xerr=[[rep.test_figure - low], [high - rep.test_figure]],
        fmt="o", color="black", capsize=4,
        label=f"test (n={rep.n_test})" if rep.mode == "split" else f"{rep.mode}, held out",
    )  # fmt: skip
    ax.set_xlabel(rep.statistic)
    gain = "gain" if rep.mode == "split" else "procedure's gain"
    ax.set_title(
        f"chosen {rep.chosen}: {gain} over {rep.baseline} {rep.gain:+.3f} "
        f"[{rep.gain_ci[0]:+.3f}, {rep.gain_ci[1]:+.3f}], optimism {rep.optimism:+.3f}, "
        f"looks {rep.looks}",
        fontsize=8,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path
