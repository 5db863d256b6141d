"""One self-contained annotation page per rater: inline CSS, one classic script, items as JSON.

The page opens from ``file://`` with no network: the stylesheet, the script (``static/*.js``) and
the vendored jsdiff (``vendor/diff.min.js``, BSD-3-Clause, ``vendor/LICENSE-jsdiff``) are inlined;
the items go into a ``<script type="application/json">`` block with ``<``, ``>`` and ``&``
written as JSON escapes, so no item text can close the block. The script puts every model or
input string into the page as text (``textContent``), never as HTML. The guidelines are
markdown rendered here with markdown-it-py, raw HTML disabled (it is shown escaped). The page
has the viewer's content security policy (``judgekit.view.page.content_security_policy``): no
network request at all, so an image written in the guidelines (``![](https://...)``) is never
fetched, and no script but the page's own, so no inline event handler runs.

Blind by default: the judge's answers are left out of the page unless ``show_judge`` (then the
answers are pre-filled and the export says ``"show_judge": true``). Gold answers are never in a
page (they stay in ``campaign.json``).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from string import Template
from typing import Any

from judgekit import __version__
from judgekit.review.campaign import Campaign
from judgekit.review.schema import item_part, task_schema
from judgekit.view.page import CSP_MARK, asset, with_policy

CHECK = ["vendor/jsonschema.min.js", "static/check.js", "static/core.js"]
SCRIPTS = {
    "postedit": ["vendor/diff.min.js", *CHECK, "static/postedit.js"],
    "meanings": [*CHECK, "static/labels.js"],
    "csca": [*CHECK, "static/labels.js"],
    "mqm": [*CHECK, "static/mqm.js"],
}
# vendored file -> (its name and version, its licence file); see vendor/README.md
VENDORED = {
    "vendor/diff.min.js": ("jsdiff 8.0.4 (npm diff), vendored unchanged", "vendor/LICENSE-jsdiff"),
    "vendor/jsonschema.min.js": (
        "@cfworker/json-schema 4.1.6 (npm), bundled by esbuild (vendor/README.md)",
        "vendor/LICENSE-cfworker-json-schema",
    ),
}
KEYS = {
    "postedit": "Keys: a accept the LLM version, r revert to the original, e edit, Enter confirm "
    "the final version (or un-confirm), j / k next / previous item.",
    "meanings": "Keys: 1 valid, 2 invalid for the focused meaning, ArrowUp / ArrowDown move the "
    "focus, Enter next item, j / k next / previous item.",
    "csca": "Keys: number keys answer the focused question, ArrowUp / ArrowDown move the focus, "
    "Enter next item, j / k next / previous item.",
    "mqm": "Keys: select a span with the mouse, or w for a word cursor in the translation (Tab: "
    "the source), ArrowLeft / ArrowRight move it, Shift+ArrowLeft / Shift+ArrowRight move its "
    "end, Space marks it; then a number key for the type, m minor, M major, c critical, Enter "
    "add the error; e focus the next marked error, Space edit it, x remove it; 0 no errors; "
    "Enter confirm the segment; Escape drop the span; j / k next / previous item (a span not "
    "added yet asks first: a add it, d discard it, Escape stay).",
}


def _read(name: str) -> str:
    return resources.files("judgekit.review").joinpath(name).read_text(encoding="utf-8")


def _vendored(name: str) -> str:
    """A script file; a vendored one comes after its licence, as a comment (BSD-3-Clause and
    MIT ask for the notice to travel with the code)."""
    text = _read(name)
    if name in VENDORED:
        what, licence = VENDORED[name]
        notice = _read(licence).replace("*/", "* /")
        text = f"/* {what}.\n{notice}*/\n{text}"
    return text


def default_guidelines(task: str) -> str:
    """The built-in guidelines of ``task`` (markdown, ``judgekit/review/guidelines/``)."""
    return _read(f"guidelines/{task}.md")


def render_markdown(text: str) -> str:
    """Markdown to HTML with markdown-it-py (CommonMark, raw HTML disabled: shown as text)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/9 as ``\\u`` escapes, NaN and
    infinities as null (no page is left unreadable by ``JSON.parse``)."""
    from judgekit.data.jsonfile import json_safe  # NaN, which JSON.parse refuses: null

    text = json.dumps(json_safe(value), ensure_ascii=False, separators=(",", ":"))
    for char in ("<", ">", "&", "\u2028", "\u2029"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def page_data(campaign: Campaign, rater: str, show_judge: bool) -> dict[str, Any]:
    """What the page's script reads: the campaign id, task, rater, options, the task's answer
    schema (:func:`judgekit.review.schema.task_schema`) and items (each with ``id``, ``hash``,
    ``data``, ``schema``: the item's part of it; ``judge`` only when ``show_judge``)."""
    items = []
    for item in campaign.items:
        row: dict[str, Any] = {"id": item.id, "hash": item.hash, "data": item.data}
        part = item_part(campaign, item)
        if part:
            row["schema"] = part
        if show_judge and item.judge is not None:
            row["judge"] = item.judge
        items.append(row)
    return {
        "campaign": campaign.id,
        "task": campaign.task,
        "rater": rater,
        "show_judge": show_judge,
        "options": campaign.options,
        "answer_schema": task_schema(campaign),
        "items": items,
    }


def build_page(campaign: Campaign, rater: str, *, show_judge: bool = False) -> str:
    """The HTML text of ``rater``'s page for ``campaign`` (UTF-8, self-contained)."""
    script = "\n".join([asset("bidi.js"), *(_vendored(name) for name in SCRIPTS[campaign.task])])
    script += "\nJK.start();\n"
    script = script.replace("</script", "<\\/script")
    title = f"judgekit review · {campaign.task} · {rater} · campaign {campaign.id}"
    page = Template(_read("static/page.html")).substitute(
        csp=CSP_MARK,  # filled last: the policy hashes the finished script
        version=__version__,
        title=html.escape(title),
        css=_read("static/page.css"),
        guidelines=render_markdown(campaign.guidelines),
        open=" open" if campaign.guidelines else "",
        keys=html.escape(KEYS[campaign.task]),
        data=script_json(page_data(campaign, rater, show_judge)),
        script=script,
    )
    return with_policy(page)
