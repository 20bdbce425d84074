"""The live cluster the dashboard shows, one module per concept."""

from auction.models.clock import SimClock
from auction.models.cluster import Cell, Zone
from auction.models.domains import Domain
from auction.models.foundations import Foundation
from auction.models.locks import ClusterLock
from auction.models.lrps import ActualLRP, DesiredLRP
from auction.models.otto import (
    OttoAuction,
    OttoBid,
    OttoMarket,
    OttoOrchestrator,
    OttoTaskCapabilities,
)
from auction.models.plans import Plan, PlanAuction, ZoneLossAnswer
from auction.models.records import AuctionRun, AuditEntry, BBSEvent, ConvergenceRun, Counter
from auction.models.settings import AuctionSettings
from auction.models.tasks import Task
from auction.models.tokens import ApiToken, KioskToken
from auction.models.work import PendingWork

__all__ = [
    "ActualLRP", "ApiToken", "AuctionRun", "AuctionSettings", "AuditEntry", "BBSEvent", "Cell", "ClusterLock",
    "ConvergenceRun", "Counter",
    "DesiredLRP", "Domain", "Foundation", "KioskToken", "OttoAuction", "OttoBid", "OttoMarket",
    "OttoOrchestrator", "OttoTaskCapabilities", "PendingWork", "Plan", "PlanAuction", "SimClock", "Task", "Zone",
    "ZoneLossAnswer",
]
