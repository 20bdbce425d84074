"""Secure defaults (dashboard.md AD5): DEBUG off unless asked for, a secret key per
install, no settings in any page, the admin password printed only when generated, and
/static/ still served."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from diego_web.settings import install_secret_key

REPO = Path(__file__).resolve().parents[2]


def _settings_in_a_fresh_process(tmp_path: Path, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DJANGO_SECRET_KEY")}
    clean.update(DIEGO_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="diego_web.settings", **env)
    out = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.DEBUG); "
                               "print(settings.SECRET_KEY)"],
        cwd=REPO, env=clean, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()


def test_debug_is_off_unless_asked_for_and_the_key_is_the_installs(tmp_path: Path) -> None:
    """AD5: `make run` (no DJANGO_DEBUG) runs with DEBUG off; DJANGO_DEBUG=1 turns it on.
    With no DJANGO_SECRET_KEY every process of one install reads the same generated key."""
    debug, key = _settings_in_a_fresh_process(tmp_path)
    assert debug == "False"
    assert key == (tmp_path / "secret_key").read_text().strip() and len(key) >= 50
    assert _settings_in_a_fresh_process(tmp_path, DJANGO_DEBUG="1") == ["True", key]
    assert _settings_in_a_fresh_process(tmp_path, DJANGO_SECRET_KEY="from-env") == ["False", "from-env"]


def test_generated_key_is_private_stable_and_per_install(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = install_secret_key(tmp_path / "a")
    assert install_secret_key(tmp_path / "a") == first
    assert install_secret_key(tmp_path / "b") != first
    assert stat.S_IMODE((tmp_path / "a" / "secret_key").stat().st_mode) == 0o600
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["secret_key"]  # no draft left


def test_no_fallback_key_in_the_repository_and_var_is_ignored() -> None:
    """AD5: the repository holds no key; var/ (where the generated one lives) is gitignored."""
    tracked = subprocess.run(["git", "grep", "-n", "-I", "-e", "local-demo" + "-key", "--", ".",
                              ":(exclude)tests/foundation/test_secure_defaults.py"],
                             cwd=REPO, capture_output=True, text=True)
    assert tracked.stdout == ""
    ignored = subprocess.run(["git", "check-ignore", "var/secret_key"], cwd=REPO,
                             capture_output=True, text=True)
    assert ignored.returncode == 0


@pytest.mark.django_db
def test_an_error_page_shows_no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """AD5: with DEBUG off (the default) a crash is the plain 500 page: no traceback, no
    settings, no key."""
    import auction.views.grid as grid

    def broken(*args: object, **kwargs: object) -> dict:
        raise RuntimeError("boom")

    monkeypatch.setattr(grid, "grid_context", broken)
    response = Client(raise_request_exception=False).get("/grid/")
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong" in body
    for secret in (settings.SECRET_KEY, "SECRET_KEY", "DATABASES", "Traceback", "boom"):
        assert secret not in body


@pytest.mark.django_db
def test_static_files_are_served_with_debug_off(client: Client) -> None:
    """AD5: WhiteNoise serves /static/ from the source directories without collectstatic."""
    assert not settings.DEBUG
    response = client.get("/static/css/app.css")
    assert response.status_code == 200
    assert b"".join(response.streaming_content if response.streaming else [response.content])


@pytest.mark.django_db
def test_bootstrap_prints_the_admin_password_only_when_generated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """AD5: a password the operator chose (DIEGO_ADMIN_PASSWORD) never reaches the log."""
    from auction.management.commands.bootstrap import Command

    monkeypatch.setenv("DIEGO_ADMIN_PASSWORD", "chosen-pw-for-tests")
    line = Command()._ensure_admin()
    assert "chosen-pw-for-tests" not in line and line == "password from DIEGO_ADMIN_PASSWORD"
    assert User.objects.get(username="admin").check_password("chosen-pw-for-tests")
    User.objects.all().delete()
    monkeypatch.delenv("DIEGO_ADMIN_PASSWORD")
    line = Command()._ensure_admin()
    generated = line.removeprefix("password ")
    assert line.startswith("password ") and User.objects.get(username="admin").check_password(generated)
