"""The demo reads the settings of a single-page app beside it from the environment, each as
JSON (issue 34): the app's pages, the account pages off, codes instead of links."""

import pytest

from tests.hostproject.test_production import SHOW, demo_settings

REACT_APP = '{"account_confirm_email": "/account/verify-email/{key}", "account_signup": "/account/signup"}'


@pytest.mark.parametrize(
    "name, value, expected",
    [
        (
            "ACCOUNTS_HEADLESS_FRONTEND_URLS",
            REACT_APP,
            "{'account_confirm_email': '/account/verify-email/{key}', 'account_signup': '/account/signup'}",
        ),
        ("ACCOUNTS_HEADLESS_ONLY", "true", "True"),
        ("ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED", "true", "True"),
        ("ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED", "true", "True"),
    ],
)
def test_the_demo_reads_each_setting_as_json(name, value, expected):
    assert demo_settings(SHOW.format(name), **{name: value}) == expected


@pytest.mark.parametrize(
    "name, default",
    [
        ("ACCOUNTS_HEADLESS_FRONTEND_URLS", "{}"),
        ("ACCOUNTS_HEADLESS_ONLY", "False"),
        ("ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED", "False"),
        ("ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED", "False"),
    ],
)
def test_unset_each_is_the_apps_default(name, default):
    assert demo_settings(SHOW.format(name)) == default
