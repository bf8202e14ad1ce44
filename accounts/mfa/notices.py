"""The mails second factors send to the account's address, through
:func:`accounts.verification.send_mail` (the one mail function): an authenticator added or
removed, a recovery code used. Each is a notice: whoever did not do it should act."""

from django.utils.translation import gettext_lazy as _

from ..verification import send_mail

# What each kind of authenticator is called in a notice.
KINDS = {
    "totp": _("an authenticator app"),
    "passkey": _("a passkey"),
    "recovery_codes": _("recovery codes"),
}


def authenticator_added(request, account, kind, name=""):
    """Tell the account's address that an authenticator of ``kind`` (named ``name``) was added."""
    return send_mail(request, "mfa_authenticator_added", account.email, _context(account, kind, name))


def authenticator_removed(request, account, kind, name="", by_staff=False):
    """Tell the account's address that an authenticator was removed (``by_staff``: by staff)."""
    context = {**_context(account, kind, name), "by_staff": by_staff}
    return send_mail(request, "mfa_authenticator_removed", account.email, context)


def recovery_code_used(request, account, left):
    """Tell the account's address that a recovery code was used to log in; ``left`` remain."""
    return send_mail(request, "mfa_recovery_code_used", account.email, {"account": account, "left": left})


def _context(account, kind, name):
    described = KINDS[kind]
    if name:
        described = _("%(authenticator)s “%(name)s”") % {"authenticator": described, "name": name}
    return {"account": account, "authenticator": described}
