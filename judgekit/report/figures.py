"""Figures (matplotlib, Agg backend): heatmaps of a models x languages (or locales) table."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from judgekit.data.atomic import save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def heatmap(
    table: pd.DataFrame,
    path: Path,
    *,
    title: str,
    colorbar: str,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str = "viridis",
    sort_by_mean: bool = False,
    missing: str = "",
) -> Path:
    """Draw ``table`` (rows x columns of numbers) as an annotated PNG.

    Args:
        table: e.g. models (index) x languages (columns), spilling rate in [0, 1].
        path: PNG file to write.
        sort_by_mean: order rows by their mean, highest first (as in Cultivar's Figure 6).
        missing: text written in NaN cells (e.g. "no rate"; default: left blank).

    Returns:
        ``path``.
    """
    if sort_by_mean and not table.empty:
        table = table.loc[table.mean(axis=1).sort_values(ascending=False).index]
    values = table.to_numpy(dtype=float)
    width = max(4.0, 1.0 + 0.8 * table.shape[1])
    height = max(2.5, 1.2 + 0.5 * table.shape[0])
    fig, ax = plt.subplots(figsize=(width, height))
    masked = np.ma.masked_invalid(values)
    image = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    rotation = 45 if table.shape[1] > 8 and max(len(str(c)) for c in table.columns) > 4 else 0
    ax.set_xticks(
        range(table.shape[1]),
        [str(c) for c in table.columns],
        rotation=rotation,
        ha="right" if rotation else "center",
    )
    ax.set_yticks(range(table.shape[0]), [str(i) for i in table.index])
    for (r, c), value in np.ndenumerate(values):
        text = missing if np.isnan(value) else fmt.format(value)
        ax.text(c, r, text, ha="center", va="center", color="grey" if np.isnan(value) else "w",
                fontsize=8)  # fmt: skip
    fig.colorbar(image, ax=ax, label=colorbar)
    ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return path


def delta_heatmap(frame: pd.DataFrame, metric: str, path: str | Path) -> Path:
    """Write the Figure 6 heatmap (Cultivar) of
    :func:`judgekit.metrics.contrastive.delta_matrix`: models x locales, diverging colours
    centred at 0; returns ``path``."""
    from judgekit.metrics.contrastive import delta_matrix

    table = delta_matrix(frame, metric)
    bound = float(table.abs().max().max()) or 1.0
    return heatmap(
        table,
        Path(path),
        title=f"Delta {metric} (localised - original)",
        colorbar=f"Delta {metric}",
        vmin=-bound,
        vmax=bound,
        cmap="RdBu",
        sort_by_mean=True,
    )
