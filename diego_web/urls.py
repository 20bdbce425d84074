from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "diego-web: desired state"
admin.site.site_title = "diego-web admin"
admin.site.index_title = "Cluster and desired state"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("auction.api.urls")),
    path("", include("auction.urls")),
]
