"""Signing in with OpenID Connect providers, each identity a lock of its own.

Laid out as :mod:`accounts.mfa`: :mod:`.oidc` (the protocol, through Authlib), :mod:`.store`
(the identity's lock and the account holding it, through the engine), :mod:`.flows` (what
each step does: plain typed functions an HTML or an API view calls), :mod:`.notices` (the
mails), and the web: :mod:`.forms`, :mod:`.views` and :mod:`.urls` (included by
:mod:`accounts.urls` under ``providers/``, namespace ``accounts:providers``).
"""
