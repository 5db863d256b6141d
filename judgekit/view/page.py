"""The report page: one HTML file from the package's template, stylesheet and script.

The page works from ``file://`` with no network: the CSS is inline, the script is one classic
(non-module) ``<script>``, figures are ``data:`` URIs and the run data sits in a
``<script type="application/json">`` whose every ``<`` is written ``\\u003c``, so no string of a
model or an input file can close the element. The script inserts every such string with
``textContent``. Markdown written by a run (``validation.md``, ``calibration.md``) is rendered
here with markdown-it-py, raw HTML disabled (it is shown as text), so it is safe to inline.

The page's content security policy (:func:`content_security_policy`, the review pages' too)
allows no network request at all and no script but the page's own inline ones, each by its
SHA-256: no inline event handler (``onerror=``) and no ``javascript:`` URL can run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources
from typing import Any

SCRIPTS = (  # one classic script, in order
    "bidi.js",
    "core.js",
    "items.js",
    "context.js",
    "compare.js",
    "humans.js",
    "clusters.js",
    "confidence.js",
    "which.js",
)
_PLACEHOLDER = re.compile(r"\{\{([A-Z]+)\}\}")
CSP_MARK = "{{CSP}}"  # where a page's template puts its policy (see with_policy)
_CLASSIC_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def content_security_policy(page: str) -> str:
    """The content security policy of a judgekit page (the report, the review pages).

    No network request of any kind (``default-src 'none'``: no image, font, style sheet,
    fetch or frame from anywhere; no ``<base>``, no form submission), images only from
    ``data:`` URIs, inline styles, and no script but ``page``'s own classic inline ones, each
    allowed by its SHA-256 (CSP Level 2, section 4.2.4): an inline event handler
    (``onerror=``), a ``javascript:`` URL or any other script is refused by the browser,
    whatever text the page holds. ``page`` is the finished HTML (its scripts as written).
    """
    hashes = []
    for body in _CLASSIC_SCRIPT.findall(page):  # as the browser reads them: newlines as \n
        text = body.replace("\r\n", "\n").replace("\r", "\n").encode("utf-8")
        digest = base64.b64encode(hashlib.sha256(text).digest()).decode("ascii")
        hashes.append(f"'sha256-{digest}'")
    scripts = " ".join(hashes) or "'none'"
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {scripts}; base-uri 'none'; form-action 'none'"
    )


def with_policy(page: str) -> str:
    """``page`` (finished HTML) with :func:`content_security_policy` written at its
    :data:`CSP_MARK` (the first one: the template's, in the page's head)."""
    return page.replace(CSP_MARK, content_security_policy(page), 1)


def asset(name: str) -> str:
    """The text of ``judgekit/view/assets/<name>``."""
    return resources.files("judgekit.view").joinpath("assets", name).read_text(encoding="utf-8")


def data_uri(png: bytes) -> str:
    """A ``data:image/png;base64,...`` URI of PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def embed_json(payload: Any) -> str:
    """``payload`` as JSON safe inside a ``<script>`` element (every ``<`` escaped; NaN and
    infinities, which JSON cannot hold, become null)."""
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere (JSON has none): null, as json_safe says
        from judgekit.data.jsonfile import json_safe

        text = json.dumps(json_safe(payload), ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")


def render_markdown(text: str) -> str:
    """HTML of markdown ``text`` (CommonMark + tables; raw HTML is escaped, not passed)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def notes_html(notes: list[tuple[int, str, str]]) -> str:
    """One hidden ``<section>`` per (run index, file name, markdown) for the script to place."""
    parts = []
    for run, name, text in notes:
        parts.append(
            f'<section class="md-note" data-run="{run}" data-name="{html.escape(name)}" hidden>'
            f"<h4>{html.escape(name)}</h4>{render_markdown(text)}</section>"
        )
    return "\n".join(parts)


def render_page(payload: dict[str, Any], title: str, notes: str = "") -> str:
    """The whole page: template with CSS, script, data and rendered notes filled in."""
    values = {
        "TITLE": html.escape(title),
        "CSS": asset("view.css"),
        "JS": ("\n".join(asset(name) for name in SCRIPTS) + "\nstart();\n").replace("</", "<\\/"),
        "DATA": embed_json(payload),
        "NOTES": notes,
        "CSP": CSP_MARK,  # filled last: the policy hashes the finished scripts
    }
    return with_policy(_PLACEHOLDER.sub(lambda m: values[m.group(1)], asset("page.html")))
