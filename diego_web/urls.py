from django.contrib import admin
from django.urls import include, path

from auction.api.docs import api_docs
from auction.views.auth import AdminSignInForm

admin.site.site_header = "diego-web: desired state"
admin.site.site_title = "diego-web admin"
admin.site.index_title = "Cluster and desired state"
# The admin's login is throttled like the dashboard's (dashboard.md AD7).
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("admin/", admin.site.urls),
    # Before the API's own routes: its catch-all answers every other /api/v1/ path.
    path("api/v1/docs/", api_docs, name="api-docs"),
    path("api/v1/", include("auction.api.urls")),
    path("", include("auction.urls")),
]
