"""The front ends stand side by side over one layer of flows: the HTML views and the API
views import flows, never each other, and nothing below the flows imports a view."""

import ast
from pathlib import Path

from tests.engine.test_import_graph import APP, import_graph

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


def test_both_front_ends_call_the_same_email_verification_reset_email_and_password_flows():
    graph = import_graph()
    shared = {f"{FLOWS}.email_verification", f"{FLOWS}.password_reset", f"{FLOWS}.email_change"}

    assert shared <= graph["accounts.email_views"] | graph["accounts.views"]
    assert shared | {f"{FLOWS}.password_change"} <= graph["accounts.headless.account_views"]
    assert f"{FLOWS}.password_change" in graph["accounts.views"]


def test_the_account_pages_change_and_delete_accounts_through_flows():
    graph = import_graph()

    assert {f"{FLOWS}.username_change", f"{FLOWS}.delete"} <= graph["accounts.views"]
    assert "accounts.store" not in graph["accounts.email_views"]


# What the flows call for the front ends (as the views name the modules): a view that
# calls one of these holds a copy of a flow.
WRAPPED_BY_FLOWS = {
    "verification.claimed_account",
    "verification.read_email_change_token",
    "verification.confirm_email",
    "verification.discard_signup",
    "verification.resend_verification",
    "verification.send_verification",
    "verification.apply_email_change",
    "verification.start_email_change",
    "password_reset.count_reset_request",
    "password_reset.request_reset",
    "password_reset.send_password_changed_notice",
    "ratelimit.forget_account",
    "store.change_email",
    "store.change_username",
    "store.cancel_email_change",
    "store.delete_account",
    "notices.username_changed",
    "update_session_auth_hash",
}


def calls_in(path):
    """What ``path`` calls: ``module.function`` for a module's function, else the bare name."""
    names = set()
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
                names.add(f"{function.value.id}.{function.attr}")
            elif isinstance(function, ast.Name):
                names.add(function.id)
    return names


def test_no_account_view_holds_a_copy_of_a_flow():
    views = [APP / "views.py", APP / "email_views.py", *sorted((APP / "headless").glob("*.py"))]

    copies = {path.name: calls_in(path) & WRAPPED_BY_FLOWS for path in views}

    assert all(not names for names in copies.values()), copies


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
