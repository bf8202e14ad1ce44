"""The pages of second factors, included by :mod:`accounts.urls` under ``mfa/`` (namespace
``accounts:mfa``)."""

from django.urls import path

from . import login_views, reauthentication_views, views

app_name = "mfa"
urlpatterns = [
    path("totp/", views.TotpView.as_view(), name="totp"),
    path("totp/deactivate/", views.TotpDeactivateView.as_view(), name="totp_deactivate"),
    path("passkeys/", views.PasskeysView.as_view(), name="passkeys"),
    path("passkeys/<str:credential_id>/remove/", views.PasskeyRemoveView.as_view(), name="passkey_remove"),
    path("recovery-codes/", views.RecoveryCodesView.as_view(), name="recovery_codes"),
    path("authenticate/", login_views.SecondStepView.as_view(), name="authenticate"),
    path("authenticate/passkey/", login_views.SecondStepPasskeyView.as_view(), name="authenticate_passkey"),
    path("passkey/login/", login_views.PasskeyLoginView.as_view(), name="passkey_login"),
    path("passkey/options/<str:purpose>/", login_views.PasskeyOptionsView.as_view(), name="passkey_options"),
    path("reauthenticate/", login_views.ReauthenticateView.as_view(), name="reauthenticate"),
    path("reauthenticate/passkey/", login_views.ReauthenticatePasskeyView.as_view(), name="reauthenticate_passkey"),
    path("reauthenticate/totp/", reauthentication_views.ReauthenticateTotpView.as_view(), name="reauthenticate_totp"),
    path(
        "reauthenticate/code/send/",
        reauthentication_views.ReauthenticateCodeSendView.as_view(),
        name="reauthenticate_code_send",
    ),
    path("reauthenticate/code/", reauthentication_views.ReauthenticateCodeView.as_view(), name="reauthenticate_code"),
    path("signup/passkey/", login_views.PasskeySignupView.as_view(), name="passkey_signup"),
    path("signup/passkey/create/", login_views.PasskeySignupCreateView.as_view(), name="passkey_signup_create"),
]
