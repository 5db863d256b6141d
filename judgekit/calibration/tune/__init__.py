"""Honest judge tuning: sealed splits, choice on select, report on test (issue 35)."""

from judgekit.calibration.tune.choose import Ranking, choose, statistic
from judgekit.calibration.tune.report import TestReport, report_on_test
from judgekit.calibration.tune.splits import (
    Splits,
    few_shot_examples,
    read_looks,
    record_look,
    split_items,
    test_hash,
)

__all__ = [
    "Ranking",
    "Splits",
    "TestReport",
    "choose",
    "few_shot_examples",
    "read_looks",
    "record_look",
    "report_on_test",
    "split_items",
    "statistic",
    "test_hash",
]
