"""README's layout recipe, taken from the README itself: a host's base.html with the blocks
title and content, including accounts/nav.html and accounts/messages.html."""

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.web import signup

pytestmark = pytest.mark.dynamodb_local

README = Path(__file__).resolve().parent.parent / "README.md"


def recipe_templates():
    """``(accounts/base.html, base.html)`` exactly as README's "Your site's layout" shows them."""
    section = README.read_text().split("#### Your site's layout", 1)[1]
    one_line, base = re.findall(r"```django\n(.*?)```", section, re.S)[:2]
    return one_line, base


@pytest.fixture
def host_layout(settings, tmp_path):
    one_line, base = recipe_templates()
    (tmp_path / "accounts").mkdir()
    (tmp_path / "accounts" / "base.html").write_text(one_line)
    (tmp_path / "base.html").write_text(base.replace("My site", "Host site"))
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]


def test_pages_in_the_hosts_layout_keep_the_logout_button_and_the_messages(ddb, host_layout):
    client = Client()

    response = signup(client, "ada@example.com", "ada")
    profile = client.get(response["Location"])

    html = profile.content.decode()
    assert "· Host site</title>" in html
    assert "Welcome, ada! Your account is ready." in html
    assert re.search(r'<form method="post" action="/accounts/logout/"', html)
    assert "Log out" in html
    assert "ada@example.com" in html
