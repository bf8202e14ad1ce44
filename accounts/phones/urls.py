"""The pages of phone numbers, included by :mod:`accounts.urls` under ``phone/`` (namespace
``accounts:phones``): django-allauth's ``phone/change/`` and ``phone/verify/``, and the removal."""

from django.urls import path

from . import views

app_name = "phones"
urlpatterns = [
    path("change/", views.PhoneChangeView.as_view(), name="change"),
    path("verify/", views.PhoneVerifyView.as_view(), name="verify"),
    path("remove/", views.PhoneRemoveView.as_view(), name="remove"),
]
