"""A short name for a browser from its user agent (the session lists and the security timeline)."""

import re

from django.utils.translation import gettext

# Checked in order: Edge and Opera say "Chrome", Chrome says "Safari".
BROWSERS = (
    ("Edge", r"Edg(?:e|A|iOS)?/"),
    ("Opera", r"OPR/|Opera"),
    ("Samsung Internet", r"SamsungBrowser/"),
    ("Firefox", r"Firefox/|FxiOS/"),
    ("Chrome", r"Chrome/|CriOS/"),
    ("Safari", r"Safari/"),
)
SYSTEMS = (
    ("Android", r"Android"),
    ("iOS", r"iPhone|iPad|iPod"),
    ("Windows", r"Windows"),
    ("macOS", r"Mac OS X|Macintosh"),
    ("ChromeOS", r"CrOS"),
    ("Linux", r"Linux"),
)


def describe_user_agent(user_agent):
    """A short name for a browser from its user agent, in the active language: ``"Firefox
    on Linux"`` (``"Linux 上の Firefox"``), or the empty string when nothing is recognised."""
    user_agent = user_agent or ""
    browser = next((name for name, pattern in BROWSERS if re.search(pattern, user_agent)), "")
    system = next((name for name, pattern in SYSTEMS if re.search(pattern, user_agent)), "")
    if browser and system:
        # Translators: a browser and the operating system it runs on, e.g. "Firefox on Linux".
        return gettext("%(browser)s on %(system)s") % {"browser": browser, "system": system}
    return browser or system
