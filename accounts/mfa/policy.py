"""``ACCOUNTS_MFA_REQUIRED_FOR_STAFF``: staff pages for staff with a second factor only."""

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.translation import gettext_lazy as _

from ..app_settings import app_settings
from .store import has_second_factor

ENROL_MESSAGE = _("Staff pages need a second factor: set up an authenticator app or a passkey first.")


class SecondFactorRequiredForStaffMixin:
    """With ``ACCOUNTS_MFA_REQUIRED_FOR_STAFF``, a staff member without an authenticator app
    or a passkey is sent to set one up before any staff page."""

    def dispatch(self, request, *args, **kwargs):
        user = request.user
        staff = app_settings.MFA_REQUIRED_FOR_STAFF and user.is_authenticated and user.is_staff
        if staff and not has_second_factor(user.account):
            messages.warning(request, ENROL_MESSAGE)
            return redirect("accounts:mfa:totp")
        return super().dispatch(request, *args, **kwargs)
