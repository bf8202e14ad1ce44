"""The pages of login by code, included by :mod:`accounts.urls` under ``code/`` (namespace
``accounts:login_codes``)."""

from django.urls import path

from . import views

app_name = "login_codes"
urlpatterns = [
    path("", views.CodeRequestView.as_view(), name="request"),
    path("confirm/", views.CodeConfirmView.as_view(), name="confirm"),
]
