"""Sign-in and sign-out for the dashboard (dashboard.md AD6, AD7): Django's auth views.

Any active user may sign in; what they may do once signed in is
``auction.permissions.is_operator`` (the ``auction.control`` permission), not staff.
The admin's own login uses the same throttled form.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest

from auction.selectors.clock import clock_view
from auction.services.signin import signin_failed, signin_held, signin_succeeded


def _trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest | None) -> str:
    """The address the sign-in throttle counts (dashboard.md AD7).

    The connection's own address, unless it is a trusted proxy (``DIEGO_TRUSTED_PROXIES``):
    then X-Forwarded-For is read from the right, past the trusted proxies, to the first
    address no trusted proxy vouches for. A header from anyone else is ignored: any
    client can write one, and a throttle counted per header value is no throttle."""
    if request is None:
        return ""
    address = str(request.META.get("REMOTE_ADDR", ""))
    if not _trusted(address):
        return address
    hops = [hop.strip() for hop in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if not _trusted(hop):
            return hop
        address = hop
    return address


class ThrottledSignIn:
    """AuthenticationForm's clean with the throttle around it (dashboard.md AD7)."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        address = client_address(self.request)
        held = signin_held(username, address)
        if held is not None:
            raise forms.ValidationError(held.message, code="throttled")
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except forms.ValidationError:
            signin_failed(username, address)
            raise
        signin_succeeded(username, address)
        return cleaned


class SignInForm(ThrottledSignIn, AuthenticationForm):
    pass


class AdminSignInForm(ThrottledSignIn, AdminAuthenticationForm):
    pass


class SignInView(auth_views.LoginView):
    template_name = "registration/login.html"
    authentication_form = SignInForm
    redirect_authenticated_user = False

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        # The page keeps the chrome (clock, metrics, feed) live like any other page, but
        # never follows a presenter away while someone types a password.
        return {**super().get_context_data(**kwargs), "page": "login", "live_view": "login",
                "clock": clock_view(), "no_follow": True}


class SignOutView(auth_views.LogoutView):
    next_page = "/"
