"""Logging in by a code mailed to the account's address (django-allauth's "login by code"):
:mod:`.flows` (plain typed functions an HTML or an API view calls), :mod:`.forms`,
:mod:`.views` and :mod:`.urls` (included by :mod:`accounts.urls` under ``code/``, namespace
``accounts:login_codes``).
"""
