"""Run each guard's behaviour test with that guard removed (tests/guard_mutations.py) and
print the table of protocol/README.md ("Guards shown by behaviour tests"): a guard is shown
when its test FAILS without it. Slow (races on DynamoDB Local): run by hand, not by ``make test``.

    DYNAMODB_LOCAL_PREFIX=... python tests/run_guard_mutations.py [GUARD ...]
"""

import os
import subprocess
import sys

CAUGHT_BY = {
    "G_OTHER_MEMBER_LISTED": "tests/test_staff_last_staff_race.py::test_two_staff_revoking_each_other_at_once_leave_one_staff_account_every_round",
    "G_DELETE_STAFF_FLAGS_AS_READ": "tests/test_staff_last_staff_race.py::test_a_deletion_of_an_account_made_staff_since_it_was_read_is_stale",
    "G_STAFF_ITEM_AS_READ": "tests/test_staff_last_staff_race.py::test_a_flag_change_from_a_stale_read_leaves_the_registry_exact",
    "G_SLOT_FREE": "tests/test_sessions_bound_race.py::test_16_concurrent_password_logins_leave_at_most_the_limit_of_live_sessions_every_round",
    "G_SLOT_HOLDER_AS_READ": "tests/test_sessions_bound_race.py::test_16_concurrent_password_logins_leave_at_most_the_limit_of_live_sessions_every_round",
    "G_LIMIT_UNDER": "tests/test_mfa_limits.py::test_wrong_codes_counted_after_a_right_codes_read_stop_it",
    "G_SIGNUP_EMAIL_LOCK_FREE": "tests/test_engine_concurrency.py::test_32_concurrent_signups_with_one_email_exactly_one_wins",
}


def run(guard):
    test = CAUGHT_BY[guard]
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "tests.guard_mutations",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        test,
    ]
    result = subprocess.run(command, env={**os.environ, "GUARD_MUTATION": guard}, capture_output=True, text=True)
    if result.returncode != 1:
        return f"NOT caught (pytest exit {result.returncode})"
    # The assertion that failed, so that a request the mutation broke is not taken for a catch.
    reason = next((line[1:].strip() for line in result.stdout.splitlines() if line.startswith("E ")), "")
    return f"fails: {reason[:120]}"


def main(guards):
    print("| guard | behaviour test | without the guard |")
    print("|---|---|---|")
    for guard in guards or CAUGHT_BY:
        print(f"| `{guard}` | `{CAUGHT_BY[guard]}` | {run(guard)} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
