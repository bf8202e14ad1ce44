"""OpenID Connect identities through the engine: the identity's lock, the account that holds
it, linking, unlinking and signing up with one. Every write goes through :mod:`accounts.store`
and :mod:`accounts.transactions`; every read is consistent, and the lock alone says whose an
identity is (never an address, never a GSI).
"""

from django.contrib.auth.hashers import make_password

from .. import dynamo, lookups, store, timeline, transactions
from ..app_settings import app_settings
from ..exceptions import UniqueViolation
from ..tables import (
    MAX_PASSKEYS,
    get_account_model,
    identity_element,
    is_gone,
    raw_text,
    sign_in_methods_held,
)
from ..uniqueness import LOCK_SORT_KEY, split_components
from .oidc import VerifiedIdentity
from .tables import UsedIdToken

FIELD = "oidc_identities"


class TooManyIdentities(Exception):
    """The account holds as many passkeys and identities as it may."""


class IdentityTaken(Exception):
    """Another account holds this identity's lock: it is that account's, whatever its address."""


def identity_lock_key(issuer: str, subject: str) -> str:
    """The lock key of an identity: ``UNIQ#OIDC#<issuer>#<subject>``."""
    return store.constraint_for(FIELD).key_for(identity_element(issuer, subject))


def identity_lock_raw_key(issuer: str, subject: str) -> dict:
    """The raw key of an identity's lock item (for reading it along with the session)."""
    return dynamo.key(identity_lock_key(issuer, subject), LOCK_SORT_KEY)


def identity_owner(issuer: str, subject: str, read_along: dict | None = None) -> str | None:
    """The PK the identity's lock names, or ``None``: from ``read_along`` (items read with
    the session, ``{(PK, SK): raw}``) when it holds the lock's read, else one consistent GetItem."""
    key = identity_lock_key(issuer, subject)
    if read_along is None:
        return lookups.lock_owner(get_account_model(), key)
    lock = read_along.get((key, LOCK_SORT_KEY))
    return raw_text(lock.get("owner")) if lock is not None and not is_gone(lock) else None


def id_token_spend(identity: VerifiedIdentity) -> transactions.Spend:
    """The single-use write of the ID token ``identity`` was verified from (see
    :func:`accounts.transactions.id_token_spend`): the guarded Put of its record, which
    expires the clock-skew margin after the last second the token is accepted. TTL may
    delete it then, by DynamoDB's clock, while a server whose clock is behind by up to
    ``ACCOUNTS_CLOCK_SKEW_MARGIN`` still accepts the token (protocol/identities.pml, T1)."""
    expires = identity.accepted_until + int(app_settings.CLOCK_SKEW_MARGIN.total_seconds())
    return transactions.id_token_spend(UsedIdToken.build(identity.token_digest, expires))


def spend(*spends: transactions.Spend) -> None:
    """Send single-use writes alone (one transaction); raises
    :class:`~accounts.exceptions.StaleItem` when one was spent already."""
    transactions.run_once(transactions.plan_spend(spends))


def identities_of(account) -> list[tuple[str, str]]:
    """The ``(issuer, subject)`` pairs ``account`` holds, sorted."""
    return sorted(tuple(split_components(element)) for element in (account.oidc_identities or ()))


def holds(account, issuer: str, subject: str) -> bool:
    return identity_element(issuer, subject) in (account.oidc_identities or ())


def link(account, issuer: str, subject: str, *, origin: timeline.Origin = timeline.NO_ORIGIN):
    """Link the identity to ``account``: ONE transaction adds it to the account (as read) and
    Puts its lock ``[attribute_not_exists(PK) OR expires < :now - margin]``.

    Raises :class:`IdentityTaken` when another account holds it (the lock refused it, by
    position), :class:`TooManyIdentities`, :class:`~accounts.exceptions.StaleItem` when the
    account changed since it was read. ``origin``: where its security event comes from
    (:func:`accounts.store.update_account`)."""
    if holds(account, issuer, subject):
        return account
    if sign_in_methods_held(account) >= MAX_PASSKEYS:
        raise TooManyIdentities(f"An account holds at most {MAX_PASSKEYS} passkeys and identities.")
    held = set(account.oidc_identities or ())
    try:
        return store.update_account(account, origin=origin, **{FIELD: held | {identity_element(issuer, subject)}})
    except UniqueViolation as error:
        if FIELD in error.fields:
            raise IdentityTaken(identity_lock_key(issuer, subject)) from error
        raise


def unlink(account, issuer: str, subject: str, *, origin: timeline.Origin = timeline.NO_ORIGIN):
    """Unlink the identity: ONE transaction takes it out of the account (as read) and
    releases its lock ``[owner = me OR attribute_not_exists(PK)]``. ``origin``: as :func:`link`."""
    held = set(account.oidc_identities or ()) - {identity_element(issuer, subject)}
    return store.update_account(account, origin=origin, **{FIELD: held or None})


def has_password(account) -> bool:
    """Whether the account can log in with a password (one made at sign-up or since)."""
    return bool(account.password) and not account.password.startswith("!")


def ways_in(account) -> int:
    """How many ways in ``account`` has: its password, each passkey, each identity."""
    return int(has_password(account)) + sign_in_methods_held(account)


def signup(
    *, email: str, username: str, issuer: str, subject: str, email_verified: bool | None, token: str | None = None
):
    """Create an account holding the identity, in ONE transaction with its locks (the
    identity's among them) and an unusable password (it signs in with the provider; it may
    set a password by resetting it). ``email_verified=True`` only when the provider said so
    for this very address; ``None`` follows the site's verification setting, as any sign-up.
    Returns ``(account, created)``; raises what :func:`accounts.store.signup` raises."""
    return store.signup(
        email,
        username,
        make_password(None),
        token=token,
        email_verified=email_verified,
        **{FIELD: {identity_element(issuer, subject)}},
    )
