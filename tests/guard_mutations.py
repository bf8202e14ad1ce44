"""A pytest plugin that removes ONE guard the transactions send, to show a behaviour test
fails without it (issue 30, point 3): ``GUARD_MUTATION=<guard> python -m pytest -p
tests.guard_mutations <test>``. ``tests/run_guard_mutations.py`` runs each guard's test so
and records the table of protocol/README.md ("Guards shown by behaviour tests").

A mutation rewrites the matching actions of each TransactWriteItems request on its way to
DynamoDB: the conjuncts comparing the named attributes become always true (the request is
otherwise the one the code sends). Without ``GUARD_MUTATION`` the plugin does nothing.
"""

import os
import re

from accounts.transactions import running

# guard -> (which action: its kind and a test of its key or item, attributes whose conjuncts go)
MUTATIONS = {
    "G_OTHER_MEMBER_LISTED": ("ConditionCheck", lambda body: body["Key"]["PK"]["S"] == "STAFF", ("PK",)),
    "G_DELETE_STAFF_FLAGS_AS_READ": ("Put", lambda body: "deleted" in body["Item"], ("is_staff", "is_active")),
    "G_STAFF_ITEM_AS_READ": (
        "Update",
        lambda body: (
            re.search(r"is_staff|is_active", str(body.get("ExpressionAttributeNames", {}))) is not None
            and "SET" in body.get("UpdateExpression", "")
        ),
        ("is_staff", "is_active", "updated"),
    ),
    "G_SLOT_FREE": ("Put", lambda body: body["Item"]["SK"]["S"].startswith("SESS_SLOT#"), ("PK",)),
    "G_SLOT_HOLDER_AS_READ": ("Put", lambda body: body["Item"]["SK"]["S"].startswith("SESS_SLOT#"), ("holder",)),
    "G_LIMIT_UNDER": (
        "ConditionCheck",
        lambda body: body["Key"]["SK"]["S"].startswith("RATE#") or body["Key"]["PK"]["S"].startswith("RATE#"),
        ("*",),
    ),
    "G_SIGNUP_EMAIL_LOCK_FREE": (
        "Put",
        lambda body: body["Item"]["PK"]["S"].startswith("UNIQ#EMAIL#"),
        ("PK", "expires"),
    ),
}
ALWAYS = "(attribute_exists(#mutation_pk) OR attribute_not_exists(#mutation_pk))"


def _without(body, names):
    """``body`` with the conjuncts on ``names`` made always true (``*``: the whole condition)."""
    condition = body.get("ConditionExpression")
    if condition is None:
        return body
    placeholders = {
        key for key, name in body.get("ExpressionAttributeNames", {}).items() if name in names or "*" in names
    }
    spelled = "|".join(re.escape(name) for name in [*placeholders, *names] if name != "*")
    if "*" in names:
        condition = ALWAYS
    else:
        pattern = rf"(attribute_(?:not_)?exists\s*\((?:{spelled})\)|(?:{spelled})(?!\w)\s*(?:=|<>|<=|>=|<|>)\s*:\w+)"
        condition = re.sub(pattern, ALWAYS, condition)
    mutated = {**body, "ConditionExpression": condition}
    mutated["ExpressionAttributeNames"] = {**body.get("ExpressionAttributeNames", {}), "#mutation_pk": "PK"}
    used = re.findall(r":\w+", condition)
    values = {key: value for key, value in body.get("ExpressionAttributeValues", {}).items() if key in used}
    if values:
        mutated["ExpressionAttributeValues"] = values
    else:
        mutated.pop("ExpressionAttributeValues", None)
    names_used = set(re.findall(r"#\w+", condition))
    mutated["ExpressionAttributeNames"] = {
        k: v for k, v in mutated["ExpressionAttributeNames"].items() if k in names_used
    }
    return mutated


class _MutatingClient:
    def __init__(self, client, kind, matches, names):
        self._client, self._kind, self._matches, self._names = client, kind, matches, names

    def transact_write_items(self, **request):
        items = []
        for entry in request["TransactItems"]:
            ((kind, body),) = entry.items()
            if kind == self._kind and self._matches(body):
                body = _without(body, self._names)
            items.append({kind: body})
        return self._client.transact_write_items(**{**request, "TransactItems": items})

    def __getattr__(self, name):
        return getattr(self._client, name)


def pytest_configure(config):
    guard = os.environ.get("GUARD_MUTATION")
    if not guard:
        return
    kind, matches, names = MUTATIONS[guard]
    client = running.dynamodb_client
    running.dynamodb_client = lambda: _MutatingClient(client(), kind, matches, names)
