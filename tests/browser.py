"""Headless Chromium for page tests: Debian's ``chromium`` driven by selenium through Debian's
``chromium-driver`` (``/usr/bin/chromedriver``; never a Selenium Manager or browser download).

Pages are opened from ``file://``; :func:`chrome` skips the calling test with a reason where the
browser, its driver or selenium is absent (``.ci/run`` installs all three).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# The flags the machine notes give for a closed network: no background connections, no sync.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-quic", "--no-first-run", "--window-size=1280,900")  # fmt: skip


@contextmanager
def chrome(download_dir: Path | None = None) -> Iterator[object]:
    """A selenium ``webdriver.Chrome`` on headless Debian Chromium with a fresh profile.

    ``download_dir``: where clicked downloads land (no prompt). Skips the test where Chromium,
    chromedriver or selenium is missing.
    """
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("Debian chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="judgekit-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    if download_dir is not None:
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(download_dir),
             "download.prompt_for_download": False},
        )  # fmt: skip
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def not_blank(png: Path) -> bool:
    """True when the PNG screenshot at ``png`` has more than one colour."""
    from matplotlib.image import imread

    pixels = imread(png)
    return bool((pixels != pixels[0, 0]).any())
