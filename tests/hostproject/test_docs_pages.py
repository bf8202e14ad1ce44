"""The manual (docs/, built by MkDocs) and the README as a newcomer reads them: a short README,
recipes that say which file they go in, and the site's address as passkeys need it."""

import re
from pathlib import Path

from tests.projects import DOCS, ROOT, doc_pages, page_blocks

README = ROOT / "README.md"
# Where a recipe's file may be, from the directory of manage.py: the project package, the
# templates directory beside it, or a file beside manage.py itself.
FROM_MANAGE_PY = re.compile(r"(myproject|templates)/[\w/]+\.\w+|[\w]+\.(py|toml)")


def every_page():
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_the_readme_reads_in_five_minutes():
    assert len(README.read_text().splitlines()) < 250


def test_every_page_of_the_docs_is_in_the_nav():
    assert sorted(doc_pages()) == sorted(DOCS.rglob("*.md"))


def test_every_recipe_names_its_file_by_its_path_from_manage_py():
    paths = [path for page in doc_pages() for path, _, _ in page_blocks(page.read_text())]

    assert {"myproject/settings.py", "myproject/settings_test.py", "myproject/urls.py", "templates/base.html"} <= set(
        paths
    )
    assert [path for path in paths if not FROM_MANAGE_PY.fullmatch(path)] == []


def test_every_template_in_the_docs_says_which_file_it_is():
    for page in every_page():
        for template in re.findall(r"^```django\n(.*?)^```", page.read_text(), re.S | re.M):
            assert re.match(r"\{# (templates|myproject)/[\w/.]+\.html #\}\n", template), (page, template)


def test_the_site_is_opened_as_localhost_never_127_0_0_1():
    # Passkeys refuse an IP address; 127.0.0.1 stays only as DynamoDB Local's endpoint
    # (port 8001, what accounts_dynamodb_local prints) and as gunicorn's bind address.
    for page in every_page():
        text = page.read_text()
        assert re.findall(r"https?://127\.0\.0\.1(?!:8001)\S*", text) == [], page
        assert re.findall(r"(?<!--bind )127\.0\.0\.1:8000", text) == [], page


def test_the_layout_recipe_sets_the_templates_directory():
    blocks = page_blocks((DOCS / "installation.md").read_text())

    settings = "".join(code for path, _, code in blocks if path == "myproject/settings.py")
    assert 'TEMPLATES[0]["DIRS"] = [BASE_DIR / "templates"]' in settings
    assert {"templates/accounts/base.html", "templates/base.html"} <= {path for path, _, _ in blocks}


def test_the_production_recipe_reads_the_site_url_from_the_environment():
    blocks = page_blocks((DOCS / "production.md").read_text())

    production = "".join(code for path, _, code in blocks if path == "myproject/settings_production.py")
    assert 'ACCOUNTS_SITE_URL = os.environ["ACCOUNTS_SITE_URL"]' in production
