"""The content security policy of judgekit's pages, in a real headless Chromium (Debian's, via
tests/browser.py): a review page and the report page fetch nothing from the network (an image
written in the guidelines Markdown is never requested from the server that hosts it) and run no
script but their own (an inline event handler put into the page is refused)."""

from __future__ import annotations

import base64
import hashlib
import http.server
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from browser import chrome
from review_runs import judgekit, localise_run

from judgekit.view.page import content_security_policy

pytestmark = pytest.mark.timeout(180)


class Counting(http.server.ThreadingHTTPServer):
    """A real HTTP server on 127.0.0.1 that counts every request it gets (and answers 404)."""

    def __init__(self) -> None:
        self.paths: Counter[str] = Counter()
        counter = self.paths

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                counter[self.path] += 1
                self.send_error(404)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory):
    """A review page whose guidelines show an image from a live server, and the run's report."""
    tmp = tmp_path_factory.mktemp("policy")
    server = Counting()
    guidelines = tmp / "guidelines.md"
    guidelines.write_text(
        "# Guidelines\n\nCompare the versions.\n\n"
        f"![the team's logo]({server.url}/logo.png)\n\n"
        f'<img src="{server.url}/raw.png" onerror="window.__md=1">\n',  # raw HTML: shown as text
        encoding="utf-8",
    )
    run = localise_run(tmp)
    review = tmp / "campaign" / "erin.html"
    judgekit("review", "make", str(run), "--task", "postedit", "--rater", "erin",
             "-o", str(review), "--guidelines", str(guidelines))  # fmt: skip
    report = tmp / "report.html"
    judgekit("view", str(run), "-o", str(report))
    yield {"server": server, "review": review, "report": report}
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    with chrome() as driver:
        yield driver


def wait(check, timeout: float = 15.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the page")


def open_loaded(driver, page: Path, ready: str) -> None:
    """Open ``page`` and wait until it has loaded (images fetched or refused) and its own
    script has drawn ``ready`` (an element id), which it can only do if the policy lets it."""
    driver.get(page.as_uri())
    wait(lambda: driver.execute_script("return document.readyState") == "complete")
    wait(lambda: driver.find_element("id", ready).text.strip())


INJECT = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(
    [e.violatedDirective, e.blockedURI]));
const img = document.createElement('img');
img.setAttribute('onerror', 'window.__handler = 1');  // an inline handler, as an XSS would add
img.addEventListener('error', () => { window.__failed = 1; });  // a listener: no inline code
img.src = 'data:,';  // not an image: its error event fires
document.body.appendChild(img);
"""


def refused_inline_handler(driver) -> list[list[str]]:
    """Put an element with an inline ``onerror`` into the open page; once its error event has
    fired, return the policy violations seen (the handler must not have run)."""
    driver.execute_script(INJECT)
    wait(lambda: driver.execute_script("return window.__failed === 1"))
    assert driver.execute_script("return window.__handler === undefined")  # refused
    return driver.execute_script("return window.__violations")


def test_a_review_page_fetches_no_image_of_its_guidelines_and_runs_no_inline_handler(
    pages, browser
) -> None:
    html = pages["review"].read_text(encoding="utf-8")
    assert f'<img src="{pages["server"].url}/logo.png"' in html  # the Markdown image is there
    open_loaded(browser, pages["review"], "card")
    assert sum(pages["server"].paths.values()) == 0, pages["server"].paths  # never fetched
    assert browser.execute_script("return window.__md === undefined")
    violations = refused_inline_handler(browser)
    assert any(d.startswith("script-src") for d, _ in violations), violations


def test_the_report_page_runs_no_inline_handler(pages, browser) -> None:
    open_loaded(browser, pages["report"], "tab-summary")
    violations = refused_inline_handler(browser)
    assert any(d.startswith("script-src") for d, _ in violations), violations
    assert sum(pages["server"].paths.values()) == 0


def test_the_policy_allows_the_pages_own_scripts_only_by_their_hashes() -> None:
    own = "\nJK.start();\n"
    page = (
        '<head><meta http-equiv="Content-Security-Policy" content="{{CSP}}"></head><body>'
        '<script type="application/json" id="d">{"a": 1}</script>'
        f"<script>{own}</script><script>one();\r\ntwo();</script></body>"
    )
    digests = [
        base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        for text in (own, "one();\ntwo();")  # the browser reads a CR LF as LF
    ]
    assert content_security_policy(page) == (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digests[0]}' 'sha256-{digests[1]}'; base-uri 'none'; "
        "form-action 'none'"
    )
    assert "script-src 'none';" in content_security_policy("<p>no script</p>")
