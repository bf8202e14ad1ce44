from django.urls import include, path
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.generic import TemplateView

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("accounts/", include("accounts.urls")),
    path("staff/", include("accounts.staff.urls")),
    # The headless API (django-allauth's protocol) for single-page and mobile apps.
    path("_allauth/", include("accounts.headless.urls")),
    # A single-page client of that API in plain JavaScript (the browser client's journey).
    path("spa/", ensure_csrf_cookie(TemplateView.as_view(template_name="spa.html")), name="spa"),
    # Django's set_language view: the layout's language switcher posts to it.
    path("i18n/", include("django.conf.urls.i18n")),
]
