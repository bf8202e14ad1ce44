"""``ACCOUNTS_MAX_EMAIL_ADDRESSES`` and the size of an account's transactions: its deletion
releases every address in one transaction, which system check ``accounts.E015`` counts as it
counts every lock, so a bound too large for DynamoDB's 100 actions stops the server."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from accounts.app_settings import app_settings
from accounts.checks import check_transaction_sizes

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_of_one_address_adds_no_constraint_and_no_action(settings):
    from accounts.tables import account_constraints

    assert [constraint.fields for constraint in account_constraints() if constraint.namespace == "EMAIL"] == [
        ("email",)
    ]
    assert check_transaction_sizes(None) == []


def test_other_addresses_share_the_emails_namespace_bounded_by_the_setting(settings):
    from accounts.tables import account_constraints

    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 5

    email, others = [constraint for constraint in account_constraints() if constraint.namespace == "EMAIL"]
    assert others.fields == ("email_addresses",) and others.many and others.max_values == 4
    assert others.recorded and others.key_version == email.key_version
    assert others.normalizer is email.normalizer


def test_e015_a_bound_whose_deletion_exceeds_100_actions(settings):
    # The account, 3 single locks, 20 passkeys and identities with 20 credential items: 44
    # actions; 57 other addresses make 101.
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 58

    [issue] = check_transaction_sizes(None)

    assert issue.id == "accounts.E015"
    assert "101 actions" in issue.msg


def test_a_bound_whose_deletion_fits_passes_with_w005_at_most(settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 57

    assert [issue.id for issue in check_transaction_sizes(None)] == ["accounts.W005"]


@pytest.mark.parametrize("value", [0, -1, "5", 2.5, True])
def test_a_bound_that_is_not_a_whole_number_of_at_least_one_is_refused(settings, value):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = value

    with pytest.raises(ImproperlyConfigured, match="ACCOUNTS_MAX_EMAIL_ADDRESSES"):
        app_settings.MAX_EMAIL_ADDRESSES


def test_a_project_that_sets_nothing_has_one_address_per_account():
    script = (
        "from django.conf import settings\n"
        "settings.configure()\n"
        "from accounts.app_settings import app_settings\n"
        "print(app_settings.MAX_EMAIL_ADDRESSES)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "1"


def test_the_demo_allows_five_addresses_unless_its_environment_says_otherwise():
    script = (
        "import os\n"
        "os.environ.update(DJANGO_DEBUG='1', {extra})\n"
        "import project.settings as demo\n"
        "print(demo.ACCOUNTS_MAX_EMAIL_ADDRESSES)\n"
    )
    for extra, expected in (("", "5"), ("ACCOUNTS_MAX_EMAIL_ADDRESSES='1'", "1")):
        result = subprocess.run(
            [sys.executable, "-c", script.format(extra=extra)], cwd=ROOT, capture_output=True, text=True, check=True
        )
        assert result.stdout.strip() == expected
