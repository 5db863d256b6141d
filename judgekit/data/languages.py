"""An item's language as a facet (``language``, ``lang``): one spelling per language, so ``DE``
and ``de`` are one facet value, wherever items' facets are read (``gate`` rules ``by:
language``, ``calibrate estimate/plan/tune --by``, ``calibrate compare --by``, drift anchors).

The rule (:func:`language_value`):

* a language is text: a number, a boolean, a list or a mapping is refused (file, line, field);
  text with no letter (``5``, ``3.0``) is refused too;
* a code (BCP 47 tags are case-insensitive, RFC 5646 Sec. 2.1.1) is written lower-case,
  underscores read as hyphens: ``DE`` -> ``de``, ``pt_BR`` -> ``pt-br``; a language pair such
  as WMT's ``en-de`` is left as it is (upper-casing a "region" would read it as German German);
* a FLORES code or locale (``lang_Script[_Location]``: an ISO 639-3 language and an ISO 15924
  script, :mod:`judgekit.data.locales`) keeps FLORES' form: ``HIN_deva`` -> ``hin_Deva``,
  ``fra-latn`` -> ``fra_Latn``; a location keeps its spelling;
* a language name (letters and spaces, such as ``Japanese``) is written with each word
  capitalised and inner whitespace collapsed: ``japanese`` and ``JAPANESE`` are ``Japanese``;
* anything else is kept as written (inner whitespace collapsed).

An item that carries both fields with values that differ after this rule is refused naming the
item (:func:`check_item_languages`): neither can be taken silently.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from judgekit.data.locales import ISO15924
from judgekit.errors import InputError

LANGUAGE_FIELDS = ("language", "lang")

_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
_FLORES = re.compile(r"(?P<lang>[A-Za-z]{3})[-_](?P<script>[A-Za-z]{4})(?:_(?P<location>\S+))?")


def language_value(
    value: Any, *, path: str | Path | None = None, line: int | None = None, field: str = "language"
) -> str | None:
    """The canonical spelling of one language value (module doc); None for no value (None or
    whitespace-only text).

    Raises:
        InputError: a value that is not text, or text with no letter (``path``, ``line``,
            ``field``).
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(path, f"a language is text (a code such as de or hin_Deva), not "
                         f"{type(value).__name__} {value!r}", line=line, field=field)  # fmt: skip
    text = " ".join(value.split())
    if not text:
        return None
    if not any(c.isalpha() for c in text):
        raise InputError(path, f"{text!r} is not a language (a code such as de or hin_Deva)",
                         line=line, field=field)  # fmt: skip
    flores = _FLORES.fullmatch(text)
    if flores and flores["script"].title() in ISO15924:
        code = f"{flores['lang'].lower()}_{flores['script'].title()}"
        return code if flores["location"] is None else f"{code}_{flores['location']}"
    if _CODE.fullmatch(text):
        return text.lower().replace("_", "-")
    if text.replace(" ", "").isalpha():
        return " ".join(w[:1].upper() + w[1:].lower() for w in text.split())
    return text


def facet_value(
    field: str, value: Any, *, path: str | Path | None = None, line: int | None = None
) -> str | None:
    """One facet cell as text (None for no value: None, a list or mapping, whitespace-only);
    a language field (:data:`LANGUAGE_FIELDS`) through :func:`language_value`.

    Raises:
        InputError: a bad language value (:func:`language_value`).
    """
    if field in LANGUAGE_FIELDS:
        return language_value(value, path=path, line=line, field=field)
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def check_item_languages(
    item: str, values: dict[str, str | None], *, path: str | Path | None = None,
    line: int | None = None,
) -> None:  # fmt: skip
    """Refuse an item whose ``language`` and ``lang`` (canonical values) differ.

    Raises:
        InputError: naming the item, both values, ``path``, ``line`` and the field ``lang``.
    """
    language, lang = values.get("language"), values.get("lang")
    if language is not None and lang is not None and language != lang:
        raise InputError(path, f"item '{item}': language is '{language}' but lang is '{lang}'; "
                         "give one language per item (or the same in both fields)",
                         line=line, field="lang")  # fmt: skip
