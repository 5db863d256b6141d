"""Label designs: which items people label, and estimates that stay valid under that choice.

* :mod:`.probabilities`: inclusion probabilities for the uniform, active and stratified designs
  (judge uncertainty mixed with a uniform floor; Neyman allocation from a pilot);
* :mod:`.selection`: the seeded draw and ``selection.csv`` (item, inclusion probability, stratum,
  reason), read back by one reader;
* :mod:`.estimators`: inverse-probability-weighted PPI++ (Zrnic & Candès 2024, Active
  Statistical Inference, ICML) and stratified PPI++ (Fisch et al. 2024, Stratified
  Prediction-Powered Inference), with the uniform-design width at the same n beside them.
"""

from __future__ import annotations

DESIGNS = ("uniform", "stratified", "active")
