"""The per-address limit of asking for a login code (issue 35, finding 9), on DynamoDB Local:
every spelling of one address (case, full width, a soft hyphen or an ideographic dot in its
domain) draws on one budget, keyed as its lock is, on the page and in the API alike."""

import pytest
from django.test import Client

from tests.headless import APIClient
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

# One mailbox, spelled four ways that differ even once case-folded.
SPELLINGS = ["ada@example.com", "ａｄａ@example.com", "ada@exam\u00adple.com", "ada@example\u3002com"]


def test_other_spellings_of_one_address_share_the_page_s_budget(ddb, settings, mailoutbox):
    signed_up_client()
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "3/h/key"}

    answers = [Client().post("/accounts/code/", {"login": spelling}) for spelling in SPELLINGS]

    assert [answer.status_code for answer in answers] == [302, 302, 302, 429]
    assert int(answers[-1]["Retry-After"]) > 0


def test_other_spellings_of_one_address_share_the_api_s_budget(ddb, settings, mailoutbox):
    signed_up_client()
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "3/h/key"}

    answers = [APIClient("app").post("auth/code/request", {"email": spelling}) for spelling in SPELLINGS]

    assert [answer.status_code for answer in answers] == [401, 401, 401, 429]
