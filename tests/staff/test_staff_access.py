"""Who may use the staff pages: anonymous -> login page, logged-in non-staff -> 403, staff in.

Every page and every action is tried by all three; the refused ones must change nothing.
"""

import pytest
from django.test import Client
from django.urls import reverse

from accounts import audit, store
from accounts.audit import background
from accounts.tables import get_account_model
from tests.seeding import delete_lock, read_lock
from tests.staff import client_as, make_account
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def people(ddb):
    """A staff account, a person, and the account they act on (its email lock deleted)."""
    boss = make_account("boss@example.com", "boss", staff=True)
    person = make_account("person@example.com", "person")
    target = make_account("target@example.com", "target")
    delete_lock("UNIQ#EMAIL#target@example.com")
    return {"boss": boss, "person": person, "target": target}


def requests_for(target):
    """Every staff page and action: (method, url, POST data)."""
    account = [target.id]
    return [
        ("get", reverse("staff:accounts"), None),
        ("get", reverse("staff:accounts") + "?q=target", None),
        ("get", reverse("staff:account", args=account), None),
        ("get", reverse("staff:delete", args=account), None),
        ("get", reverse("staff:locks"), None),
        ("post", reverse("staff:email", args=account), {"email": "new@example.com"}),
        ("post", reverse("staff:username", args=account), {"username": "renamed"}),
        ("post", reverse("staff:password", args=account), {"new_password1": PASSWORD, "new_password2": PASSWORD}),
        ("post", reverse("staff:flag", args=account), {"flag": "is_staff", "value": "1"}),
        (
            "post",
            reverse("staff:repair"),
            {"kind": audit.MISSING, "namespace": "EMAIL", "key": "UNIQ#EMAIL#target@example.com", "holder": target.id},
        ),
        ("post", reverse("staff:repair_all"), {}),
        ("post", reverse("staff:run_audit"), {}),
        ("post", reverse("staff:delete", args=account), {}),
    ]


def send(client, method, url, data):
    return client.get(url) if method == "get" else client.post(url, data)


def assert_target_untouched(target):
    stored = store.get_account(target.id)
    assert stored is not None
    assert (stored.email, stored.username, stored.password, stored.is_staff) == (
        target.email,
        target.username,
        target.password,
        False,
    )
    assert read_lock("UNIQ#EMAIL#target@example.com") == (False, None)


def test_anonymous_visitors_are_sent_to_the_login_page(people):
    client = Client()
    for method, url, data in requests_for(people["target"]):
        response = send(client, method, url, data)

        assert response.status_code == 302, (method, url)
        assert response["Location"].startswith(reverse("accounts:login") + "?next=/staff/"), (method, url)
    assert_target_untouched(people["target"])


def test_people_without_staff_flag_get_403(people):
    client = client_as(people["person"])
    for method, url, data in requests_for(people["target"]):
        response = send(client, method, url, data)

        assert response.status_code == 403, (method, url)
    assert_target_untouched(people["target"])


def test_staff_reach_every_page_and_action(people):
    client = client_as(people["boss"])
    for method, url, data in requests_for(people["target"]):
        response = send(client, method, url, data)

        expected = 200 if method == "get" else 302
        assert response.status_code == expected, (method, url, response.content.decode()[:500])
    assert store.get_account(people["target"].id) is None
    started = background.running_thread()  # the audit "run the audit" started
    if started is not None:
        started.join(timeout=60)


def test_staff_whose_flag_is_revoked_lose_access_at_once(people):
    # Another staff member, so that this is not the last one's access (which is refused).
    make_account("deputy@example.com", "deputy", staff=True)
    client = client_as(people["boss"])
    store.update_account(store.get_account(people["boss"].id), is_staff=False)

    assert client.get(reverse("staff:accounts")).status_code == 403


def test_deactivated_staff_are_logged_out_of_the_staff_pages(people):
    # Another staff member, so that this is not the last one's access (which is refused).
    make_account("deputy@example.com", "deputy", staff=True)
    client = client_as(people["boss"])
    store.update_account(store.get_account(people["boss"].id), is_active=False)

    response = client.get(reverse("staff:accounts"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))


def test_actions_refuse_get(people):
    client = client_as(people["boss"])
    target = people["target"]

    for name in ("staff:email", "staff:username", "staff:password"):
        assert client.get(reverse(name, args=[target.id])).status_code == 405
    assert client.get(reverse("staff:repair")).status_code == 405
    assert client.get(reverse("staff:repair_all")).status_code == 405


def test_every_staff_post_needs_the_csrf_token(people):
    client = client_as(people["boss"], enforce_csrf_checks=True)
    target = people["target"]
    for method, url, data in requests_for(target):
        if method == "post":
            assert client.post(url, data).status_code == 403, url
    assert_target_untouched(target)
    assert get_account_model().count() >= 3


def test_a_post_with_the_pages_csrf_token_goes_through(people):
    client = client_as(people["boss"], enforce_csrf_checks=True)
    target = people["target"]
    page = client.get(reverse("staff:account", args=[target.id]))
    token = page.context["csrf_token"]

    response = client.post(
        reverse("staff:flag", args=[target.id]), {"flag": "is_active", "value": "0", "csrfmiddlewaretoken": token}
    )

    assert response.status_code == 302
    assert store.get_account(target.id).is_active is False


def test_the_site_header_links_the_staff_pages_for_staff_only(people):
    staff_header = client_as(people["boss"]).get(reverse("accounts:profile")).content.decode()
    person_header = client_as(people["person"]).get(reverse("accounts:profile")).content.decode()

    assert f'<a href="{reverse("staff:accounts")}">Staff</a>' in staff_header
    assert reverse("staff:accounts") not in person_header
