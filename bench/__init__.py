"""Benchmarks of the whole app, run from a checkout: ``python -m bench.<name> [args]``.

Outside the app on purpose: nothing in ``auction`` or ``diego_web`` imports this package
(tests/test_lint.py checks it), and it is not installed with them. The pure core keeps its
own benchmarks (``python -m auction.engine.bench``, ``auction.bbs.bench``,
``auction.sim.bench``, ``auction.sim.bench_plans``). Each module's docstring says what it
measures and how to run it; the figures are in docs/performance.md.

Every module here drives Django (models, services, the database), so importing the
package sets Django up first, as ``manage.py`` would.
"""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "diego_web.settings")
django.setup()
