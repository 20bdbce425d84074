"""Sign-in and sign-out for the dashboard (dashboard.md AD6, AD7): Django's auth views.

Any active user may sign in; what they may do once signed in is
``auction.permissions.is_operator`` (the ``auction.control`` permission), not staff.
The admin's own login uses the same throttled form.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest

from auction.services.signin import signin_failed, signin_succeeded, signin_wait_s


def client_address(request: HttpRequest | None) -> str:
    # daphne runs with --proxy-headers, so REMOTE_ADDR is the client's behind a proxy too.
    return "" if request is None else str(request.META.get("REMOTE_ADDR", ""))


class ThrottledSignIn:
    """AuthenticationForm's clean with the throttle around it (dashboard.md AD7)."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        address = client_address(self.request)
        wait = signin_wait_s(username, address)
        if wait:
            raise forms.ValidationError(
                f"Too many failed sign-ins for this username from your address: try again in {wait} s.",
                code="throttled")
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
        from auction.selectors.clock import clock_view

        # The page keeps the chrome (clock, metrics, feed) live like any other page, but
        # never follows a presenter away while someone types a password.
        return {**super().get_context_data(**kwargs), "page": "login", "live_view": "login",
                "clock": clock_view(), "no_follow": True}


class SignOutView(auth_views.LogoutView):
    next_page = "/"
