"""The members site's account item: the app's account plus a phone number."""

from pynamodb.attributes import UnicodeAttribute

from accounts.tables import Account


class MemberAccount(Account):
    """An account with an optional phone number, unique when given (ACCOUNTS_UNIQUE_FIELDS)."""

    phone = UnicodeAttribute(null=True)
