"""Every page's template can be replaced from the project's TEMPLATES DIRS."""

import copy

import pytest
from django.test import Client
from django.urls import include, path, reverse

from tests.staff import client_as, make_account

pytestmark = pytest.mark.dynamodb_local

ANONYMOUS_PAGES = {"signup": "accounts:signup", "login": "accounts:login"}
ACCOUNT_PAGES = {
    "profile": "accounts:profile",
    "email_change": "accounts:email_change",
    "username_change": "accounts:username_change",
    "password_change": "accounts:password_change",
    "delete": "accounts:delete",
}
STAFF_PAGES = {"staff/account_list": "staff:accounts", "staff/locks": "staff:locks"}
STAFF_ACCOUNT_PAGES = {"staff/account_detail": "staff:account", "staff/account_delete": "staff:delete"}

# A project that includes the account pages (under /members/) but not the staff pages.
urlpatterns = [path("members/", include("accounts.urls"))]


@pytest.fixture
def project_templates(settings, tmp_path):
    """Write a template into the project's own DIRS (searched before the app's)."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [tmp_path, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates

    def write(name, text):
        path = tmp_path / "accounts" / f"{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    return write


def overriding(name):
    return f'{{% extends "accounts/base.html" %}}{{% block content %}}<p>project {name}</p>{{% endblock %}}'


@pytest.fixture
def boss(ddb):
    return make_account("boss@example.com", "boss", staff=True)


@pytest.mark.parametrize("name, url_name", ANONYMOUS_PAGES.items())
def test_anonymous_page_template_is_the_projects(ddb, project_templates, name, url_name):
    project_templates(name, overriding(name))

    response = Client().get(reverse(url_name))

    assert f"<p>project {name}</p>" in response.content.decode()


@pytest.mark.parametrize("name, url_name", ACCOUNT_PAGES.items())
def test_account_page_template_is_the_projects(boss, project_templates, name, url_name):
    project_templates(name, overriding(name))

    response = client_as(boss).get(reverse(url_name))

    assert f"<p>project {name}</p>" in response.content.decode()


@pytest.mark.parametrize("name, url_name", STAFF_PAGES.items())
def test_staff_page_template_is_the_projects(boss, project_templates, name, url_name):
    project_templates(name, overriding(name))

    response = client_as(boss).get(reverse(url_name))

    assert f"<p>project {name}</p>" in response.content.decode()


@pytest.mark.parametrize("name, url_name", STAFF_ACCOUNT_PAGES.items())
def test_staff_account_page_template_is_the_projects(boss, project_templates, name, url_name):
    project_templates(name, overriding(name))

    response = client_as(boss).get(reverse(url_name, args=[boss.id]))

    assert f"<p>project {name}</p>" in response.content.decode()


def test_unavailable_page_template_is_the_projects(ddb, settings, project_templates):
    project_templates("unavailable", overriding("unavailable"))
    client = Client()
    client.get(reverse("accounts:signup"))
    settings.ACCOUNTS_ENDPOINT_URL = "http://127.0.0.1:9"
    try:
        response = client.post(reverse("accounts:login"), {"username": "ada", "password": "secret"})
    finally:
        settings.ACCOUNTS_ENDPOINT_URL = ddb.endpoint_url

    assert response.status_code == 503
    assert "<p>project unavailable</p>" in response.content.decode()


def test_project_base_layout_wraps_every_account_and_staff_page(boss, project_templates):
    project_templates("base", "<main class='project-layout'>{% block content %}{% endblock %}</main>")
    client = client_as(boss)

    for url in [reverse(url_name) for url_name in {**ACCOUNT_PAGES, **STAFF_PAGES}.values()]:
        assert "<main class='project-layout'>" in client.get(url).content.decode(), url


def test_staff_base_layout_is_the_projects(boss, project_templates):
    project_templates(
        "staff/base",
        '{% extends "accounts/base.html" %}'
        "{% block content %}<nav>project staff</nav>{% block staff_content %}{% endblock %}{% endblock %}",
    )

    html = client_as(boss).get(reverse("staff:accounts")).content.decode()

    assert "<nav>project staff</nav>" in html
    assert "<h1>Accounts</h1>" in html


@pytest.fixture
def app_templates_only(settings):
    """A project with no templates of its own (no DIRS)."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = []
    settings.TEMPLATES = templates


def test_app_layout_renders_without_a_project_base_template(boss, app_templates_only):
    response = client_as(boss).get(reverse("accounts:profile"))

    html = response.content.decode()
    assert response.status_code == 200
    assert '<span class="brand">Accounts</span>' in html
    assert f'<a href="{reverse("staff:accounts")}">Staff</a>' in html


def test_app_layout_leaves_out_the_staff_link_when_the_staff_pages_are_not_included(boss, app_templates_only, settings):
    settings.ROOT_URLCONF = __name__

    response = client_as(boss).get("/members/profile/")

    html = response.content.decode()
    assert response.status_code == 200
    assert ">Staff</a>" not in html
    assert 'href="/members/email/"' in html
