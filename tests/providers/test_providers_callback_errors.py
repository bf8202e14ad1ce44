"""The provider's callback refuses what it cannot use with a page that says why (400), never
a 500, and asks the provider nothing for a state this site did not make for this browser:
counted in the certified oidc-provider's own log of the requests it answered (tests/oidc.py).

The same answers through the API's browser flow (``auth/provider/redirect``):
tests/headless/test_headless_provider_callback_errors.py."""

import pytest
from django.test import Client

from accounts.providers import flows
from tests.oidc import (  # noqa: F401  (fixtures)
    CALLBACK_PATH,
    begin_at_site,
    callback_query,
    cancel_at_provider,
    oidc_provider,
    oidc_site,
    provider_login,
    sign_in_at_provider,
)

pytestmark = pytest.mark.dynamodb_local
BACK = "http://testserver" + CALLBACK_PATH


def reason_of(response):
    """The reason the error page gives (its ``data-reason``), after checking it is the page."""
    assert response.status_code == 400, response.content.decode()
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    return page.split('data-reason="', 1)[1].split('"', 1)[0]


def description_of(response):
    """The provider's ``error_description`` as the page shows it (escaped), or ``None``."""
    page = response.content.decode()
    marker = 'class="provider-error-description">'
    return page.split(marker, 1)[1].split("</q>", 1)[0] if marker in page else None


def assert_nobody_signed_in(client):
    assert "_auth_user_id" not in client.session
    assert flows.PENDING_SESSION_KEY not in client.session


@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"code": "any-code", "state": "made-up"}, id="made-up-state"),
        pytest.param({"code": "any-code"}, id="no-state"),
        pytest.param({"code": "any-code", "state": "a.1.b"}, id="state-shaped"),
        pytest.param({"error": "access_denied", "state": "made-up"}, id="provider-error-with-made-up-state"),
    ],
)
def test_an_unknown_state_ends_on_a_page_without_asking_the_provider(oidc_site, query):
    client = Client()
    begin_at_site(client)
    asked = oidc_site.calls("/token")

    response = client.get(CALLBACK_PATH, query)

    assert reason_of(response) == flows.UNKNOWN_STATE
    assert "not for a sign-in started in this browser" in response.content.decode()
    assert oidc_site.calls("/token") == asked
    assert_nobody_signed_in(client)


def test_another_browsers_answer_with_a_real_code_is_refused_without_asking_the_provider(oidc_site):
    attacker, victim = Client(), Client()
    back = sign_in_at_provider(begin_at_site(attacker), "mallory", BACK)
    begin_at_site(victim)
    asked = oidc_site.calls("/token")

    # Login CSRF: the attacker's own answer, sent to the victim's browser.
    response = victim.get(CALLBACK_PATH, callback_query(back))

    assert reason_of(response) == flows.UNKNOWN_STATE
    assert oidc_site.calls("/token") == asked
    assert_nobody_signed_in(victim)


def test_a_state_whose_time_passed_is_refused_without_asking_the_provider(oidc_site, monkeypatch):
    client = Client()
    monkeypatch.setattr(flows, "STATE_SECONDS", -1)
    back = sign_in_at_provider(begin_at_site(client), "alice", BACK)
    asked = oidc_site.calls("/token")

    response = client.get(CALLBACK_PATH, callback_query(back))

    assert reason_of(response) == flows.EXPIRED
    assert oidc_site.calls("/token") == asked


def test_a_reused_answer_ends_on_a_page_saying_its_code_was_used(oidc_site):
    client = Client()
    back = sign_in_at_provider(begin_at_site(client), "alice", BACK)
    assert client.get(CALLBACK_PATH, callback_query(back))["Location"] == "/accounts/providers/signup/"

    response = client.get(CALLBACK_PATH, callback_query(back))

    # The provider refuses a code used already (and its answer's state is spent here too).
    assert reason_of(response) == flows.INVALID_CODE
    assert "used already" in response.content.decode()


def test_a_missing_code_ends_on_a_page_without_asking_the_provider(oidc_site):
    client = Client()
    state = callback_query(begin_at_site(client))["state"]
    asked = oidc_site.calls("/token")

    response = client.get(CALLBACK_PATH, {"state": state})

    assert reason_of(response) == flows.MISSING_CODE
    assert oidc_site.calls("/token") == asked
    assert_nobody_signed_in(client)


def test_a_bad_code_ends_on_a_page_saying_the_provider_refused_it(oidc_site):
    client = Client()
    state = callback_query(begin_at_site(client))["state"]

    response = client.get(CALLBACK_PATH, {"state": state, "code": "not-a-code-the-provider-gave"})

    assert reason_of(response) == flows.INVALID_CODE
    assert_nobody_signed_in(client)
    # The state is spent: the right code later is refused too.
    assert reason_of(client.get(CALLBACK_PATH, {"state": state, "code": "x"})) == flows.INVALID_CODE


def test_cancelling_at_the_provider_ends_on_a_page_with_the_providers_words(oidc_site):
    client = Client()
    asked = oidc_site.calls("/token")
    back = cancel_at_provider(begin_at_site(client), BACK)
    assert callback_query(back)["error"] == "access_denied"

    response = client.get(CALLBACK_PATH, callback_query(back))

    assert reason_of(response) == flows.CANCELLED
    assert "cancelled" in response.content.decode()
    assert description_of(response) == "End-User aborted interaction"
    assert oidc_site.calls("/token") == asked
    assert_nobody_signed_in(client)


def test_another_provider_error_ends_on_a_page_and_its_description_is_escaped(oidc_site):
    client = Client()
    state = callback_query(begin_at_site(client))["state"]

    response = client.get(
        CALLBACK_PATH, {"state": state, "error": "server_error", "error_description": "<script>x</script>" + "y" * 500}
    )

    assert reason_of(response) == flows.PROVIDER_ERROR
    described = description_of(response)
    assert described.startswith("&lt;script&gt;x&lt;/script&gt;yyy")
    assert len(described) == len("&lt;script&gt;x&lt;/script&gt;") + flows.MAX_DESCRIPTION - len("<script>x</script>")


def test_an_error_description_with_an_unknown_state_is_not_shown(oidc_site):
    response = Client().get(
        CALLBACK_PATH, {"state": "made-up", "error": "access_denied", "error_description": "Call 555-0100 now"}
    )

    assert reason_of(response) == flows.UNKNOWN_STATE
    assert description_of(response) is None


def test_a_refused_answer_while_signed_in_offers_the_way_back_to_the_sign_ins(oidc_site):
    from tests.web import signed_up_client

    client = signed_up_client("carol@example.com", "carol")

    response = client.get(CALLBACK_PATH, {"state": "made-up", "code": "x"})

    assert reason_of(response) == flows.UNKNOWN_STATE
    assert 'href="/accounts/providers/"' in response.content.decode()
