"""IPv6 addresses count by their network (issue 26, finding 10): a subscriber holds a whole
/64 and may pick any address in it, so the limits per ``ip`` count an IPv6 client by its
``ACCOUNTS_IPV6_PREFIX_LENGTH`` bits (default 64), spelled canonically, as every spelling of
one address counts as one."""

import pytest
from django.test import Client

from accounts.ratelimit import counted_address

pytestmark = pytest.mark.dynamodb_local

LOGIN = "/accounts/login/"
# login_failed allows 10 a minute per address (the default ACCOUNTS_RATE_LIMITS).
LIMIT = 10


def failed_logins(addresses, *, forwarded=False):
    """The status of one wrong login per address, each for a name of its own (so the
    limits per login name never apply)."""
    statuses = []
    for number, address in enumerate(addresses):
        meta = {"HTTP_X_FORWARDED_FOR": address} if forwarded else {"REMOTE_ADDR": address}
        response = Client(**meta).post(LOGIN, {"username": f"nobody{number}", "password": "wrong"})
        statuses.append(response.status_code)
    return statuses


def test_twelve_addresses_of_one_64_share_the_limit_of_ten(ddb):
    addresses = [f"2001:db8:1:2:{number:x}::{number + 1:x}" for number in range(12)]

    assert failed_logins(addresses) == [200] * LIMIT + [429] * 2


def test_four_spellings_of_one_address_count_together(ddb, settings):
    # Each address apart (128 bits), as a proxy in front writes them in X-Forwarded-For.
    settings.ACCOUNTS_IPV6_PREFIX_LENGTH = 128
    spellings = ["2001:db8::7", "2001:DB8:0:0:0:0:0:7", "2001:0db8:0000::0007", "[2001:db8::7]:443"]

    settings.ACCOUNTS_TRUSTED_PROXY_COUNT = 1
    statuses = failed_logins(spellings * 3, forwarded=True)

    assert statuses == [200] * LIMIT + [429] * 2


def test_another_64_has_a_limit_of_its_own(ddb):
    failed_logins([f"2001:db8:1:2::{number + 1:x}" for number in range(LIMIT)])

    assert failed_logins(["2001:db8:1:3::1"]) == [200]


def test_with_128_bits_each_address_of_a_64_counts_apart(ddb, settings):
    settings.ACCOUNTS_IPV6_PREFIX_LENGTH = 128

    assert failed_logins([f"2001:db8:1:2::{number + 1:x}" for number in range(12)]) == [200] * 12


@pytest.mark.parametrize(
    "address, counted",
    [
        ("2001:db8:0:0:1::1", "2001:db8::/64"),
        ("2001:DB8::ffff:1", "2001:db8::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("192.0.2.1", "192.0.2.1"),
        ("not an address", "not an address"),
    ],
)
def test_an_address_is_counted_canonically(address, counted):
    assert counted_address(address) == counted
