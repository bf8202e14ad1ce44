from django.urls import path

from .. import address_staff_views
from ..mfa import staff_views as mfa_views
from . import views

app_name = "staff"
urlpatterns = [
    path("", views.AccountListView.as_view(), name="accounts"),
    path("accounts/<str:account_id>/", views.AccountDetailView.as_view(), name="account"),
    path("accounts/<str:account_id>/email/", views.EmailChangeView.as_view(), name="email"),
    path("accounts/<str:account_id>/username/", views.UsernameChangeView.as_view(), name="username"),
    path("accounts/<str:account_id>/password/", views.SetPasswordView.as_view(), name="password"),
    path("accounts/<str:account_id>/flags/", views.FlagView.as_view(), name="flag"),
    path("accounts/<str:account_id>/sessions/end/", views.EndSessionsView.as_view(), name="end_sessions"),
    path("accounts/<str:account_id>/verification/", views.VerificationView.as_view(), name="verification"),
    path("accounts/<str:account_id>/delete/", views.AccountDeleteView.as_view(), name="delete"),
    path(
        "accounts/<str:account_id>/addresses/remove/",
        address_staff_views.AddressRemoveView.as_view(),
        name="address_remove",
    ),
    path(
        "accounts/<str:account_id>/totp/remove/",
        mfa_views.AuthenticatorRemoveView.as_view(),
        {"kind": mfa_views.TOTP},
        name="totp_remove",
    ),
    path(
        "accounts/<str:account_id>/passkeys/<str:credential_id>/remove/",
        mfa_views.AuthenticatorRemoveView.as_view(),
        {"kind": mfa_views.PASSKEY},
        name="passkey_remove",
    ),
    path("locks/", views.LockAuditView.as_view(), name="locks"),
    path("locks/run/", views.RunAuditView.as_view(), name="run_audit"),
    path("locks/repair/", views.RepairView.as_view(), name="repair"),
    path("locks/repair-all/", views.RepairAllView.as_view(), name="repair_all"),
]
