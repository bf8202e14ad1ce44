"""Staff and an account's other addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1): the
account page lists them beside their locks, and staff may remove one after a confirmation
(never the primary); the removal frees the address at once, is logged as the staff action
it is, recorded in the account's timeline naming the staff member, and told to the
account's verified addresses."""

from collections.abc import Mapping

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from . import addresses
from .internal.flows import email_addresses
from .staff import records
from .staff.views import AccountView
from .tables import Account


class AddressRemoveView(AccountView):
    """Confirm (GET ``?email=``), then remove (POST ``email``) one of an account's addresses."""

    template_name = "accounts/staff/address_remove.html"
    confirms_a_change = True

    def get(self, request: HttpRequest, account_id: str) -> HttpResponse:
        account = self.get_account()
        return render(request, self.template_name, {"account": account, "address": self.address(account, request.GET)})

    def post(self, request: HttpRequest, account_id: str) -> HttpResponse:
        account = self.get_account()
        address = self.address(account, request.POST)
        removing = email_addresses.remove_address(request, account=account, email=address.email, origin=self.origin())
        if removing.done:
            records.record(request, account, "email_removed", f"removed the address {removing.email}")
            messages.success(
                request,
                _("%(email)s is no longer an address of %(username)s.")
                % {"email": removing.email, "username": account.username},
            )
        else:
            for errors in removing.errors.values():
                for error in errors:
                    messages.error(request, " ".join(error))
        return redirect(self.detail_url(account))

    def address(self, account: Account, data: Mapping[str, str]) -> addresses.Address:
        """The address of ``account`` that ``data["email"]`` names; 404 when it has none."""
        found = addresses.find(account, data.get("email", ""))
        if found is None:
            raise Http404("No such address.")
        return found
