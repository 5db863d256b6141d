"""judgekit: LLM judges for multilingual and translation benchmarks, calibrated against humans."""

__version__ = "0.1.0"
