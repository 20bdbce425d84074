"""The Celery app: beat drives the simulated clock (and, later, convergence)."""

import os
import warnings

from celery import Celery
from celery.exceptions import SecurityWarning

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "diego_web.settings")

app = Celery("diego_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# make run's quiet mode (dashboard.md S5): a laptop or container run as root would print
# Celery's multi-line "superuser privileges" warning after the URL and password. The
# workers accept JSON only (no pickle), which is what makes root dangerous; the README
# says to run as a normal user in production, and DIEGO_VERBOSE=1 shows the warning.
if os.environ.get("DIEGO_CELERY_QUIET"):
    warnings.filterwarnings("ignore", category=SecurityWarning)

