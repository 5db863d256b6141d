"""The run viewer: ``judgekit view`` writes one self-contained HTML report of one or more runs
(summary, figures, every record with its detail, judges compared, judges against humans).

Modules: :mod:`~judgekit.view.data` (reading run directories), :mod:`~judgekit.view.profiles`
(what each pipeline's records mean), :mod:`~judgekit.view.rows` (the records as page columns),
:mod:`~judgekit.view.summary` (summary.json as display blocks), :mod:`~judgekit.view.compare`
(agreement, kappa, judge vs humans), :mod:`~judgekit.view.page` (the HTML file),
:mod:`~judgekit.view.report` (:func:`build_report`, tying them together). The page's script,
stylesheet and template are package files in ``assets/``.
"""

from __future__ import annotations

from judgekit.view.report import ReportInfo, build_report

__all__ = ["ReportInfo", "build_report"]
