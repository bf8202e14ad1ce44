"""The Promela model of the lock protocol: it passes, and it fails without each guard.

Every committed ``protocol/*.pml`` must explore its whole state space with ``spin -run`` and
no other flag, and report ``errors: 0``. A model that cannot fail proves nothing: for every
guard, the model the table names (``caught_by``) with that guard removed (its macro made
always true) must report a counter-example, and the proof says which kind of assertion it
trips (see :func:`kind_of`): an invariant (I1, I2, I3, S1, L1, R1, S2, F1-F4, A1, T1, H1), a purpose (what a guard is for,
stated otherwise than the guard), or only an assertion that restates the guard, which proves
nothing and is not counted. Every guard that protects a lock or a session must trip an
invariant; a guard only a restatement trips must name the behaviour test that shows it
(:data:`SHOWN_BY_BEHAVIOUR_TESTS`). Spin (Debian package ``spin``) and a C compiler are
required: a missing one fails these tests, never skips them.
"""

import os
import re
import shutil
import subprocess

import pytest

from tests.protocol_table import GUARD_DEFINITION, PROTOCOL_DIR, guards_defined, model_files, model_headers, rows

SPIN_TIMEOUT = 600
TESTS_DIR = PROTOCOL_DIR.parent / "tests"
INVARIANTS = ("I1", "I2", "I3", "S1", "L1", "R1", "S2", "F1", "F2", "F3", "F4", "A1", "T1", "H1")
PURPOSE, RESTATES = "purpose", "restates"
# The assertions switched on, from the strongest kind of proof to the weakest (model.h's
# `asserts`): the invariants alone, then what guards are for, then their restatements.
ASSERT_LEVELS = (0, 1, 2)
# Rows whose action is a lock (or a session) item's: their guards protect it, and must be
# shown necessary by an invariant. An `email_check` refuses an address, it protects no lock.
LOCK_ACTIONS = frozenset({"new_lock", "old_lock", "held_lock", "kept_lock", "repaired_lock", "session"})
# Guards only an assertion restating them trips in any model (the lock invariants hold
# without them: stamps.pml trusts no stamp), each with the behaviour test showing what it is for.
SHOWN_BY_BEHAVIOUR_TESTS = {
    "G_CHANGE_UPDATED_AS_READ": "tests/engine/test_engine.py::test_a_change_from_a_form_read_before_another_write_is_stale",
    "G_VERIFY_UPDATED_AS_READ": "tests/engine/test_engine.py::test_a_change_from_a_form_read_before_another_write_is_stale",
    "G_APPLY_UPDATED_AS_READ": "tests/engine/test_engine.py::test_a_change_from_a_form_read_before_another_write_is_stale",
    "G_REQUEST_AS_READ": "tests/engine/test_engine.py::test_a_change_from_a_form_read_before_another_write_is_stale",
    "G_VERIFY_NOT_EXPIRED": "tests/engine/test_clock_skew.py::test_a_verification_one_second_after_expires_is_refused",
}


# Guards that a model other than the one their rows name (`caught_by`, one model per guard)
# needs too, with the invariant its counter-example there must trip: the models of issue 30
# that share state with the account (factors.h) and the identity lock, whose rows reuse the
# passkeys' guards.
ALSO_CAUGHT = {
    ("factors.pml", "G_TOTP_STEP_FREE"): "F2",
    ("factors.pml", "G_RECOVERY_CODE_UNUSED"): "F3",
    ("factors.pml", "G_STAGE_LIVE"): "F4",
    ("factors.pml", "G_CHANGE_UPDATED_AS_READ"): "F1",
    ("sign_in_races.pml", "G_SIGN_COUNT_AS_READ"): "A1",
    ("identities.pml", "G_PASSKEY_LOCK_FREE"): "I1",
    ("identities.pml", "G_PASSKEYS_AS_READ"): "I3",
    ("identities.pml", "G_DELETE_PASSKEYS_AS_READ"): "I3",
    ("identities.pml", "G_CHANGE_UPDATED_AS_READ"): "I3",
}


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


def spin_run(directory, model):
    result = subprocess.run(
        ["spin", "-run", model], cwd=directory, capture_output=True, text=True, timeout=SPIN_TIMEOUT
    )
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("model", [path.name for path in model_files()])
def test_committed_model_explores_every_interleaving_without_error(model, tmp_path):
    require("spin")
    require("gcc")
    directory = copy_protocol(tmp_path)
    returncode, output = spin_run(directory, model)
    assert returncode == 0, output[-3000:]
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
    """``model.h`` with its guards switchable, ``mutant`` and the assertions switched on
    (``asserts``) read from the environment variables MUTANT and ASSERTS when it starts."""
    text = switchable(text, ids)
    text = text.replace("/* ---- bounds ---- */", "byte mutant;\n/* ---- bounds ---- */", 1)
    start = "init {\n\tbyte i;\n"
    assert start in text
    read = '\tc_code { now.mutant = atoi(getenv("MUTANT")); now.asserts = atoi(getenv("ASSERTS")); };\n'
    return text.replace(start, start + read, 1)


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


DEEPEST_ASSERTS = max(ASSERT_LEVELS)


def run_mutant(directory, number, asserts=DEEPEST_ASSERTS):
    for trail in directory.glob("*.trail"):
        trail.unlink()
    result = subprocess.run(
        ["./pan"],
        cwd=directory,
        env={**os.environ, "MUTANT": str(number), "ASSERTS": str(asserts)},
        capture_output=True,
        text=True,
        timeout=SPIN_TIMEOUT,
    )
    return result.stdout, list(directory.glob("*.trail"))


def kind_of(output):
    """The kind of assertion a counter-example trips, from its text as pan prints it: each
    invariant's carries its tag (``inv_I1``...), a purpose's ``asserts<1``, a restatement's
    ``asserts<2`` (model.h)."""
    # pan may cut a long assertion short: the tag comes first.
    found = re.search(r"assertion violated (.*)", output)
    assert found, f"not an assertion's counter-example:\n{output[-3000:]}"
    text = found.group(1)
    for invariant in INVARIANTS:
        if f"inv_{invariant}" in text:
            return invariant
    return PURPOSE if "asserts<1" in text else RESTATES


def strongest_counter_example(directory, number):
    """The kind of the strongest assertion some counter-example trips once the guard is
    removed (an invariant before a purpose before a restatement), or ``None``."""
    for asserts in ASSERT_LEVELS:
        output, trails = run_mutant(directory, number, asserts)
        if errors_reported(output):
            assert trails, "a counter-example without a trail"
            return kind_of(output)
    return None


def protects_a_lock_or_session(guard):
    return any(row.action.split()[0] in LOCK_ACTIONS for row in rows() if row.guard == guard)


CAUGHT = sorted({(row.guard, row.caught_by) for row in rows() if row.caught_by != "-"})
PROOF = {}


@pytest.mark.parametrize("guard,model", CAUGHT)
def test_model_without_the_guard_has_a_counter_example_of_a_counted_kind(mutants, guard, model):
    compiled, ids = mutants
    kind = strongest_counter_example(compiled[model], ids[guard])
    PROOF[guard] = (kind, model)
    assert kind is not None, f"{model} without {guard} still passes"
    if protects_a_lock_or_session(guard):
        assert kind in INVARIANTS, f"{guard} protects a lock, but its counter-example in {model} trips only a {kind}"
    elif kind == RESTATES:
        assert guard in SHOWN_BY_BEHAVIOUR_TESTS, f"only an assertion restating {guard} fails in {model}"


@pytest.mark.parametrize("model,guard", sorted(ALSO_CAUGHT))
def test_model_sharing_a_guard_has_its_own_counter_example_without_it(mutants, model, guard):
    compiled, ids = mutants
    assert strongest_counter_example(compiled[model], ids[guard]) == ALSO_CAUGHT[model, guard]


def test_guards_shown_by_a_behaviour_test_name_existing_tests():
    for test in set(SHOWN_BY_BEHAVIOUR_TESTS.values()):
        path, name = test.split("::")
        assert f"def {name}(" in (PROTOCOL_DIR.parent / path).read_text(encoding="utf-8"), test


def test_the_proof_table_of_protocol_readme_is_the_proof(mutants):
    # protocol/README.md, "Mutation proof": one row per guard, | `G_X` | kind | model |.
    documented = {
        guard: (kind, model)
        for guard, kind, model in re.findall(
            r"^\| `(G_\w+)` \| (\S+) \| `(\w+\.pml)` \|", (PROTOCOL_DIR / "README.md").read_text(encoding="utf-8"), re.M
        )
    }
    compiled, ids = mutants
    proved = {
        guard: PROOF.get(guard) or (strongest_counter_example(compiled[model], ids[guard]), model)
        for guard, model in CAUGHT
    }
    assert documented == proved


def test_switchable_model_with_no_guard_removed_passes(mutants):
    # The switch itself changes nothing: with no guard removed, the smallest model passes.
    compiled, _ = mutants
    output, trails = run_mutant(compiled["repair.pml"], 0)
    assert errors_reported(output) == 0
    assert not trails


def model_variant(tmp_path, model, defines):
    """``model`` with ``defines`` (``{name: value}``) set before its own, as ``variant.pml``."""
    directory = copy_protocol(tmp_path)
    text = (directory / model).read_text(encoding="utf-8")
    for name in defines:
        text = re.sub(rf"^#define {name}\b.*$", "", text, flags=re.M)
    prelude = "".join(f"#define {name} {value}\n" for name, value in defines.items())
    (directory / "variant.pml").write_text(prelude + text, encoding="utf-8")
    return directory


def test_a_verification_without_its_lock_actions_has_a_counter_example(tmp_path):
    # What plan_change once sent for a verification: only the account's Update, no Put of
    # the email lock, no REMOVE expires on the username locks. The model of exactly that
    # finds an account verified without its email lock (I2).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "accounts.pml", {"VERIFY_SENDS_LOCKS": 0})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "I2"


def test_the_last_staff_rule_by_a_count_read_before_acting_has_a_counter_example(tmp_path):
    # What the staff pages did before issue 30: count the staff registry, refuse the last
    # staff account, then revoke or delete with no check in the transaction. Two staff
    # taking each other's access away at once both pass the count: none is left (L1).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "staff.pml", {"LAST_STAFF_BY_COUNT": 1})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "L1"


def test_sessions_ended_by_their_query_alone_let_a_racing_sign_in_in_after_deletion(tmp_path):
    # end_sessions reads the account's sessions, then deletes them: a sign-in that read the
    # account before its deletion (or deactivation) and commits after that Query leaves a
    # session behind. Only the load's check of the account (live, active) keeps it out (A1).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "sign_in_races.pml", {"LOAD_CHECKS_ACCOUNT": 0})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "A1"


def test_a_sign_in_checking_nothing_of_the_account_lets_a_reactivation_let_its_session_in(tmp_path):
    # What plan_sign_in sent before: nothing of the account. A sign-in that read it active
    # commits after its deactivation and after end_sessions' Query; the load's check keeps
    # the session out while the account is inactive, and its reactivation lets it in (A1).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "sign_in_races.pml", {"SIGN_IN_CHECKS_ACCOUNT": 0})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "A1"


def test_a_step_record_kept_less_than_the_clock_skew_margin_lets_a_code_in_twice(tmp_path):
    # factors.pml keeps a used TOTP step's record RECORD_MARGIN = MARGIN past the step's last
    # instant (totp.step_record_expires, which kept a fixed 300 s before, whatever the
    # setting). Clocks (TTL's among them) 2 apart with a record kept 1: TTL deletes the record
    # while the slowest server still accepts the step's code, which then signs in again (F2).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "factors.pml", {"MARGIN": 2, "SKEW": 2, "RECORD_MARGIN": 1})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "F2"


def test_an_id_token_record_kept_less_than_the_clock_skew_margin_lets_a_token_in_twice(tmp_path):
    # identities.pml keeps an ID token's record TOKEN_RECORD_MARGIN = MARGIN past the last
    # tick the token is accepted (providers.store.id_token_spend: exp + leeway + the margin).
    # Kept no longer than that last tick, TTL (on a clock ahead) deletes the record while the
    # slowest server still accepts the token, which then gets in again (T1).
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "identities.pml", {"TOKEN_RECORD_MARGIN": 0})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) == "T1"


@pytest.mark.parametrize("margin", [0])
def test_a_margin_below_the_clock_skew_lets_a_fast_server_take_a_live_claim(tmp_path, margin):
    # clocks.pml with MARGIN = SKEW passes; one step less and a server whose clock is ahead
    # takes a username (or its skeleton) from a sign-up that still lives: two live holders.
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "clocks.pml", {"MARGIN": margin})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) in ("I1", "I2")


def test_beyond_the_margin_live_claims_are_taken_but_never_for_good(tmp_path):
    # skew.pml checks that no breach lasts; counting every live holder, as every other model
    # does, shows the breach itself: the margin assumption is what keeps I1 and I2.
    require("spin")
    require("gcc")
    directory = model_variant(tmp_path, "skew.pml", {"LASTING": 0})
    _, output = spin_run(directory, "variant.pml")
    assert errors_reported(output) >= 1, output[-3000:]
    assert kind_of(output) in ("I1", "I2")


def reach_markers():
    """``{line number of model.h: what it does}`` of the statements a model must reach."""
    lines = (PROTOCOL_DIR / "model.h").read_text(encoding="utf-8").splitlines()
    found = {number: re.search(r"/\* reach: (.*?) \*/", line) for number, line in enumerate(lines, start=1)}
    return {number: match.group(1) for number, match in found.items() if match}


def test_skew_beyond_the_margin_reaches_lock_not_owned_and_the_keep_locks_retry(tmp_path):
    # Spin lists the statements no interleaving reaches: none of the marked ones may be.
    require("spin")
    require("gcc")
    directory = copy_protocol(tmp_path)
    _, output = spin_run(directory, "skew.pml")
    unreached = {int(number) for number in re.findall(r"^\s+model\.h:(\d+), state", output, re.M)}
    markers = reach_markers()
    assert len(markers) == 4
    assert {what for number, what in markers.items() if number in unreached} == set()


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
