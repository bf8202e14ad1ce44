"""Look-alike identifiers on DynamoDB Local: every case of issue 11, through the pages and the
engine. The skeleton lock, not a read before the write, makes look-alikes collide."""

import pytest
from django.test import Client

from accounts import audit, store, transactions
from accounts.exceptions import UniqueViolation
from tests.engine.test_engine import locks, table_items
from tests.engine.test_engine_concurrency import race
from tests.seeding import delete_lock, new_account, read_lock, write_accounts, write_locks
from tests.staff import make_account, run_command
from tests.web import PASSWORD, login, signup

pytestmark = pytest.mark.dynamodb_local

CYRILLIC_COCO = "\u0441\u043e\u0441\u043e"  # сосо: every letter Cyrillic
CYRILLIC_A = "\u0430"


def form_of(response):
    assert response.status_code == 200, response.status_code
    return response.context["form"]


def test_cyrillic_a_admin_next_to_the_staff_admin_is_refused(ddb, monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", PASSWORD)
    run_command("accounts_createstaff", "--email", "admin@example.com", "--username", "admin", "--noinput")

    form = form_of(signup(Client(), "eve@example.com", f"{CYRILLIC_A}dmin"))

    assert form.has_error("username", "username_mixed_scripts")
    assert [account.username for account in [store.get_by_username("admin")]] == ["admin"]
    assert store.get_by_email("eve@example.com") is None


def test_staff_may_take_a_reserved_name_but_a_signup_may_not(ddb, monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", PASSWORD)
    run_command("accounts_createstaff", "--email", "help@example.com", "--username", "support", "--noinput")

    form = form_of(signup(Client(), "eve@example.com", "Support"))

    assert form.errors["username"] == ["This username is reserved."]
    assert store.get_by_username("support").is_staff


def test_an_all_cyrillic_look_alike_of_a_taken_name_is_too_similar(ddb):
    signup(Client(), "coco@example.com", "coco")

    form = form_of(signup(Client(), "other@example.com", CYRILLIC_COCO))

    assert form.has_error("username", "username_similar")
    assert form.errors["username"] == ["This username is too similar to an existing one."]
    assert store.get_by_email("other@example.com") is None


@pytest.mark.parametrize("filler", ["\u3164", "\u115f", "\uffa0"], ids=ascii)
def test_ada_with_a_hangul_filler_next_to_ada_is_refused(ddb, filler):
    signup(Client(), "ada@example.com", "ada")

    for name in (f"ada{filler}", filler):
        form = form_of(signup(Client(), "eve@example.com", name))
        assert form.has_error("username", "username_invisible")
    assert store.get_by_email("eve@example.com") is None


@pytest.mark.parametrize("first", ["istanbul", "İstanbul", "ISTANBUL"])
def test_istanbul_in_any_case_is_one_name(ddb, first):
    signup(Client(), "first@example.com", first)

    for other in {"istanbul", "İstanbul", "ISTANBUL", "İSTANBUL"} - {first}:
        form = form_of(signup(Client(), "other@example.com", other))
        assert form.has_error("username", "username_taken")
    assert store.get_by_username("İstanbul").username == first


def test_dotless_i_istanbul_is_too_similar_to_istanbul(ddb):
    signup(Client(), "first@example.com", "İstanbul")

    form = form_of(signup(Client(), "other@example.com", "ıstanbul"))

    assert form.has_error("username", "username_similar")


def test_the_u_label_and_a_label_of_one_mailbox_are_one_account(ddb):
    signup(Client(), "user@bücher.example", "ada")

    form = form_of(signup(Client(), "user@xn--bcher-kva.example", "lovelace"))

    assert form.has_error("email", "email_taken")
    account = store.get_by_email("USER@XN--BCHER-KVA.EXAMPLE")
    assert account.email == "user@bücher.example"  # shown and mailed as typed
    assert "UNIQ#EMAIL#user@xn--bcher-kva.example" in locks()
    assert login(Client(), "user@xn--bcher-kva.example").status_code == 302


def test_a_greek_omicron_in_the_domain_is_refused(ddb):
    form = form_of(signup(Client(), "g@ex\u03bfmple.com", "gamma"))

    assert form.has_error("email", "email_mixed_scripts")
    assert table_items() == {}


@pytest.mark.parametrize("name, code", [(".", "username_no_letter_or_digit"), ("12345", "username_digits_only")])
def test_names_without_a_letter_are_refused(ddb, name, code):
    assert form_of(signup(Client(), "eve@example.com", name)).has_error("username", code)
    assert table_items() == {}


@pytest.mark.parametrize("name", ["admin", "ADMIN", "adrnin", "postmaster", "support", "no-reply"])
def test_reserved_names_are_refused_on_the_signup_page(ddb, name):
    assert form_of(signup(Client(), "eve@example.com", name)).has_error("username", "username_reserved")


def test_two_look_alikes_signing_up_at_once_exactly_one_wins(ddb):
    names = ["coco", CYRILLIC_COCO] * 4
    outcomes = race(len(names), lambda i: store.signup(f"racer{i}@example.com", names[i], "hash")[0])

    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(loser, UniqueViolation) and loser.fields == {"username"} for loser in losers)
    assert locks()["UNIQ#HANDLE_SKEL#coco"] == winners[0].PK
    assert len(table_items()) == 4


def test_the_loser_of_a_look_alike_collision_learns_which_lock_collided(ddb):
    first, _ = store.signup("coco@example.com", "coco", "hash")

    with pytest.raises(UniqueViolation) as similar:
        store.signup("other@example.com", CYRILLIC_COCO, "hash")
    with pytest.raises(UniqueViolation) as same:
        store.signup("third@example.com", "COCO", "hash")

    assert similar.value.namespaces == {"username": {"HANDLE_SKEL"}}
    assert similar.value.owners == {"username": first.PK}
    assert same.value.namespaces == {"username": {"HANDLE", "HANDLE_SKEL"}}


def test_signup_with_its_skeleton_lock_is_one_transaction(ddb, count_requests):
    store.signup("coco@example.com", "coco", "hash")
    with pytest.raises(UniqueViolation):
        store.signup("other@example.com", CYRILLIC_COCO, "hash")

    assert dict(count_requests.counts) == {"TransactWriteItems": 2}


def test_a_username_change_moves_the_skeleton_lock_in_its_one_transaction(ddb, count_requests):
    account, _ = store.signup("coco@example.com", "coco", "hash")
    count_requests.reset()

    store.change_username(account, "lovelace")

    assert dict(count_requests.counts) == {"TransactWriteItems": 1}
    assert locks() == {
        "UNIQ#EMAIL#coco@example.com": account.PK,
        "UNIQ#HANDLE#lovelace": account.PK,
        "UNIQ#HANDLE_SKEL#lovelace": account.PK,
    }
    assert store.signup("other@example.com", CYRILLIC_COCO, "hash")[1]


def test_a_change_of_case_keeps_every_lock(ddb):
    account, _ = store.signup("coco@example.com", "coco", "hash")

    plan = transactions.plan_change(account, {"username": "Coco"})

    assert [action.role for action in plan.actions] == [transactions.ITEM]


def test_changing_to_a_look_alike_is_too_similar_on_the_username_page(ddb):
    signup(Client(), "coco@example.com", "coco")
    client = Client()
    signup(client, "ada@example.com", "ada")

    response = client.post("/accounts/username/", {"username": CYRILLIC_COCO, "password": PASSWORD})

    assert form_of(response).has_error("username", "username_similar")
    assert store.get_by_username("ada") is not None


def test_delete_releases_the_skeleton_lock(ddb):
    account, _ = store.signup("coco@example.com", "coco", "hash")

    store.delete_account(account)

    assert locks() == {}
    assert store.signup("other@example.com", CYRILLIC_COCO, "hash")[1]


def test_the_audit_finds_and_repairs_a_missing_skeleton_lock(ddb):
    account = make_account("coco@example.com", "coco")
    delete_lock("UNIQ#HANDLE_SKEL#coco")

    report = audit.run_audit()

    assert [(finding.kind, finding.namespace) for finding in report.findings] == [(audit.MISSING, "HANDLE_SKEL")]
    assert all(result.repaired for result in audit.repair_all(report))
    assert read_lock("UNIQ#HANDLE_SKEL#coco") == (True, account.PK)


def test_backfill_lists_look_alike_pairs_and_touches_neither(ddb):
    latin, cyrillic = new_account("a@example.com", "coco"), new_account("b@example.com", CYRILLIC_COCO)
    write_accounts([latin, cyrillic], with_locks=False)

    status, out, _ = run_command("accounts_backfill")

    assert status == 1
    assert "look-alike" in out and f"'coco' ({latin.PK})" in out and f"'{CYRILLIC_COCO}' ({cyrillic.PK})" in out
    assert read_lock("UNIQ#HANDLE_SKEL#coco") == (False, None)
    assert read_lock("UNIQ#HANDLE#coco") == (True, latin.PK)
    assert store.get_account(latin.id).username == "coco"
    assert store.get_account(cyrillic.id).username == CYRILLIC_COCO


def test_backfill_re_keys_a_lock_written_under_older_unicode_data(ddb):
    account = new_account("ada@example.com", "İstanbul")
    write_accounts([account], with_locks=False)
    # The keys an older normalization gave İstanbul (full case folding kept the dot).
    write_locks({"UNIQ#EMAIL#ada@example.com": account.PK, "UNIQ#HANDLE#i\u0307stanbul": account.PK})

    report, repairs = audit.backfill()

    assert {(result.finding.key, result.action) for result in repairs} == {
        ("UNIQ#HANDLE#i\u0307stanbul", audit.RELEASED),
        ("UNIQ#HANDLE#istanbul", audit.CLAIMED),
        ("UNIQ#HANDLE_SKEL#istanbul", audit.CLAIMED),
        (account.PK, audit.RECORDED),
    }
    assert audit.run_audit().consistent


@pytest.mark.parametrize(
    "first, second",
    [
        ("scott", "sc0tt"),
        ("sc0tt", "SCOTT"),
        ("coco", "coc0"),
        ("paypal", "paypal\u0301"),  # paypaĺ
        ("paypal", "paypa\u1e37"),  # paypaḷ
        ("paypa\u1e37", "paypal"),
    ],
    ids=ascii,
)
def test_digit_and_accent_look_alikes_of_a_taken_name_are_too_similar(ddb, first, second):
    signup(Client(), "first@example.com", first)

    form = form_of(signup(Client(), "other@example.com", second))

    assert form.has_error("username", "username_similar")
    assert store.get_by_email("other@example.com") is None


def test_a_digit_look_alike_of_a_reserved_name_is_reserved_on_the_signup_page(ddb):
    assert form_of(signup(Client(), "eve@example.com", "supp0rt")).has_error("username", "username_reserved")


def test_kana_with_and_without_voicing_marks_are_two_names(ddb):
    assert signup(Client(), "ka@example.com", "\u304b\u306a").status_code == 302  # かな
    assert signup(Client(), "ga@example.com", "\u304c\u306a").status_code == 302  # がな

    assert store.get_by_username("\u304c\u306a").email == "ga@example.com"


@pytest.mark.parametrize("with_twin", [False, True])
@pytest.mark.parametrize(
    "email, twin, code",
    [
        ('"ada"@example.com', "ada@example.com", "email_quoted"),
        (f"{'a' * 65}@example.com", f"{'a' * 64}@example.com", "email_local_too_long"),
    ],
)
def test_quoted_and_overlong_local_parts_are_refused_whether_or_not_a_twin_exists(ddb, with_twin, email, twin, code):
    if with_twin:
        signup(Client(), twin, "twin")

    form = form_of(signup(Client(), email, "other"))

    assert form.has_error("email", code)
    assert store.get_by_username("other") is None
