"""Permissions with Django's semantics: a superuser has every one, staff what
ACCOUNTS_STAFF_PERMISSIONS or the adapter grants; ``perms`` in templates; the admin's index
and ``migrate`` without a SQL database."""

from io import StringIO

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.template import engines
from django.test import Client, RequestFactory, override_settings

from accounts import store
from accounts.adapter import DefaultAccountAdapter
from accounts.models import User
from accounts.tables import get_account_model
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

PERMS_TEMPLATE = "{% if perms.polls %}polls:{% endif %}{% if perms.polls.change_poll %}change{% endif %}"


class PollEditorsAdapter(DefaultAccountAdapter):
    """Grants poll editing to every account whose username starts with ``editor``."""

    def get_user_permissions(self, user):
        return {"polls.change_poll"} if user.username.startswith("editor") else set()


def with_perms(user):
    """``PERMS_TEMPLATE`` rendered for ``user`` by Django's auth context processor."""
    request = RequestFactory().get("/")
    request.user = user
    return engines["django"].from_string(PERMS_TEMPLATE).render({}, request)


def test_superuser_has_every_permission_and_is_stored_as_one(ddb):
    boss = User.objects.create_superuser("boss", "boss@example.com", PASSWORD)

    assert boss.has_perm("polls.change_poll") and boss.has_perms(["polls.add_poll", "auth.view_group"])
    assert boss.has_module_perms("anything")
    assert User.objects.get(pk=boss.pk).is_superuser is True
    assert store.get_account(boss.pk).is_superuser is True


def test_inactive_superuser_has_no_permission(ddb):
    boss = User.objects.create_superuser("boss", "boss@example.com", PASSWORD, is_active=False)

    assert not boss.has_perm("polls.change_poll")
    assert not boss.has_module_perms("polls")


def test_staff_and_other_accounts_have_no_permission_by_default(ddb):
    staff = User.objects.create_user("clerk", "clerk@example.com", PASSWORD, is_staff=True)
    ada = User.objects.create_user("ada", "ada@example.com", PASSWORD)

    for user in (staff, ada):
        assert (user.is_superuser, user.has_perm("polls.change_poll"), user.has_module_perms("polls")) == (
            False,
            False,
            False,
        )
        assert user.get_all_permissions() == set()


def test_staff_get_the_permissions_of_the_setting(ddb, settings):
    settings.ACCOUNTS_STAFF_PERMISSIONS = ["polls.change_poll"]
    staff = User.objects.create_user("clerk", "clerk@example.com", PASSWORD, is_staff=True)
    ada = User.objects.create_user("ada", "ada@example.com", PASSWORD)

    assert staff.has_perm("polls.change_poll") and staff.has_module_perms("polls")
    assert not staff.has_perm("polls.delete_poll") and not staff.has_module_perms("auth")
    assert staff.get_all_permissions() == {"polls.change_poll"}
    assert not ada.has_perm("polls.change_poll")
    staff.is_active = False
    assert not staff.has_perm("polls.change_poll")


def test_the_adapter_hook_grants_permissions(ddb, settings):
    settings.ACCOUNTS_ADAPTER = f"{__name__}.PollEditorsAdapter"
    editor = User.objects.create_user("editor-ada", "ada@example.com", PASSWORD)

    assert editor.has_perm("polls.change_poll")
    assert not User.objects.create_user("grace", "grace@example.com", PASSWORD).has_perm("polls.change_poll")


def test_perms_in_templates_follow_has_perm(ddb, settings):
    settings.ACCOUNTS_STAFF_PERMISSIONS = ["polls.change_poll"]

    staff = User.objects.create_user("clerk", "clerk@example.com", PASSWORD, is_staff=True)
    boss = User.objects.create_superuser("boss", "boss@example.com", PASSWORD)
    ada = User.objects.create_user("ada", "ada@example.com", PASSWORD)

    assert [with_perms(user) for user in (staff, boss, ada, AnonymousUser())] == [
        "polls:change",
        "polls:change",
        "",
        "",
    ]


def test_an_account_stored_before_superusers_existed_is_not_one(ddb):
    account, _ = store.signup("ada@example.com", "ada", "!hash", email_verified=True)
    raw = get_account_model()._get_connection().get_item(account.PK, "PROFILE", consistent_read=True)["Item"]
    del raw["is_superuser"]
    get_account_model()._get_connection().put_item(account.PK, "PROFILE", attributes=raw)

    assert User.objects.get(pk=account.id).is_superuser is False


ADMIN_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
]


@pytest.fixture
def admin_site():
    """The project with Django's admin installed at /admin/ (and no SQL database)."""
    with override_settings(INSTALLED_APPS=ADMIN_APPS, ROOT_URLCONF="tests.admin_urls"):
        yield


@pytest.mark.parametrize("superuser", [True, False], ids=["superuser", "staff"])
def test_admin_index_opens_for_staff_without_a_sql_database(ddb, admin_site, superuser):
    extra = {"is_superuser": superuser, "is_staff": True}
    client = Client()
    client.force_login(User.objects.create_user("boss", "boss@example.com", PASSWORD, **extra))

    response = client.get("/admin/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "Accounts are kept in DynamoDB, not in a SQL table" in html
    assert 'href="/staff/"' in html
    assert "Groups" not in html


def test_migrate_without_a_sql_database_says_what_to_do_in_one_line():
    out = StringIO()

    call_command("migrate", stdout=out)

    [line] = out.getvalue().splitlines()
    assert line.startswith("No SQL database to migrate")
    assert line.endswith("python manage.py accounts_createtable")
