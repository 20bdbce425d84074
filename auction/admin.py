"""The Django admin: where people edit desired state (dashboard.md AD1-AD3).

Saves of desired LRPs, tasks and domains go through the same services as the API, so
the admin can never write what the BBS would refuse; BBS errors land on the form.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponseRedirect
from django_celery_beat import models as beat_models

from auction.engine.advice import Need, cell_advice, new_cell
from auction.models import (
    ActualLRP,
    ApiToken,
    AuctionRun,
    AuctionSettings,
    AuditEntry,
    BBSEvent,
    Cell,
    ConvergenceRun,
    DesiredLRP,
    Domain,
    KioskToken,
    OttoAuction,
    OttoBid,
    OttoOrchestrator,
    SimClock,
    Task,
    Zone,
)
from auction.models.lrps import IMMUTABLE_DESIRED_FIELDS
from auction.selectors.cells import cell_states
from auction.selectors.clock import sim_now
from auction.services.auction_settings import FIELDS as AUCTION_SETTINGS_FIELDS
from auction.services.auction_settings import auction_settings_errors, auction_settings_update
from auction.services.cells import cell_remove, cell_save, zone_remove, zone_save
from auction.services.clock import clock_change
from auction.services.domains import domain_upsert
from auction.services.errors import BBSError
from auction.services.kiosk import kiosk_links_revoke
from auction.services.lrps import (
    SIMULATION_FIELDS,
    desired_lrp_desire,
    desired_lrp_simulation_update,
    desired_lrp_update,
)
from auction.services.otto import task_placement_mode_set
from auction.services.tasks import task_desire

# django-celery-beat's periodic tasks are the simulation's heartbeat (diego_web/beat.py):
# edited beside the cluster they can stop the clock silently, so the admin hides them.
for _beat_model in (beat_models.PeriodicTask, beat_models.IntervalSchedule, beat_models.CrontabSchedule,
                    beat_models.SolarSchedule, beat_models.ClockedSchedule):
    if admin.site.is_registered(_beat_model):
        admin.site.unregister(_beat_model)

ROOTFS_HINT = "Expected forms: preloaded:cflinuxfs4 (a stack the cells preload) or docker:///image."


def warn_if_no_cell_fits(request: HttpRequest, name: str, need: Need, message_user: Any) -> None:
    """A warning, not an error (the BBS accepts it): work no cell can ever run, with the
    change that would let it (dashboard.md G9's advice, ``engine.advice``)."""
    states = cell_states(list(Cell.objects.select_related("zone")))
    advice = [cell_advice(state, need) for state in states]
    if any(a.possible for a in advice):
        return
    message_user(request, f"Saved, but no cell can ever run {name}: {new_cell(states, need)}.",
                 messages.WARNING)


class OncePerField:
    """Each field's message once on a form (Diego's list may repeat one; the API keeps
    the list as Diego sends it), and the rootfs error says what forms are expected."""

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)  # type: ignore[misc]
        if "rootfs" in form.base_fields:
            form.base_fields["rootfs"].help_text = ROOTFS_HINT

        class Once(form):  # type: ignore[misc, valid-type]
            def _post_clean(self) -> None:
                super()._post_clean()
                for field, errors in list(self._errors.items()):
                    seen: list[str] = []
                    for message in errors:
                        if message not in seen:
                            seen.append(message)
                    if field == "rootfs" and seen and ROOTFS_HINT not in seen:
                        seen.append(ROOTFS_HINT)
                    self._errors[field] = self.error_class(seen, renderer=self.renderer)

        Once.__name__ = form.__name__
        return Once


class ServiceBackedAdmin(admin.ModelAdmin):
    """Saves through a service; a BBS refusal the form could not foresee (a concurrent
    desire of the same guid) becomes a message on the form page, never a 500."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().changeform_view(request, *args, **kwargs)
        except BBSError as exc:
            self.message_user(request, f"{exc.type}: {exc.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())


@admin.register(Zone)
class ZoneAdmin(ServiceBackedAdmin):
    list_display = ("name", "cell_count")
    search_fields = ("name",)

    def save_model(self, request: HttpRequest, obj: Zone, form: ModelForm, change: bool) -> None:
        zone_save(obj, source="admin", user=request.user)

    def delete_model(self, request: HttpRequest, obj: Zone) -> None:
        zone_remove(obj, source="admin", user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Zone]) -> None:
        for zone in queryset:
            zone_remove(zone, source="admin", user=request.user)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Zone]:
        return super().get_queryset(request).annotate(_cells=Count("cells"))

    @admin.display(description="cells", ordering="_cells")
    def cell_count(self, zone: Zone) -> int:
        return zone._cells  # type: ignore[attr-defined]


@admin.register(Cell)
class CellAdmin(ServiceBackedAdmin):
    list_display = ("cell_id", "zone", "index", "state", "memory_mb", "disk_mb", "containers",
                    "proxy_memory_mb", "placement_tags")
    list_filter = ("zone", "state")
    search_fields = ("cell_id",)
    list_select_related = ("zone",)
    fieldsets = (
        (None, {"fields": ("cell_id", "zone", "index", "state")}),
        ("Capacity", {"fields": ("memory_mb", "disk_mb", "containers", "proxy_memory_mb")}),
        ("What it can run", {"fields": ("preloaded_rootfses", "rootfs_providers", "volume_drivers",
                                        "placement_tags", "optional_placement_tags")}),
        ("Otto (otto.md 4)", {"fields": ("cores", "docker_build", "hourly_cost", "speed", "elastic")}),
    )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """A new cell starts like the cluster's usual one: its stacks, rootfs providers,
        size and zone (the most common among existing cells), the next index there."""
        initial = super().get_changeform_initial_data(request)
        cells = list(Cell.objects.select_related("zone"))
        if not cells:
            return initial

        def usual(values: list[Any]) -> Any:
            return Counter(values).most_common(1)[0][0]

        for name in ("preloaded_rootfses", "rootfs_providers"):
            initial.setdefault(name, ", ".join(usual([tuple(getattr(c, name)) for c in cells])))
        for name in ("memory_mb", "disk_mb", "containers", "proxy_memory_mb"):
            initial.setdefault(name, usual([getattr(c, name) for c in cells]))
        zone = usual([c.zone_id for c in cells])
        initial.setdefault("zone", zone)
        initial.setdefault("index", 1 + max(c.index for c in cells if c.zone_id == zone))
        return initial

    def save_model(self, request: HttpRequest, obj: Cell, form: ModelForm, change: bool) -> None:
        # Through the service: a state change is the chaos registry's rule (a failed
        # cell's presence lapses), audited, pushed to open pages.
        cell_save(obj, list(form.changed_data), source="admin", user=request.user)

    def delete_model(self, request: HttpRequest, obj: Cell) -> None:
        cell_remove(obj.cell_id, source="admin", user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Cell]) -> None:
        for cell in queryset:
            cell_remove(cell.cell_id, source="admin", user=request.user)


class ActualLRPInline(admin.TabularInline):
    """Instances of this LRP, read-only: cells and convergence own them (bbs.md 2)."""

    model = ActualLRP
    fields = ("index", "presence", "state", "cell_id", "since", "crash_count", "placement_error")
    readonly_fields = fields
    extra = 0
    can_delete = False
    # Read-only rows: a "Change" link would lead to a page that changes nothing.
    show_change_link = False
    ordering = ("index", "presence")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(DesiredLRP)
class DesiredLRPAdmin(OncePerField, ServiceBackedAdmin):
    list_display = ("process_guid", "domain", "instances", "running", "memory_mb", "disk_mb",
                    "rootfs", "modification_tag_index")
    list_filter = ("domain",)
    search_fields = ("process_guid",)
    inlines = (ActualLRPInline,)
    fieldsets = (
        (None, {"fields": ("process_guid", "domain", "instances")}),
        ("Definition", {"fields": ("rootfs", "memory_mb", "disk_mb", "max_pids", "placement_tags",
                                   "volume_drivers", "ports", "start_timeout_ms")}),
        ("Updatable", {"fields": ("routes", "annotation")}),
        ("Simulation", {"fields": ("start_delay_s", "crash_probability", "crash_after_s")}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[DesiredLRP]:
        return super().get_queryset(request).annotate(_running=Count(
            "actual_lrps", filter=models_running_filter()))

    @admin.display(description="running", ordering="_running")
    def running(self, desired: DesiredLRP) -> int:
        return desired._running  # type: ignore[attr-defined]

    def get_readonly_fields(self, request: HttpRequest, obj: DesiredLRP | None = None) -> tuple[str, ...]:
        # Only instances, routes and annotation can change (bbs.md 1.3).
        return IMMUTABLE_DESIRED_FIELDS if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: DesiredLRP, form: ModelForm, change: bool) -> None:
        if change:
            stored = DesiredLRP.objects.get(process_guid=obj.process_guid)
            # What really differs from the stored record (a form may call an equal JSON
            # value changed): only that is asked for.
            update = {name: form.cleaned_data[name] for name in ("instances", "routes", "annotation")
                      if name in form.cleaned_data and form.cleaned_data[name] != getattr(stored, name)}
            knobs = {name: form.cleaned_data[name] for name in SIMULATION_FIELDS
                     if name in form.cleaned_data and form.cleaned_data[name] != getattr(stored, name)}
            with transaction.atomic():  # both halves of one save, or neither
                saved = stored
                if update:  # the simulator's knobs alone are no DesiredLRPUpdateRequest
                    saved = desired_lrp_update(obj.process_guid, update, source="admin",
                                               user=request.user)
                if knobs:
                    desired_lrp_simulation_update(obj.process_guid, knobs, source="admin",
                                                  user=request.user)
        else:
            spec = {name: form.cleaned_data[name] for name in form.fields if name in form.cleaned_data}
            saved = desired_lrp_desire(spec, source="admin", user=request.user)
        obj.pk = saved.pk
        obj.modification_tag_index = saved.modification_tag_index
        if not change:
            warn_if_no_cell_fits(request, saved.process_guid, Need(
                saved.memory_mb, saved.disk_mb, saved.rootfs, tuple(saved.volume_drivers),
                tuple(saved.placement_tags)), self.message_user)


def models_running_filter() -> Any:
    return Q(actual_lrps__state=ActualLRP.State.RUNNING,
             actual_lrps__presence=ActualLRP.Presence.ORDINARY)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records of what happened: shown, never edited (dashboard.md AD1)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ActualLRP)
class ActualLRPAdmin(ReadOnlyAdmin):
    """Read-only (AD1): actual state is written by cells, auctions and convergence."""

    list_display = ("__str__", "desired_id", "index", "presence", "state", "cell_id", "since",
                    "crash_count", "placement_error")
    list_filter = ("state", "presence", "domain", "cell_id")
    search_fields = ("desired__process_guid", "instance_guid", "cell_id")

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        # Search by the guid column itself: orphans have no DesiredLRP row to join.
        if term:
            # desired__process_guid is the local column: Django trims the join.
            return queryset.filter(Q(desired__process_guid__icontains=term) | Q(instance_guid__icontains=term)
                                   | Q(cell_id__icontains=term)), False
        return queryset, False


@admin.register(Task)
class TaskAdmin(OncePerField, ServiceBackedAdmin):
    list_display = ("task_guid", "domain", "state", "placement_mode", "cell_id", "memory_mb",
                    "disk_mb", "rejection_count", "failed", "failure_reason")
    list_filter = ("state", "domain", "placement_mode", "failed")
    search_fields = ("task_guid", "cell_id")
    readonly_fields = ("state", "cell_id", "created_at", "updated_at", "first_completed_at",
                       "failed", "failure_reason", "result", "rejection_count", "rejection_reason")
    fieldsets = (
        (None, {"fields": ("task_guid", "domain", "placement_mode", "duration_s",
                           "completion_callback_url")}),
        ("Definition", {"fields": ("rootfs", "memory_mb", "disk_mb", "max_pids", "placement_tags",
                                   "volume_drivers", "annotation")}),
        ("Lifecycle", {"fields": readonly_fields}),
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Task | None = None) -> tuple[str, ...]:
        if obj is None:
            return self.readonly_fields
        # A task's definition is fixed once desired; only the placement mode may change,
        # and only while it waits (otto.md 9).
        definition = ("task_guid", "domain", "duration_s", "completion_callback_url", "rootfs",
                      "memory_mb", "disk_mb", "max_pids", "placement_tags", "volume_drivers",
                      "annotation")
        fixed = definition + self.readonly_fields
        return fixed if obj.state == Task.State.PENDING else fixed + ("placement_mode",)

    def save_model(self, request: HttpRequest, obj: Task, form: ModelForm, change: bool) -> None:
        if change:
            try:
                task_placement_mode_set(obj.task_guid, obj.placement_mode)
            except BBSError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            return
        spec = {name: form.cleaned_data[name] for name in form.fields if name in form.cleaned_data}
        task = task_desire(spec, source="admin", user=request.user)
        obj.pk = task.pk
        warn_if_no_cell_fits(request, task.task_guid, Need(
            task.memory_mb, task.disk_mb, task.rootfs, tuple(task.volume_drivers),
            tuple(task.placement_tags), proxy=False), self.message_user)


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = ("name", "ttl_s", "expires_at", "fresh_now")
    search_fields = ("name",)
    readonly_fields = ("expires_at",)

    @admin.display(boolean=True, description="fresh now")
    def fresh_now(self, domain: Domain) -> bool:
        return domain.is_fresh(sim_now())

    def get_readonly_fields(self, request: HttpRequest, obj: Domain | None = None) -> tuple[str, ...]:
        # The name is the key: another name is another domain.
        return ("expires_at", "name") if obj is not None else ("expires_at",)

    def save_model(self, request: HttpRequest, obj: Domain, form: ModelForm, change: bool) -> None:
        # An admin save is an upsert: expiry = now + ttl, 0 = never (bbs.md 5).
        saved = domain_upsert(obj.name, obj.ttl_s, source="admin", user=request.user)
        obj.pk, obj.expires_at = saved.pk, saved.expires_at


@admin.register(SimClock)
class SimClockAdmin(admin.ModelAdmin):
    list_display = ("__str__", "speed", "paused", "convergence_interval_s")
    fields = ("speed", "paused", "convergence_interval_s")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not SimClock.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: SimClock, form: ModelForm, change: bool) -> None:
        # Through the clock's one writer: re-anchored so sim time never jumps, audited.
        clock_change(speed=obj.speed, paused=obj.paused,
                     convergence_interval_s=obj.convergence_interval_s, source="admin",
                     user=request.user)


class AuctionSettingsForm(ModelForm):
    class Meta:
        model = AuctionSettings
        fields = AUCTION_SETTINGS_FIELDS

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for message in auction_settings_errors(data):
            self.add_error(message.removeprefix("Invalid field: "), message)
        return data


@admin.register(AuctionSettings)
class AuctionSettingsAdmin(ServiceBackedAdmin):
    """The auctioneer's settings (auction.md 2.1, 4.1, 4.4, 8), one row, saved by the
    service so the change is audited and shows in the feed."""

    form = AuctionSettingsForm
    list_display = ("__str__", "placement_strategy", "go_compat", "starting_container_count_maximum")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not AuctionSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: AuctionSettings, form: ModelForm,
                   change: bool) -> None:
        changes = {name: form.cleaned_data[name] for name in AUCTION_SETTINGS_FIELDS
                   if name in form.changed_data or not change}
        saved = auction_settings_update(changes, source="admin", user=request.user)
        obj.pk = saved.pk


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Per-operator tokens for scripts (issue 5). The raw token is shown once, on creation."""

    list_display = ("name", "user", "prefix", "created", "last_used", "revoked")
    list_filter = ("revoked",)
    fields = ("user", "name", "revoked")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        return ("user", "name") if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: ApiToken, form: ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = ApiToken.issue(obj.user, obj.name)
        obj.pk, obj.prefix, obj.digest = token.pk, token.prefix, token.digest
        self.message_user(
            request, f"Token for {obj.user}: {raw}  (copy it now: it is not shown again). "
            f"Use it as: Authorization: Bearer {raw}", messages.WARNING)


@admin.register(KioskToken)
class KioskTokenAdmin(admin.ModelAdmin):
    """Kiosk links (dashboard.md AD9): listed here, issued by ``manage.py kiosk_link`` or
    the present page, revoked by the action below (the signed token is never stored)."""

    list_display = ("short_key", "world", "note", "created", "expires", "revoked")
    list_filter = ("world",)
    readonly_fields = ("key", "world", "note", "created", "expires", "revoked")
    actions = ["revoke"]

    @admin.display(description="key")
    def short_key(self, obj: KioskToken) -> str:
        return obj.key[:12]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke the selected kiosk links")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        count = kiosk_links_revoke(list(queryset.values_list("key", flat=True)))
        self.message_user(request, f"revoked {count} kiosk link(s)", messages.SUCCESS)


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The trail of who changed what (dashboard.md AD1, AD4)."""

    list_display = ("wall", "sim", "user", "source", "action", "target")
    list_filter = ("source", "action")
    search_fields = ("target",)


@admin.register(AuctionRun)
class AuctionRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "started_at", "trigger", "strategy", "items", "placed", "failed", "duration_ms")
    list_filter = ("trigger", "strategy")


@admin.register(ConvergenceRun)
class ConvergenceRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "duration_ns")


@admin.register(BBSEvent)
class BBSEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "type", "key", "cell_id")
    list_filter = ("type",)
    search_fields = ("key", "cell_id")


class OttoBidInline(admin.TabularInline):
    model = OttoBid
    extra = 0
    can_delete = False
    fields = ("attempt", "bidder", "kind", "cost", "status", "reason", "received_at", "sent_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(OttoAuction)
class OttoAuctionAdmin(ReadOnlyAdmin):
    list_display = ("auction_id", "task_guid", "state", "attempt", "announcements", "winner", "cost",
                    "ends", "start_by", "failure_reason")
    list_filter = ("state",)
    search_fields = ("auction_id", "task_guid", "winner")
    inlines = [OttoBidInline]


@admin.register(OttoOrchestrator)
class OttoOrchestratorAdmin(ReadOnlyAdmin):
    list_display = ("client_id", "kind", "cell_id", "enabled", "rate_per_hour", "speed", "wins",
                    "start_timeouts", "declines")
    list_filter = ("kind", "enabled")
