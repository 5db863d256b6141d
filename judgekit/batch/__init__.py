"""Batch execution: a run's tasks as batch requests, and their answers back as its records.

A judge run over a benchmark is large and not interactive. Provider batch APIs (OpenAI, Azure)
answer within 24 h at about half the price; vLLM's ``run-batch`` answers the same JSONL request
format offline, one shard per GPU node. Both fit a run as it is: every task has a stable key,
a cached answer and a final record.

* :mod:`~judgekit.batch.requests`: one OpenAI batch request line per task (``custom_id`` = the
  task key, ``body`` = the exact request the online path posts, structured output included).
* :mod:`~judgekit.batch.manifest`: what an export holds (config hash, prompt hashes, each task
  key with the hash of its request), so an answer is only ever taken for the request it
  answers.
* :mod:`~judgekit.batch.exporter`: ``judgekit batch export``: the tasks without a final record,
  sharded.
* :mod:`~judgekit.batch.results`: the one reader of batch result files (OpenAI's output and
  error files, vLLM's ``run-batch`` output).
* :mod:`~judgekit.batch.answer`: the one reading of an answer (the online structured-output
  path; no re-ask is possible in a batch).
* :mod:`~judgekit.batch.importer`: ``judgekit batch import``: answers to records and cache
  entries, idempotent.
* :mod:`~judgekit.batch.provider` and :mod:`~judgekit.batch.submit`: ``judgekit run --batch``,
  through litellm's Files and Batches functions, resumable.

Each of exporter, importer and submit is an :class:`~judgekit.engine.Executor`: the run is made
by :func:`judgekit.run` as every run is (config, inputs, lock, run log, cache, report).
This package's ``__init__`` imports nothing, so the engine may import its modules lazily.
"""
