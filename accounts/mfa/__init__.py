"""Second factors and passkeys over the lock engine: an authenticator app (TOTP), recovery
codes, passkeys and security keys (WebAuthn), the second step of a login, reauthentication
before sensitive changes, signing up with a passkey, and staff's view of them.

Laid out as django-allauth's ``mfa`` app: :mod:`.tables` (the items), :mod:`.totp`,
:mod:`.recovery_codes` and :mod:`.passkeys` (the factors themselves), :mod:`.store` (their
reads and writes through the engine), :mod:`.flows` (what each page does),
:mod:`.notices` (the mails), :mod:`.policy` (staff must have one), :mod:`.checks`, and the
web: :mod:`.forms`, :mod:`.views` (the profile's pages), :mod:`.login_views`,
:mod:`.staff_views` and :mod:`.urls` (included by :mod:`accounts.urls` under ``mfa/``).
"""
