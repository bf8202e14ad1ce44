"""The members site's signal receivers."""

# Accounts created on the members site, in order: (account id, email, phone).
created = []


def record_account_created(sender, account, **kwargs):
    """Remember every member who signed up (a real site would send a welcome message)."""
    created.append((account.id, account.email, account.phone))
