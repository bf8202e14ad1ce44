"""URLs of a project that kept Django's admin (tests/web/test_permissions.py)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("staff/", include("accounts.staff.urls")),
]
