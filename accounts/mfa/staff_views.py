"""Staff and second factors: the account page lists an account's authenticators (never
their secrets), and staff may remove one, after a confirmation; the removal is logged as
the staff action it is, and the account's address is told."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from ..exceptions import Busy, StaleItem
from ..staff import records
from ..staff.views import AccountView
from . import store
from .flows import authenticators

TOTP, PASSKEY = "totp", "passkey"


class AuthenticatorRemoveView(AccountView):
    """Confirm (GET), then remove (POST) an account's authenticator app or one passkey."""

    template_name = "accounts/mfa/staff_authenticator_remove.html"
    confirms_a_change = True

    def get_passkey(self, account):
        for passkey in store.passkeys_of(account):
            if passkey.credential_id == self.kwargs.get("credential_id"):
                return passkey
        raise Http404("No such passkey.")

    def target(self, account):
        """``(passkey or None, what it is, in words)``; 404 when the account has no such authenticator."""
        if self.kwargs["kind"] == TOTP:
            if not account.totp_secret:
                raise Http404("No authenticator app.")
            return None, _("the authenticator app")
        passkey = self.get_passkey(account)
        return passkey, _("the passkey “%(name)s”") % {"name": passkey.name}

    def get(self, request, account_id, **kwargs):
        account = self.get_account()
        _passkey, what = self.target(account)
        return render(request, self.template_name, {"account": account, "what": what})

    def post(self, request, account_id, **kwargs):
        account = self.get_account()
        passkey, what = self.target(account)
        try:
            if passkey is None:
                authenticators.deactivate_totp(request, account, by_staff=True)
            else:
                authenticators.remove_passkey(request, account, passkey, by_staff=True)
        except store.LastWayIn:
            message = _(
                "Not removed: %(what)s is the only way into the account of %(username)s, which has no "
                "password; they must set a password first."
            )
            messages.error(request, message % {"what": what, "username": account.display_name})
            return redirect(self.detail_url(account))
        except (Busy, StaleItem):
            messages.error(request, _("The account changed or the site was busy; nothing was saved. Try again."))
            return redirect(self.detail_url(account))
        records.record(request, account, "authenticator_removed", f"removed {what}")
        removed = {"what": what, "username": account.display_name}
        messages.success(request, _("Removed %(what)s of %(username)s.") % removed)
        return redirect(self.detail_url(account))
