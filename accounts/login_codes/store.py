"""What login by code sends to DynamoDB beyond a sign-in's own writes (built by
:mod:`accounts.transactions`)."""

from collections.abc import Callable

from .. import transactions
from ..tables import Account


def as_issued(account: Account) -> Callable[[int], transactions.Action]:
    """The check, sent with a code's sign-in, that ``account``'s password, address and phone
    number are still those the code was judged against, and the account still active
    (:func:`accounts.transactions.code_as_issued`)."""
    return transactions.code_as_issued(account)
