"""Human annotation for calibration: offline review pages and their import (DESIGN 3.5).

* :mod:`judgekit.review.sources`: the items of each task from a run directory or items file;
* :mod:`judgekit.review.campaign`: campaigns, item hashes, sampling, gold answers;
* :mod:`judgekit.review.page`: one self-contained HTML page per rater (``static/``, ``vendor/``);
* :mod:`judgekit.review.make`: ``review make`` (campaign + page);
* :mod:`judgekit.review.checks`: a rater's answers checked against the campaign;
* :mod:`judgekit.review.importer`: raters' files (judgekit's or Label Studio's JSON) read;
* :mod:`judgekit.review.outputs`: the label table, MQM TSV, post-edit files and QC report;
* :mod:`judgekit.review.labelstudio`: Label Studio tasks, config and export import.

Tasks: ``postedit`` (Cultivar, paper 000, Sec. 2.3 and Fig. 1), ``meanings`` (paper 002),
``csca`` (paper 001, Global-MMLU schema) and ``mqm`` (error spans with type and severity).
"""

from judgekit.review.campaign import TASKS, Campaign, ReviewItem

__all__ = ["TASKS", "Campaign", "ReviewItem"]
