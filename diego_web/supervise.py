"""Run the Procfile's processes under honcho and say when the app answers.

``make run`` ends here. The bundled Redis is started only when REDIS_URL is unset;
Ctrl-C (or SIGTERM) makes honcho stop every process, so nothing is left behind.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import urllib.request
from pathlib import Path

from honcho.environ import parse_procfile
from honcho.manager import Manager
from honcho.printer import Printer

ROOT = Path(__file__).resolve().parent.parent


def wanted_processes(environ: dict[str, str]) -> list[str]:
    # The Otto auctioneer and orchestrators (otto.md 1) run beside the Diego loop, unless
    # DIEGO_OTTO=0 (they run elsewhere, or a test starts them itself, in its own order).
    names = ["redis", "web", "worker", "beat", "otto", "orchestrators"]
    if environ.get("DIEGO_OTTO", "1").lower() in ("0", "false", "no", "off"):
        names = names[:4]
    return names[1:] if environ.get("REDIS_URL") else names


def announce_when_ready(url: str, timeout: float = 120.0) -> None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    took = time.monotonic() - started
                    sys.stdout.write(f"\n>>> diego-web is up at {url} ({took:.1f} s). Ctrl-C stops it.\n\n")
                    sys.stdout.flush()
                    return
        except OSError:
            time.sleep(0.3)
    sys.stdout.write(f"\n>>> diego-web did not answer at {url} within {timeout:.0f} s\n")


def main() -> int:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("HOST", "127.0.0.1")
    env.setdefault("PORT", "8000")
    procfile = parse_procfile((ROOT / "Procfile").read_text())
    manager = Manager(Printer(sys.stdout))
    for name in wanted_processes(env):
        manager.add_process(name, procfile.processes[name], quiet=False, env=env, cwd=str(ROOT))
    url = f"http://{env['HOST']}:{env['PORT']}/"
    threading.Thread(target=announce_when_ready, args=(url,), daemon=True).start()
    manager.loop()
    return manager.returncode or 0


if __name__ == "__main__":
    sys.exit(main())
