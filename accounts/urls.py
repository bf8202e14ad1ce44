from django.urls import include, path
from django.views.generic import TemplateView

from . import email_views, views

app_name = "accounts"
urlpatterns = [
    path("signup/", views.SignupView.as_view(), name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("profile/", views.ProfileView.as_view(), name="profile"),
    path("sessions/logout-others/", views.EndOtherSessionsView.as_view(), name="logout_other_sessions"),
    path("email/", views.EmailChangeView.as_view(), name="email_change"),
    path("email/cancel/", views.EmailChangeCancelView.as_view(), name="email_change_cancel"),
    path("username/", views.UsernameChangeView.as_view(), name="username_change"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("delete/", views.AccountDeleteView.as_view(), name="delete"),
    # Second factors, passkeys and reauthentication (namespace accounts:mfa).
    path("mfa/", include("accounts.mfa.urls")),
    # Identity providers: "Sign in with ...", linking (namespace accounts:providers).
    path("providers/", include("accounts.providers.urls")),
    # Login by a mailed code (namespace accounts:login_codes).
    path("code/", include("accounts.login_codes.urls")),
    # Phone numbers: the profile's number, and the page where a texted code is typed
    # (namespace accounts:phones).
    path("phone/", include("accounts.phones.urls")),
    path("verify/sent/", email_views.VerificationSentView.as_view(), name="verification_sent"),
    path("verify/<str:token>/", email_views.VerifyEmailView.as_view(), name="verify_email"),
    path("verify/<str:token>/discard/", email_views.DiscardSignupView.as_view(), name="discard_signup"),
    path("email/confirm/<str:token>/", email_views.EmailChangeConfirmView.as_view(), name="email_change_confirm"),
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
