"""Signals sent by :mod:`accounts.store`, only after the transaction committed.

- ``account_created``: ``sender`` = the account model class, ``account``
- ``email_changed``: ``sender``, ``account``, ``old_email``, ``new_email``
- ``username_changed``: ``sender``, ``account``, ``old_username``, ``new_username``
- ``email_verified``: ``sender``, ``account`` (its address is now proven and locked)
- ``account_deleted``: ``sender``, ``account`` (as it was before deletion)
"""

from django.dispatch import Signal

account_created = Signal()
email_changed = Signal()
username_changed = Signal()
account_deleted = Signal()
email_verified = Signal()
