"""The transaction of a refresh token's use (the API's JWT token strategy,
:mod:`accounts.headless.tokens`): ONE TransactWriteItems that spends the token and checks
that its session still lives, so that a new access token (and the next refresh token) is
issued at most once per refresh token, and never after its session ended."""

from collections.abc import Mapping
from typing import Any

from ..tables import TableModel
from .actions import Action, Role, Transaction, new_transaction
from .authenticators import SESSION_LIVE, Spend, _raw_target, _single_use_record

REFRESH = "refresh"
LIVE_SESSION = Role.LIVE_SESSION


def refresh_token_spend(record: TableModel) -> Spend:
    """The builder of the ``Put`` of the record that a refresh token was used
    (:class:`accounts.headless.tables.UsedRefreshToken`), guarded ``attribute_not_exists(PK)
    OR expires < :now - margin``. A refresh token is exchanged once, because:

    1. its record exists after its first use, so this Put fails and the whole refresh with
       it (two refreshes racing with one token: one commits, the other is cancelled);
    2. the record lives until the token expires, and is free again only a clock-skew margin
       later: by then the token's own signed ``exp`` has passed, and no refresh accepts it;
    3. the record's key is a digest of the token's ``jti`` (random, 122 bits): no other
       token is refused by it, and the table holds nothing that could be sent as a token."""
    return _single_use_record(record)


def session_live_check(table: str, session_key: Mapping[str, Any]) -> Spend:
    """The builder of ``ConditionCheck session [expires >= :now]`` (the session store's own
    save condition): the session the refresh token belongs to still lives. A logout, the end
    of the session by its owner or staff, and a password change or reset (which ends every
    session of the account) delete its item, so a refresh racing them is cancelled whole:
    nothing a stolen refresh token holds survives them."""

    def check(now: int) -> Action:
        body = {
            "TableName": table,
            "Key": dict(session_key),
            "ConditionExpression": SESSION_LIVE,
            "ExpressionAttributeValues": {":now": {"N": str(now)}},
        }
        return Action("ConditionCheck", body, LIVE_SESSION, _raw_target(table, session_key))

    return check


def plan_refresh(spend: Spend, session_check: Spend | None) -> Transaction:
    """The transaction of a refresh: the token's single-use record (:func:`refresh_token_spend`)
    and, when sessions live in this table, the check that its session still lives
    (:func:`session_live_check`)."""
    checks = [session_check] if session_check is not None else []
    return new_transaction(REFRESH, lambda now: [spend(now), *(check(now) for check in checks)], None)
