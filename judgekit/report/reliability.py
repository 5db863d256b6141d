"""The reliability diagram of a judge's confidence (matplotlib, Agg backend).

Accuracy per equal-width bin of top-label confidence against the diagonal (Guo et al., ICML
2017, Fig. 1), with the count of items per bin below: :func:`reliability_diagram`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

from judgekit.data.atomic import save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RELIABILITY_PNG = "reliability.png"


def reliability_diagram(report: Any, path: str | Path, title: str = "Reliability") -> Path:
    """Draw the bins of a :class:`~judgekit.calibration.confidence.ConfidenceReport` as a PNG.

    Top panel: accuracy (bars) and mean confidence (points) per bin, in [0, 1], with the
    diagonal of perfect calibration and the ECE in the legend; bottom: items per bin.
    Returns ``path``.
    """
    width = 1.0 / report.n_bins
    lows = [b["low"] for b in report.bins]
    acc = [b["accuracy"] or 0.0 for b in report.bins]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(4.5, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    top.bar(lows, acc, width=width, align="edge", edgecolor="black", label="accuracy")
    filled = [b for b in report.bins if b["n"]]
    top.plot([b["mean_confidence"] for b in filled], [b["accuracy"] for b in filled], "o",
             color="darkorange", label="bin (mean confidence, accuracy)")  # fmt: skip
    top.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    top.set_ylim(0, 1)
    top.set_ylabel("accuracy vs human majority")
    top.set_title(f"{title}: ECE {report.ece.value:.3f}, Brier {report.brier.value:.3f}")
    top.legend(loc="upper left", fontsize=7)
    bottom.bar(lows, [b["n"] for b in report.bins], width=width, align="edge", color="grey")
    bottom.set_xlim(0, 1)
    bottom.set_xlabel(f"top-label confidence ({report.n_bins} equal-width bins)")
    bottom.set_ylabel("items")
    fig.tight_layout()
    save_figure(fig, Path(path))
    plt.close(fig)
    return Path(path)
