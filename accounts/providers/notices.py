"""The mails identity providers send to the account's address, through
:func:`accounts.verification.send_mail`: an identity linked or unlinked. Each is a notice:
whoever did not do it should act."""

from ..verification import send_mail


def identity_linked(request, account, provider_name: str) -> str:
    """Tell the account's address that a sign-in with ``provider_name`` was linked to it."""
    return send_mail(request, "provider_linked", account.email, {"account": account, "provider": provider_name})


def identity_unlinked(request, account, provider_name: str) -> str:
    """Tell the account's address that a sign-in with ``provider_name`` was unlinked."""
    return send_mail(request, "provider_unlinked", account.email, {"account": account, "provider": provider_name})
