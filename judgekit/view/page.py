"""The report page: one HTML file from the package's template, stylesheet and script.

The page works from ``file://`` with no network: the CSS is inline, the script is one classic
(non-module) ``<script>``, figures are ``data:`` URIs and the run data sits in a
``<script type="application/json">`` whose every ``<`` is written ``\\u003c``, so no string of a
model or an input file can close the element. The script inserts every such string with
``textContent``. Markdown written by a run (``validation.md``, ``calibration.md``) is rendered
here with markdown-it-py, raw HTML disabled (it is shown as text), so it is safe to inline.
"""

from __future__ import annotations

import base64
import html
import json
import re
from importlib import resources
from typing import Any

SCRIPTS = ("core.js", "items.js", "context.js", "compare.js", "humans.js")  # one classic script
_PLACEHOLDER = re.compile(r"\{\{([A-Z]+)\}\}")


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
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], asset("page.html"))
