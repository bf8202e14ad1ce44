"""The signup page on DynamoDB Local: success, every collision and input rule, double submit."""

import time

import pytest
from django.core import signing
from django.test import Client

from accounts import store
from accounts.forms import SIGNUP_TOKEN_MAX_AGE, SIGNUP_TOKEN_SALT
from accounts.tables import dynamodb_client
from tests.support import answer_before_call, cancellation
from tests.web import OTHER_PASSWORD, PASSWORD, email_of_length, messages_of, signup, signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local


def form_of(response):
    return response.context["form"]


def test_signup_page_has_the_fixed_fields_and_a_hidden_token(ddb):
    response = Client().get("/accounts/signup/")

    assert response.status_code == 200
    form = form_of(response)
    assert list(form.fields) == ["email", "username", "password1", "password2", "token"]
    assert 'type="hidden" name="token"' in response.content.decode()


def test_signup_logs_in_and_redirects_to_the_profile(ddb):
    client = Client()

    response = signup(client, "ada@example.com", "ada")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/profile/"
    profile = client.get(response["Location"])
    assert profile.status_code == 200
    assert profile.context["user"].username == "ada"
    assert messages_of(profile) == ["Welcome, ada! Your account is ready."]


@pytest.mark.argon2
def test_signup_stores_an_argon2_hash_of_the_password(ddb):
    signup(Client(), "ada@example.com", "ada")

    [account] = stored_accounts()
    assert account.password.startswith("argon2$argon2id$")
    assert PASSWORD not in account.password


def test_second_signup_with_same_email_gets_email_error(ddb):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), "ada@example.com", "lovelace")

    assert response.status_code == 200
    form = form_of(response)
    assert form.has_error("email", "email_taken")
    assert form.errors["email"] == ["This email address is already in use."]
    assert "username" not in form.errors
    assert len(stored_accounts()) == 1


def test_second_signup_with_same_username_gets_username_error(ddb):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), "lovelace@example.com", "ada")

    form = form_of(response)
    assert form.has_error("username", "username_taken")
    assert form.errors["username"] == ["This username is taken."]
    assert "email" not in form.errors


def test_signup_colliding_on_both_fields_gets_both_errors_at_once(ddb):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), "ada@example.com", "ada")

    form = form_of(response)
    assert form.has_error("email", "email_taken")
    assert form.has_error("username", "username_taken")
    assert form.non_field_errors() == []


@pytest.mark.parametrize("variant", ["ADA", "Ada", "ａｄａ", "ＡＤＡ"])
def test_case_and_full_width_variants_of_a_taken_username_are_taken(ddb, variant):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), "other@example.com", variant)

    assert form_of(response).has_error("username", "username_taken")


@pytest.mark.parametrize("variant", ["ADA@EXAMPLE.COM", "Ada@Example.com", "ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ"])
def test_case_and_full_width_variants_of_a_taken_email_are_taken(ddb, variant):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), variant, "other")

    assert form_of(response).has_error("email", "email_taken")


def test_full_width_username_is_stored_nfkc_normalized(ddb):
    signup(Client(), "ada@example.com", "Ａｄａ")

    [account] = stored_accounts()
    assert account.username == "Ada"


def test_email_domain_is_stored_lowercase_and_local_part_as_typed(ddb):
    signup(Client(), "Ada.L@EXAMPLE.com", "ada")

    [account] = stored_accounts()
    assert account.email == "Ada.L@example.com"


@pytest.mark.parametrize("username", ["ada@home", "ａｄａ＠ｈｏｍｅ"])
def test_username_with_at_sign_is_refused(ddb, username):
    response = signup(Client(), "ada@example.com", username)

    assert form_of(response).has_error("username", "username_at")
    assert stored_accounts() == []


@pytest.mark.parametrize(
    "username",
    [
        "ad\u200ba",  # zero-width space
        "ad\u200da",  # zero-width joiner
        "ad\u200ca",  # zero-width non-joiner
        "ad\ufeffa",  # zero-width no-break space (BOM)
        "ad\u202ea",  # right-to-left override
        "ad\u2066a",  # left-to-right isolate
        "ad\u200fa",  # right-to-left mark
        "ad\x1ba",  # escape (control)
        "ad\x7fa",  # delete (control)
        "ad\u2028a",  # line separator
    ],
)
def test_username_with_control_zero_width_or_bidi_character_is_refused(ddb, username):
    response = signup(Client(), "ada@example.com", username)

    form = form_of(response)
    assert form.has_error("username", "username_invisible")
    assert form.errors["username"] == ["A username cannot contain control, invisible or text-direction characters."]
    assert stored_accounts() == []


@pytest.mark.parametrize("username", ["ada lovelace", "ada!", "<ada>"])
def test_username_outside_letters_digits_and_dot_plus_dash_underscore_is_refused(ddb, username):
    response = signup(Client(), "ada@example.com", username)

    assert form_of(response).has_error("username", "username_invalid")


def test_username_of_150_characters_is_accepted(ddb):
    response = signup(Client(), "ada@example.com", "a" * 150)

    assert response.status_code == 302
    [account] = stored_accounts()
    assert account.username == "a" * 150


def test_username_of_151_characters_is_refused(ddb):
    response = signup(Client(), "ada@example.com", "a" * 151)

    assert form_of(response).has_error("username", "max_length")
    assert stored_accounts() == []


def test_username_that_nfkc_lengthens_beyond_150_is_refused(ddb):
    # U+FB03 (ﬃ) is one character that NFKC turns into three.
    response = signup(Client(), "ada@example.com", "\ufb03" * 60)

    assert form_of(response).has_error("username", "max_length")


def test_email_of_254_characters_is_accepted(ddb):
    email = email_of_length(254)

    response = signup(Client(), email, "ada")

    assert response.status_code == 302
    [account] = stored_accounts()
    assert account.email == email


def test_email_of_255_characters_is_refused(ddb):
    response = signup(Client(), email_of_length(255), "ada")

    assert form_of(response).has_error("email", "max_length")
    assert stored_accounts() == []


@pytest.mark.parametrize("email", ["not-an-email", "ada@", "@example.com", "ada@exa mple.com"])
def test_invalid_email_is_refused(ddb, email):
    response = signup(Client(), email, "ada")

    assert form_of(response).has_error("email", "invalid")


def test_empty_form_reports_every_required_field(ddb):
    client = Client()
    response = client.post("/accounts/signup/", {})

    form = form_of(response)
    for field in ("email", "username", "password1", "password2"):
        assert form.has_error(field, "required")


def test_mismatched_passwords_are_refused(ddb):
    response = signup(Client(), password2=OTHER_PASSWORD)

    assert form_of(response).has_error("password2", "password_mismatch")
    assert stored_accounts() == []


def test_password_similar_to_the_username_is_refused(ddb):
    response = signup(Client(), "someone@example.com", "marblehouse", password="marblehouse1")

    assert form_of(response).has_error("password2", "password_too_similar")


@pytest.mark.parametrize(
    ("password", "code"), [("short1", "password_too_short"), ("password123", "password_too_common")]
)
def test_weak_password_is_refused_by_the_validators(ddb, password, code):
    response = signup(Client(), password=password)

    assert form_of(response).has_error("password2", code)


def test_rejected_form_answers_200_and_keeps_what_was_typed_except_passwords(ddb):
    signup(Client(), "ada@example.com", "ada")

    response = signup(Client(), "ada@example.com", "lovelace")

    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="ada@example.com"' in html
    assert 'value="lovelace"' in html
    assert PASSWORD not in html


def test_field_errors_render_as_django_renders_them(ddb):
    signup(Client(), "ada@example.com", "ada")

    html = signup(Client(), "ada@example.com", "ada").content.decode()

    assert '<ul class="errorlist" id="id_email_error"><li>This email address is already in use.</li></ul>' in html
    assert '<ul class="errorlist" id="id_username_error"><li>This username is taken.</li></ul>' in html
    assert 'aria-invalid="true" aria-describedby="id_email_error" id="id_email"' in html
    assert 'aria-invalid="true" aria-describedby="id_username_error" id="id_username"' in html


def test_logged_in_visitor_of_the_signup_page_goes_to_the_profile(ddb):
    client = Client()
    signup(client)

    response = client.get("/accounts/signup/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/profile/"


def test_busy_engine_shows_a_try_again_error_and_saves_nothing(ddb):
    client = Client()
    data = signup_data(client)
    conflict = cancellation("None", "TransactionConflict", "None")
    intercepted = answer_before_call(dynamodb_client(), [conflict] * 4)

    response = client.post("/accounts/signup/", data)

    assert len(intercepted) == 4
    assert response.status_code == 200
    form = form_of(response)
    assert form.has_error("__all__", "busy")
    assert form.non_field_errors() == ["The site is busy and nothing was saved. Please try again."]
    assert stored_accounts() == []


def test_signup_after_a_busy_answer_succeeds_with_the_renewed_form(ddb):
    client = Client()
    data = signup_data(client)
    answer_before_call(dynamodb_client(), [cancellation("None", "TransactionConflict", "None")] * 4)
    rejected = client.post("/accounts/signup/", data)

    retry = {**data, "token": form_of(rejected)["token"].value()}
    response = client.post("/accounts/signup/", retry)

    assert response.status_code == 302
    assert len(stored_accounts()) == 1


# Double submit: the hidden token becomes the ClientRequestToken.


def test_identical_signup_posted_twice_creates_one_account_and_both_land_on_success(ddb):
    first_tab = Client()
    data = signup_data(first_tab)
    # The browser never saw the first answer (double click, resend): no cookies from it.
    second_tab = Client()

    first = first_tab.post("/accounts/signup/", data)
    second = second_tab.post("/accounts/signup/", data)

    assert first.status_code == 302
    assert second.status_code == 302
    assert first["Location"] == second["Location"] == "/accounts/profile/"
    [account] = stored_accounts()
    for client in (first_tab, second_tab):
        assert client.get("/accounts/profile/").context["user"].pk == account.id


def test_identical_signup_posted_twice_by_one_browser_with_csrf_lands_on_success_twice(ddb):
    client = Client(enforce_csrf_checks=True)
    data = signup_data(client)

    first = client.post("/accounts/signup/", data)
    # Logging in rotated the CSRF cookie; the second copy still carries the old token.
    second = client.post("/accounts/signup/", data)

    assert first.status_code == 302
    assert second.status_code == 302
    assert second["Location"] == "/accounts/profile/"
    assert len(stored_accounts()) == 1


def test_same_signup_form_with_another_password_is_refused_on_both_fields(ddb):
    first_tab = Client()
    data = signup_data(first_tab)
    first_tab.post("/accounts/signup/", data)

    response = Client().post("/accounts/signup/", {**data, "password1": OTHER_PASSWORD, "password2": OTHER_PASSWORD})

    form = form_of(response)
    assert form.has_error("email", "email_taken")
    assert form.has_error("username", "username_taken")
    assert len(stored_accounts()) == 1


def test_signup_page_sent_again_with_other_values_creates_a_new_account(ddb):
    client = Client()
    data = signup_data(client)
    Client().post("/accounts/signup/", data)

    response = Client().post("/accounts/signup/", {**data, "email": "grace@example.com", "username": "grace"})

    assert response.status_code == 302
    assert sorted(account.username for account in stored_accounts()) == ["ada", "grace"]


def test_rejected_form_comes_back_with_a_new_token(ddb):
    client = Client()
    data = signup_data(client, password2=OTHER_PASSWORD)

    response = client.post("/accounts/signup/", data)

    renewed = form_of(response)["token"].value()
    assert renewed != data["token"]
    assert signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).unsign(renewed, max_age=60)


def test_the_form_token_is_the_request_token(ddb):
    client = Client()
    data = signup_data(client)
    request_token = signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).unsign(data["token"])

    client.post("/accounts/signup/", data)

    [account] = stored_accounts()
    assert len(request_token) <= 36
    assert account.id == store.account_id_for_token(request_token)


class PastSigner(signing.TimestampSigner):
    def timestamp(self):
        return signing.b62_encode(int(time.time()) - SIGNUP_TOKEN_MAX_AGE - 1)


def test_token_older_than_nine_minutes_is_replaced_by_a_fresh_one(ddb):
    old_request_token = "0" * 32
    old_token = PastSigner(salt=SIGNUP_TOKEN_SALT).sign(old_request_token)
    client = Client()

    response = client.post("/accounts/signup/", signup_data(client, token=old_token))

    assert response.status_code == 302
    [account] = stored_accounts()
    assert account.id != store.account_id_for_token(old_request_token)


@pytest.mark.parametrize("token", ["", "forged", "0" * 32 + ":1xXnel:not-a-signature"])
def test_missing_or_forged_token_still_signs_up_with_a_fresh_one(ddb, token):
    client = Client()

    response = client.post("/accounts/signup/", signup_data(client, token=token))

    assert response.status_code == 302
    [account] = stored_accounts()
    assert account.id != store.account_id_for_token("0" * 32)
