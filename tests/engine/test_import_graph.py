"""No circular imports in the app: every ``import`` of one ``accounts`` module by another,
at the top of a module or deferred inside a function, forms a graph without cycles. An
import under ``if TYPE_CHECKING:`` never runs (only a type checker reads it), so it is no
edge of the graph."""

import ast
from pathlib import Path

import accounts

APP = Path(accounts.__file__).resolve().parent


def module_name(path):
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path, name, modules):
    """The ``accounts`` modules that the module ``name`` (at ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text())
    for_type_checkers = {
        id(inner) for node in ast.walk(tree) if _is_type_checking_block(node) for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in for_type_checkers:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module
            found.add(target)
            # ``from . import store`` imports the module accounts.store.
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {module for module in found if module in modules and module != name}


def _is_type_checking_block(node):
    """Whether ``node`` is ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``), without an else."""
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_graph():
    """``{module: {modules it imports}}`` for every module of the app but its migrations."""
    paths = {module_name(path): path for path in APP.rglob("*.py") if "migrations" not in path.parts}
    return {name: imported_modules(path, name, paths) for name, path in paths.items()}


def find_cycle(graph):
    """One import cycle as a list of modules (the first repeated at the end), or ``[]``."""
    visiting, done = [], set()

    def visit(module):
        if module in visiting:
            return [*visiting[visiting.index(module) :], module]
        if module in done:
            return []
        visiting.append(module)
        for imported in sorted(graph[module]):
            cycle = visit(imported)
            if cycle:
                return cycle
        visiting.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return []


def test_no_module_of_the_app_imports_itself_back_through_others():
    cycle = find_cycle(import_graph())

    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_the_graph_sees_deferred_imports_and_the_cycle_they_would_close():
    graph = import_graph()
    assert "accounts.rules" in graph["accounts.managers"]
    assert "accounts.forms" not in graph["accounts.managers"]

    graph["accounts.managers"] = {*graph["accounts.managers"], "accounts.forms"}

    # The login form reaches the models through the login flow (it once did through the backend).
    cycle_modules = {"accounts.managers", "accounts.forms", "accounts.internal.flows.login", "accounts.models"}
    assert find_cycle(graph)[0] in cycle_modules


def test_the_graph_leaves_out_imports_only_a_type_checker_reads(tmp_path):
    module = tmp_path / "sample.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import store\n"
        "if TYPE_CHECKING:\n"
        "    from .models import User\n"
        "def later():\n"
        "    from . import forms\n"
    )
    modules = {"accounts.sample", "accounts.store", "accounts.models", "accounts.forms"}

    assert imported_modules(module, "accounts.sample", modules) == {"accounts.store", "accounts.forms"}
