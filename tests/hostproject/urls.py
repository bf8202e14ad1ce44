from django.urls import include, path

urlpatterns = [
    path("members/", include("accounts.urls")),
    path("backoffice/", include("accounts.staff.urls")),
]
