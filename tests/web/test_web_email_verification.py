"""Sign-up with email verification on DynamoDB Local: mandatory and optional modes, the
link (a button, then one transaction), resend, mail failures and enumeration."""

import pytest
from django.core import mail
from django.test import Client

from accounts import store
from accounts.tables import epoch_now
from tests.engine.test_engine import table_items
from tests.mail import DownBackend, link_in, mails_to, path_of, use_mail_backend
from tests.web import PASSWORD, login, messages_of, signup

pytestmark = pytest.mark.dynamodb_local

DOWN = f"{DownBackend.__module__}.{DownBackend.__qualname__}"


@pytest.fixture(autouse=True)
def mandatory(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"


def confirm(client, address):
    """Open the last verification link mailed to ``address`` and press its button."""
    path = path_of(link_in(mails_to(address)[-1]))
    page = client.get(path)
    assert page.status_code == 200 and b"<form" in page.content
    return client.post(path)


def test_mandatory_signup_lands_on_check_your_inbox_and_mails_an_absolute_link(ddb):
    client = Client()

    response = signup(client, "ada@example.com", "ada")

    assert response["Location"] == "/accounts/verify/sent/"
    page = client.get("/accounts/verify/sent/")
    assert "ada@example.com" in page.content.decode()
    (message,) = mails_to("ada@example.com")
    assert link_in(message).startswith("http://testserver/accounts/verify/")
    assert client.get("/accounts/profile/").status_code == 302  # not logged in


def test_unverified_account_cannot_log_in_and_is_told_why_with_a_resend_button(ddb):
    signup(Client(), "ada@example.com", "ada")
    client = Client()

    response = login(client, "ada")

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "unverified")
    assert 'action="/accounts/verify/sent/"' in response.content.decode()
    client.post("/accounts/verify/sent/")
    assert len(mails_to("ada@example.com")) == 2


def test_opening_the_link_verifies_and_then_login_works(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")

    response = confirm(client, "ada@example.com")

    assert response.status_code == 200
    assert "is confirmed" in response.content.decode()
    assert login(Client(), "ada@example.com").status_code == 302
    assert store.get_by_email("ada@example.com").username == "ada"


def test_following_the_link_without_pressing_the_button_verifies_nothing(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")

    client.get(path_of(link_in(mails_to("ada@example.com")[0])))

    assert store.get_by_username("ada").email_verified is False


def test_squatter_blocks_nobody_the_mailbox_owner_signs_up_and_verifies(ddb):
    signup(Client(), "victim@example.com", "squatter")
    owner = Client()

    response = signup(owner, "victim@example.com", "owner")

    assert response.status_code == 302
    # Both mails went to the victim's mailbox: the owner opens the one for "owner".
    owner_mail = [message for message in mails_to("victim@example.com") if "owner" in message.body]
    path = path_of(link_in(owner_mail[0]))
    assert owner.post(path).status_code == 200
    squatter_mail = [message for message in mails_to("victim@example.com") if "squatter" in message.body]
    refused = Client().post(path_of(link_in(squatter_mail[0])))
    assert refused.status_code == 400
    assert "already been confirmed by another account" in refused.content.decode()
    assert store.get_by_email("victim@example.com").username == "owner"


def test_address_a_verified_account_holds_is_refused_on_the_email_field(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = False  # on by default in mode "mandatory"
    store.signup("ada@example.com", "ada", "!hash", email_verified=True)

    response = signup(Client(), "Ada@Example.com", "other")

    assert response.status_code == 200
    assert response.context["form"].has_error("email", "email_taken")
    assert mail.outbox == []


def test_prevent_enumeration_answers_like_a_signup_and_mails_the_owner(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    owner, _ = store.signup("ada@example.com", "ada", "!hash", email_verified=True)
    client = Client()

    response = signup(client, "ada@example.com", "other")

    assert response["Location"] == "/accounts/verify/sent/"
    (notice,) = mails_to("ada@example.com")
    assert "tried to sign up" in notice.subject
    assert "/accounts/password/reset/" in link_in(notice)
    # An unverified sign-up, as for a new address; it can never hold the owner's address.
    assert store.get_by_username("other").email_verified is False
    assert store.get_by_email("ada@example.com").PK == owner.PK
    assert client.post("/accounts/verify/sent/", follow=True).status_code == 200


def test_a_mail_that_cannot_be_sent_loses_nothing_and_can_be_sent_again(ddb, settings):
    use_mail_backend(settings, DOWN)
    client = Client()

    response = signup(client, "ada@example.com", "ada")

    assert response["Location"] == "/accounts/verify/sent/"
    assert "could not be sent" in client.get("/accounts/verify/sent/").content.decode()
    assert store.get_by_username("ada") is not None
    use_mail_backend(settings, "django.core.mail.backends.locmem.EmailBackend")
    page = client.post("/accounts/verify/sent/", follow=True)
    assert any("We sent a link" in text for text in messages_of(page))
    assert len(mails_to("ada@example.com")) == 1


def test_at_most_one_resend_a_minute_per_account(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")

    first = client.post("/accounts/verify/sent/", follow=True)
    second = client.post("/accounts/verify/sent/", follow=True)

    assert any("We sent a link" in text for text in messages_of(first))
    assert any("wait a minute" in text for text in messages_of(second))
    assert len(mails_to("ada@example.com")) == 2  # the sign-up's and one resend


def test_optional_mode_logs_in_at_once_and_the_profile_nags_until_verified(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    client = Client()

    response = signup(client, "ada@example.com", "ada")

    assert response["Location"] == "/accounts/profile/"
    assert "not confirmed yet" in client.get("/accounts/profile/").content.decode()
    assert store.get_by_email("ada@example.com") is None  # the address is not held yet
    confirm(client, "ada@example.com")
    assert "not confirmed yet" not in client.get("/accounts/profile/").content.decode()
    assert store.get_by_email("ada@example.com").username == "ada"


def test_forged_link_is_a_clear_error_page(ddb):
    response = Client().post("/accounts/verify/not-a-token/")

    assert response.status_code == 400
    assert "no longer valid" in response.content.decode()


def test_second_use_of_the_link_says_already_confirmed(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")
    confirm(client, "ada@example.com")

    again = confirm(client, "ada@example.com")

    assert again.status_code == 200 and "is confirmed" in again.content.decode()


def test_unverified_sessions_end_when_verification_becomes_mandatory(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    client = Client()
    signup(client, "ada@example.com", "ada", PASSWORD)
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    assert client.get("/accounts/profile/").status_code == 302


# Pre-account hijack (issue 18, point 8): the page and the mail name what they confirm, and
# whoever did not sign up can discard the claim.


def test_the_verification_page_names_the_account_and_offers_to_discard_it(ddb):
    signup(Client(), "victim2@example.com", "squatter2")
    account = store.get_by_username("squatter2")
    path = path_of(link_in(mails_to("victim2@example.com")[0]))

    page = Client().get(path).content.decode()

    assert "squatter2" in page and "victim2@example.com" in page
    assert str(account.created.year) in page
    assert "If you did not sign up, do not confirm." in page
    assert f'action="{path}discard/"' in page


def test_the_verification_mail_names_the_account_and_says_not_to_confirm_a_stranger(ddb):
    signup(Client(), "victim2@example.com", "squatter2")

    (message,) = mails_to("victim2@example.com")

    assert "Hello squatter2" not in message.body
    assert "“squatter2”" in message.body
    assert "If you did not sign up, do not confirm" in message.body


def test_discarding_deletes_the_sign_up_and_frees_its_name(ddb):
    signup(Client(), "victim2@example.com", "wanted")
    path = path_of(link_in(mails_to("victim2@example.com")[0]))

    response = Client().post(f"{path}discard/")

    assert response.status_code == 200
    assert "is discarded" in response.content.decode()
    assert store.get_by_username("wanted") is None
    # No lock, and no account: only the tombstone its deletion leaves at its key.
    items = table_items()
    assert [pk for pk in items if pk.startswith("UNIQ#")] == []
    assert [set(item) for pk, item in items.items() if pk.startswith("ACCT#")] == [{"PK", "SK", "deleted", "expires"}]
    assert Client().post(path).status_code == 400  # its confirm button no longer works
    assert signup(Client(), "victim2@example.com", "wanted").status_code == 302


def test_a_verified_account_is_never_discarded(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")
    path = confirm(client, "ada@example.com").request["PATH_INFO"]

    response = Client().post(f"{path}discard/")

    assert response.status_code == 400
    assert "cannot be discarded" in response.content.decode()
    assert store.get_by_email("ada@example.com").username == "ada"


def test_opening_the_discard_address_discards_nothing(ddb):
    signup(Client(), "ada@example.com", "ada")
    path = path_of(link_in(mails_to("ada@example.com")[0]))

    response = Client().get(f"{path}discard/")

    assert response.status_code == 302 and response["Location"] == path
    assert store.get_by_username("ada") is not None


def test_send_again_after_confirming_in_another_tab_says_the_address_is_confirmed(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")
    confirm(client, "ada@example.com")  # the other tab: same browser, same session

    response = client.post("/accounts/verify/sent/", follow=True)

    texts = messages_of(response)
    assert texts == ["ada@example.com is already confirmed: there is no link to send."]
    assert response.redirect_chain[-1][0] == "/accounts/login/"
    assert len(mails_to("ada@example.com")) == 1


def test_send_again_after_discarding_says_the_sign_up_is_gone(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")
    Client().post(path_of(link_in(mails_to("ada@example.com")[0])) + "discard/")

    response = client.post("/accounts/verify/sent/", follow=True)

    assert any("no longer exists" in text for text in messages_of(response))
    assert "None" not in " ".join(messages_of(response))


def test_an_unverified_hold_ends_after_24_hours_and_sending_again_does_not_extend_it(ddb):
    client = Client()
    signup(client, "ada@example.com", "ada")
    before = table_items()

    client.post("/accounts/verify/sent/")

    account = store.get_by_username("ada")
    assert epoch_now() + 86400 - 120 <= account.expires <= epoch_now() + 86400
    after = table_items()
    assert after[account.PK]["expires"] == before[account.PK]["expires"]
    assert after["UNIQ#HANDLE#ada"]["expires"] == before["UNIQ#HANDLE#ada"]["expires"]
    assert len(mails_to("ada@example.com")) == 2
