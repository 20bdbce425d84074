"""Take the README's screenshots of the main views from a real `make run` stack.

    .venv/bin/python tools/readme_screenshots.py      # writes docs/screenshots/*.png

Starts the whole app (bootstrap, daphne, Celery worker and beat, bundled Redis) in a
temporary directory, loads a scenario, lets the simulation run, then opens each view
in Debian's chromium. A view that does not answer 200 is reported and skipped.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

from playwright.sync_api import sync_playwright  # noqa: E402
from stack import ADMIN_PASSWORD, LiveStack  # noqa: E402

from tests.support.browser import launch  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
VIEWS = [
    ("grid", "grid/"),
    ("lrps", "lrps/"),
    ("auctions", "auctions/"),
    ("auction-replay", "auctions/{auction}/?step=3"),
    ("compare", "compare/?strategies=diego,dea,objective,random"),
    ("events", "events/"),
]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    stack = LiveStack("shots")
    try:
        stack.start()
        stack.manage("load_scenario", "seed-example")
        stack.cli("clock", "--speed", "4")
        time.sleep(8)
        with urllib.request.urlopen(f"{stack.url}api/v1/metrics", timeout=10) as response:
            json.load(response)
        auction = stack.status()["auction_runs"][0]["id"] if stack.status().get("auction_runs") else 1
        with sync_playwright() as pw:
            browser = launch(pw)
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.goto(f"{stack.url}admin/login/")
            page.fill("#id_username", "admin")
            page.fill("#id_password", ADMIN_PASSWORD)
            page.click("input[type=submit]")
            for name, path in VIEWS:
                url = stack.url + path.format(auction=auction)
                answer = page.goto(url)
                if answer is None or answer.status != 200:
                    print(f"skipped {name}: {url} answered {answer.status if answer else 'nothing'}")
                    continue
                page.wait_for_timeout(1500)
                page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
                print(f"wrote {OUT / f'{name}.png'}")
            # The Otto board needs Otto work: the otto-market scenario (otto.md 9).
            stack.manage("load_scenario", "otto-market")
            stack.cli("clock", "--speed", "1")
            page.goto(stack.url + "otto/")
            page.wait_for_timeout(15000)  # the first windows close before the fleet joins
            page.screenshot(path=str(OUT / "otto.png"), full_page=False)
            print(f"wrote {OUT / 'otto.png'}")
            browser.close()
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
