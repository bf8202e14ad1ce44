"""Signals sent by :mod:`accounts.store`, only after the transaction committed.

- ``account_created``: ``sender`` = the account model class, ``account``
- ``email_changed``: ``sender``, ``account``, ``old_email``, ``new_email``
- ``username_changed``: ``sender``, ``account``, ``old_username``, ``new_username``
- ``email_verified``: ``sender``, ``account`` (its address is now proven and locked)
- ``account_deleted``: ``sender``, ``account`` (as it was before deletion)

Sent by the staff pages (:mod:`accounts.staff.records`), after the change committed:

- ``staff_changed_account``: ``sender`` = the account model class, ``staff`` (the
  :class:`~accounts.models.User` who made the change), ``account`` (as it is after it),
  ``action`` (``email``, ``email_verified``, ``username``, ``password``, ``is_active``,
  ``is_staff``, ``sessions_ended``, ``authenticator_removed``, ``deleted``) and
  ``description`` (what was done, in words, as logged): for a host to record who did what.

Sent once per event of an account's security timeline (:mod:`accounts.timeline`), after the
write that stored it committed, for a host's SIEM:

- ``security_event``: ``sender`` = the account model class, ``event`` (an
  :class:`accounts.timeline.Event`: ``account_id``, ``kind``, ``at``, ``address``,
  ``user_agent``, ``actor`` (the staff member's account id, or ``None``) and ``detail``)
"""

from django.dispatch import Signal

account_created = Signal()
email_changed = Signal()
username_changed = Signal()
account_deleted = Signal()
email_verified = Signal()
staff_changed_account = Signal()
security_event = Signal()
