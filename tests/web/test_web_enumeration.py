"""ACCOUNTS_PREVENT_ENUMERATION on DynamoDB Local: a registered address answers exactly as a
new one, on the sign-up and email-change forms, whatever else the form gets wrong, in every
verification mode. The one difference is the mail, which only the address's owner reads."""

import re

import pytest
from django.contrib.auth.hashers import make_password
from django.core import mail
from django.test import Client

from accounts import store
from accounts.exceptions import UniqueViolation
from tests.mail import link_in, mails_to, path_of
from tests.web import OTHER_PASSWORD, PASSWORD, login, messages_of, signup

pytestmark = pytest.mark.dynamodb_local

REGISTERED, NEW = "owner@example.com", "fresh@example.com"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


@pytest.fixture
def prevention(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    store.signup(REGISTERED, "owner", make_password(PASSWORD), email_verified=True)
    store.signup("someone@example.com", "taken", "!hash", email_verified=True)


def verified_client(email, username):
    """A client logged in to a verified account (made by the store: a sign-up would not log in)."""
    store.signup(email, username, make_password(PASSWORD), email_verified=True)
    client = Client()
    assert login(client, username).status_code == 302
    return client


def anonymized(text, *values):
    for value in values:
        text = text.replace(value, "VALUE")
    return CSRF.sub("CSRF", text)


def what_the_visitor_sees(client, response, email, username):
    """Everything a sign-up shows its sender: the answer, the errors by field, the next
    page, whether they are logged in, what logging in as the new name says, and how many
    mails went to the address (not what they say: only the mailbox sees that)."""
    if response.status_code == 200:
        form = response.context["form"]
        errors = {field: sorted(error.code for error in found) for field, found in form.errors.as_data().items()}
        landing = None
    else:
        errors = None
        landing = anonymized(client.get(response["Location"]).content.decode(), email)
    logged_in = client.get("/accounts/profile/").status_code == 200
    attempt = login(Client(), username)
    login_answer = (attempt.status_code, sorted(attempt.context["form"].errors.as_data().get("__all__", []), key=str))
    login_codes = (login_answer[0], [error.code for error in login_answer[1]])
    return response.status_code, response.get("Location"), errors, landing, logged_in, login_codes, len(mails_to(email))


@pytest.mark.parametrize("mode", ["mandatory", "optional", "none"])
@pytest.mark.parametrize(
    "username, password2",
    [("probe", PASSWORD), ("taken", PASSWORD), ("probe", OTHER_PASSWORD), ("taken", OTHER_PASSWORD)],
    ids=["valid", "username taken", "passwords differ", "both"],
)
def test_a_registered_address_answers_as_a_new_one(prevention, settings, mode, username, password2):
    settings.ACCOUNTS_EMAIL_VERIFICATION = mode
    seen = {}
    for email, suffix in ((REGISTERED, "1"), (NEW, "2")):
        name = username if username == "taken" else f"{username}{suffix}"
        client = Client()
        response = signup(client, email, name, password2=password2)
        seen[email] = what_the_visitor_sees(client, response, email, name)

    assert seen[REGISTERED] == seen[NEW]
    assert store.get_by_email(REGISTERED).username == "owner"


def test_the_owner_gets_a_notice_telling_them_to_reset_the_password_and_no_link(prevention, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    signup(Client(), "Owner@Example.com", "probe")

    (notice,) = mail.outbox
    assert notice.to == ["Owner@example.com"]
    assert "tried to sign up" in notice.subject
    assert "reset" in notice.body
    assert path_of(link_in(notice)) == "/accounts/password/reset/"
    # The sign-up exists, unverified, as any other: it can never take the owner's address.
    probe = store.get_by_username("probe")
    with pytest.raises(UniqueViolation):
        store.verify_email(probe)
    assert store.get_by_email(REGISTERED).username == "owner"


def test_sending_again_answers_alike_for_a_registered_and_a_new_address(prevention, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    answers = {}
    for email, name in ((REGISTERED, "probe1"), (NEW, "probe2")):
        client = Client()
        signup(client, email, name)
        first = client.post("/accounts/verify/sent/", follow=True)
        second = client.post("/accounts/verify/sent/", follow=True)
        answers[email] = [anonymized(text, email) for text in messages_of(first) + messages_of(second)]
        answers[email].append(len(mails_to(email)))

    assert answers[REGISTERED] == answers[NEW]
    assert answers[NEW][-1] == 2  # the sign-up's and one resend; the second waits a minute


def test_an_email_change_to_a_registered_address_answers_as_to_a_new_one(prevention):
    seen = {}
    for requester, email in (("ada", REGISTERED), ("bob", NEW)):
        client = verified_client(f"{requester}@example.com", requester)
        response = client.post("/accounts/email/", {"email": email, "password": PASSWORD}, follow=True)
        page = client.get("/accounts/profile/").content.decode()
        # The address part of the profile: the pending change, its cancel button.
        profile = anonymized(re.search(r'<dl class="profile">.*?</dl>', page, re.S).group(), email, requester)
        notices = mails_to(f"{requester}@example.com")
        seen[email] = (
            response.status_code,
            [anonymized(text, email, requester) for text in messages_of(response)],
            profile,
            len(notices),
            len(mails_to(email)),
        )

    assert seen[REGISTERED] == seen[NEW]
    (attempt,) = mails_to(REGISTERED)
    assert "already belongs to an account" in attempt.body and "/confirm/" not in attempt.body
    assert "/accounts/email/confirm/" in link_in(mails_to(NEW)[0])
    assert store.get_by_email(REGISTERED).username == "owner"


def test_without_prevention_the_forms_say_the_address_is_in_use(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_PREVENT_ENUMERATION = False
    store.signup(REGISTERED, "owner", "!hash", email_verified=True)

    response = signup(Client(), REGISTERED, "probe")

    assert response.context["form"].has_error("email", "email_taken")
    assert mail.outbox == []
