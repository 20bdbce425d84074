"""The whole test suite in two pytest processes side by side (what ``make test`` runs).

The process and browser tests (markers ``processes`` / ``browser``) spend most of their
time waiting on simulated clocks in real stacks; the rest are quick and CPU-bound. Run
one after the other they took ~7 minutes; side by side, about as long as the stack
half alone. Each half gets its own test database (``DIEGO_TEST_SHARD``), its own bundled
Redis and its own ports, so neither can see the other.

Stacks never run two at a time: two on a two-core machine slow each other's clocks past
their tests' patience. (pytest-xdist's ``loadgroup`` would express this, but it does not
group under pytest 9.)

    python tools/test_suite.py [pytest arguments...]

Exit status: 0 when both halves pass (a half that selects no test counts as passed as
long as the other ran some), else the first non-zero status.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACKS = "browser or processes"
NO_TESTS = 5


def main(argv: list[str]) -> int:
    started = time.monotonic()
    quick_log = tempfile.NamedTemporaryFile(prefix="dw-quick-", suffix=".log", delete=False)
    base = [sys.executable, "-m", "pytest", *argv]
    quick = subprocess.Popen(
        [*base, "-m", f"not ({STACKS})", "-p", "no:cacheprovider"], cwd=ROOT,
        env={**os.environ, "DIEGO_TEST_SHARD": "quick"}, stdout=quick_log, stderr=subprocess.STDOUT)
    print(f"== quick tests (not {STACKS}) running beside the stack tests; output follows theirs", flush=True)
    print(f"== stack tests ({STACKS})", flush=True)
    try:
        stacks = subprocess.call([*base, "-m", STACKS], cwd=ROOT,
                                 env={**os.environ, "DIEGO_TEST_SHARD": "stacks"})
        quick_status = quick.wait()
    except KeyboardInterrupt:
        quick.terminate()
        quick.wait(30)
        raise
    print(f"\n== quick tests (not {STACKS})", flush=True)
    quick_log.close()
    sys.stdout.write(Path(quick_log.name).read_text(errors="replace"))
    os.unlink(quick_log.name)
    statuses = [stacks, quick_status]
    ran = [s for s in statuses if s != NO_TESTS]
    status = NO_TESTS if not ran else next((s for s in ran if s != 0), 0)
    print(f"\n== both halves done in {time.monotonic() - started:.0f} s "
          f"(stack tests: exit {stacks}, quick tests: exit {quick_status})", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
