"""The Celery app: beat drives the simulated clock (and, later, convergence)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "diego_web.settings")

app = Celery("diego_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

