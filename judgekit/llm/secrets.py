"""API keys: read from the environment or from a key file named in the config, never stored.

A key is looked up when an endpoint is built, kept only in memory for the request headers, and
registered here so that :func:`redact` can scrub it (and every secret-looking environment
variable) from any text judgekit writes: error reasons, log lines, messages shown to users.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from judgekit.errors import JudgekitError

_SECRET_ENV = re.compile(r"(API_KEY|_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_MIN_SECRET = 8  # shorter values (placeholders such as "x" or "none") are not scrubbed
_known: set[str] = set()


def remember(secret: str) -> None:
    """Register a key so that :func:`redact` replaces it wherever it appears."""
    if len(secret) >= _MIN_SECRET:
        _known.add(secret)


def resolve_key(env: str | None, file: Path | str | None) -> str | None:
    """The API key named by ``env`` (an environment variable) or ``file`` (first line).

    Returns None when neither is given.

    Raises:
        JudgekitError: the variable is unset or empty, or the file is missing or empty (the
            message names the variable or file, never a value).
    """
    if env:
        value = os.environ.get(env, "").strip()
        if not value:
            raise JudgekitError(f"environment variable {env} is not set (it should hold the key)")
        remember(value)
        return value
    if file:
        path = Path(file).expanduser()
        try:
            value = path.read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, IndexError):
            raise JudgekitError(f"API key file {path} is missing or empty") from None
        if not value:
            raise JudgekitError(f"API key file {path} is empty")
        remember(value)
        return value
    return None


def _secrets() -> list[str]:
    env = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET]
    return sorted({*env, *_known}, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every known key and secret-looking environment value replaced by ``***``."""
    for secret in _secrets():
        if secret in text:
            text = text.replace(secret, "***")
    return text
