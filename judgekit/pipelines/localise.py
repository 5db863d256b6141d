"""Localisation of source/English pairs to a target location (Cultivar, arXiv 2608.09766, §2.2).

For each (generator model, locale, pair) one call renders the paper's Figure 4 prompt
(``prompts/localisation/localise.txt``: a system and a user message, split at the lines
``=== system ===`` / ``=== user ===``) and asks for the localised pair. The prompt text is kept
verbatim; its "exact same format" line is met by the answer schema instead, since the llm layer
enforces JSON: ``{"source": ..., "target": ...}`` (``target`` is the English side). A leading
``<name>:`` label copied from the paper's format is removed from each side.

Checks on an answer (pydantic; a failed check triggers the llm layer's bounded re-ask, then the
pair is ``unscored`` with the reason, never written out):

* both sides present and non-empty; neither side holds the other's ``<name>:`` line;
* each side has as many sentences as its original (a sentence ends with ``. ! ?`` followed by a
  space or the end, or with ``。！？।``; abbreviations such as "Dr." count as an end, so a pair
  that gains or loses one is refused: a rare false refusal, visible in the summary);
* each side's length in characters is within ``[1/r, r]`` times its original's
  (``max_length_ratio`` r, default 2; 0 disables the check).

Inputs: a JSONL or TSV file with ``id, source, english`` (TSV: with that header), or two
line-aligned text files (``source_file``, ``english_file``; ids are 1-based line numbers). Locale
ids follow the paper: ``<ISO 639-3>_<script>_<location>``, e.g. ``deu_Latn_Germany``.

Output (see :func:`write_pairs`): ``localised.jsonl`` and, per (generator, locale), aligned
``pairs/<generator>/<locale>.{source,english,ids}.txt`` holding the pairs that passed the checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from judgekit.config import RunConfig
from judgekit.data import resolve_path, text_lines
from judgekit.data.atomic import open_output, write_text
from judgekit.data.jsonfile import write_json
from judgekit.data.locales import Locale, parse_locale
from judgekit.errors import InputError
from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.base import require_models, run_items, task_fingerprint, workers
from judgekit.pipelines.localisation_schemas import (
    PAIR_CHECKS,
    LocalisedPair,
    PairChecks,
    SourcePair,
    checking,
    read_records,
    sha256_file,
)
from judgekit.pipelines.options.localise import LocaliseOptions
from judgekit.prompts import Prompt, load_prompt
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record, join_key
from judgekit.signature import ModelSignature, Signature, schema_hash

LANGUAGE_NAMES = {
    "acm": "Mesopotamian Arabic", "apc": "Levantine Arabic", "arb": "Arabic", "ben": "Bengali",
    "bul": "Bulgarian", "cat": "Catalan", "ces": "Czech", "cmn": "Chinese", "deu": "German",
    "eng": "English", "fil": "Filipino", "fra": "French", "gom": "Konkani", "hin": "Hindi",
    "ita": "Italian", "jpn": "Japanese", "khk": "Mongolian", "kor": "Korean", "plt": "Malagasy",
    "pol": "Polish", "por": "Portuguese", "rus": "Russian", "slk": "Slovak", "spa": "Spanish",
    "tel": "Telugu", "tur": "Turkish", "ukr": "Ukrainian", "yor": "Yoruba", "yue": "Cantonese",
    "zho": "Chinese",
}  # fmt: skip

_MARKER = re.compile(r"^=== (system|user) ===\n", re.MULTILINE)


def language_name(locale: Locale) -> str:
    """English name of the locale's language (``deu`` -> ``German``), "" when unknown."""
    return LANGUAGE_NAMES.get(locale.language, "")


def location_name(locale: Locale) -> str:
    """The locale's location as the prompt says it (``Hong_Kong`` -> ``Hong Kong``)."""
    return (locale.location or "").replace("_", " ")


def load_pairs(options: LocaliseOptions) -> list[SourcePair]:
    """The input pairs, from ``input`` or the two aligned files.

    Raises:
        InputError: unreadable file, bad row, or aligned files of different lengths.
    """
    if options.input is not None:
        return read_records(options.input, SourcePair)
    src, eng = resolve_path(options.source_file), resolve_path(options.english_file)  # type: ignore[arg-type]
    for path in (src, eng):
        if not path.is_file():
            raise InputError(path, "file not found")
    a, b = text_lines(src), text_lines(eng)  # lines end at "\n" only (U+2028 is text)
    if len(a) != len(b):
        raise InputError(eng, f"{len(b)} lines, but {src} has {len(a)}; files must be aligned")
    return [
        SourcePair(id=str(i), source=s, english=e)
        for i, (s, e) in enumerate(zip(a, b, strict=True), 1)
    ]


@dataclass
class PairResult:
    """One (generator, locale, pair): localised, or excluded with a reason."""

    model: str
    locale: str
    id: str
    original_source: str
    original_english: str
    source: str | None = None
    english: str | None = None
    excluded: str | None = None
    reason: str | None = None


def split_messages(text: str) -> list[dict[str, Any]]:
    """A rendered prompt with ``=== system ===`` / ``=== user ===`` lines -> chat messages
    (text without markers is one user message)."""
    parts = _MARKER.split(text)
    if len(parts) == 1:
        return [{"role": "user", "content": text.strip()}]
    return [
        {"role": r, "content": c.strip()} for r, c in zip(parts[1::2], parts[2::2], strict=True)
    ]


class LocaliseRun:
    """Builds and runs the localisation calls; ``results`` holds one :class:`PairResult` each."""

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.generators = require_models(config, "generator", "localise")
        self.config = config
        self.client = client
        self.options = config.options("localise", LocaliseOptions)
        try:
            self.locales = [parse_locale(x, need_location=True) for x in self.options.locales]
        except InputError as exc:
            raise config.located("localise.locales", exc.message) from None
        for loc in self.locales:
            if not (self.options.source_name or language_name(loc)):
                raise InputError(
                    config._path, f"no name known for '{loc.language}'; set source_name"
                )
        self.prompt: Prompt = load_prompt(self.options.prompt)
        pairs = load_pairs(self.options)
        self.pairs = pairs[: config.limit] if config.limit else pairs
        self.results: list[PairResult] = []

    def plan(self) -> list[PairResult]:
        """Every (generator, locale, pair) of the run."""
        return [
            PairResult(spec.label, loc.id, p.id, p.source, p.english)
            for spec in self.config.generators()
            for loc in self.locales
            for p in self.pairs
        ]

    async def run(self, on_item: Any = None) -> list[PairResult]:
        """Localise every planned pair (concurrency bounded per model by the llm layer)."""
        specs = {spec.label: spec for spec in self.config.generators()}
        locales = {loc.id: loc for loc in self.locales}

        async def one(item: PairResult) -> None:
            await self._localise(specs[item.model], locales[item.locale], item)

        self.results = await run_items(self.plan(), one, workers(self.generators), on_item)
        return self.results

    def tasks(self) -> Iterator[Task]:
        """The localisation task of every planned pair (one call each; ``--dry-run`` counts
        them)."""
        specs = {spec.label: spec for spec in self.config.generators()}
        locales = {loc.id: loc for loc in self.locales}
        for item in self.plan():
            yield self._task(specs[item.model], locales[item.locale], item)

    def _task(self, spec: ModelSpec, locale: Locale, item: PairResult) -> Task:
        opts = self.options
        text = self.prompt.render(
            src_name=opts.source_name or language_name(locale),
            tgt_name=opts.target_name,
            src_location=opts.location or location_name(locale),
            src_text=item.original_source,
            tgt_text=item.original_english,
        )
        return Task(
            key=join_key(
                "localise", item.model, locale.id, item.id, task_fingerprint(spec, self.prompt)
            ),
            stage="localise",
            role="generator",
            spec=spec,
            messages=split_messages(text),
            schema=LocalisedPair,
            prompt=self.prompt,
            meta={"locale": locale.id, "id": item.id},
        )

    async def _localise(self, spec: ModelSpec, locale: Locale, item: PairResult) -> None:
        opts = self.options
        checks = PairChecks(
            {"source": item.original_source, "target": item.original_english},
            {"source": opts.source_name or language_name(locale), "target": opts.target_name},
            opts.max_length_ratio,
            opts.check_sentences,
        )
        task = self._task(spec, locale, item)
        with checking(PAIR_CHECKS, checks):
            rec = await self.client.run(task)
            if rec.status != "ok":
                item.excluded, item.reason = f"localise_{rec.status}", rec.reason
                return
            try:  # again: a cached or resumed answer may predate these checks
                pair = LocalisedPair.model_validate(rec.parsed)
            except ValueError as exc:
                item.excluded, item.reason = "localise_checks", str(exc).split("\n")[1].strip()
                return
        item.source, item.english = pair.source, pair.target


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def signature(run: LocaliseRun) -> Signature:
    """Generators, prompt, answer schema, checks, locales, input files with their hashes."""
    opts = run.options
    inputs = [p for p in (opts.input, opts.source_file, opts.english_file) if p is not None]
    return Signature(
        pipeline="localise",
        models=[ModelSignature.of(s, "generator") for s in run.generators],
        prompts={run.prompt.id: run.prompt.hash},
        schema_hash=schema_hash(LocalisedPair),
        parameters={
            "locales": [loc.id for loc in run.locales],
            "checks": {
                "max_length_ratio": opts.max_length_ratio,
                "check_sentences": opts.check_sentences,
            },  # fmt: skip
            "n_pairs": len(run.pairs),
            "limit": run.config.limit,
        },
        data={str(p): sha256_file(resolve_path(p)) for p in inputs},
        seed=run.config.seed,
    )


def write_pairs(run: LocaliseRun, records: list[Record], out_dir: Path) -> dict[str, Any]:
    """Write ``localised.jsonl`` (every planned pair, with ``excluded``/``reason`` where it
    failed), the aligned ``pairs/<generator>/<locale>.{source,english,ids}.txt`` files (pairs that
    passed only, in input order) and ``summary.json``; return the summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with open_output(out_dir / "localised.jsonl") as fh:
        for r in run.results:
            fh.write(json.dumps(asdict(r), ensure_ascii=False) + "\n")
    by_locale, excluded = [], {}
    for spec in run.config.generators():
        for loc in run.locales:
            rows = [r for r in run.results if r.model == spec.label and r.locale == loc.id]
            done = [r for r in rows if r.excluded is None]
            folder = out_dir / "pairs" / _safe(spec.label)
            folder.mkdir(parents=True, exist_ok=True)
            for suffix, key in (("source", "source"), ("english", "english"), ("ids", "id")):
                lines = [" ".join(str(getattr(r, key)).split()) for r in done]
                write_text(folder / f"{loc.id}.{suffix}.txt", "".join(f"{x}\n" for x in lines))
            unchanged = sum(
                r.source == r.original_source and r.english == r.original_english for r in done
            )
            by_locale.append({"model": spec.label, "locale": loc.id, "planned": len(rows),
                              "localised": len(done), "unchanged": unchanged,
                              "excluded": len(rows) - len(done)})  # fmt: skip
    for r in run.results:
        if r.excluded:
            excluded[r.excluded] = excluded.get(r.excluded, 0) + 1
    summary = {
        "signature": signature(run).as_dict(),
        "items": {
            "planned": len(run.results),
            "judged": sum(r.excluded is None for r in run.results),
            "excluded": excluded,
        },
        "by_locale": by_locale,
        "usage": usage_summary(records),
        "files": {"pairs": "localised.jsonl", "aligned": "pairs/<generator>/<locale>.*.txt"},
    }
    write_json(out_dir / "summary.json", summary)
    return summary
