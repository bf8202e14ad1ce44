"""The Promela model of the lock protocol: it passes, and it fails without each guard.

Every committed ``protocol/*.pml`` must explore its whole state space with ``spin -run`` and
no other flag, and report ``errors: 0``. A model that cannot fail proves nothing: for every
guard, the model the table names (``caught_by``) with that guard removed (its macro made
always true) must report a counter-example. Spin (Debian package ``spin``) and a
C compiler are required: a missing one fails these tests, never skips them.
"""

import os
import re
import shutil
import subprocess

import pytest

from tests.protocol_table import GUARD_DEFINITION, PROTOCOL_DIR, guards_defined, model_files, model_headers, rows

SPIN_TIMEOUT = 600


def require(program):
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is not installed: the protocol model needs it (.ci/run installs it).", pytrace=False)
    return path


def copy_protocol(directory):
    directory.mkdir(parents=True, exist_ok=True)
    for path in PROTOCOL_DIR.iterdir():
        if path.suffix in (".h", ".pml"):
            shutil.copy(path, directory / path.name)
    return directory


def errors_reported(output):
    found = re.search(r"errors: (\d+)", output)
    assert found, f"Spin did not finish its search:\n{output[-3000:]}"
    return int(found.group(1))


@pytest.mark.parametrize("model", [path.name for path in model_files()])
def test_committed_model_explores_every_interleaving_without_error(model, tmp_path):
    require("spin")
    require("gcc")
    directory = copy_protocol(tmp_path)
    result = subprocess.run(
        ["spin", "-run", model], cwd=directory, capture_output=True, text=True, timeout=SPIN_TIMEOUT
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "Full statespace search" in output
    assert "Search not completed" not in output
    assert "max search depth too small" not in output
    assert errors_reported(output) == 0, output[-3000:]
    assert not list(directory.glob("*.trail"))


def switchable(text, ids):
    """A header with every guard switchable: guard ``ids[name]`` is removed (always true) when
    the variable ``mutant`` names it; with any other value it is the header as committed."""

    def switch(match):
        name, parameters, space, expression = match.groups()
        return f"#define {name}{parameters or ''}{space}(mutant == {ids[name]} || {expression})"

    return GUARD_DEFINITION.sub(switch, text)


def mutable(text, ids):
    """``model.h`` with its guards switchable and ``mutant`` read from the environment
    variable MUTANT when the model starts."""
    text = switchable(text, ids)
    text = text.replace("/* ---- bounds ---- */", "byte mutant;\n/* ---- bounds ---- */", 1)
    start = "init {\n\tbyte i;\n"
    assert start in text
    return text.replace(start, start + '\tc_code { now.mutant = atoi(getenv("MUTANT")); };\n', 1)


@pytest.fixture(scope="module")
def mutants(tmp_path_factory):
    """Each model compiled once, with its guards switchable; returns (directory, ids) by model."""
    require("spin")
    require("gcc")
    root = tmp_path_factory.mktemp("mutants")
    ids = {name: number for number, name in enumerate(guards_defined(), start=1)}
    compiled = {}
    for model in model_files():
        directory = copy_protocol(root / model.stem)
        for header in model_headers():
            text = header.read_text(encoding="utf-8")
            text = mutable(text, ids) if header.name == "model.h" else switchable(text, ids)
            (directory / header.name).write_text(text, encoding="utf-8")
        subprocess.run(["spin", "-a", model.name], cwd=directory, check=True, capture_output=True, timeout=SPIN_TIMEOUT)
        subprocess.run(
            ["gcc", "-std=gnu99", "-O0", "-w", "-DSAFETY", "-o", "pan", "pan.c"],
            cwd=directory,
            check=True,
            capture_output=True,
            timeout=SPIN_TIMEOUT,
        )
        compiled[model.name] = directory
    return compiled, ids


def run_mutant(directory, number):
    for trail in directory.glob("*.trail"):
        trail.unlink()
    result = subprocess.run(
        ["./pan"],
        cwd=directory,
        env={**os.environ, "MUTANT": str(number)},
        capture_output=True,
        text=True,
        timeout=SPIN_TIMEOUT,
    )
    return result.stdout, list(directory.glob("*.trail"))


CAUGHT = sorted({(row.guard, row.caught_by) for row in rows() if row.caught_by != "-"})


@pytest.mark.parametrize("guard,model", CAUGHT)
def test_model_without_the_guard_has_a_counter_example(mutants, guard, model):
    compiled, ids = mutants
    output, trails = run_mutant(compiled[model], ids[guard])
    assert errors_reported(output) >= 1, f"{model} without {guard} still passes"
    assert trails, f"{model} without {guard}: no trail written"


def test_switchable_model_with_no_guard_removed_passes(mutants):
    # The switch itself changes nothing: with no guard removed, the smallest model passes.
    compiled, _ = mutants
    output, trails = run_mutant(compiled["repair.pml"], 0)
    assert errors_reported(output) == 0
    assert not trails


def test_a_verification_without_its_lock_actions_has_a_counter_example(tmp_path):
    # What plan_change once sent for a verification: only the account's Update, no Put of
    # the email lock, no REMOVE expires on the username locks. The model of exactly that
    # finds an account verified without its email lock (I2).
    require("spin")
    require("gcc")
    directory = copy_protocol(tmp_path)
    text = (directory / "accounts.pml").read_text(encoding="utf-8")
    assert '#include "model.h"' in text
    (directory / "as_merged.pml").write_text(
        text.replace('#include "model.h"', '#define VERIFY_SENDS_LOCKS 0\n#include "model.h"'), encoding="utf-8"
    )
    result = subprocess.run(
        ["spin", "-run", "as_merged.pml"], cwd=directory, capture_output=True, text=True, timeout=SPIN_TIMEOUT
    )
    output = result.stdout + result.stderr
    assert errors_reported(output) >= 1, output[-3000:]
    assert list(directory.glob("as_merged.pml.trail"))


def test_every_guard_has_a_model_that_fails_without_it():
    # A guard no model needs is a guard the proof does not cover: every row names the model
    # whose mutant the test above runs, the same model on every row of a guard.
    by_guard = {}
    for row in rows():
        if row.condition != "-":  # an action sent with no condition: no guard to prove
            by_guard.setdefault(row.guard, set()).add(row.caught_by)
    assert {guard for guard, models in by_guard.items() if "-" in models} == set()
    assert {guard for guard, models in by_guard.items() if len(models) > 1} == set()
    assert {model for guard, model in CAUGHT} <= {path.name for path in model_files()}
    assert {guard for guard, model in CAUGHT} == set(guards_defined())
