"""``account/email`` when accounts have several addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES``
above 1), as django-allauth answers it with ``ACCOUNT_CHANGE_EMAIL = False``: list, add,
send the proof again, make primary, remove. Each method parses its input, calls one flow of
:mod:`accounts.internal.flows.email_addresses` (the email page calls the same) and renders
its outcome; with one address per account the operation is the email change it was
(:class:`~accounts.headless.account_views.EmailView`).
"""

from __future__ import annotations

from http import HTTPStatus

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from .. import addresses, ratelimit, verification
from ..address_forms import AddEmailForm
from ..internal.flows import email_addresses
from ..models import User
from ..tables import Account
from . import responses
from .account_views import EmailView
from .responses import Answer


class AddressInput(forms.Form):
    """An address of the account, as allauth's ``SelectEmailInput`` reads it."""

    email = forms.EmailField()


class PrimaryInput(AddressInput):
    """allauth's ``MarkAsPrimaryEmailInput``: ``primary`` must be ``true``."""

    primary = forms.BooleanField(required=True)


class EmailAddressesView(EmailView):
    """``account/email`` with several addresses per account (else :class:`EmailView`'s
    answers, read on each request):

    - ``GET``: every address (``email``, ``primary``, ``verified``), the primary first;
    - ``POST`` (``email``): add it (200 with the list, the new one unverified): its link, or
      with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED`` a code to this session, goes to
      it, for ``auth/email/verify``; refused on ``email`` with ``email_taken``,
      ``duplicate_email``, ``max_email_addresses``; an ``Idempotency-Key`` makes a resend safe;
    - ``PUT`` (``email``): mail its proof again (403 when nothing was sent: verified already,
      or the ``resend_verification`` limit);
    - ``PATCH`` (``email``, ``primary: true``): make a verified address primary
      (``unverified_primary_email``);
    - ``DELETE`` (``email``): remove it and free it at once (``cannot_remove_primary_email``).

    An address that is not the account's is ``unknown_email``. Adding, making primary and
    removing ask for a fresh reauthentication (401), as allauth asks with
    ``ACCOUNT_REAUTHENTICATION_REQUIRED`` and the email page always does.
    """

    @property
    def sensitive(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("post", "patch", "delete") if addresses.enabled() else ("post",)

    def get(self, request: HttpRequest) -> Answer:
        if not addresses.enabled():
            return super().get(request)
        return listed(account_of(request))

    def post(self, request: HttpRequest) -> Answer:
        if not addresses.enabled():
            return super().post(request)
        form = AddEmailForm(user_of(request), data={"email": self.text("email") or ""})
        # The API proves the person by a fresh reauthentication, not a password field.
        form.fields.pop("password", None)
        if not form.is_valid():
            return responses.form_errors(form)
        adding = email_addresses.add_address(
            request,
            account=account_of(request),
            email=form.cleaned_data["email"],
            idempotency_key=self.claimed_key(request),
        )
        return refused(adding) or listed(adding.account)

    def put(self, request: HttpRequest) -> Answer:
        if not addresses.enabled():
            return super().put(request)
        form = AddressInput(data=self.input)
        if not form.is_valid():
            return responses.form_errors(form)
        try:
            sent = email_addresses.resend_link(request, account=account_of(request), email=form.cleaned_data["email"])
        except ratelimit.RateLimited:
            # allauth: too many verification mails answer 403 (nothing sent), not 429.
            return Answer(status=HTTPStatus.FORBIDDEN)
        if not sent.done:
            return responses.errors_of(sent.errors)
        return Answer() if sent.mail == verification.SENT else Answer(status=HTTPStatus.FORBIDDEN)

    def patch(self, request: HttpRequest) -> Answer:
        if not addresses.enabled():
            return super().patch(request)
        form = PrimaryInput(data=self.input)
        if not form.is_valid():
            return responses.form_errors(form)
        made = email_addresses.make_primary(request, account=account_of(request), email=form.cleaned_data["email"])
        return refused(made) or listed(made.account)

    def delete(self, request: HttpRequest) -> Answer:
        if not addresses.enabled():
            return super().delete(request)
        form = AddressInput(data=self.input)
        if not form.is_valid():
            return responses.form_errors(form)
        removed = email_addresses.remove_address(request, account=account_of(request), email=form.cleaned_data["email"])
        return refused(removed) or listed(removed.account)


def user_of(request: HttpRequest) -> User:
    """The logged-in user (:class:`EmailView` answers anyone else 401 before a method runs)."""
    if not isinstance(request.user, User):
        raise PermissionDenied
    return request.user


def account_of(request: HttpRequest) -> Account:
    """The logged-in user's account, as read for this request."""
    account = user_of(request).account
    if account is None:
        raise PermissionDenied
    return account


def listed(account: Account | None) -> Answer:
    """200 with allauth's ``EmailAddress`` list of ``account``."""
    found = email_addresses.list_addresses(account=account) if account is not None else []
    data = [{"email": each.email, "primary": each.primary, "verified": each.verified} for each in found]
    return Answer(data=data)


def refused(outcome: email_addresses.AddressOutcome) -> Answer | None:
    """400 with the outcome's errors (``param: email``; none for the whole request's), or
    ``None`` when it was done."""
    return None if outcome.done else responses.errors_of(outcome.errors)
