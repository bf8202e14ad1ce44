"""The layout recipe of docs/installation.md, taken from the page itself, in the members site
(tests/hostproject) under the app's defaults: a host's base.html with the blocks title and
content, including accounts/nav.html and accounts/messages.html."""

import re
from pathlib import Path

import pytest
from django.test import Client

from accounts.tables import TableModel, create_table
from tests.hostproject import settings as members
from tests.mail import link_in, mails_to, path_of
from tests.projects import settings_module
from tests.web import PASSWORD, signup

pytestmark = pytest.mark.dynamodb_local

PAGE = Path(__file__).resolve().parents[2] / "docs" / "installation.md"


def recipe_templates():
    """``(accounts/base.html, base.html)`` exactly as the page's "Your site's layout" shows them."""
    section = PAGE.read_text().split("### Your site's layout", 1)[1]
    one_line, base = re.findall(r"```django\n(.*?)```", section, re.S)[:2]
    return one_line, base


@pytest.fixture
def members_in_their_layout(dynamodb_local, tmp_path):
    """The members site, its templates first under the recipe's layout templates."""
    one_line, base = recipe_templates()
    (tmp_path / "accounts").mkdir()
    (tmp_path / "accounts" / "base.html").write_text(one_line)
    (tmp_path / "base.html").write_text(base.replace("My site", "Members"))
    templates = [{**members.TEMPLATES[0], "DIRS": [tmp_path, *members.TEMPLATES[0]["DIRS"]]}]
    with settings_module(members.__name__, ACCOUNTS_ENDPOINT_URL=dynamodb_local.endpoint_url, TEMPLATES=templates):
        create_table(wait=True)
        yield
        TableModel.delete_table()


def test_pages_in_the_hosts_layout_keep_the_logout_button_and_the_messages(members_in_their_layout):
    client = Client()
    signup(client, "ada@example.com", "ada", url="/members/signup/")
    client.post(path_of(link_in(mails_to("ada@example.com")[0])))

    login = client.post("/members/login/", {"username": "ada", "password": PASSWORD}, follow=True)

    html = login.content.decode()
    assert "· Members</title>" in html
    assert "You are logged in as ada." in html
    assert re.search(r'<form method="post" action="/members/logout/"', html)
    assert "Log out" in html
    assert "ada@example.com" in html
