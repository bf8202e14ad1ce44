"""The members site (tests/hostproject): another project installing the accounts app.

Each test runs under that project's own settings module (tests.projects.settings_module),
on DynamoDB Local, through its URLs: account pages under /members/, staff pages under
/backoffice/, a table named ``members``, a unique ``phone`` and its signup form, and the
app's defaults otherwise (a sign-up proves its address before it logs in).
"""

import ast
from pathlib import Path

import django
import pytest
from django.core import checks
from django.template.loader import get_template
from django.test import Client

from accounts import store
from accounts.adapter import DefaultAccountAdapter
from accounts.tables import TableModel, create_table, dynamodb_client, get_account_model
from tests.hostproject import receivers
from tests.hostproject.settings import BASE_DIR
from tests.mail import link_in, mails_to, path_of
from tests.projects import readme_blocks, settings_module
from tests.staff import client_as, make_account
from tests.web import PASSWORD, csrf_token_in, signup

pytestmark = pytest.mark.dynamodb_local

HOST_TEMPLATES = BASE_DIR / "templates"
STARTPROJECT_SETTINGS = Path(django.__file__).parent / "conf" / "project_template" / "project_name" / "settings.py-tpl"


class AdapterWithoutPhoneMessage(DefaultAccountAdapter):
    """Stores the phone number but has no message of its own for a phone in use."""

    def get_signup_attributes(self, request, form):
        return {"phone": form.cleaned_data["phone"] or None}


@pytest.fixture
def members(dynamodb_local):
    """The members site's settings, with its ``members`` table fresh on DynamoDB Local."""
    with settings_module("tests.hostproject.settings", ACCOUNTS_ENDPOINT_URL=dynamodb_local.endpoint_url):
        create_table(wait=True)
        receivers.created.clear()
        yield
        TableModel.delete_table()


def join(client, email="ada@example.com", username="ada", phone=""):
    """Sign up through /members/signup/ as a browser would; the response to the POST."""
    return signup(client, email, username, url="/members/signup/", phone=phone)


def verify(client, email):
    """Open the last verification link mailed to ``email`` and press its button."""
    return client.post(path_of(link_in(mails_to(email)[-1])))


def log_in(client, login_name):
    return client.post("/members/login/", {"username": login_name, "password": PASSWORD})


def member_client(email="ada@example.com", username="ada", phone="+44 20 7946 0000"):
    """A client logged in to a new member account, its address verified."""
    client = Client()
    response = join(client, email, username, phone)
    assert response.status_code == 302, response.content.decode()
    assert verify(client, email).status_code == 200
    assert log_in(client, username).status_code == 302
    return client


def assigned_names_in(code):
    """The upper-case names a settings module's ``code`` assigns."""
    return {
        target.id
        for node in ast.walk(ast.parse(code))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id.isupper()
    }


def stored_keys():
    """``(PK, SK)`` of every item in the members table but rate-limit counters (they expire
    on their own, whatever happens to the accounts) and the item recording the key version."""
    items = dynamodb_client().scan(TableName="members", ConsistentRead=True)["Items"]
    return {(item["PK"]["S"], item["SK"]["S"]) for item in items if item["SK"]["S"] not in ("RATE", "META")}


def lock_keys():
    return {pk for pk, sk in stored_keys() if sk == "LOCK"}


def test_members_site_passes_the_system_checks(members):
    issues = [issue for issue in checks.run_checks() if issue.id and issue.id.startswith("accounts.")]

    assert issues == []


def test_members_site_sets_only_what_startproject_and_the_readme_set():
    readme = set()
    for path, _, code in readme_blocks():
        if path.startswith("myproject/settings"):
            readme |= assigned_names_in(code)
    startproject = assigned_names_in(STARTPROJECT_SETTINGS.read_text())

    assert assigned_names_in((BASE_DIR / "settings.py").read_text()) - readme - startproject == set()
    assert "ACCOUNTS_EMAIL_VERIFICATION" not in readme


def test_accounts_live_in_the_members_table_as_member_accounts(members):
    assert get_account_model().__name__ == "MemberAccount"
    assert get_account_model().Meta.table_name == "members"
    assert dynamodb_client().describe_table(TableName="members")["Table"]["TableStatus"] == "ACTIVE"


def test_signup_page_is_the_members_template_with_the_phone_field(members):
    response = Client().get("/members/signup/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "Members sign up here, with a phone number if they like." in html
    assert get_template("accounts/signup.html").origin.name == str(HOST_TEMPLATES / "accounts" / "signup.html")
    assert list(response.context["form"].fields) == ["email", "username", "phone", "password1", "password2", "token"]
    assert 'action="/members/signup/"' in html
    assert 'href="/members/login/"' in html


def test_signup_takes_the_phone_lock_and_the_mailed_link_the_email_lock(members):
    client = Client()

    response = join(client, "ada@example.com", "ada", "+1 (555) 010-9999")

    assert response.status_code == 302
    assert response["Location"] == "/members/verify/sent/"
    assert store.get_by_username("ada").phone == "+1 (555) 010-9999"
    assert store.get_by_email("ada@example.com") is None
    assert lock_keys() == {"UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada", "UNIQ#PHONE#+15550109999"}
    assert link_in(mails_to("ada@example.com")[0]).startswith("https://members.example.com/members/verify/")

    assert verify(client, "ada@example.com").status_code == 200

    assert store.get_by_email("ada@example.com").phone == "+1 (555) 010-9999"
    assert "UNIQ#EMAIL#ada@example.com" in lock_keys()
    assert log_in(client, "ada@example.com")["Location"] == "/members/profile/"


def test_a_look_alike_of_a_members_username_is_refused(members):
    join(Client(), "pepe@example.com", "pepe")

    form = join(Client(), "other@example.com", "рере").context["form"]

    assert form.has_error("username", "username_similar")


def test_members_receiver_hears_of_each_account_created(members):
    join(Client(), "ada@example.com", "ada", "+1 555 010 9999")
    join(Client(), "grace@example.com", "grace")

    ada, grace = store.get_by_username("ada"), store.get_by_username("grace")
    assert receivers.created == [(ada.id, "ada@example.com", "+1 555 010 9999"), (grace.id, "grace@example.com", None)]


def test_second_signup_with_the_same_phone_written_otherwise_gets_the_phone_error(members):
    join(Client(), "ada@example.com", "ada", "+1 (555) 010-9999")

    response = join(Client(), "grace@example.com", "grace", "+1 555.010.9999")

    form = response.context["form"]
    assert response.status_code == 200
    assert form.errors == {"phone": ["This phone number is already in use."]}
    assert form.has_error("phone", "phone_taken")
    assert store.get_by_username("grace") is None
    assert len(receivers.created) == 1


def test_phone_in_use_gets_the_generic_message_from_an_adapter_without_its_own(members, settings):
    settings.ACCOUNTS_ADAPTER = f"{__name__}.AdapterWithoutPhoneMessage"
    join(Client(), "ada@example.com", "ada", "+15550109999")

    form = join(Client(), "grace@example.com", "grace", "+1 555 010 9999").context["form"]

    assert form.errors == {"phone": ["This value is already in use."]}
    assert form.has_error("phone", "value_taken")


def test_signup_without_a_phone_takes_no_phone_lock(members):
    join(Client(), "ada@example.com", "ada")
    join(Client(), "grace@example.com", "grace")

    assert store.get_by_username("grace").phone is None
    assert not any(key.startswith("UNIQ#PHONE#") for key in lock_keys())


def test_phone_with_too_few_digits_is_refused_before_anything_is_stored(members):
    form = join(Client(), "ada@example.com", "ada", "+1 (5)").context["form"]

    assert form.has_error("phone", "phone_short")
    assert stored_keys() == set()


def test_email_change_through_the_members_pages_moves_the_email_lock_only(members):
    client = member_client("ada@example.com", "ada", "+44 20 7946 0000")
    page = client.get("/members/email/")

    response = client.post("/members/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert 'action="/members/email/"' in page.content.decode()
    assert response.status_code == 302
    assert response["Location"] == "/members/profile/"
    link = path_of(link_in(mails_to("lovelace@example.com")[0]))
    assert link.startswith("/members/email/confirm/")
    assert client.post(link).status_code == 200
    assert store.get_by_email("lovelace@example.com").username == "ada"
    assert lock_keys() == {
        "UNIQ#EMAIL#lovelace@example.com",
        "UNIQ#HANDLE#ada",
        "UNIQ#HANDLE_SKEL#ada",
        "UNIQ#PHONE#+442079460000",
    }


def test_deletion_through_the_members_pages_releases_the_phone_too(members):
    client = member_client("ada@example.com", "ada", "+44 20 7946 0000")

    response = client.post("/members/delete/", {"password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/members/login/"
    # Every lock released; the account's tombstone keeps its id from coming back.
    [(pk, sort_key)] = stored_keys()
    assert pk.startswith("ACCT#") and sort_key == "PROFILE"
    assert join(Client(), "grace@example.com", "grace", "+442079460000").status_code == 302


def test_member_pages_link_only_under_members(members):
    client = member_client()

    for path in ("profile", "email", "username", "password", "delete"):
        html = client.get(f"/members/{path}/").content.decode()
        assert '="/accounts/' not in html, path
        assert f'action="/members/{path}/"' in html or path == "profile"
    assert 'href="/members/email/"' in client.get("/members/profile/").content.decode()


def test_login_and_logout_through_the_members_pages(members):
    member_client("ada@example.com", "ada")
    client = Client(enforce_csrf_checks=True)
    page = client.get("/members/login/")

    login = client.post(
        "/members/login/", {"username": "ADA", "password": PASSWORD, "csrfmiddlewaretoken": csrf_token_in(page)}
    )
    logout = client.post("/members/logout/", {"csrfmiddlewaretoken": csrf_token_in(client.get("/members/profile/"))})

    assert login["Location"] == "/members/profile/"
    assert logout["Location"] == "/members/login/"


def test_anonymous_visitor_is_sent_to_the_members_login_page(members):
    response = Client().get("/members/profile/")

    assert response.status_code == 302
    assert response["Location"] == "/members/login/?next=/members/profile/"


def test_staff_pages_under_backoffice_list_members_and_their_phone_lock(members):
    boss = make_account("boss@example.com", "boss", staff=True, email_verified=True)
    ada = make_account("ada@example.com", "ada", phone="+1 555 010 9999")
    staff = client_as(boss)

    listing = staff.get("/backoffice/")
    detail = staff.get(f"/backoffice/accounts/{ada.id}/")

    assert listing.status_code == 200
    assert f'href="/backoffice/accounts/{ada.id}/"' in listing.content.decode()
    assert detail.status_code == 200
    assert "UNIQ#PHONE#+15550109999" in detail.content.decode()


def test_staff_pages_send_anonymous_visitors_to_the_members_login_page(members):
    response = Client().get("/backoffice/")

    assert response["Location"] == "/members/login/?next=/backoffice/"
