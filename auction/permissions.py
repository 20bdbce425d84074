"""Who is an operator: the one rule every write path asks.

An operator is an active, signed-in user with the ``auction.control`` permission
(codename ``control``, "Can steer the cluster"). Nothing else makes one: being staff
does not (staff may use the admin, which has its own per-model permissions), and
superusers qualify only because Django gives them every permission.

The dashboard's controls, the side panel's cell actions, the JSON API's writes, the
presenter's override and ``manage.py api_token`` all call :func:`is_operator`.
Migration 0009 granted the permission to the staff users that existed then; a staff
user created later is an operator only once an admin grants it (Admin → Users →
user permissions → "auction | API token | Can steer the cluster").
"""

from __future__ import annotations

from typing import Any

CONTROL_CODENAME = "control"
CONTROL_PERMISSION = f"auction.{CONTROL_CODENAME}"


def is_operator(user: Any) -> bool:
    """True when ``user`` may change the cluster (the ``auction.control`` permission)."""
    return bool(user is not None and user.is_authenticated and user.is_active
                and user.has_perm(CONTROL_PERMISSION))
