"""The front ends stand side by side over one layer of flows: the HTML views and the API
views import flows, never each other, and nothing below the flows imports a view."""

from tests.test_import_graph import import_graph

HTML_VIEWS = {
    "accounts.views",
    "accounts.email_views",
    "accounts.mfa.views",
    "accounts.mfa.login_views",
    "accounts.mfa.staff_views",
    "accounts.staff.views",
    "accounts.providers.views",
    "accounts.login_codes.views",
}
API = "accounts.headless"
FLOWS = "accounts.internal.flows"


def is_api(module):
    return module == API or module.startswith(API + ".")


def below(graph, roots):
    """Every module ``roots`` import, directly or through others."""
    seen, stack = set(), list(roots)
    while stack:
        for imported in graph[stack.pop()]:
            if imported not in seen:
                seen.add(imported)
                stack.append(imported)
    return seen


def test_no_api_module_imports_an_html_view():
    graph = import_graph()

    crossing = {module: graph[module] & HTML_VIEWS for module in graph if is_api(module) and graph[module] & HTML_VIEWS}

    assert crossing == {}


def test_no_html_view_imports_the_api():
    graph = import_graph()

    crossing = {view: {module for module in graph[view] if is_api(module)} for view in HTML_VIEWS}

    assert all(not modules for modules in crossing.values()), crossing


def test_both_front_ends_call_the_same_login_and_signup_flows():
    graph = import_graph()
    shared = {f"{FLOWS}.login", f"{FLOWS}.signup"}

    assert shared <= graph["accounts.views"]
    assert shared <= graph["accounts.headless.account_views"]


def test_nothing_below_the_flows_imports_a_view_or_the_api():
    graph = import_graph()
    flows = {module for module in graph if module.startswith(FLOWS + ".")} | {"accounts.mfa.stages"}

    underneath = below(graph, flows)

    assert underneath & HTML_VIEWS == set()
    assert {module for module in underneath if is_api(module)} == set()


def test_the_login_names_its_second_factor_stage_by_path_and_never_imports_it():
    graph = import_graph()

    assert "accounts.mfa.stages" not in below(graph, {f"{FLOWS}.login", "accounts.views", "accounts.adapter"})
    assert graph["accounts.views"] & {"accounts.mfa.flows.login", "accounts.mfa.login_views"} == set()
