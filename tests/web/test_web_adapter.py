"""A host project changes rules, messages, redirects and stored attributes with its adapter."""

import pytest
from django.test import Client

from accounts import store
from accounts.adapter import DefaultAccountAdapter, get_adapter
from tests.web import PASSWORD, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local


class HostAdapter(DefaultAccountAdapter):
    error_messages = {
        **DefaultAccountAdapter.error_messages,
        "email_taken": "That address already has an account.",
        "username_reserved": "This username is reserved.",
    }

    def clean_username(self, username):
        username = super().clean_username(username)
        if username.casefold() == "admin":
            raise self.validation_error("username_reserved")
        return username

    def get_signup_attributes(self, request, form):
        return {"is_staff": form.cleaned_data["email"].endswith("@staff.example.com")}

    def get_signup_redirect_url(self, request):
        return "/welcome/"


@pytest.fixture
def host_adapter(settings):
    settings.ACCOUNTS_ADAPTER = f"{__name__}.HostAdapter"


def test_get_adapter_returns_the_adapter_named_in_the_setting(host_adapter):
    assert isinstance(get_adapter(), HostAdapter)


def test_default_adapter_is_used_without_the_setting(settings):
    # The demo (whose settings the tests extend) names its own, which prints texts.
    del settings.ACCOUNTS_ADAPTER

    assert type(get_adapter()) is DefaultAccountAdapter


def test_host_adapter_message_replaces_the_default(ddb, host_adapter):
    signup(Client(), "ada@example.com", "ada")

    form = signup(Client(), "ada@example.com", "lovelace").context["form"]

    assert form.errors["email"] == ["That address already has an account."]


def test_host_adapter_username_rule_applies_after_the_default_rules(ddb, host_adapter):
    reserved = signup(Client(), "ada@example.com", "ＡＤＭＩＮ").context["form"]
    with_at = signup(Client(), "ada@example.com", "admin@home").context["form"]

    assert reserved.has_error("username", "username_reserved")
    assert with_at.has_error("username", "username_at")


def test_host_adapter_chooses_extra_attributes_and_the_landing_page(ddb, host_adapter):
    response = signup(Client(), "ada@staff.example.com", "ada")

    assert response["Location"] == "/welcome/"
    assert store.get_by_username("ada").is_staff is True


def test_redirect_settings_choose_where_signup_logout_and_deletion_land(ddb, settings):
    settings.ACCOUNTS_SIGNUP_REDIRECT_URL = "/accounts/email/"
    settings.ACCOUNTS_LOGOUT_REDIRECT_URL = "/accounts/login/"
    settings.ACCOUNTS_DELETE_REDIRECT_URL = "/accounts/signup/"

    signup_response = signup(Client(), "ada@example.com", "ada")
    logout_response = signed_up_client("grace@example.com", "grace").post("/accounts/logout/")
    delete_response = signed_up_client("alan@example.com", "alan").post("/accounts/delete/", {"password": PASSWORD})

    assert signup_response["Location"] == "/accounts/email/"
    assert logout_response["Location"] == "/accounts/login/"
    assert delete_response["Location"] == "/accounts/signup/"
