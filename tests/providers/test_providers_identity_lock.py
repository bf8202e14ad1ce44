"""The identity is a lock, ``UNIQ#OIDC#<issuer>#<subject>``, owned by the account, on DynamoDB
Local: written with the account at sign-up and with the link, released by unlinking and by
the deletion, checked and repaired by the audit like every namespace; and under any race two
accounts never hold one identity."""

import threading

import pytest
from django.test import Client

from accounts import audit, store, timeline
from accounts.providers import store as provider_store
from accounts.tables import identity_element
from tests.invariants import violations
from tests.oidc import oidc_provider, oidc_site, provider_login  # noqa: F401  (fixtures)
from tests.seeding import delete_lock, read_lock, write_locks
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

ISSUER = "https://id.example"


def test_an_identity_lock_key_names_issuer_and_subject():
    assert provider_store.identity_lock_key(ISSUER, "248289761001") == "UNIQ#OIDC#https://id.example#248289761001"
    # A '#' in either part cannot make two pairs share a key.
    assert provider_store.identity_lock_key("https://a#b", "c") != provider_store.identity_lock_key("https://a", "b#c")


def test_sign_up_with_an_identity_writes_its_lock_in_the_same_transaction(ddb, count_requests):
    account, created = provider_store.signup(
        email="ada@example.com", username="ada", issuer=ISSUER, subject="7", email_verified=True
    )

    assert created and count_requests.counts["TransactWriteItems"] == 1
    assert read_lock(provider_store.identity_lock_key(ISSUER, "7")) == (True, account.PK)
    assert violations() == []


def test_sixteen_concurrent_first_sign_ins_of_one_identity_make_one_account(oidc_site):
    clients = [Client() for _ in range(16)]
    for client in clients:
        assert provider_login(client, "carol")["Location"] == "/accounts/providers/signup/"
    barrier = threading.Barrier(len(clients))
    answers = [None] * len(clients)

    def sign_up(index):
        barrier.wait()
        # Each its own address and username: only the identity's lock can stop them.
        data = {"email": f"carol{index}@example.com", "username": f"carol{index}"}
        answers[index] = clients[index].post("/accounts/providers/signup/", data)

    threads = [threading.Thread(target=sign_up, args=(index,)) for index in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    created = [answer for answer in answers if answer.status_code == 302]
    refused = [answer for answer in answers if answer.status_code == 200]
    assert len(created) == 1 and len(refused) == 15
    assert all(answer.context["form"].has_error("__all__", "identity_taken") for answer in refused)
    owners = [store.get_by_username(f"carol{index}") for index in range(16)]
    (winner,) = [account for account in owners if account is not None]
    assert read_lock(provider_store.identity_lock_key(oidc_site.issuer, "carol")) == (True, winner.PK)
    assert violations() == []


def test_a_second_accounts_link_of_a_linked_identity_is_refused_by_the_lock(oidc_site):
    alice = Client()
    provider_login(alice, "alice")
    alice.post("/accounts/providers/signup/", {"email": "alice@example.com", "username": "alice"})
    bob = signed_up_client("bob@example.com", "bob")

    response = bob.post("/accounts/providers/test/link/")
    assert response.status_code == 302
    from tests.oidc import CALLBACK_PATH, callback_query, sign_in_at_provider

    back = sign_in_at_provider(response["Location"], "alice", "http://testserver" + CALLBACK_PATH)
    answer = bob.get(CALLBACK_PATH, callback_query(back), follow=True)

    assert "already linked to another account" in answer.content.decode()
    assert store.get_by_username("bob").oidc_identities is None
    owner = store.get_by_username("alice").PK
    assert read_lock(provider_store.identity_lock_key(oidc_site.issuer, "alice")) == (True, owner)


def test_linking_a_free_identity_writes_its_lock_and_mails_a_notice(oidc_site, mailoutbox):
    bob = signed_up_client("bob@example.com", "bob")
    mailoutbox.clear()
    from tests.oidc import CALLBACK_PATH, callback_query, sign_in_at_provider

    response = bob.post("/accounts/providers/test/link/")
    back = sign_in_at_provider(response["Location"], "bob", "http://testserver" + CALLBACK_PATH)
    bob.get(CALLBACK_PATH, callback_query(back))

    account = store.get_by_username("bob")
    assert provider_store.identities_of(account) == [(oidc_site.issuer, "bob")]
    assert read_lock(provider_store.identity_lock_key(oidc_site.issuer, "bob")) == (True, account.PK)
    assert [mail.to for mail in mailoutbox] == [["bob@example.com"]]
    # And the identity now logs in to bob's account.
    again = Client()
    provider_login(again, "bob")
    assert again.session["_auth_user_id"] == account.id


def test_deleting_the_account_releases_its_identity_lock(ddb):
    account, _ = provider_store.signup(
        email="ada@example.com", username="ada", issuer=ISSUER, subject="7", email_verified=True
    )
    provider_store.link(store.get_account(account.id), "https://other.example", "8")

    store.delete_account(store.get_account(account.id))

    assert read_lock(provider_store.identity_lock_key(ISSUER, "7")) == (False, None)
    assert read_lock(provider_store.identity_lock_key("https://other.example", "8")) == (False, None)
    assert violations() == []


def test_unlinking_releases_the_lock_and_the_last_way_in_is_kept(ddb):
    from accounts.providers import flows

    account, _ = provider_store.signup(
        email="ada@example.com", username="ada", issuer=ISSUER, subject="7", email_verified=True
    )
    with pytest.raises(flows.LastWayIn):
        flows.unlink(store.get_account(account.id), ISSUER, "7", origin=timeline.NO_ORIGIN)
    provider_store.link(store.get_account(account.id), "https://other.example", "8")

    flows.unlink(store.get_account(account.id), ISSUER, "7", origin=timeline.NO_ORIGIN)

    assert read_lock(provider_store.identity_lock_key(ISSUER, "7")) == (False, None)
    assert provider_store.identities_of(store.get_account(account.id)) == [("https://other.example", "8")]


def test_the_audit_finds_a_missing_identity_lock_and_claims_it(ddb):
    account, _ = provider_store.signup(
        email="ada@example.com", username="ada", issuer=ISSUER, subject="7", email_verified=True
    )
    key = provider_store.identity_lock_key(ISSUER, "7")
    delete_lock(key)

    report = audit.run_audit()

    assert [(finding.kind, finding.key) for finding in report.findings] == [("missing", key)]
    audit.repair_all(report)
    assert read_lock(key) == (True, account.PK) and violations() == []


def test_the_audit_finds_and_releases_an_orphaned_identity_lock(ddb):
    write_locks({provider_store.identity_lock_key(ISSUER, "stray"): "ACCT#gone"})

    (finding,) = audit.run_audit().findings

    assert (finding.kind, finding.namespace) == ("orphaned", "OIDC")


def test_an_identity_stored_as_an_element_is_the_pair_it_was_made_of():
    assert provider_store.identities_of(
        type("A", (), {"oidc_identities": {identity_element("https://a#b", "c%d")}})
    ) == [("https://a#b", "c%d")]


def test_the_staff_account_page_shows_its_identity_locks(ddb):
    from tests.staff import client_as, make_account

    account, _ = provider_store.signup(
        email="ada@example.com", username="ada", issuer=ISSUER, subject="7", email_verified=True
    )
    boss = make_account("boss@example.com", "boss", staff=True)

    page = client_as(boss).get(f"/staff/accounts/{account.id}/").content.decode()

    assert "UNIQ#OIDC#https://id.example#7" in page
    assert "oidc_identities" in page
