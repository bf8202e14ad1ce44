"""Second factors and passkeys over the lock engine: an authenticator app (TOTP), recovery
codes, passkeys and security keys (WebAuthn), the second step of a login, and
reauthentication before sensitive changes.

Layout, as django-allauth's ``mfa`` app: :mod:`.tables` (the items), :mod:`.totp`,
:mod:`.recovery_codes` and :mod:`.passkeys` (the factors themselves), :mod:`.store` (their
reads and writes through the engine), :mod:`.flows` (what a page does: one function each),
and the web: :mod:`.forms`, :mod:`.views`, :mod:`.login_views`, :mod:`.staff_views`,
:mod:`.urls`.
"""
