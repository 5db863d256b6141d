"""The statistics judgekit reports, named once: the field's term, a plain name and one line of
plain meaning, and whether the statistic (in one of its forms) reads the order of the
categories.

``calibrate agreement`` computes the ``among="raters"`` entries in this order
(:func:`judgekit.metrics.agreement_all.agreement_statistics`) and its ``--categories`` help
names the ones that need the order; the viewer's "Which judge?" tab takes its names and
meanings for the ``among="reference"`` entries (a judge against the humans, as ``calibrate
compare`` computes them) from here. A new statistic is one entry here and its function.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Statistic:
    """One statistic.

    Attributes:
        key: its key in outputs ("fleiss_kappa", "accuracy").
        name: the field's term ("Fleiss' kappa").
        plain: a plain name for readers new to it ("Agreement").
        meaning: one line of plain meaning.
        needs_order: True where a form of it reads the categories' order (weighted kappa,
            AC2, ordinal alpha); text labels then need a declared order
            (:func:`judgekit.metrics.label_codes.encode`).
        among: "raters" (agreement among raters: ``calibrate agreement``) or "reference" (a
            judge against the humans' labels or scores: ``calibrate compare``).
    """

    key: str
    name: str
    plain: str
    meaning: str
    needs_order: bool
    among: str


STATISTICS: tuple[Statistic, ...] = (
    Statistic("percent_agreement", "percent agreement", "Agreement",
              "share of rater pairs that give an item the same label", False, "raters"),
    Statistic("unanimous_share", "unanimous share", "Unanimous items",
              "share of items on which every rater gives the same label", False, "raters"),
    Statistic("cohen_kappa", "Cohen's kappa", "Cohen's kappa",
              "agreement of two raters beyond what chance label frequencies give (0 = chance)",
              True, "raters"),
    Statistic("fleiss_kappa", "Fleiss' kappa", "Fleiss' kappa",
              "agreement of any number of raters beyond chance (0 = chance)", False, "raters"),
    Statistic("gwet_ac1", "Gwet's AC1", "Gwet's AC1",
              "chance-corrected agreement that stays stable when one label dominates", True,
              "raters"),
    Statistic("krippendorff_alpha", "Krippendorff's alpha", "Krippendorff's alpha",
              "agreement beyond chance at a level of measurement, missing ratings allowed", True,
              "raters"),
    Statistic("accuracy", "accuracy", "Agreement",
              "share of items where the judge gives the humans' label", False, "reference"),
    Statistic("macro_f1", "macro-F1", "Balanced F1",
              "F1 per label averaged over labels, so rare labels count", False, "reference"),
    Statistic("kappa", "Cohen's kappa", "Cohen's kappa",
              "agreement beyond what chance label frequencies give (0 = chance)", False,
              "reference"),
    Statistic("ac1", "Gwet's AC1", "Gwet's AC1",
              "chance-corrected agreement that stays stable when one label dominates", False,
              "reference"),
    Statistic("pearson", "Pearson r", "Pearson r",
              "linear correlation of the judge's scores with the humans'", False, "reference"),
    Statistic("kendall", "Kendall tau", "Kendall tau",
              "share of pairs ordered alike minus share ordered oppositely", False, "reference"),
    Statistic("acc_eq", "acc_eq", "Pairwise accuracy",
              "share of pairs ordered as humans order them, ties counted", False, "reference"),
    Statistic("spa", "soft pairwise accuracy", "Soft pairwise accuracy",
              "how well the judge's system ranking keeps human margins", False, "reference"),
)  # fmt: skip

BY_KEY: dict[str, Statistic] = {s.key: s for s in STATISTICS}


def among(kind: str) -> tuple[Statistic, ...]:
    """The statistics of one kind ("raters" or "reference"), in list order."""
    return tuple(s for s in STATISTICS if s.among == kind)
