"""Locks the configuration no longer declares: lock items in one of the app's own
namespaces (``EMAIL``, ``HANDLE``, ``HANDLE_SKEL``) that no audited constraint declares.

A project whose ``ACCOUNTS_UNIQUE_FIELDS`` once dropped the username's look-alike lock,
or renamed a namespace, leaves such locks behind: they protect nothing, and the values they
name are no longer refused. The audit cannot know what was meant, so it counts them and a
person decides (restore the declaration, or delete the locks). Other namespaces are left
alone: another model sharing the table may own them.
"""

from ..app_settings import DEFAULT_UNIQUE_FIELDS
from ..uniqueness import UniqueConstraint

NAMESPACE_OPTIONS = ("namespace", "skeleton_namespace")


def expected_namespaces():
    """The lock namespaces of the app's default unique fields."""
    return {options[key] for options in DEFAULT_UNIQUE_FIELDS.values() for key in NAMESPACE_OPTIONS if key in options}


class UndeclaredLocks:
    """Counts, by namespace, the scanned locks of an expected namespace that none of
    ``constraints`` declares."""

    def __init__(self, constraints):
        declared = {constraint.namespace for constraint in constraints}
        self._constraints = [
            UniqueConstraint("value", namespace=namespace) for namespace in sorted(expected_namespaces() - declared)
        ]
        self.counts = {}

    def add(self, key):
        """Count lock ``key`` if its namespace is expected and undeclared."""
        for constraint in self._constraints:
            if constraint.owns_key(key):
                self.counts[constraint.namespace] = self.counts.get(constraint.namespace, 0) + 1
