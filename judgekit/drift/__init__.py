"""Judge drift on a frozen anchor set (docs/drift.md): :func:`compare_answers` per language,
:func:`compare_signatures`, and the anchor set's file with its hash (:mod:`.anchors`)."""

from judgekit.drift.compare import DriftCheck, compare_answers, compare_signatures, detectable_drop

__all__ = ["DriftCheck", "compare_answers", "compare_signatures", "detectable_drop"]
