"""diego-web project package; loads the Celery app so shared_task binds to it."""

from diego_web.celery import app as celery_app

__all__ = ("celery_app",)
