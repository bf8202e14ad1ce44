"""Signing in with an OpenID Connect provider: a real one (oidc-provider, tests/oidc.py)."""

from django.test import Client

from accounts import store
from accounts.providers import store as provider_store
from tests.oidc import oidc_provider, oidc_site, provider_login  # noqa: F401  (fixtures)


def test_first_sign_in_asks_one_form_then_signs_in_with_the_identity_next_time(oidc_site):
    client = Client()
    response = provider_login(client, "alice")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/providers/signup/"
    page = client.get("/accounts/providers/signup/")
    assert page.context["form"]["email"].value() == "alice@example.com"
    response = client.post("/accounts/providers/signup/", {"email": "alice@example.com", "username": "alice"})
    assert response.status_code == 302, response.content.decode()
    account = store.get_by_username("alice")
    assert provider_store.identities_of(account) == [(oidc_site.issuer, "alice")]

    again = Client()
    response = provider_login(again, "alice")
    assert response.status_code == 302
    assert again.session["_auth_user_id"] == account.id
