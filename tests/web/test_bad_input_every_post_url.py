"""Bad input is a 400, never a 500 (issue 26, finding 6): every POST URL of the app (the
accounts, second-factor and staff pages), as an anonymous visitor, a logged-in user and a
staff member, answered a form in a charset Django refuses, bytes that are no form, and a
passkey answer nested 20,000 deep under the field's size limit."""

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from accounts import bounded_json
from accounts.mfa import passkeys
from tests.staff import client_as, make_account

pytestmark = pytest.mark.dynamodb_local

NESTED = "[" * 20000 + "]" * 20000
FORM = "application/x-www-form-urlencoded"
# Values for the URLs' parameters: a real account's id is filled in by the test.
PARAMETERS = {"credential_id": "AAAA", "token": "x", "uidb64": "x", "purpose": passkeys.LOGIN, "provider_id": "x"}
PURPOSES = (passkeys.LOGIN, passkeys.SECOND_FACTOR, passkeys.REAUTHENTICATE, passkeys.REGISTER, passkeys.SIGNUP)


def _named_patterns(patterns, namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _named_patterns(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield f"{namespace}{pattern.name}", set(pattern.pattern.converters)


def app_urls(account_id):
    """Every URL of the namespaces ``accounts`` (``accounts:mfa`` and ``accounts:providers``
    inside), ``staff`` and ``headless`` (the JSON API's both clients), each passkey
    ceremony's options included."""
    urls = []
    for name, parameters in _named_patterns(get_resolver().url_patterns):
        if not name.startswith(("accounts:", "staff:", "headless:")):
            continue
        values = {**PARAMETERS, "account_id": account_id}
        purposes = PURPOSES if "purpose" in parameters else (None,)
        for purpose in purposes:
            kwargs = {key: purpose if key == "purpose" else values[key] for key in parameters}
            urls.append(reverse(name, kwargs=kwargs))
    return urls


# The browser's CSRF cookie (32 letters, as Django makes them), sent back in each form: the
# nested answer then reaches the view.
CSRF_SECRET = "a" * 32


def bodies():
    """``(what it is, content type, body)`` of each bad input."""
    nested = f"csrfmiddlewaretoken={CSRF_SECRET}&credential={NESTED}&name=x".encode()
    return [
        ("a form in UTF-16", f"{FORM}; charset=utf-16", "username=ada&password=x".encode("utf-16")),
        ("bytes that are no form", FORM, b"\xff\xfe\x00\x81=\xc3(&\x00\xff"),
        ("a passkey answer nested 20,000 deep", FORM, nested),
    ]


def visitor(kind, ada, boss):
    """A fresh browser of ``kind``, checked for CSRF as a real one is, with its CSRF cookie."""
    options = {"enforce_csrf_checks": True, "raise_request_exception": False}
    client = Client(**options) if kind == "anonymous" else client_as(ada if kind == "user" else boss, **options)
    client.cookies["csrftoken"] = CSRF_SECRET
    return client


@pytest.fixture
def passkeys_everywhere(settings):
    settings.ACCOUNTS_PASSKEY_SIGNUP = True


@pytest.mark.parametrize("kind", ["anonymous", "user", "staff"])
def test_every_post_url_answers_bad_bodies_without_a_server_error(ddb, passkeys_everywhere, kind):
    # With a password: an account without one, just logged in, is deleted by the delete
    # page's bare POST (its fresh login is the proof asked), and the next browser finds no ada.
    ada = make_account("ada@example.com", "ada", password=make_password("a long passphrase"))
    boss = make_account("boss@example.com", "boss", staff=True)
    server_errors = []
    urls = app_urls(ada.id)
    assert len(urls) > 30
    for url in urls:
        for what, content_type, body in bodies():
            # A browser of its own per request: a body that logs out must not change the next.
            client = visitor(kind, ada, boss)
            response = client.generic("POST", url, body, content_type=content_type)
            if response.status_code >= 500:
                server_errors.append((url, what, response.status_code))
    assert server_errors == []


def test_a_form_in_another_charset_is_the_sites_400_page(ddb):
    client = visitor("anonymous", None, None)

    response = client.generic(
        "POST", "/accounts/login/", "username=ada".encode("utf-16"), content_type=f"{FORM}; charset=utf-16"
    )

    assert response.status_code == 400
    assert "This request could not be read" in response.content.decode()


@pytest.mark.parametrize(
    "read", [passkeys.read_assertion, lambda answer: passkeys.verify_new_credential(None, answer, b"")]
)
def test_a_deeply_nested_passkey_answer_is_refused_as_invalid(read, settings):
    with pytest.raises(passkeys.PasskeyRefused) as refusal:
        read(NESTED)
    assert refusal.value.message == passkeys.INVALID


def test_an_answer_nested_as_deep_as_allowed_is_still_read():
    allowed = "[" * passkeys.MAX_ANSWER_DEPTH + "]" * passkeys.MAX_ANSWER_DEPTH
    assert bounded_json.loads(allowed, max_length=100, max_depth=passkeys.MAX_ANSWER_DEPTH) is not None
    with pytest.raises(bounded_json.JSONTooLarge):
        bounded_json.loads("[" + allowed + "]", max_length=100, max_depth=passkeys.MAX_ANSWER_DEPTH)
    with pytest.raises(bounded_json.JSONTooLarge):
        bounded_json.loads('"' + "a" * 100 + '"', max_length=100, max_depth=passkeys.MAX_ANSWER_DEPTH)
    assert bounded_json.nesting_depth('{"a": "[[[{{", "b": [1]}') == 2
    assert bounded_json.nesting_depth(NESTED, limit=passkeys.MAX_ANSWER_DEPTH) == passkeys.MAX_ANSWER_DEPTH + 1
