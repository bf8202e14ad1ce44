"""Operations of several requests that the race and property tests run as a person would."""

from accounts import store


def change_email_by_link(account, email):
    """The verified email change: the request, then the link opened (its own read and
    transaction), with other operations free to land in between. Does nothing for an
    account that cannot ask (gone, unverified, or already at ``email``)."""
    if account is None or not store.is_verified(account) or store.is_same_address(account, email):
        return
    old_email = account.email
    nonce = store.request_email_change(account, email)
    account = store.get_account(account.id)
    if account is not None:
        store.apply_email_change(account, old_email, email, nonce)
