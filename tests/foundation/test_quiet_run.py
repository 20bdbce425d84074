"""`make run` is quiet and ends with the URL and the password (dashboard.md S5)."""

from __future__ import annotations

import io
import time
import urllib.request

import pytest
from django.core.management import call_command

from diego_web.supervise import announce_when_ready, noise, quiet_environment


def test_quiet_unless_verbose_and_noise_is_left_out() -> None:
    """dashboard.md S5: daphne without its access log, Celery without banners."""
    env = quiet_environment({})
    assert env["DIEGO_DAPHNE_VERBOSITY"] == "0" and env["DIEGO_CELERY_QUIET"] == "--quiet"
    loud = quiet_environment({"DIEGO_VERBOSE": "1"})
    assert loud["DIEGO_DAPHNE_VERBOSITY"] == "1" and loud["DIEGO_CELERY_QUIET"] == ""
    assert noise("2026-11-25 04:04:27,231 INFO daphne.cli: Starting server at tcp:port=8799\n")
    assert noise("15228:C 25 Nov 2026 04:04:22.713 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")
    assert not noise("15228:M 25 Nov 2026 04:04:22.713 # Error accepting a client connection")
    assert not noise("2026-11-25 04:05:39,580 WARNING auction.services.otto_runtime: lock lost")
    assert not noise("worker exited (SIGKILL), restarted in 1 s")


def test_the_banner_comes_after_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """dashboard.md S5: "is up" and then bootstrap's lines, last."""

    class Answer:
        status = 200

        def __enter__(self) -> Answer:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    asked: list[str] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: asked.append(url) or Answer())
    said: list[str] = []
    announce_when_ready("http://127.0.0.1:8000/", said.append, banner="    open:  http://127.0.0.1:8000/\n")
    assert said[0].startswith("\n>>> diego-web is up at http://127.0.0.1:8000/")
    assert said[-1] == "    open:  http://127.0.0.1:8000/\n\n"
    # The light readiness URL, never a page (a real-size grid took longer than the probe).
    assert asked == ["http://127.0.0.1:8000/healthz/"]


def test_the_banner_is_printed_even_when_the_app_never_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """dashboard.md S5: the password is shown once, so a slow start must not lose it."""
    def refused(url: str, timeout: float) -> None:
        raise OSError("connection refused")

    monkeypatch.setattr(urllib.request, "urlopen", refused)
    monkeypatch.setattr(time, "sleep", lambda s: None)
    said: list[str] = []
    announce_when_ready("http://127.0.0.1:8000/", said.append, timeout=0.05, banner="    password: x\n")
    assert said[0].startswith("\n>>> diego-web did not answer at http://127.0.0.1:8000/")
    assert said[-1] == "    password: x\n\n"


@pytest.mark.django_db
def test_healthz_is_light_and_answers_ok() -> None:
    """dashboard.md S5: one trivial query, plain text."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        answer = Client().get("/healthz/")
    assert answer.status_code == 200 and answer.content == b"ok"
    assert [q["sql"] for q in queries.captured_queries] == ["SELECT 1"]


@pytest.mark.django_db
def test_bootstrap_names_changepassword_and_cli_confirms_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """dashboard.md S5: the lost-password hint; a CLI change says what it did."""
    monkeypatch.setenv("DIEGO_ADMIN_PASSWORD", "")
    out = io.StringIO()
    call_command("bootstrap", "--url", "http://127.0.0.1:8000/", stdout=out)
    text = out.getvalue()
    assert "user admin, password " in text and "python manage.py changepassword admin" in text
    out = io.StringIO()
    call_command("diego", "desire", "web", "--instances", "3", "--memory", "512", stdout=out)
    assert out.getvalue().strip().splitlines() == ["desired web: 3 x 512 MB in domain cf-apps"]
    out = io.StringIO()
    call_command("diego", "domain", "cf-apps", "120", stdout=out)
    assert out.getvalue().strip() == "domain cf-apps fresh for 120 s"


def test_celery_root_warning_left_out_only_when_quiet() -> None:
    """dashboard.md S5: Celery's "superuser privileges" warning is left out of a quiet run
    (its workers accept JSON only) and shown with DIEGO_VERBOSE=1."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    code = ("import warnings, diego_web.celery\n"
            "from celery.exceptions import SecurityWarning\n"
            "warnings.warn(SecurityWarning('running the worker with superuser privileges'))\n")
    env = {k: v for k, v in os.environ.items() if k != "DIEGO_CELERY_QUIET"}

    def stderr(extra: dict[str, str]) -> str:
        return subprocess.run([sys.executable, "-W", "default", "-c", code], env={**env, **extra},
                              capture_output=True, text=True, check=True, timeout=60).stderr

    assert "superuser" not in stderr({"DIEGO_CELERY_QUIET": "--quiet"})
    assert "superuser" in stderr({})
