"""Calibration: judges against human labels (accuracy, kappa, AAT), judge x prompt grids, and the
cultural and error-typing validations."""
