"""The pages of identity providers, included by :mod:`accounts.urls` under ``providers/``
(namespace ``accounts:providers``)."""

from django.urls import path

from . import views

app_name = "providers"
urlpatterns = [
    path("", views.ProviderListView.as_view(), name="list"),
    path("signup/", views.ProviderSignupView.as_view(), name="signup"),
    path("<str:provider_id>/login/", views.ProviderLoginView.as_view(), name="login"),
    path("<str:provider_id>/callback/", views.CallbackView.as_view(), name="callback"),
    path("<str:provider_id>/link/", views.ProviderLinkView.as_view(), name="link"),
    path("<str:provider_id>/unlink/", views.ProviderUnlinkView.as_view(), name="unlink"),
]
