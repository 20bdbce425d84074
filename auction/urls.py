from django.urls import path
from django.views.generic import RedirectView

from auction.views import (
    auctions,
    compare,
    controls,
    events,
    grid,
    kiosk,
    lrps,
    otto,
    panel,
    present,
)

urlpatterns = [
    path("", grid.grid, name="home"),
    path("grid/", grid.grid, name="grid"),
    path("present/", present.present, name="present"),
    path("kiosk/", kiosk.kiosk, name="kiosk"),
    path("lrps/", lrps.lrps, name="lrps"),
    path("events/", events.events, name="events"),
    path("controls/clock/", controls.clock, name="control-clock"),
    path("controls/chaos/", controls.chaos, name="control-chaos"),
    path("controls/scenario/", controls.scenario, name="control-scenario"),
    path("controls/domain/", controls.domain, name="control-domain"),
    path("controls/auction/", controls.auction_order, name="control-auction"),
    path("auctions/", auctions.auction_list, name="auctions"),
    path("auctions/<int:run_id>/", auctions.auction_replay, name="auction-replay"),
    path("auctions/<int:run_id>/cells/", auctions.auction_cells, name="auction-cells"),
    path("panel/instance/<str:guid>/<int:index>/", panel.instance_panel, name="panel-instance"),
    path("panel/task/<str:guid>/", panel.task_panel, name="panel-task"),
    path("panel/cell/<str:cell_id>/", panel.cell_panel, name="panel-cell"),
    path("panel/cell/<str:cell_id>/<str:action>/", panel.cell_action, name="panel-cell-action"),
    path("compare/", compare.compare_page, name="compare"),
    path("compare/report/", compare.compare_report, name="compare-report"),
    path("otto/", otto.otto_board, name="otto"),
    path("favicon.ico", RedirectView.as_view(url="/static/img/favicon.svg", permanent=True)),
]
