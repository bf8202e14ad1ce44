"""The email page when accounts have several addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above
1), and the page of an added address's link.

``/accounts/email/`` lists the account's addresses (primary, confirmed or waiting for their
link), adds one (the current password confirms it, as an email change's does), and, per
address, sends its link again, makes it primary or removes it. The whole page asks for the
reauthentication the email change page asks for. Each action calls one flow
(:mod:`accounts.internal.flows.email_addresses`, which the API calls too) and shows its
errors on the address concerned. With one address per account the page is the email change
page, as before (:func:`email_page`).
"""

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from . import addresses, ratelimit, verification
from .adapter import get_adapter
from .address_forms import PRIMARY, REMOVE, RESEND, AddEmailForm, EmailAddressActionForm
from .app_settings import app_settings
from .email_views import LinkView
from .internal.flows import email_addresses, email_verification
from .internal.flows.email_verification import KeyOutcome
from .mfa.flows.reauthentication import ReauthenticationRequiredMixin
from .ratelimit import RateLimitMixin
from .views import EmailChangeView, StoreFormView, UserFormMixin


@method_decorator(sensitive_post_parameters("password"), name="dispatch")
class EmailAddressesView(ReauthenticationRequiredMixin, RateLimitMixin, UserFormMixin, StoreFormView):
    """The account's addresses: add one (POST ``email``, ``password``), or act on one (POST
    ``email`` and ``action``: ``resend``, ``primary`` or ``remove``)."""

    template_name = "accounts/email_addresses.html"

    def get_form_class(self) -> type[forms.BaseForm]:
        return AddEmailForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        account = self.request.user.account
        listed = email_addresses.list_addresses(account=account)
        return super().get_context_data(
            addresses=listed,
            room=len(listed) < app_settings.MAX_EMAIL_ADDRESSES,
            actions={"resend": RESEND, "primary": PRIMARY, "remove": REMOVE},
            **kwargs,
        )

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "action" in request.POST:
            return self.act(request)
        return super().post(request, *args, **kwargs)

    def apply(self, form: AddEmailForm) -> HttpResponse:
        try:
            adding = email_addresses.add_address(
                self.request, account=form.user.account, email=form.cleaned_data["email"]
            )
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if not adding.done:
            for field, errors in adding.errors.items():
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
            return self.form_invalid(form)
        adapter = get_adapter(self.request)
        if adding.mail == verification.SENT and email_verification.by_code():
            return redirect("accounts:email_change_code")
        if adding.mail in (verification.SENT, email_addresses.RESENT):
            adapter.add_success_message(self.request, "email_added", email=adding.email)
        elif adding.mail == verification.TOO_SOON:
            messages.warning(self.request, adapter.success_messages["verification_too_soon"])
        else:
            messages.warning(self.request, adapter.success_messages["email_add_failed"] % {"email": adding.email})
        return redirect("accounts:email_change")

    def act(self, request: HttpRequest) -> HttpResponse:
        """Send an address's link again, make it primary or remove it."""
        action = EmailAddressActionForm(request.POST)
        if not action.is_valid():
            return self.render_to_response(self.get_context_data(action_errors={"": action.errors}), status=400)
        account = request.user.account
        email, chosen = action.cleaned_data["email"], action.cleaned_data["action"]
        adapter = get_adapter(request)
        try:
            if chosen == RESEND:
                outcome = email_addresses.resend_link(request, account=account, email=email)
            elif chosen == PRIMARY:
                outcome = email_addresses.make_primary(request, account=account, email=email)
            else:
                outcome = email_addresses.remove_address(request, account=account, email=email)
        except ratelimit.RateLimited as error:
            errors = {email: [str(message) for message in error.validation_error().messages]}
            return self.render_to_response(self.get_context_data(action_errors=errors), status=429)
        if not outcome.done:
            errors = {email: [message for each in outcome.errors.values() for error in each for message in error]}
            return self.render_to_response(self.get_context_data(action_errors=errors))
        if chosen == RESEND:
            # An added address's code is typed on the code page (the primary's proof is its link).
            if outcome.mail == verification.SENT and email_verification.by_code() and outcome.email != account.email:
                return redirect("accounts:email_change_code")
            if outcome.mail == verification.ALREADY_VERIFIED:
                adapter.add_success_message(request, "already_verified", email=outcome.email)
            else:
                adapter.add_verification_message(request, outcome.mail, outcome.email)
        else:
            adapter.add_success_message(request, "email_primary" if chosen == PRIMARY else "email_removed", email=email)
        return redirect("accounts:email_change")


_several = EmailAddressesView.as_view()
_one = EmailChangeView.as_view()


def email_page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
    """``/accounts/email/``: the addresses page when accounts may have several, else the
    email change page (``ACCOUNTS_MAX_EMAIL_ADDRESSES``, read on each request)."""
    return (_several if addresses.enabled() else _one)(request, *args, **kwargs)


class AddressVerifyView(LinkView):
    """The link mailed to an added address: ``/accounts/email/verify/<token>/``. GET shows
    the address and a button; POST confirms it (its lock is taken then)."""

    template_name = "accounts/email_address_verify.html"
    success = {verification.VERIFIED, verification.ALREADY_VERIFIED}

    def read(self, token: str) -> tuple[str, Any] | None:
        return email_addresses.read_key(key=token)

    def apply(self, request: HttpRequest, token: str) -> KeyOutcome:
        return email_addresses.verify_address(request, key=token)
