"""The whole test suite in pytest processes side by side (what ``make test`` runs).

The process and browser tests (markers ``processes`` / ``browser``) spend most of their
time waiting on simulated clocks in real stacks; the rest are quick and CPU-bound. Two
slots run at once: the first runs the stack tests, the second the quick tests and then
the stack tests of ``LATE`` (in-process browser tests and a few short stacks), so both
slots end at about the same time (docs/performance.md has the figures).
Each pytest gets its own test database (``DIEGO_TEST_SHARD``), its own bundled Redis and
its own ports, so none can see another.

A long stack (a full ``make run`` under test) never runs beside another long one: two on
a two-core machine slow each other's clocks past their tests' patience. The ``LATE``
files run beside the tail of the first slot, which is such a stack: they are chosen to be
short or in-process.

    python tools/test_suite.py [pytest arguments...]

With file or directory arguments the split is off: the quick and stack tests among them
run in two halves as before. Exit status: 0 when every part passes (a part that selects
no test counts as passed as long as another ran some), else the first non-zero status.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACKS = "browser or processes"
NO_TESTS = 5


# Stack tests run in the second slot after the quick tests (see the module docstring),
# chosen so that both slots take about as long (docs/performance.md).
LATE = (
    "tests/browser/test_auctions.py",
    "tests/browser/test_compare.py",
    "tests/browser/test_foundation_upload.py",
    "tests/browser/test_keyboard_and_layout.py",
    "tests/browser/test_live_burst.py",
    "tests/browser/test_live_grid.py",
    "tests/browser/test_live_presenter.py",
    "tests/browser/test_plans_browser.py",
    "tests/browser/test_present_everywhere.py",
    "tests/browser/test_report_file.py",
    "tests/browser/test_signin_browser.py",
    "tests/otto/test_otto_browser.py",
    "tests/processes/test_callbacks_dead_receiver.py",
    "tests/processes/test_supervise_restarts.py",
)


def _has_paths(argv: list[str]) -> bool:
    """Whether the arguments name files or directories (then the split is off)."""
    return any(not a.startswith("-") and (ROOT / a.split("::")[0]).exists() for a in argv)


def main(argv: list[str]) -> int:
    started = time.monotonic()
    base = [sys.executable, "-m", "pytest", *argv]
    split = not _has_paths(argv)
    late = [p for p in LATE if (ROOT / p).exists()] if split else []
    quick_log = tempfile.NamedTemporaryFile(prefix="dw-quick-", suffix=".log", delete=False)
    second = "quick tests, then the late stack tests" if late else "quick tests"
    print(f"== {second} running beside the stack tests; output follows theirs", flush=True)
    statuses: dict[str, int] = {}

    def run_second() -> None:
        statuses["quick"] = subprocess.call(
            [*base, "-m", f"not ({STACKS})", "-p", "no:cacheprovider"], cwd=ROOT,
            env={**os.environ, "DIEGO_TEST_SHARD": "quick"}, stdout=quick_log, stderr=subprocess.STDOUT)
        if late:
            quick_log.write(f"\n== late stack tests ({len(late)} files)\n".encode())
            quick_log.flush()
            statuses["late stacks"] = subprocess.call(
                [*base, "-m", STACKS, "-p", "no:cacheprovider", *late], cwd=ROOT,
                env={**os.environ, "DIEGO_TEST_SHARD": "late"}, stdout=quick_log, stderr=subprocess.STDOUT)

    second_slot = threading.Thread(target=run_second, name="second-slot")
    second_slot.start()
    print(f"== stack tests ({STACKS})", flush=True)
    ignore = [f"--ignore={p}" for p in late]
    try:
        statuses["stacks"] = subprocess.call([*base, "-m", STACKS, *ignore], cwd=ROOT,
                                             env={**os.environ, "DIEGO_TEST_SHARD": "stacks"})
        second_slot.join()
    except KeyboardInterrupt:
        raise
    print(f"\n== {second}", flush=True)
    quick_log.close()
    sys.stdout.write(Path(quick_log.name).read_text(errors="replace"))
    os.unlink(quick_log.name)
    ran = [s for s in statuses.values() if s != NO_TESTS]
    status = NO_TESTS if not ran else next((s for s in ran if s != 0), 0)
    parts = ", ".join(f"{name}: exit {code}" for name, code in statuses.items())
    print(f"\n== all parts done in {time.monotonic() - started:.0f} s ({parts})", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
