from django.urls import include, path
from django.views.generic import TemplateView

from . import address_views, email_views, views
from .login_codes import urls as login_code_urls
from .mfa import urls as mfa_urls
from .pages import pages
from .phones import urls as phone_urls
from .providers import urls as provider_urls

app_name = "accounts"
# Every page answers 404 with ACCOUNTS_HEADLESS_ONLY (accounts.pages), but a provider's
# callback, which the API's sign-in with a provider comes back through.
urlpatterns = [
    *pages(
        [
            path("signup/", views.SignupView.as_view(), name="signup"),
            path("login/", views.LoginView.as_view(), name="login"),
            path("logout/", views.LogoutView.as_view(), name="logout"),
            path("profile/", views.ProfileView.as_view(), name="profile"),
            path("sessions/logout-others/", views.EndOtherSessionsView.as_view(), name="logout_other_sessions"),
            path("email/", address_views.email_page, name="email_change"),
            path("email/cancel/", views.EmailChangeCancelView.as_view(), name="email_change_cancel"),
            path("username/", views.UsernameChangeView.as_view(), name="username_change"),
            path("password/", views.PasswordChangeView.as_view(), name="password_change"),
            path("delete/", views.AccountDeleteView.as_view(), name="delete"),
            path("verify/sent/", email_views.VerificationSentView.as_view(), name="verification_sent"),
            path("verify/code/", email_views.VerificationCodeView.as_view(), name="verify_email_code"),
            path("email/confirm/code/", email_views.EmailChangeCodeView.as_view(), name="email_change_code"),
            path("password/reset/code/", email_views.PasswordResetCodeView.as_view(), name="password_reset_code"),
            path("verify/<str:token>/", email_views.VerifyEmailView.as_view(), name="verify_email"),
            path("verify/<str:token>/discard/", email_views.DiscardSignupView.as_view(), name="discard_signup"),
            path(
                "email/confirm/<str:token>/",
                email_views.EmailChangeConfirmView.as_view(),
                name="email_change_confirm",
            ),
            path("email/verify/<str:token>/", address_views.AddressVerifyView.as_view(), name="email_address_verify"),
            path("password/reset/", email_views.PasswordResetView.as_view(), name="password_reset"),
            path(
                "password/reset/done/",
                TemplateView.as_view(template_name="accounts/password_reset_done.html"),
                name="password_reset_done",
            ),
            path(
                "password/reset/complete/",
                TemplateView.as_view(template_name="accounts/password_reset_complete.html"),
                name="password_reset_complete",
            ),
            path(
                "password/reset/<uidb64>/<token>/",
                email_views.PasswordResetConfirmView.as_view(),
                name="password_reset_confirm",
            ),
        ]
    ),
    # Second factors, passkeys and reauthentication (namespace accounts:mfa).
    path("mfa/", include((pages(mfa_urls.urlpatterns), mfa_urls.app_name))),
    # Identity providers: "Sign in with ...", linking (namespace accounts:providers).
    path("providers/", include((pages(provider_urls.urlpatterns, kept=["callback"]), provider_urls.app_name))),
    # Login by a mailed code (namespace accounts:login_codes).
    path("code/", include((pages(login_code_urls.urlpatterns), login_code_urls.app_name))),
    # Phone numbers: the profile's number, and the page where a texted code is typed
    # (namespace accounts:phones).
    path("phone/", include((pages(phone_urls.urlpatterns), phone_urls.app_name))),
]
