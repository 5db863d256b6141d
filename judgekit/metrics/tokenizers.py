"""Which sacrebleu tokenizer BLEU uses for a target language, and a warning when none fits.

One rule for every BLEU judgekit computes (``judgekit score``, ``judgekit contrast``, word
recall, the Python API): the tokenizer follows the script of the target language, as the
sacrebleu command line does for ``-l xx-zh`` / ``xx-ja`` / ``xx-ko`` (Post 2018, sacrebleu's
``DEFAULT_TOKENIZER`` choice):

* Han scripts (``Hans``, ``Hant``, ``Hani``, ``Hanb``; ``zh``, ``zho``, ``cmn``, ``yue``):
  ``zh`` (one token per Han character, as WMT scores Chinese);
* Japanese (``Jpan``, ``Hira``, ``Kana``, ``Hrkt``; ``ja``, ``jpn``): ``ja-mecab`` (MeCab
  words), ``char`` where MeCab is not installed;
* Korean (``Kore``, ``Hang``; ``ko``, ``kor``): ``ko-mecab``, ``char`` where ``sacrebleu[ko]``
  is not installed;
* scripts written without spaces between words (Thai, Lao, Khmer, Myanmar): ``char``;
* every other script: ``13a``.

The choice is always visible in the score's signature (``tok:zh``). spBLEU is not affected: it
always uses the FLORES-200 SentencePiece model (``tok:flores200``), which segments every script.
A target is given as a FLORES code (``cmn_Hans``), a locale (``cmn_Hans_Singapore``) or a bare
ISO 639 code (``zh``, ``jpn``). Text mostly in such scripts scored with ``13a`` (which never
splits them into words, so BLEU is near 0) raises a :class:`~judgekit.errors.JudgekitWarning`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from functools import lru_cache

from sacrebleu.metrics import BLEU

from judgekit.data.locales import parse_locale
from judgekit.errors import InputError, JudgekitError, JudgekitWarning

_ZH = {"Hans", "Hant", "Hani", "Hanb"}
_JA = {"Jpan", "Hira", "Kana", "Hrkt"}
_KO = {"Kore", "Hang"}
_NO_SPACES = {"Thai", "Laoo", "Khmr", "Mymr"}
_LANG_SCRIPT = {
    **dict.fromkeys(("zh", "zho", "chi", "cmn", "yue", "wuu", "hak", "nan", "gan"), "Hani"),
    **dict.fromkeys(("ja", "jpn"), "Jpan"),
    **dict.fromkeys(("ko", "kor"), "Kore"),
    **dict.fromkeys(("th", "tha"), "Thai"),
    **dict.fromkeys(("lo", "lao"), "Laoo"),
    **dict.fromkeys(("km", "khm"), "Khmr"),
    **dict.fromkeys(("my", "mya", "bur"), "Mymr"),
}
WORD_TOKENIZERS = ("13a", "intl")
"""Tokenizers that split on spaces and punctuation only (no use for Chinese, Japanese, Thai)."""

# Han, kana, Hangul, Thai, Lao, Khmer, Myanmar (and the CJK extension planes)
_UNSPACED = re.compile(
    "[\u1000-\u109f\u0e00-\u0eff\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]"
)
_SAMPLE_LINES = 2000
WARN_SHARE = 0.5
"""Share of letters in unspaced scripts above which 13a-scored text draws a warning."""


@lru_cache(maxsize=16)
def sacrebleu_tokenizer(name: str):
    """sacrebleu's tokenizer object by name (``13a``, ``intl``, ``zh``, ``ja-mecab``, ``char``).

    Raises:
        JudgekitError: unknown or unusable (e.g. MeCab missing).
    """
    try:
        return BLEU(tokenize=name).tokenizer
    except (ImportError, RuntimeError, KeyError) as exc:
        raise JudgekitError(f"tokenizer '{name}' is not usable here: {exc}") from exc


@lru_cache(maxsize=4)
def usable(name: str) -> bool:
    """True when sacrebleu can build tokenizer ``name`` here (MeCab tokenizers need extras)."""
    try:
        sacrebleu_tokenizer(name)
    except JudgekitError:
        return False
    return True


def _for_script(script: str) -> str:
    if script in _ZH:
        return "zh"
    if script in _JA:
        return "ja-mecab" if usable("ja-mecab") else "char"
    if script in _KO:
        return "ko-mecab" if usable("ko-mecab") else "char"
    return "char" if script in _NO_SPACES else "13a"


def default_tokenizer(lang: str) -> str:
    """sacrebleu tokenizer for text in FLORES language ``lang`` (e.g. ``cmn_Hant`` -> ``zh``).

    ``lang`` is ``lang_Script`` or a locale ``lang_Script_Location``; the script decides (module
    docstring). Used for BLEU (not spBLEU, which always uses ``flores200``) and word recall.
    """
    return _for_script(lang.split("_")[1] if "_" in lang else "")


def tokenizer_for(target: str, *, field: str = "target_lang") -> str:
    """The BLEU tokenizer for target language ``target``: a FLORES code (``jpn_Jpan``), a locale
    (``cmn_Hans_Singapore``) or a bare ISO 639-1/-3 code (``zh``, ``kor``; other languages
    -> ``13a``).

    Raises:
        InputError: ``target`` is none of these (located at ``field``).
    """
    text = target.strip()
    if re.fullmatch(r"[A-Za-z]{2,3}", text):
        return _for_script(_LANG_SCRIPT.get(text.lower(), ""))
    try:
        locale = parse_locale(text, field=field)
    except InputError:
        raise InputError(
            None,
            f"{target!r} is not a target language: give a FLORES code (cmn_Hans, jpn_Jpan), a "
            "locale (cmn_Hans_Singapore) or an ISO 639 code (zh, ja, ko)",
            field=field,
        ) from None
    return _for_script(locale.script)


def unspaced_share(lines: Iterable[str]) -> float:
    """Share of letters, in [0, 1], in scripts written without spaces between words (Han, kana,
    Hangul, Thai, Lao, Khmer, Myanmar), over the first 2,000 lines; 0 for no letters."""
    letters = unspaced = 0
    for number, line in enumerate(lines):
        if number >= _SAMPLE_LINES:
            break
        letters += sum(ch.isalpha() for ch in line)
        unspaced += len(_UNSPACED.findall(line))
    return unspaced / letters if letters else 0.0


def warn_if_unsplit(tokenize: str, lines: Iterable[str]) -> None:
    """Warn (:class:`~judgekit.errors.JudgekitWarning`) when ``tokenize`` is a word tokenizer
    (``13a``, ``intl``) and most letters of ``lines`` are in unspaced scripts."""
    if tokenize not in WORD_TOKENIZERS:
        return
    share = unspaced_share(lines)
    if share > WARN_SHARE:
        warnings.warn(
            f"{share:.0%} of the reference letters are Chinese, Japanese, Korean or Thai-type "
            f"script, which BLEU's '{tokenize}' tokenizer does not split into words (BLEU "
            "comes out near 0): give the target language (--target-lang / target_lang=, e.g. "
            "cmn_Hans, jpn_Jpan) or a tokenizer (zh, ja-mecab, ko-mecab, char)",
            JudgekitWarning,
            stacklevel=4,
        )
