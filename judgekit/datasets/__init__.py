"""Public data sets by name: the registry, the data home, fetching with checksums, and the
``data:NAME/path`` references that configs and commands take wherever they take a file.

* :mod:`judgekit.datasets.registry`: one entry per set (source and commit, files, sha256,
  licence, citation, size).
* :mod:`judgekit.datasets.home`: where sets live (``$JUDGEKIT_DATA``) and the stamp of what
  was checked.
* :mod:`judgekit.datasets.fetch`: downloads with pooch, checked; the licence on first download.
* :mod:`judgekit.datasets.refs`: ``data:`` references.
* :mod:`judgekit.datasets.status`, :mod:`judgekit.datasets.place`: what is here; local copies.
"""
