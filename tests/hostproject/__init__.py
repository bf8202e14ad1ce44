"""A second Django project that installs the accounts app the way any host project would.

It imports nothing from the demo site (``project/``): its own settings, table name
(``members``), URL prefixes (``/members/`` for the account pages, ``/backoffice/`` for the
staff pages), an extra unique field ``phone`` (namespace ``PHONE``), one overridden
template and a signal receiver. ``tests/hostproject/test_hostproject.py`` runs the suite against it.
"""
