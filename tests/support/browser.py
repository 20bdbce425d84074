"""Debian's chromium driven by Playwright (never Playwright's own browser download)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError(
            f"no chromium at {path}: `make test` installs Debian's package (apt-get install chromium)"
        )
    return path


def launch(playwright):  # type: ignore[no-untyped-def]
    return playwright.chromium.launch(
        executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS
    )


def screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
