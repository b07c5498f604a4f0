from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from calls.urls import api_patterns, page_patterns

urlpatterns = [
    path("api/v1/", include(api_patterns)),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("triage.urls")),
    path("", include(page_patterns)),
]
handler404 = "calls.api.not_found"
handler500 = "calls.api.server_error"
