"""Django's admin beside accounts kept in DynamoDB (``accounts.W003`` still advises the
staff pages, which manage accounts).

Imported by the admin's autodiscovery when ``django.contrib.admin`` is installed. The
admin's index opens for staff, with the permissions of ``User.has_perm`` (a superuser's
are all), but without its log of recent actions, whose rows point at users in a SQL
table; with no SQL database at all, the groups (SQL rows too) are not offered either.
"""

from django.contrib import admin
from django.contrib.auth import admin as auth_admin  # noqa: F401  (registers Group first)
from django.contrib.auth.models import Group

from .sql import sql_databases

if admin.site.index_template is None:
    admin.site.index_template = "accounts/admin/index.html"
if not sql_databases() and admin.site.is_registered(Group):
    admin.site.unregister(Group)
