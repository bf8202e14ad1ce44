"""``/staff/accounts/<id>/``: the account beside its locks, and every action, happy path and
collision, each through the store. Field errors read exactly as on the person's own pages."""

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.hashers import make_password
from django.urls import reverse

from accounts import store
from accounts.exceptions import StaleItem
from accounts.models import User
from accounts.staff.forms import StaffEmailForm
from tests.seeding import delete_lock, read_lock, write_locks
from tests.staff import boss, client_as, errorlist, make_account, messages_of, staff_client  # noqa: F401 (fixtures)
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb):
    return make_account("ada@example.com", "ada")


def page_of(account):
    return reverse("staff:account", args=[account.id])


def action(name, account):
    return reverse(f"staff:{name}", args=[account.id])


def lock_rows(response):
    return {row["lock"].constraint.namespace: row for row in response.context["locks"]}


# The account page


def test_account_page_shows_the_item_and_each_lock_with_full_key_owner_and_status(staff_client, ada):
    response = staff_client.get(page_of(ada))

    page = response.content.decode()
    assert response.status_code == 200
    assert f"<code>{ada.PK}</code> / <code>PROFILE</code>" in page
    assert "<code>UNIQ#EMAIL#ada@example.com</code> / <code>LOCK</code>" in page
    assert "<code>UNIQ#HANDLE#ada</code> / <code>LOCK</code>" in page
    assert "<code>UNIQ#HANDLE_SKEL#ada</code> / <code>LOCK</code>" in page
    assert page.count(f"<code>{ada.PK}</code>") == 4
    assert {row["label"] for row in lock_rows(response).values()} == {"ok"}


def test_account_page_shows_a_missing_lock_and_one_owned_by_another_account(staff_client, ada, boss):
    delete_lock("UNIQ#EMAIL#ada@example.com")
    write_locks({"UNIQ#HANDLE#ada": boss.PK})

    response = staff_client.get(page_of(ada))

    rows = lock_rows(response)
    assert rows["EMAIL"]["label"] == "missing"
    assert rows["HANDLE"]["label"] == "owned by another account"
    assert rows["HANDLE"]["owner_id"] == boss.id
    page = response.content.decode()
    assert "no lock item" in page
    assert f'<a href="{page_of(boss)}">view</a>' in page
    assert page.count("Give this lock to this account") == 2


def test_giving_a_missing_lock_back_from_the_account_page(staff_client, ada):
    delete_lock("UNIQ#EMAIL#ada@example.com")
    data = {"kind": "missing", "namespace": "EMAIL", "key": "UNIQ#EMAIL#ada@example.com", "holder": ada.id}

    response = staff_client.post(reverse("staff:repair"), {**data, "next": page_of(ada)}, follow=True)

    assert response.redirect_chain[-1][0] == page_of(ada)
    assert messages_of(response) == ["Repaired UNIQ#EMAIL#ada@example.com: lock claimed."]
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)


def test_repair_redirect_ignores_a_next_on_another_site(staff_client, ada):
    delete_lock("UNIQ#EMAIL#ada@example.com")
    data = {"kind": "missing", "namespace": "EMAIL", "key": "UNIQ#EMAIL#ada@example.com", "holder": ada.id}

    response = staff_client.post(reverse("staff:repair"), {**data, "next": "https://evil.example/"})

    assert response["Location"] == reverse("staff:locks")


def test_unknown_account_is_404_on_every_account_url(staff_client):
    for name in ("account", "delete"):
        assert staff_client.get(reverse(f"staff:{name}", args=["nobody"])).status_code == 404
    assert (
        staff_client.post(reverse("staff:flag", args=["nobody"]), {"flag": "is_staff", "value": "1"}).status_code == 404
    )


# Email


def test_change_email_releases_the_lock_until_the_new_address_is_verified(staff_client, ada):
    response = staff_client.post(action("email", ada), {"email": "Lovelace@EXAMPLE.com"}, follow=True)

    assert messages_of(response) == ["The email address of ada is now Lovelace@example.com."]
    assert store.get_account(ada.id).email == "Lovelace@example.com"
    # Issue 26: an address staff set holds no lock until its mailbox confirms it.
    assert read_lock("UNIQ#EMAIL#lovelace@example.com") == (False, None)
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    staff_client.post(action("verification", ada), {"action": "verify"})
    assert read_lock("UNIQ#EMAIL#lovelace@example.com") == (True, ada.PK)


def test_change_email_to_a_taken_one_shows_the_user_pages_error(staff_client, ada, boss):
    response = staff_client.post(action("email", ada), {"email": "BOSS@example.com"})

    assert response.status_code == 200
    assert response.context["email_form"].has_error("email", "email_taken")
    assert errorlist(response, "email") == (
        '<ul class="errorlist" id="id_email_error"><li>This email address is already in use.</li></ul>'
    )
    assert 'value="BOSS@example.com"' in response.content.decode()
    assert store.get_account(ada.id).email == "ada@example.com"


@pytest.mark.parametrize(
    "field, value",
    [
        ("email", "boss@example.com"),
        ("email", "not-an-email"),
        ("email", "x" * 250 + "@example.com"),
        ("email", ""),
        ("username", "boss"),
        ("username", "ｂｏｓｓ"),
        ("username", "with@sign"),
        ("username", "zero\u200bwidth"),
        ("username", "spa ce"),
        ("username", "x" * 151),
    ],
)
def test_field_errors_are_exactly_those_of_the_persons_own_page(staff_client, boss, field, value):
    person = make_account("person@example.com", "person", password=make_password(PASSWORD))
    own_page_url = reverse(f"accounts:{field}_change")
    own_page = client_as(person).post(own_page_url, {field: value, "password": PASSWORD})

    staff_page = staff_client.post(action(field, person), {field: value})

    assert errorlist(own_page, field) is not None
    assert errorlist(staff_page, field) == errorlist(own_page, field)


# Username


def test_change_username_moves_the_lock(staff_client, ada):
    response = staff_client.post(action("username", ada), {"username": "lovelace"}, follow=True)

    assert messages_of(response) == ["The username of ada@example.com is now lovelace."]
    assert read_lock("UNIQ#HANDLE#lovelace") == (True, ada.PK)
    assert read_lock("UNIQ#HANDLE#ada") == (False, None)


def test_change_username_to_a_case_variant_of_a_taken_one_is_refused(staff_client, ada):
    response = staff_client.post(action("username", ada), {"username": "BOSS"})

    assert response.context["username_form"].has_error("username", "username_taken")
    assert errorlist(response, "username") == (
        '<ul class="errorlist" id="id_username_error"><li>This username is taken.</li></ul>'
    )
    assert store.get_account(ada.id).username == "ada"


def test_a_change_racing_another_one_is_refused_as_stale(ada):
    user = User.from_account(store.get_account(ada.id))
    store.change_username(store.get_account(ada.id), "renamed")
    form = StaffEmailForm(user, {"email": "new@example.com"})
    assert form.is_valid()

    with pytest.raises(StaleItem) as raised:
        form.save()
    form.add_store_error(raised.value)

    assert form.non_field_errors() == [
        "This account changed while the page was open, so nothing was saved. Look again and retry."
    ]
    assert read_lock("UNIQ#EMAIL#new@example.com") == (False, None)


# Password


def test_set_password_lets_the_person_log_in_with_it(staff_client, ada):
    response = staff_client.post(
        action("password", ada), {"new_password1": PASSWORD, "new_password2": PASSWORD}, follow=True
    )

    assert messages_of(response) == ["ada has a new password; their sessions have ended."]
    assert authenticate(username="ada", password=PASSWORD).id == ada.id


def test_set_password_ends_the_persons_sessions(staff_client, ada):
    persons_client = client_as(ada)
    assert persons_client.get(reverse("accounts:profile")).status_code == 200

    staff_client.post(action("password", ada), {"new_password1": PASSWORD, "new_password2": PASSWORD})

    assert persons_client.get(reverse("accounts:profile")).status_code == 302


def test_set_password_applies_the_password_validators(staff_client, ada):
    response = staff_client.post(action("password", ada), {"new_password1": "ada", "new_password2": "ada"})

    form = response.context["password_form"]
    assert form.has_error("new_password2", "password_too_short")
    assert form.has_error("new_password2", "password_too_similar")
    assert store.get_account(ada.id).password == ada.password


def test_set_password_needs_both_copies_to_match(staff_client, ada):
    response = staff_client.post(action("password", ada), {"new_password1": PASSWORD, "new_password2": PASSWORD + "x"})

    assert response.context["password_form"].has_error("new_password2", "password_mismatch")


# Flags


def test_deactivate_then_activate(staff_client, ada):
    response = staff_client.post(action("flag", ada), {"flag": "is_active", "value": "0"}, follow=True)

    assert messages_of(response) == ["ada: active is off."]
    assert store.get_account(ada.id).is_active is False
    staff_client.post(action("flag", ada), {"flag": "is_active", "value": "1"})
    assert store.get_account(ada.id).is_active is True


def test_a_deactivated_person_cannot_log_in(staff_client):
    person = make_account("person@example.com", "person", password=make_password(PASSWORD))

    staff_client.post(action("flag", person), {"flag": "is_active", "value": "0"})

    assert authenticate(username="person", password=PASSWORD) is None


def test_grant_staff_opens_the_staff_pages_and_revoke_closes_them(staff_client, ada):
    ada_client = client_as(ada)

    response = staff_client.post(action("flag", ada), {"flag": "is_staff", "value": "1"}, follow=True)
    assert messages_of(response) == ["ada: staff is on."]
    assert ada_client.get(reverse("staff:accounts")).status_code == 200

    response = staff_client.post(action("flag", ada), {"flag": "is_staff", "value": "0"}, follow=True)
    assert messages_of(response) == ["ada: staff is off."]
    assert ada_client.get(reverse("staff:accounts")).status_code == 403


def test_unknown_flag_is_a_bad_request(staff_client, ada):
    response = staff_client.post(action("flag", ada), {"flag": "password", "value": "0"})

    assert response.status_code == 400


# The last staff account


def test_the_last_staff_account_keeps_its_staff_flag(staff_client, boss):
    response = staff_client.post(action("flag", boss), {"flag": "is_staff", "value": "0"}, follow=True)

    assert messages_of(response) == ["boss is the last active staff account: make another staff account first."]
    assert store.get_account(boss.id).is_staff is True


def test_the_last_staff_account_cannot_be_deactivated(staff_client, boss):
    staff_client.post(action("flag", boss), {"flag": "is_active", "value": "0"})

    assert store.get_account(boss.id).is_active is True


def test_the_last_staff_account_cannot_be_deleted(staff_client, boss):
    response = staff_client.post(action("delete", boss), follow=True)

    assert messages_of(response) == ["boss is the last active staff account: make another staff account first."]
    assert store.get_account(boss.id) is not None


def test_an_inactive_staff_account_does_not_count_as_staff(staff_client, boss):
    make_account("sleeper@example.com", "sleeper", staff=True, is_active=False)

    staff_client.post(action("flag", boss), {"flag": "is_staff", "value": "0"})

    assert store.get_account(boss.id).is_staff is True


def test_with_two_staff_accounts_one_may_revoke_the_other(staff_client, boss):
    other = make_account("other@example.com", "other", staff=True)

    staff_client.post(action("flag", other), {"flag": "is_staff", "value": "0"})

    assert store.get_account(other.id).is_staff is False
    assert store.get_account(boss.id).is_staff is True


# Delete


def test_delete_asks_for_confirmation_first(staff_client, ada):
    response = staff_client.get(action("delete", ada))

    page = response.content.decode()
    assert "Delete the account ada?" in page
    assert f'action="{action("delete", ada)}"' in page
    assert store.get_account(ada.id) is not None


def test_delete_removes_the_account_and_frees_its_values(staff_client, ada):
    response = staff_client.post(action("delete", ada), follow=True)

    assert response.redirect_chain[-1][0] == reverse("staff:accounts")
    assert messages_of(response) == ["Deleted the account ada (ada@example.com)."]
    assert store.get_account(ada.id) is None
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    assert read_lock("UNIQ#HANDLE#ada") == (False, None)
    assert make_account("ada@example.com", "ada").id != ada.id


def test_delete_leaves_a_lock_held_by_another_account_alone(staff_client, ada, boss):
    write_locks({"UNIQ#HANDLE#ada": boss.PK})

    staff_client.post(action("delete", ada))

    assert store.get_account(ada.id) is None
    assert read_lock("UNIQ#HANDLE#ada") == (True, boss.PK)
