"""Email ownership on DynamoDB Local: the email lock is a partial constraint held only by a
verified account, unverified sign-ups expire, and races are settled by the lock item."""

from datetime import timedelta

import pytest

from accounts import lookups, store, transactions
from accounts.exceptions import StaleItem, UniqueViolation
from accounts.tables import Account, TableModel, dynamodb_client, epoch_now
from tests.engine.test_engine import locks, table_items
from tests.engine.test_engine_concurrency import race

pytestmark = pytest.mark.dynamodb_local

HASH = "argon2$not-a-real-hash"
EMAIL_LOCK = "UNIQ#EMAIL#victim@example.org"


@pytest.fixture(autouse=True)
def mandatory(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"


def unverified(email, username):
    return store.signup(email, username, HASH)[0]


def verified(email, username):
    return store.signup(email, username, HASH, email_verified=True)[0]


def test_unverified_signup_takes_no_email_lock_and_expires_with_its_username_lock(ddb):
    squatter = unverified("Victim@Example.org", "squatter")

    items = table_items()
    assert EMAIL_LOCK not in items
    assert items["UNIQ#HANDLE#squatter"]["owner"] == squatter.PK
    assert items["UNIQ#HANDLE#squatter"]["expires"] == items[squatter.PK]["expires"]
    assert epoch_now() + 86400 - 60 <= int(items[squatter.PK]["expires"]) <= epoch_now() + 86400
    assert items[squatter.PK]["email_verified"] is False
    assert store.get_by_email("victim@example.org") is None


def test_squatting_is_impossible_the_owner_signs_up_verifies_and_holds_the_address(ddb):
    squatter = unverified("victim@example.org", "squatter")

    owner = unverified("victim@example.org", "owner")
    store.verify_email(store.get_account(owner.id))

    assert locks()[EMAIL_LOCK] == owner.PK
    assert store.get_by_email("VICTIM@example.org").PK == owner.PK
    with pytest.raises(UniqueViolation) as caught:
        store.verify_email(store.get_account(squatter.id))
    assert caught.value.fields == {"email"}
    assert store.get_account(squatter.id).email_verified is False


def test_verification_stops_the_account_and_its_locks_expiring(ddb):
    account = unverified("victim@example.org", "owner")

    store.verify_email(store.get_account(account.id))

    items = table_items()
    assert "expires" not in items[account.PK]
    assert "expires" not in items["UNIQ#HANDLE#owner"]
    assert items[EMAIL_LOCK]["owner"] == account.PK and "expires" not in items[EMAIL_LOCK]
    assert items[account.PK]["email_verified"] is True


def test_address_a_verified_account_holds_is_refused_at_signup_by_the_condition_check(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = False  # on by default in mode "mandatory"
    verified("victim@example.org", "owner")

    with pytest.raises(UniqueViolation) as caught:
        unverified("Victim@EXAMPLE.org", "squatter")

    assert caught.value.fields == {"email"}
    assert len(table_items()) == 4  # the owner's account and its three locks


def test_unverified_signup_is_one_transaction_with_a_condition_check_on_the_email_lock(ddb):
    account = store.build_account("victim@example.org", "owner", HASH, email_verified=False, expires=epoch_now() + 60)

    request = transactions.plan_create(account).request()["TransactItems"]

    # Account, then one action per constraint in declaration order (email, username, and
    # the username's look-alike skeleton).
    assert [next(iter(action)) for action in request] == ["Put", "ConditionCheck", "Put", "Put"]
    check = request[1]["ConditionCheck"]
    assert check["Key"]["PK"] == {"S": EMAIL_LOCK}
    assert check["ConditionExpression"] == "attribute_not_exists (#0)"
    username_put = request[2]["Put"]
    assert username_put["ConditionExpression"] == "(attribute_not_exists (#0) OR #1 < :0)"
    assert username_put["Item"]["expires"] == {"N": str(account.expires)}


def test_expired_unverified_account_stops_blocking_its_username(lagging_ttl, settings):
    # Expired longer ago than the clock-skew margin (5 minutes): free by any server's clock.
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(minutes=-5, seconds=-5)
    squatter = unverified("victim@example.org", "wanted")
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(days=7)

    assert store.get_account(squatter.id) is None
    assert store.get_by_username("wanted") is None
    owner = unverified("victim@example.org", "wanted")

    assert locks()["UNIQ#HANDLE#wanted"] == owner.PK
    assert store.get_by_username("wanted").PK == owner.PK


def test_expired_unverified_account_cannot_be_verified(lagging_ttl, settings):
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=-5)
    squatter = unverified("victim@example.org", "squatter")
    # Read before it expired (a lookup would not return it now).
    as_read = Account.get(squatter.PK, "PROFILE", consistent_read=True)

    with pytest.raises(StaleItem):
        store.verify_email(as_read)

    assert EMAIL_LOCK not in locks()


def test_expired_lock_is_absent_to_lookups(lagging_ttl, settings):
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=-5)
    squatter = unverified("victim@example.org", "squatter")

    assert lookups.lock_owner(Account, "UNIQ#HANDLE#squatter") is None
    assert locks()["UNIQ#HANDLE#squatter"] == squatter.PK  # still there: TTL deletes lazily


def test_create_table_enables_ttl_on_expires(ddb):
    description = dynamodb_client().describe_time_to_live(TableName=TableModel.Meta.table_name)

    assert description["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}


def test_squatter_and_owner_verifying_at_once_exactly_one_holds_the_address(ddb):
    accounts = [unverified("victim@example.org", f"claimant{i}") for i in range(8)]
    copies = [store.get_account(account.id) for account in accounts]

    outcomes = race(8, lambda i: store.verify_email(copies[i]))

    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(loser, UniqueViolation) and loser.fields == {"email"} for loser in losers)
    assert locks()[EMAIL_LOCK] == winners[0].PK
    verified_ones = [pk for pk, item in table_items().items() if item.get("email_verified") is True]
    assert verified_ones == [winners[0].PK]


def test_audit_finds_nothing_wrong_with_unverified_and_expired_accounts(lagging_ttl, settings):
    from accounts import audit

    verified("owner@example.org", "owner")
    unverified("victim@example.org", "pending")
    unverified("second@example.org", "hopeful")
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=-5)
    unverified("victim@example.org", "expired")

    report = audit.run_audit()

    assert report.findings == []
    # The owner's three; a username and its skeleton of each live unverified sign-up (no
    # email lock); none of the expired one's.
    assert report.locks == 3 + 2 + 2


def test_no_repair_gives_an_address_to_an_unverified_account(ddb):
    from accounts import audit
    from accounts.exceptions import InvalidTransaction

    squatter = unverified("victim@example.org", "squatter")
    constraint = store.constraint_for("email")

    with pytest.raises(InvalidTransaction):
        transactions.plan_claim_lock(store.get_account(squatter.id), constraint)
    assert audit.lock_states(store.get_account(squatter.id))[0].constraint.namespace == "HANDLE"


def test_explain_shows_the_verify_transaction_and_sends_nothing_but_reads(ddb):
    import json
    from io import StringIO

    from django.core.management import call_command

    account = unverified("victim@example.org", "owner")
    out = StringIO()

    call_command("accounts_explain", "verify", "--username", "owner", stdout=out)

    actions = json.loads(out.getvalue())["TransactItems"]
    # The account, its email lock, and the two username locks (name, skeleton) it keeps.
    # The account, its email lock, its other locks kept; then the security event it records.
    assert [next(iter(action)) for action in actions] == ["Update", "Put", "Update", "Update", "Put"]
    assert actions[4]["Put"]["Item"]["kind"] == {"S": "email_verified"}
    assert "REMOVE" in actions[0]["Update"]["UpdateExpression"]
    assert actions[1]["Put"]["Item"]["PK"] == {"S": EMAIL_LOCK}
    assert actions[2]["Update"]["Key"]["PK"] == {"S": "UNIQ#HANDLE#owner"}
    assert store.get_account(account.id).email_verified is False


def test_explain_shows_the_apply_email_change_transaction(ddb):
    import json
    from io import StringIO

    from django.core.management import call_command

    account = verified("ada@example.org", "ada")
    store.request_email_change(store.get_account(account.id), "lovelace@example.org")
    out = StringIO()

    call_command("accounts_explain", "apply-email-change", "--username", "ada", stdout=out)

    actions = json.loads(out.getvalue())["TransactItems"]
    # The account, the new address's lock, the old one's release; then the security event.
    assert [next(iter(action)) for action in actions] == ["Update", "Put", "Delete", "Put"]
    assert actions[3]["Put"]["Item"]["SK"]["S"].startswith("EVENT#")
    assert actions[1]["Put"]["Item"]["PK"] == {"S": "UNIQ#EMAIL#lovelace@example.org"}
    assert actions[2]["Delete"]["Key"]["PK"] == {"S": "UNIQ#EMAIL#ada@example.org"}
    assert store.get_account(account.id).email == "ada@example.org"


def test_two_owners_links_for_one_address_opened_at_once_one_account_gets_it(ddb):
    from accounts import verification

    tokens = [verification.verification_token(unverified("victim@example.org", f"owner{i}")) for i in range(4)]

    outcomes = race(4, lambda i: verification.confirm_email(tokens[i]))

    kinds = sorted(outcome for outcome, _ in outcomes)
    assert kinds == [verification.TAKEN] * 3 + [verification.VERIFIED]
    (winner,) = [account for outcome, account in outcomes if outcome == verification.VERIFIED]
    assert locks()[EMAIL_LOCK] == winner.PK


def test_email_verified_signal_is_sent_once_after_the_commit(ddb):
    from accounts import signals

    received = []

    def receiver(sender, account, **kwargs):
        received.append((account.PK, store.get_by_email("victim@example.org").PK))

    account = unverified("victim@example.org", "owner")
    signals.email_verified.connect(receiver)
    try:
        store.verify_email(store.get_account(account.id))
        store.verify_email(store.get_account(account.id))  # already verified: nothing sent
    finally:
        signals.email_verified.disconnect(receiver)

    assert received == [(account.PK, account.PK)]


def test_a_discard_planned_before_the_verification_commits_touches_nothing(ddb):
    account = unverified("victim@example.org", "owner")
    as_read = store.get_account(account.id)
    store.verify_email(store.get_account(account.id))

    # The delete's guard (email_verified as read: false) refuses it, not the read before it.
    with pytest.raises(StaleItem):
        store.discard_signup(as_read)

    assert store.get_account(account.id).email_verified is True
    assert locks() == {EMAIL_LOCK: account.PK, "UNIQ#HANDLE#owner": account.PK, "UNIQ#HANDLE_SKEL#owner": account.PK}


def test_a_verified_account_is_refused_before_anything_is_sent(ddb, count_requests):
    account = verified("victim@example.org", "owner")
    count_requests.reset()

    with pytest.raises(StaleItem):
        store.discard_signup(store.get_account(account.id))

    assert dict(count_requests.counts) == {"GetItem": 1}
    assert store.get_by_email("victim@example.org").PK == account.PK


@pytest.mark.parametrize("round_", range(4))
def test_confirming_and_discarding_at_once_one_wins_and_nothing_is_half_done(ddb, round_):
    from accounts import verification

    account = unverified("victim@example.org", "owner")
    token = verification.verification_token(account)

    confirmed, discarded = race(2, lambda i: (verification.confirm_email, verification.discard_signup)[i](token))

    stored = store.get_account(account.id)
    if stored is None:
        assert discarded[0] == verification.DISCARDED and confirmed[0] in (verification.STALE, verification.BUSY)
        assert [pk for pk in table_items() if pk.startswith("UNIQ#")] == []
    else:
        assert confirmed[0] == verification.VERIFIED and discarded[0] in (
            verification.ALREADY_VERIFIED,
            verification.BUSY,
        )
        assert stored.email_verified is True and locks()[EMAIL_LOCK] == account.PK
