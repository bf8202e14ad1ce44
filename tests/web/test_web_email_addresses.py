"""Several addresses per account (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1) on the email page,
on DynamoDB Local: add one (a link to it, no lock until it is opened), confirm it, log in
with it, make it primary, remove it (its lock freed at once), each with per-field errors."""

import pytest
from django.test import Client

from accounts import store, timeline
from tests.engine.test_engine import locks
from tests.invariants import violations
from tests.mail import code_in, link_in, mails_to, path_of
from tests.web import PASSWORD, login, messages_of, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local

PAGE = "/accounts/email/"


@pytest.fixture
def several(settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    settings.ACCOUNTS_RATE_LIMITS = {}


@pytest.fixture
def ada(ddb, several):
    return signed_up_client("ada@example.com", "ada")


def add(client, email, password=PASSWORD):
    return client.post(PAGE, {"email": email, "password": password})


def act(client, email, action):
    return client.post(PAGE, {"email": email, "action": action})


def confirm(email):
    """Open the last link mailed to ``email`` and press its button."""
    return Client().post(path_of(link_in(mails_to(email)[-1])))


def account_of(username):
    return store.get_by_username(username)


def added_and_confirmed(client, email):
    assert add(client, email).status_code == 302
    assert confirm(email).status_code == 200


def test_with_one_address_per_account_the_page_is_the_email_change_page(ddb):
    client = signed_up_client("ada@example.com", "ada")

    page = client.get(PAGE)

    assert page.templates[0].name == "accounts/email_change.html"
    assert "New email address" in page.content.decode()


def test_the_page_lists_the_primary_address_confirmed(ada):
    page = ada.get(PAGE)

    assert page.templates[0].name == "accounts/email_addresses.html"
    assert [(each.email, each.primary, each.verified) for each in page.context["addresses"]] == [
        ("ada@example.com", True, True)
    ]


def test_an_added_address_gets_a_link_holds_no_lock_and_the_primary_is_told(ada):
    response = add(ada, "work@example.org")

    assert response.status_code == 302
    (link,) = mails_to("work@example.org")
    assert "/accounts/email/verify/" in link.body
    (notice,) = mails_to("ada@example.com")
    assert "work@example.org was added" in notice.body
    account = account_of("ada")
    assert account.unverified_emails == {"work@example.org"}
    assert "UNIQ#EMAIL#work@example.org" not in locks()
    listed = ada.get(PAGE).context["addresses"]
    assert [(each.email, each.verified) for each in listed] == [("ada@example.com", True), ("work@example.org", False)]


def test_the_link_confirms_the_address_takes_its_lock_and_records_its_key(ada):
    add(ada, "Work@Example.ORG")

    response = confirm("Work@example.org")

    assert response.status_code == 200 and "is confirmed" in response.content.decode()
    account = account_of("ada")
    assert account.email_addresses == {"Work@example.org"} and not account.unverified_emails
    assert locks()["UNIQ#EMAIL#work@example.org"] == account.PK
    assert account.lock_keys.as_dict()["EMAIL#email_addresses"] == {"Work@example.org": "UNIQ#EMAIL#work@example.org"}
    assert violations() == []


def test_the_timeline_records_add_confirm_primary_and_remove(ada):
    added_and_confirmed(ada, "work@example.org")
    act(ada, "work@example.org", "primary")
    act(ada, "ada@example.com", "remove")

    kinds = [(event.kind, event.detail) for event in timeline.recent_events(account_of("ada").id)][:4]
    assert kinds == [
        (timeline.EMAIL_REMOVED, "ada@example.com"),
        (timeline.EMAIL_PRIMARY, "work@example.org"),
        (timeline.EMAIL_VERIFIED, "work@example.org"),
        (timeline.EMAIL_ADDED, "work@example.org"),
    ]


def test_login_with_a_confirmed_other_address_in_any_spelling(ada):
    added_and_confirmed(ada, "work@example.org")

    for spelling in ("work@example.org", "WORK@Example.ORG", "ｗｏｒｋ@example.org"):
        client = Client()
        response = login(client, spelling)
        assert response.status_code == 302, spelling
        assert client.session["_auth_user_id"] == account_of("ada").id


def test_no_login_with_an_address_waiting_for_its_link(ada):
    add(ada, "work@example.org")

    response = login(Client(), "work@example.org")

    assert response.status_code == 200
    assert response.context["form"].non_field_errors()


def test_an_address_another_account_holds_is_refused_in_every_spelling(ada):
    signed_up_client("bob@example.com", "bob")

    for spelling in ("bob@example.com", "BOB@example.com", "ｂｏｂ@ｅｘａｍｐｌｅ.ｃｏｍ"):
        response = add(ada, spelling)
        assert response.status_code == 200, spelling
        assert response.context["form"].has_error("email", "email_taken"), spelling
    assert account_of("ada").unverified_emails is None


def test_an_internationalized_domains_other_spelling_is_the_same_address(ada):
    added_and_confirmed(ada, "work@bücher.example")
    bob = signed_up_client("bob@example.com", "bob")

    refused = add(bob, "WORK@xn--bcher-kva.example")

    assert refused.context["form"].has_error("email", "email_taken")
    assert locks()["UNIQ#EMAIL#work@xn--bcher-kva.example"] == account_of("ada").PK
    assert login(Client(), "work@xn--bcher-kva.example").status_code == 302


def test_another_accounts_confirmed_other_address_is_refused_at_sign_up_and_as_an_addition(ada):
    added_and_confirmed(ada, "work@example.org")
    bob = signed_up_client("bob@example.com", "bob")

    refused = signup(Client(), "WORK@example.org", "carol")
    added = add(bob, "work@EXAMPLE.org")

    assert refused.context["form"].has_error("email", "email_taken")
    assert added.context["form"].has_error("email", "email_taken")


def test_a_second_confirmation_of_one_address_is_refused(ada, settings):
    bob = signed_up_client("bob@example.com", "bob")
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    add(ada, "shared@example.org")
    ada_link = path_of(link_in(mails_to("shared@example.org")[-1]))
    add(bob, "shared@example.org")
    bob_link = path_of(link_in(mails_to("shared@example.org")[-1]))

    assert Client().post(ada_link).status_code == 200
    taken = Client().post(bob_link)

    assert taken.status_code == 400 and taken.context["outcome"] == "taken"
    assert locks()["UNIQ#EMAIL#shared@example.org"] == account_of("ada").PK
    assert violations() == []


def test_an_address_already_the_accounts_own_is_refused_as_a_duplicate(ada):
    added_and_confirmed(ada, "work@example.org")

    for spelling in ("ADA@example.com", "Work@Example.ORG"):
        response = add(ada, spelling)
        assert response.context["form"].has_error("email", "duplicate_email"), spelling


def test_no_more_addresses_than_the_setting_allows(ada):
    add(ada, "one@example.org")
    add(ada, "two@example.org")

    page = ada.get(PAGE)
    response = add(ada, "three@example.org")

    assert page.context["room"] is False
    assert response.context["form"].has_error("email", "max_email_addresses")
    assert "3 email addresses" in str(response.context["form"].errors["email"])


def test_adding_asks_for_the_current_password(ada):
    response = add(ada, "work@example.org", password="wrong")

    assert response.context["form"].has_error("password", "password_incorrect")
    assert account_of("ada").unverified_emails is None


def test_make_primary_swaps_which_address_is_email_and_moves_no_lock(ada):
    added_and_confirmed(ada, "work@example.org")
    before = locks()

    response = act(ada, "work@example.org", "primary")

    assert response.status_code == 302
    account = account_of("ada")
    assert account.email == "work@example.org" and account.email_addresses == {"ada@example.com"}
    assert locks() == before
    assert account.lock_keys.as_dict()["EMAIL"] == "UNIQ#EMAIL#work@example.org"
    assert account.lock_keys.as_dict()["EMAIL#email_addresses"] == {"ada@example.com": "UNIQ#EMAIL#ada@example.com"}
    assert {mail.to[0] for mail in mails_to("ada@example.com") + mails_to("work@example.org")} >= {
        "ada@example.com",
        "work@example.org",
    }
    assert violations() == []


def test_an_unconfirmed_address_cannot_become_primary(ada):
    add(ada, "work@example.org")

    response = act(ada, "work@example.org", "primary")

    assert "Only a confirmed address" in str(response.context["action_errors"])
    assert account_of("ada").email == "ada@example.com"


def test_the_primary_address_cannot_be_removed(ada):
    response = act(ada, "ada@example.com", "remove")

    assert "cannot remove your primary" in str(response.context["action_errors"])
    assert locks()["UNIQ#EMAIL#ada@example.com"] == account_of("ada").PK


def test_a_removed_address_is_free_at_once_for_another_account(ada):
    added_and_confirmed(ada, "work@example.org")

    response = act(ada, "work@example.org", "remove")

    assert response.status_code == 302
    assert "UNIQ#EMAIL#work@example.org" not in locks()
    assert "work@example.org was removed" in mails_to("work@example.org")[-1].body
    assert signup(Client(), "work@example.org", "bob").status_code == 302
    assert locks()["UNIQ#EMAIL#work@example.org"] == store.get_by_username("bob").PK
    assert violations() == []


def test_removing_an_address_waiting_for_its_link_ends_the_link(ada):
    add(ada, "work@example.org")
    link = path_of(link_in(mails_to("work@example.org")[-1]))

    act(ada, "work@example.org", "remove")
    response = Client().post(link)

    assert response.status_code == 400 and response.context["outcome"] == "stale"
    assert "UNIQ#EMAIL#work@example.org" not in locks()


def test_the_link_again_goes_to_an_address_waiting_for_it(ada):
    add(ada, "work@example.org")

    response = act(ada, "work@example.org", "resend")

    assert response.status_code == 302
    assert len(mails_to("work@example.org")) == 2


def test_a_new_password_ends_the_links_mailed_before_it(ada):
    add(ada, "work@example.org")
    link = path_of(link_in(mails_to("work@example.org")[-1]))
    ada.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": "Other-Tangerine-4", "new_password2": "Other-Tangerine-4"},
    )

    response = Client().post(link)

    assert response.context["outcome"] == "password_changed"
    assert "UNIQ#EMAIL#work@example.org" not in locks()


def test_security_notices_go_to_every_confirmed_address(ada):
    added_and_confirmed(ada, "work@example.org")
    add(ada, "pending@example.org")

    ada.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": "Other-Tangerine-4", "new_password2": "Other-Tangerine-4"},
    )

    for address in ("ada@example.com", "work@example.org"):
        assert any("password" in mail.subject.lower() for mail in mails_to(address)), address
    assert not any("password" in mail.subject.lower() for mail in mails_to("pending@example.org"))


def test_the_page_asks_for_a_fresh_reauthentication(ada, settings):
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0

    for response in (ada.get(PAGE), add(ada, "work@example.org"), act(ada, "ada@example.com", "remove")):
        assert response.status_code == 302 and "/accounts/mfa/reauthenticate/" in response["Location"]
    assert account_of("ada").unverified_emails is None


def test_deleting_the_account_frees_every_address(ada):
    added_and_confirmed(ada, "work@example.org")

    store.delete_account(account_of("ada"))

    assert not [key for key in locks() if key.startswith("UNIQ#EMAIL#")]
    assert violations() == []


def test_messages_say_what_became_of_each_action(ada):
    add(ada, "work@example.org")
    confirm("work@example.org")

    followed = ada.post(PAGE, {"email": "work@example.org", "action": "primary"}, follow=True)

    assert messages_of(followed)[-1] == "work@example.org is now your primary email address."


def test_with_codes_an_added_address_is_confirmed_with_the_code_on_the_code_page(ada, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True

    added = add(ada, "work@example.org")
    page = ada.get(added.url)
    wrong = ada.post(added.url, {"code": "BBBB-BBBB"})
    typed = ada.post(added.url, {"code": code_in(mails_to("work@example.org")[-1])})

    assert added.url == "/accounts/email/confirm/code/"
    assert "We sent a code to <strong>work@example.org</strong>" in page.content.decode()
    assert wrong.status_code == 400
    assert typed.status_code == 302 and typed.url == PAGE
    assert "Your email address work@example.org is confirmed." in messages_of(ada.get(PAGE))
    assert account_of("ada").email_addresses == {"work@example.org"}
    assert locks()["UNIQ#EMAIL#work@example.org"] == account_of("ada").PK
