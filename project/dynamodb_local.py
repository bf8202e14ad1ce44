"""Moved into the app: :mod:`accounts.dynamodb_local` (the wheel ships it to host projects).

Kept so that code written against the old path still imports; new code imports the app's.
"""

from accounts.dynamodb_local import DynamoDBLocal, DynamoDBLocalError, free_port  # noqa: F401
