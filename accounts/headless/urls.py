"""The API's paths, ``{browser|app}/v1/...`` (include it where the host wants it; the demo
uses ``_allauth/``, django-allauth's own prefix, so allauth's clients work unchanged).

The ``app`` client's views are exempt from CSRF (no cookie is involved: the session token
travels in a header); the ``browser`` client's are protected as any form (``X-CSRFToken``)
and always hand out the CSRF cookie. Every operation of allauth's specification is routed:
the phone operations answer as allauth's do while phone numbers are off on a site without
them (:mod:`.phone_views`); any other path under the API answers a JSON 404, by any method
(:mod:`.unsupported_views`).
"""

from django.urls import URLPattern, include, path, re_path
from django.views.decorators.csrf import csrf_exempt, ensure_csrf_cookie

from . import (
    account_views,
    address_views,
    clients,
    code_views,
    mfa_views,
    openapi,
    phone_views,
    provider_views,
    reauthentication_views,
    token_views,
    unsupported_views,
    webauthn_views,
)

app_name = "headless"

OPERATIONS = [
    ("config", account_views.ConfigView, "config"),
    ("auth/session", account_views.SessionView, "session"),
    ("auth/login", account_views.LoginView, "login"),
    ("auth/signup", account_views.SignupView, "signup"),
    ("auth/email/verify", account_views.VerifyEmailView, "verify_email"),
    ("auth/email/verify/resend", account_views.ResendVerificationView, "resend_verification"),
    ("auth/password/request", account_views.RequestPasswordView, "request_password"),
    ("auth/password/reset", account_views.ResetPasswordView, "reset_password"),
    ("auth/reauthenticate", account_views.ReauthenticateView, "reauthenticate"),
    ("auth/sessions", account_views.SessionsView, "sessions"),
    ("account/email", address_views.EmailAddressesView, "email"),
    ("account/password/change", account_views.ChangePasswordView, "change_password"),
    ("auth/2fa/authenticate", mfa_views.AuthenticateView, "mfa_authenticate"),
    ("auth/2fa/reauthenticate", mfa_views.MFAReauthenticateView, "mfa_reauthenticate"),
    ("auth/webauthn/login", mfa_views.WebAuthnLoginView, "webauthn_login"),
    ("auth/webauthn/authenticate", mfa_views.WebAuthnAuthenticateView, "webauthn_authenticate"),
    ("account/authenticators", mfa_views.AuthenticatorsView, "authenticators"),
    ("account/authenticators/totp", mfa_views.TOTPView, "totp"),
    ("account/authenticators/recovery-codes", mfa_views.RecoveryCodesView, "recovery_codes"),
    ("auth/webauthn/signup", webauthn_views.WebAuthnSignupView, "webauthn_signup"),
    ("auth/webauthn/reauthenticate", webauthn_views.WebAuthnReauthenticateView, "webauthn_reauthenticate"),
    ("account/authenticators/webauthn", webauthn_views.ManageWebAuthnView, "webauthn"),
    ("auth/provider/token", provider_views.ProviderTokenView, "provider_token"),
    ("auth/provider/signup", provider_views.ProviderSignupView, "provider_signup"),
    ("account/providers", provider_views.ProvidersView, "providers"),
    ("auth/code/request", code_views.RequestCodeView, "request_login_code"),
    ("auth/code/confirm", code_views.ConfirmCodeView, "confirm_login_code"),
    ("auth/code/resend", code_views.ResendCodeView, "resend_login_code"),
    # Phone numbers (answered as allauth answers while they are off, on a site without them).
    ("account/phone", phone_views.PhoneView, "phone"),
    ("auth/phone/verify", phone_views.VerifyPhoneView, "verify_phone"),
    ("auth/phone/verify/resend", phone_views.ResendPhoneVerificationView, "resend_phone_verification"),
    (
        "auth/reauthenticate/code/request",
        reauthentication_views.RequestReauthenticationCodeView,
        "request_reauthentication_code",
    ),
    (
        "auth/reauthenticate/code/confirm",
        reauthentication_views.ConfirmReauthenticationCodeView,
        "confirm_reauthentication_code",
    ),
    (
        "auth/reauthenticate/code/resend",
        reauthentication_views.ResendReauthenticationCodeView,
        "resend_reauthentication_code",
    ),
]
# Operations of the browser client only (a page the browser navigates to, not a call).
BROWSER_OPERATIONS = [
    ("auth/provider/redirect", provider_views.ProviderRedirectView, "provider_redirect"),
    ("auth/2fa/trust", mfa_views.TrustView, "mfa_trust"),
]
# Operations of the app client only (its tokens).
APP_OPERATIONS = [
    ("tokens/refresh", token_views.RefreshTokenView, "refresh_token"),
]


def client_patterns(client: str) -> list[URLPattern]:
    """The operations of ``client``, each its view with the client's CSRF rule."""
    protect = csrf_exempt if client == clients.APP else ensure_csrf_cookie
    operations = OPERATIONS + (BROWSER_OPERATIONS if client == clients.BROWSER else APP_OPERATIONS)
    return [path(route, protect(view.as_view(client=client)), name=name) for route, view, name in operations]


urlpatterns = [
    path("browser/v1/", include((client_patterns(clients.BROWSER), "browser"))),
    path("app/v1/", include((client_patterns(clients.APP), "app"))),
    path("openapi.json", openapi.OpenAPIView.as_view(), name="openapi"),
    # Last: any other path under the API (it does nothing, so no CSRF token is needed).
    re_path(r"", csrf_exempt(unsupported_views.NotFoundView.as_view()), name="not_found"),
]
