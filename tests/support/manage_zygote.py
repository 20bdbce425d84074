"""``manage.py`` for a test stack without paying Python's and Django's start-up each time.

A stack's tests call ``manage.py`` a hundred times and more (``diego status`` polled
every half second, ``diego desire``, ``clock``...), each a new interpreter that imports
Django and the app again: about a second of CPU per call on the test machines, beside
the stack's own processes on two cores. This process does that start-up once, with the
stack's environment (``LiveStack.manage`` starts it), and then forks one child per
command: the child sets ``sys.argv`` and runs ``execute_from_command_line`` exactly as
``manage.py`` does, with its own stdout and stderr, and exits with the command's status.
The parent never opens a database or Redis connection, so each child starts as a fresh
``manage.py`` would, only without the imports.

Protocol (one JSON object a line): the test writes ``{"argv": [...], "stdout": path,
"stderr": path}`` on stdin; this answers ``{"pid": N}`` once the child runs, then
``{"rc": code}`` (negative: killed by that signal, as ``subprocess`` reports it) on the
file descriptor named by its one argument. EOF on stdin ends it.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import sys
import threading
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def preload() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "diego_web.settings")
    import django

    django.setup()
    from django.core.management import get_commands, load_command_class

    commands = get_commands()
    for name in ("bootstrap", "diego", "api_token", "kiosk_link", "load_scenario", "shell", "migrate"):
        if name in commands:
            load_command_class(commands[name], name)
    from django.db import connections

    # Nothing above queries; should anything have, the children must not share its socket.
    connections.close_all()


def exit_code(exc: SystemExit) -> int:
    """What the interpreter would exit with for this SystemExit."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def child(argv: list[str], stdout: str, stderr: str, replies: int) -> None:
    """Runs in the forked child; never returns."""
    code = 1
    try:
        for fd, (path, flags) in enumerate([(os.devnull, os.O_RDONLY),
                                            (stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                            (stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)]):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        os.close(replies)
        random.seed()  # a fresh interpreter seeds from the OS; a fork copies the parent's state
        sys.argv = ["manage.py", *argv]
        from django.core.management import execute_from_command_line

        try:
            execute_from_command_line(sys.argv)
            code = 0
        except SystemExit as exc:
            code = exit_code(exc)
        except BaseException:  # noqa: BLE001 - what an uncaught exception does to manage.py
            traceback.print_exc()
            code = 1
        # Interpreter shutdown: non-daemon threads are joined, then atexit runs.
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    sys.path[0] = str(ROOT)  # as for ``python manage.py``: the project's folder first
    preload()
    replies_fd = int(sys.argv[1])
    replies = os.fdopen(replies_fd, "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(request["argv"], request["stdout"], request["stderr"], replies_fd)
        replies.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"rc": os.waitstatus_to_exitcode(status)}) + "\n")


if __name__ == "__main__":
    main()
