"""The demo reads the standards' settings from its environment (issue 26): the breached
passwords' source (and then lists the validator), the idle and reauthentication timeouts."""

import pytest

from tests.hostproject.test_production import SHOW, demo_settings

VALIDATORS = "import project.settings as s; print([v['NAME'].rpartition('.')[2] for v in s.AUTH_PASSWORD_VALIDATORS])"


def test_a_breached_password_source_in_the_environment_lists_the_validator(tmp_path):
    assert demo_settings(SHOW.format("ACCOUNTS_BREACHED_PASSWORDS"), ACCOUNTS_BREACHED_PASSWORDS=str(tmp_path)) == str(
        tmp_path
    )
    assert "BreachedPasswordValidator" in demo_settings(VALIDATORS, ACCOUNTS_BREACHED_PASSWORDS=str(tmp_path))


def test_without_a_source_no_breached_password_validator_is_listed():
    assert demo_settings(SHOW.format("ACCOUNTS_BREACHED_PASSWORDS")) == "None"
    assert "BreachedPasswordValidator" not in demo_settings(VALIDATORS)


@pytest.mark.parametrize("name", ["ACCOUNTS_SESSION_IDLE_TIMEOUT", "ACCOUNTS_REAUTHENTICATION_TIMEOUT"])
def test_the_timeouts_come_from_the_environment_in_seconds(name):
    assert demo_settings(SHOW.format(name), **{name: "1800"}) == "1800"
    assert demo_settings(SHOW.format(name)) == "unset"
