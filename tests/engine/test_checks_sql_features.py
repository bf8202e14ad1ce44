"""accounts.E009, W003, W004: Django features that need users in SQL, and AccountIdField."""

import pytest
from django.core import checks
from django.db import models
from django.test import modify_settings
from django.test.utils import isolate_apps

from accounts.checks import check_admin, check_sql_user_features
from accounts.fields import AccountIdField
from accounts.models import User
from tests.web import PASSWORD


def ids(issues):
    return [issue.id for issue in issues]


def test_test_settings_use_no_sql_user_feature():
    assert check_sql_user_features(None) == []


@pytest.mark.parametrize(
    "backend",
    ["django.contrib.auth.backends.ModelBackend", "django.contrib.auth.backends.AllowAllUsersModelBackend"],
)
def test_e009_model_backend_next_to_the_account_backend(settings, backend):
    settings.AUTHENTICATION_BACKENDS = ["accounts.backends.AccountBackend", backend]

    [issue] = check_sql_user_features(None)

    assert issue.id == "accounts.E009"
    assert backend in issue.msg
    assert 'AUTHENTICATION_BACKENDS = ["accounts.backends.AccountBackend"]' in issue.hint


def test_w003_admin_installed_points_at_the_staff_pages():
    with modify_settings(INSTALLED_APPS={"append": "django.contrib.admin"}):
        issues = check_admin(None)

    assert ids(issues) == ["accounts.W003"]
    assert 'include("accounts.staff.urls")' in issues[0].hint


def w003s(**options):
    """The W003s among what the checks find (as a command runs them; ``check --deploy``
    with ``include_deployment_checks``), with the admin installed."""
    with modify_settings(INSTALLED_APPS={"append": "django.contrib.admin"}):
        found = checks.run_checks(tags=[checks.Tags.compatibility], **options)
    return [issue for issue in found if issue.id == "accounts.W003"]


def test_w003_is_not_among_what_every_command_checks_first():
    assert w003s() == []


def test_w003_is_said_once_by_check_deploy():
    assert len(w003s(include_deployment_checks=True)) == 1


def test_w004_foreign_key_or_one_to_one_to_the_user_model_in_another_app():
    with isolate_apps("tests") as apps:

        class Note(models.Model):
            author = models.ForeignKey(User, on_delete=models.CASCADE)
            editor = models.OneToOneField(User, on_delete=models.CASCADE, related_name="+")

            class Meta:
                app_label = "tests"

        issues = check_sql_user_features([apps.get_app_config("tests")])

    assert ids(issues) == ["accounts.W004", "accounts.W004"]
    assert issues[0].obj is Note._meta.get_field("author")
    assert "tests.Note.author is a ForeignKey to accounts.User" in issues[0].msg
    assert "author = accounts.fields.AccountIdField()" in issues[0].hint


def test_w004_not_raised_for_an_account_id_field():
    with isolate_apps("tests") as apps:

        class Note(models.Model):
            author = AccountIdField()

            class Meta:
                app_label = "tests"

        assert check_sql_user_features([apps.get_app_config("tests")]) == []


@isolate_apps("tests")
def test_account_id_field_keeps_the_id_of_an_assigned_user_and_loads_the_user(ddb):
    class Note(models.Model):
        author = AccountIdField()

        class Meta:
            app_label = "tests"

    user = User.objects.create_user("ada", "ada@example.com", PASSWORD)
    field = Note._meta.get_field("author")

    assert field.get_prep_value(user) == user.pk
    assert Note(author=user.pk).get_author_user().username == "ada"
    user.delete()
    assert Note(author=user.pk).get_author_user() is None
    assert Note(author="").get_author_user() is None
    assert field.deconstruct()[3] == {}
