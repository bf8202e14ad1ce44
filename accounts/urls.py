from django.urls import path

from . import views

app_name = "accounts"
urlpatterns = [
    path("signup/", views.SignupView.as_view(), name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("profile/", views.ProfileView.as_view(), name="profile"),
    path("sessions/logout-others/", views.EndOtherSessionsView.as_view(), name="logout_other_sessions"),
    path("email/", views.EmailChangeView.as_view(), name="email_change"),
    path("username/", views.UsernameChangeView.as_view(), name="username_change"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("delete/", views.AccountDeleteView.as_view(), name="delete"),
]
