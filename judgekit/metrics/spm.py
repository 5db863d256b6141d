"""SentencePiece tokenizers for spBLEU, read from local model files and never downloaded.

spBLEU is BLEU over SentencePiece pieces with the FLORES-200 model (``tok:flores200``; NLLB Team
2022, Sec. 7.1; Cultivar paper, Sec. 4). sacrebleu downloads that model on first use; judgekit
instead finds it (:func:`resolve_spm_model`: a given path, ``$JUDGEKIT_FLORES200_SPM``, then
sacrebleu's cache) and fails with a clear error when it is absent. The tokenizer scores exactly
as sacrebleu's (``EncodeAsPieces`` joined by spaces) and keeps its signature; ``spm:PATH`` uses
any other model file (signature ``spm-<sha256 prefix>``). Used by
:func:`judgekit.metrics.mt.make_metric`.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from sacrebleu.tokenizers.tokenizer_base import BaseTokenizer
from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS

from judgekit.data.digest import file_sha256
from judgekit.errors import JudgekitError

SPBLEU_TOKENIZER = "flores200"
FLORES200_ENV = "JUDGEKIT_FLORES200_SPM"
"""Environment variable naming the FLORES-200 SentencePiece model file."""

FLORES200_FILE = "flores200_sacrebleu_tokenizer_spm.model"
"""The model's published file name (sacrebleu caches it as ``models/flores200sacrebleuspm``)."""

CUSTOM_SPM_PREFIX = "spm:"
"""``tokenize="spm:/path/model"`` tokenizes BLEU with any SentencePiece model file."""


class SPMTokenizer(BaseTokenizer):
    """sacrebleu's SentencePiece tokenizer, loaded from a local file instead of a download."""

    def __init__(self, model_path: Path, name: str) -> None:
        import sentencepiece as spm

        self._name = name
        self._sp = spm.SentencePieceProcessor()
        try:
            self._sp.Load(str(model_path))
        except (OSError, RuntimeError) as exc:
            raise JudgekitError(f"cannot load SentencePiece model {model_path}: {exc}") from exc

    def signature(self) -> str:
        return self._name

    @lru_cache(maxsize=2**16)  # noqa: B019 - same per-instance cache as sacrebleu's tokenizers
    def __call__(self, line: str) -> str:
        return " ".join(self._sp.EncodeAsPieces(line))


def sacrebleu_cache_dir() -> Path:
    """sacrebleu's cache folder: ``$SACREBLEU``, default ``~/.sacrebleu``."""
    return Path(os.environ.get("SACREBLEU", Path.home() / ".sacrebleu"))


def spm_model_candidates(key: str = SPBLEU_TOKENIZER) -> list[Path]:
    """Files in sacrebleu's cache that hold the SentencePiece model of tokenizer ``key``.

    The first is where sacrebleu itself looks before downloading (``models/`` + the basename of
    its URL, ``flores200sacrebleuspm`` for flores200); for flores200 the published file name
    ``flores200_sacrebleu_tokenizer_spm.model`` is accepted there too.
    """
    models = sacrebleu_cache_dir() / "models"
    found = [models / os.path.basename(SPM_MODELS[key]["url"])]
    if key == SPBLEU_TOKENIZER:
        found.append(models / FLORES200_FILE)
    return found


def resolve_spm_model(key: str = SPBLEU_TOKENIZER, path: str | Path | None = None) -> Path:
    """Find the SentencePiece model for tokenizer ``key`` without any network access.

    Order: ``path``; for flores200 the ``JUDGEKIT_FLORES200_SPM`` environment variable; then the
    files of :func:`spm_model_candidates` in sacrebleu's cache.

    Raises:
        JudgekitError: a given path or the environment variable names a missing file, or no
            candidate exists; the message lists every path tried and how to fall back.
    """
    if path is not None:
        if not Path(path).is_file():
            raise JudgekitError(f"SentencePiece model for '{key}' not found: {path}")
        return Path(path)
    env = os.environ.get(FLORES200_ENV) if key == SPBLEU_TOKENIZER else None
    if env:
        if not Path(env).is_file():
            raise JudgekitError(f"{FLORES200_ENV}={env}: file not found")
        return Path(env)
    candidates = spm_model_candidates(key)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    hint = f"set {FLORES200_ENV}=/path/to/{FLORES200_FILE}, or pass " if key == "flores200" else ""
    raise JudgekitError(
        f"tokenizer '{key}' needs its SentencePiece model and judgekit never downloads it. "
        f"Looked for: {tried}. Fix: {hint}spm_model (--spm-model PATH), "
        f"or copy the file to {candidates[0]}; "
        f"or choose another tokenizer explicitly (e.g. --tokenize 13a; the signature shows it)."
    )


def spm_tokenizer(tokenize: str, spm_model: str | Path | None) -> SPMTokenizer:
    """The SentencePiece tokenizer named by ``tokenize`` (``spm``, a key of ``SPM_MODELS``, or
    ``spm:/path/model``); its signature name carries the model (``spm-<10 hex digits>`` for a
    custom file).

    Raises:
        JudgekitError: a custom model file is not there.
    """
    if tokenize.startswith(CUSTOM_SPM_PREFIX):
        path = Path(tokenize[len(CUSTOM_SPM_PREFIX) :])
        if not path.is_file():
            raise JudgekitError(f"SentencePiece model not found: {path}")
        digest = file_sha256(path, 10)
        return SPMTokenizer(path, f"spm-{digest}")
    key = "flores101" if tokenize == "spm" else tokenize
    return SPMTokenizer(resolve_spm_model(key, spm_model), SPM_MODELS[key]["signature"])


def is_spm(tokenize: str) -> bool:
    """True when ``tokenize`` names a SentencePiece tokenizer (spBLEU)."""
    return tokenize in SPM_MODELS or tokenize.startswith(CUSTOM_SPM_PREFIX)
