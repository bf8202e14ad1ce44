"""An account's several addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1): list, add, send
the link again, verify by the link, make primary, remove. Both front ends call these: the
email page and the API's ``account/email`` parse, ask for reauthentication, call one of
these and render its outcome.

Each returns an :class:`AddressOutcome` whose ``errors`` are per field, as a form shows them
and the API answers them (``{"param": "email", "code": ...}``): what the account as read
refuses (the address is already its own, the limit is reached, the primary cannot be
removed...) and what the transaction's cancellation reasons say (another account holds the
address: the error names it). Each change is one transaction (:mod:`accounts.addresses`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.http import HttpRequest

from ... import (
    address_links,
    addresses,
    email_codes,
    idempotency,
    ratelimit,
    store,
    timeline,
    transactions,
    verification,
)
from ...adapter import get_adapter
from ...app_settings import app_settings
from ...exceptions import Busy, InvalidUniqueValue, LastMember, StaleItem, TokenReused, UniqueViolation
from ...form_errors import INVALID_VALUE_MESSAGES
from ...tables import Account
from .email_verification import NO_CODE, KeyOutcome, use_code

# The field every error of these flows is on: the address asked about (the API's param).
EMAIL = "email"
# The rate limits counted (ACCOUNTS_RATE_LIMITS, per account): adding mails a link to a
# stranger's inbox, as an email change does; sending it again, as a sign-up's resend.
ADD_ACTION = "change_email"
RESEND_ACTION = "resend_verification"
# What a request resent with the idempotency key of one already done answers.
RESENT = "resent"
# The engine's refusals of a set (raised before sending) as the account's: an address held
# twice, more addresses than allowed.
ENGINE_REFUSALS = {"duplicate": addresses.DUPLICATE, "too_many": addresses.TOO_MANY}


@dataclass(frozen=True)
class AddressOutcome:
    """What became of a request about one address.

    ``email``: the address as the account holds it (as given when it holds none);
    ``account``: the account as it is now (as read, when nothing changed); ``mail``: what
    became of the mail of a link (``sent``, ``too_soon``, ``failed``; ``None``: none was
    due, or :data:`RESENT`); ``errors``: ``{field: [ValidationError]}``, the whole request's
    under ``None`` (busy, changed meanwhile), empty when it was done.
    """

    email: str
    account: Account | None = None
    mail: str | None = None
    errors: dict[str | None, list[ValidationError]] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        """Whether the request was carried out."""
        return not self.errors


def list_addresses(*, account: Account) -> list[addresses.Address]:
    """Every address of ``account``, the primary first (:func:`accounts.addresses.addresses_of`)."""
    return addresses.addresses_of(account)


def add_address(
    request: HttpRequest, *, account: Account, email: str, idempotency_key: idempotency.ClientKey | None = None
) -> AddressOutcome:
    """Add ``email`` (already cleaned) to ``account``: it waits for the proof mailed to it
    (its link, or a code to this session with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``:
    :func:`accounts.address_links.send_address_proof`; no lock until it is used), and the
    account's verified addresses are told. Counts
    against ``change_email`` (raises :class:`~accounts.ratelimit.RateLimited` past it)
    only once the account as read allows the address. With ``idempotency_key``, a resend of
    a request already done answers with ``mail`` :data:`RESENT` and does nothing else."""
    change = idempotency.change_for("add_email", account.id, idempotency_key)
    if change is not None and change.recorded_outcome() is not None:
        return AddressOutcome(email, account, mail=RESENT)
    token, also = (None, []) if change is None else (change.token, [change.record_put(email)])
    told = address_links.told_of(account)
    try:
        addresses.check_room(account, email)
        ratelimit.consume(request, ADD_ACTION)
        addresses.add_unverified(account, email, token=token, also=also, origin=timeline.origin_of(request))
    except (StaleItem, TokenReused) as refusal:
        if change is not None and change.recorded_outcome() is not None:
            return AddressOutcome(email, account, mail=RESENT)
        if isinstance(refusal, TokenReused):
            raise
        return _refused(email, account, refusal)
    except (addresses.AddressRefused, UniqueViolation, InvalidUniqueValue, Busy, LastMember) as refusal:
        return _refused(email, account, refusal)
    mail = address_links.send_address_proof(request, account, email)
    address_links.notify_addresses(request, account, told, address_links.ADDED, email)
    return AddressOutcome(email, account, mail=mail)


def resend_link(request: HttpRequest, *, account: Account, email: str) -> AddressOutcome:
    """Mail the proof of ``email``, an address of ``account`` waiting for it, again (its link,
    or a new code to this session), within ``resend_verification`` (per account; raises
    :class:`~accounts.ratelimit.RateLimited` past it). The primary address of an account
    not verified yet gets the sign-up's link."""
    found = addresses.find(account, email)
    if found is None:
        return _refused(email, account, addresses.AddressRefused(addresses.UNKNOWN, email))
    if found.verified:
        return AddressOutcome(found.email, account, mail=verification.ALREADY_VERIFIED)
    if found.primary:
        return AddressOutcome(found.email, account, mail=verification.resend_verification(request, account))
    ratelimit.consume(request, RESEND_ACTION, user=account.id)
    return AddressOutcome(found.email, account, mail=address_links.send_address_proof(request, account, found.email))


def read_key(*, key: str) -> tuple[str, Account | None] | None:
    """What an address's verification ``key`` names, for its page before its button is
    pressed: ``(email, account)``, the account as read now (one GetItem; ``None`` when it is
    gone, no longer waits for that address, or has a new password since); ``None`` for a
    forged or expired key."""
    claim = address_links.read_address_token(key)
    if claim is None:
        return None
    account = store.get_account(claim.account_id)
    if account is None or claim.email not in (account.unverified_emails or ()):
        return claim.email, None
    return claim.email, (account if address_links.stamp_of(account) == claim.password_stamp else None)


def is_address_key(*, key: str) -> bool:
    """Whether ``key`` is an added address's verification key (signed and unexpired); reads
    nothing."""
    return address_links.read_address_token(key) is not None


def verify_address(request: HttpRequest, *, key: str) -> KeyOutcome:
    """Apply an address's verification ``key`` (its mailed link): one GetItem, one
    transaction moving the address to the verified ones and Putting its lock, then a notice
    to the account's other verified addresses.

    Outcomes (:mod:`accounts.verification`'s): ``verified``; ``already_verified``;
    ``taken`` (another account verified the address first); ``password_changed`` (a new
    password since the link was mailed ends it); ``stale`` (the address was removed, or the
    account is gone or changed meanwhile); ``busy``; ``invalid`` (forged or expired)."""
    claim = address_links.read_address_token(key)
    if claim is None:
        return KeyOutcome(verification.INVALID)
    account = store.get_account(claim.account_id)
    if account is None:
        return KeyOutcome(verification.STALE)
    if address_links.stamp_of(account) != claim.password_stamp:
        return KeyOutcome(verification.PASSWORD_CHANGED, account)
    found = addresses.find(account, claim.email)
    if found is not None and found.verified:
        return KeyOutcome(verification.ALREADY_VERIFIED, account)
    if found is None or found.email != claim.email:
        return KeyOutcome(verification.STALE, account)
    return KeyOutcome(_verify(request, account, claim.email), account)


def verify_address_code(request: HttpRequest, *, code: str) -> KeyOutcome:
    """Verify the address this session added with the code mailed to it
    (:func:`accounts.address_links.send_address_proof`).

    A right code verifies in the one transaction a link's does (:func:`verify_address`),
    guarded by the addresses waiting as read (``G_UNVERIFIED_AS_READ``: the address must
    still wait, so a code verifies once; removing it ends the code) with the code's tries
    checked under their limit (``G_LIMIT_UNDER``). Outcomes: those of a link (``verified``,
    ``taken``, ``stale``, ``busy``) and of a typed code (``no_code``, ``wrong_code``,
    ``no_tries_left``: see :func:`~accounts.internal.flows.email_verification.verify_code`)."""
    found = email_codes.pending(request.session, email_codes.ADD_EMAIL)
    if found is None:
        return KeyOutcome(NO_CODE)
    return use_code(
        request, found, code, lambda right: _verify(request, right.account, found.email, right.limit_actions())
    )


def _verify(request: HttpRequest, account: Account, email: str, also: Sequence[transactions.Action] = ()) -> str:
    """Verify ``email``, waiting for its proof in ``account`` (as read), and tell the
    account's other verified addresses: the outcome (``verified``, ``taken``, ``stale``,
    ``busy``)."""
    told = address_links.told_of(account)
    try:
        addresses.verify(account, email, also=also, origin=timeline.origin_of(request))
    except UniqueViolation:
        return verification.TAKEN
    except (StaleItem, addresses.AddressRefused):
        return verification.STALE
    except Busy:
        return verification.BUSY
    address_links.notify_addresses(request, account, told, address_links.VERIFIED, email)
    return verification.VERIFIED


def make_primary(request: HttpRequest, *, account: Account, email: str) -> AddressOutcome:
    """Make ``email``, a verified address of ``account``, its primary address (one
    transaction, no lock moves); every verified address is told. The primary address asked
    again changes nothing and tells nobody."""
    told = address_links.told_of(account)
    already = addresses.find(account, email)
    if already is not None and already.primary and already.verified:
        return AddressOutcome(already.email, account)
    try:
        addresses.make_primary(account, email, origin=timeline.origin_of(request))
    except (addresses.AddressRefused, StaleItem, Busy, UniqueViolation, InvalidUniqueValue) as refusal:
        return _refused(email, account, refusal)
    address_links.notify_addresses(request, account, told, address_links.PRIMARY, account.email)
    return AddressOutcome(account.email, account)


def remove_address(
    request: HttpRequest, *, account: Account, email: str, origin: timeline.Origin | None = None
) -> AddressOutcome:
    """Remove ``email`` from ``account`` and free it at once (its lock deleted in the same
    transaction); never the primary, nor the only verified address while the account has
    no other way in. Every verified address as read is told, the removed one too.
    ``origin``: the event's (default: the request's own; staff pass theirs, naming the
    actor)."""
    told = address_links.told_of(account)
    origin = origin if origin is not None else timeline.origin_of(request)
    try:
        removed = addresses.remove(account, email, origin=origin)
    except (addresses.AddressRefused, StaleItem, Busy, InvalidUniqueValue) as refusal:
        return _refused(email, account, refusal)
    by_staff = origin.actor is not None and origin.actor != account.id
    address_links.notify_addresses(request, account, told, address_links.REMOVED, removed.email, by_staff=by_staff)
    return AddressOutcome(removed.email, account)


def _refused(email: str, account: Account, refusal: Exception) -> AddressOutcome:
    """The outcome of a request refused by ``refusal``, as errors: on the address's field,
    or of the whole request (busy, changed meanwhile)."""
    adapter = get_adapter()
    error: ValidationError
    if isinstance(refusal, addresses.AddressRefused):
        params = {"email": refusal.email or email, "max": _max_addresses()}
        error = ValidationError(adapter.error_messages[refusal.code], code=refusal.code, params=params)
    elif isinstance(refusal, UniqueViolation):
        taken = sorted(str(value) for values in refusal.values.values() for value in values) or [email]
        error = ValidationError(
            adapter.error_messages["email_address_taken"], code="email_taken", params={"email": taken[0]}
        )
    elif isinstance(refusal, InvalidUniqueValue) and refusal.code in ENGINE_REFUSALS:
        return _refused(email, account, addresses.AddressRefused(ENGINE_REFUSALS[refusal.code], email))
    elif isinstance(refusal, InvalidUniqueValue):
        error = ValidationError(
            INVALID_VALUE_MESSAGES.get(refusal.code, INVALID_VALUE_MESSAGES["invalid"]), code=refusal.code
        )
    else:
        code = "busy" if isinstance(refusal, Busy) else "last_staff" if isinstance(refusal, LastMember) else "stale"
        return AddressOutcome(email, account, errors={None: [adapter.validation_error(code)]})
    return AddressOutcome(email, account, errors={EMAIL: [error]})


def _max_addresses() -> int:
    return app_settings.MAX_EMAIL_ADDRESSES
