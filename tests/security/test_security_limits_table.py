"""docs/security.md lists every rate limit with its default budget (issue 35): the table is
held to what the code declares, so it cannot drift."""

import re
from pathlib import Path

from accounts import ratelimit
from accounts.app_settings import DEFAULT_RATE_LIMITS, app_settings
from accounts.login_codes import flows as login_codes

PAGE = Path(__file__).resolve().parents[2] / "docs" / "security.md"
UNITS = {86400: "d", 3600: "h", 60: "m", 1: "s"}


def notation(rule):
    """``rule`` in django-allauth's notation (``5/5m/key``)."""
    for seconds, unit in UNITS.items():
        if rule.period % seconds == 0:
            count = rule.period // seconds
            return f"{rule.amount}/{'' if count == 1 else count}{unit}/{rule.per}"
    raise ValueError(rule)


def documented():
    section = PAGE.read_text(encoding="utf-8").split("## Every rate limit", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", section, re.M))


def declared(settings):
    """Every limit and its default: ACCOUNTS_RATE_LIMITS's, the anonymous sessions', a code's tries."""
    for name in ("ACCOUNTS_RATE_LIMITS", "ACCOUNTS_ANONYMOUS_SESSION_LIMIT"):
        if hasattr(settings, name):
            delattr(settings, name)
    limits = {action: ",".join(notation(rule) for rule in rules) for action, rules in ratelimit.limits().items()}
    limits[ratelimit.ANONYMOUS_SESSION_ACTION] = app_settings.ANONYMOUS_SESSION_LIMIT
    limits[login_codes.TRIES_ACTION] = notation(login_codes.TRIES_RULE)
    return limits


def test_the_docs_table_lists_every_limit_with_its_default(settings):
    assert documented() == declared(settings)


def test_the_notation_reads_back_as_the_rules():
    for text in DEFAULT_RATE_LIMITS.values():
        assert ",".join(notation(rule) for rule in ratelimit.parse_rules(text)) == text
