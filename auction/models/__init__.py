"""The live cluster the dashboard shows, one module per concept."""

from auction.models.clock import SimClock
from auction.models.cluster import Cell, Zone
from auction.models.domains import Domain
from auction.models.lrps import ActualLRP, DesiredLRP
from auction.models.tasks import Task

__all__ = ["ActualLRP", "Cell", "DesiredLRP", "Domain", "SimClock", "Task", "Zone"]
