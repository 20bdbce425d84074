from django.urls import path
from django.views.generic import RedirectView

from auction import views

urlpatterns = [
    path("", views.grid, name="home"),
    path("grid/", views.grid, name="grid"),
    path("favicon.ico", RedirectView.as_view(url="/static/img/favicon.svg", permanent=True)),
]
