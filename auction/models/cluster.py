"""Availability zones and cells: the capacity the auction places work on."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from auction.bbs.validation import FieldError, cell_errors
from auction.models.fields import StringListField


def raise_field_errors(errors: list[FieldError], fields: dict[str, str] | None = None) -> None:
    """Turn the core's ordered FieldErrors into a Django ValidationError keyed by field.

    ``fields`` maps a BBS field name to the model's where they differ.
    """
    if not errors:
        return
    by_field: dict[str, list[str]] = {}
    for error in errors:
        name = (fields or {}).get(error.field, error.field)
        by_field.setdefault(name, []).append(error.message)
    raise ValidationError(by_field)


def default_preloaded_rootfses() -> list[str]:
    return ["cflinuxfs4"]


def default_rootfs_providers() -> list[str]:
    return ["docker"]


class Zone(models.Model):
    """An availability zone; cells belong to exactly one (auction.md 4.2 walks them)."""

    name = models.CharField(max_length=64, unique=True, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "availability zone"

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if not self.name or not self.name.strip():
            raise ValidationError({"name": "Invalid field: name"})


class Cell(models.Model):
    """A Diego cell (rep): its capacity and what it can run (auction.md vocabulary)."""

    class State(models.TextChoices):
        HEALTHY = "healthy", "healthy"
        DRAINING = "draining", "draining"
        FAILED = "failed", "failed"

    cell_id = models.CharField(max_length=64, unique=True, blank=True)
    zone = models.ForeignKey(Zone, on_delete=models.PROTECT, related_name="cells")
    # The BOSH index: bin-pack first-fit ranks cells by it (auction.md 4.4).
    index = models.IntegerField(default=0)
    memory_mb = models.IntegerField("memory (MB)", default=8192)
    disk_mb = models.IntegerField("disk (MB)", default=32768)
    containers = models.IntegerField(default=250)
    preloaded_rootfses = StringListField(default=default_preloaded_rootfses, help_text="Stacks, comma-separated, e.g. cflinuxfs4.")
    rootfs_providers = StringListField(default=default_rootfs_providers, help_text="URL schemes, comma-separated, e.g. docker.")
    volume_drivers = StringListField(default=list)
    placement_tags = StringListField(default=list, help_text="Required tags: work must ask for all of them.")
    optional_placement_tags = StringListField(default=list)
    # Envoy overhead per LRP container: counted in fit and score, not reserved (auction.md 5).
    proxy_memory_mb = models.IntegerField("proxy memory (MB)", default=0)
    state = models.CharField(max_length=16, choices=State.choices, default=State.HEALTHY)
    # Simulation of the rep's presence (bbs.md 6.1): a healthy or draining rep refreshes
    # it; once failed it lapses at this sim instant (10-15 s after the last refresh).
    presence_lost_at = models.FloatField(null=True, blank=True, editable=False)
    # Evacuation (bbs.md 6.3): when draining began and when the rep last synced.
    evacuating_since = models.FloatField(null=True, blank=True, editable=False)
    evacuation_synced_at = models.FloatField(null=True, blank=True, editable=False)
    # Otto (otto.md 4): what an agent-orchestrator offers beyond Diego's dimensions.
    # blank: a form that omits them keeps the defaults; clean() refuses an emptied one.
    cores = models.IntegerField(default=4, blank=True)
    docker_build = models.BooleanField(default=False)
    hourly_cost = models.FloatField("rate per hour", default=0.10, blank=True)
    speed = models.FloatField(default=1.0, blank=True)
    elastic = models.BooleanField(default=False, help_text="Provisioned by the elastic Otto orchestrator.")

    class Meta:
        ordering = ["zone__name", "index", "cell_id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(memory_mb__gte=1), name="cell_memory_positive",
                violation_error_message="Invalid field: memory_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(disk_mb__gte=1), name="cell_disk_positive",
                violation_error_message="Invalid field: disk_mb",
            ),
            models.CheckConstraint(
                condition=models.Q(containers__gte=1), name="cell_containers_positive",
                violation_error_message="Invalid field: containers",
            ),
            models.CheckConstraint(
                condition=models.Q(index__gte=0), name="cell_index_nonnegative",
                violation_error_message="Invalid field: index",
            ),
            models.CheckConstraint(
                condition=models.Q(proxy_memory_mb__gte=0), name="cell_proxy_nonnegative",
                violation_error_message="Invalid field: proxy_memory_mb",
            ),
        ]

    def __str__(self) -> str:
        return self.cell_id

    def has_presence(self, now: float) -> bool:
        return self.presence_lost_at is None or now < self.presence_lost_at

    def clean(self) -> None:
        otto = {name: "Invalid field: " + name for name in ("cores", "hourly_cost", "speed")
                if getattr(self, name) is None or getattr(self, name) <= (0 if name != "hourly_cost" else -1e-12)}
        if otto:
            raise ValidationError(otto)
        raise_field_errors(
            cell_errors(
                cell_id=self.cell_id,
                index=self.index,
                memory_mb=self.memory_mb,
                disk_mb=self.disk_mb,
                containers=self.containers,
                proxy_memory_mb=self.proxy_memory_mb,
            )
        )
