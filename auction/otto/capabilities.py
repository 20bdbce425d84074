"""Task capabilities (RFC-0003 Table 3, otto.md 4): parse, derive from ``raw``, match."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KNOWN = ("cores", "memory", "docker_run", "docker_build")
_MEMORY = re.compile(r"^[1-9][0-9]*[MG]$")


class CapabilityError(ValueError):
    """A capability value the RFC's table does not allow."""


def parse_memory(text: object) -> int:
    """``"50M"`` -> 50, ``"1G"`` -> 1024 (MiB)."""
    if not isinstance(text, str) or not _MEMORY.match(text):
        raise CapabilityError(f"memory must match [1-9][0-9]*[MG], got {text!r}")
    value = int(text[:-1])
    return value * 1024 if text.endswith("G") else value


def format_memory(mb: int) -> str:
    return f"{mb // 1024}G" if mb >= 1024 and mb % 1024 == 0 else f"{max(mb, 1)}M"


@dataclass(frozen=True, slots=True)
class Ask:
    """What a task asks for; ``unknown`` holds keys nobody can satisfy (conservative)."""

    cores: int = 1
    memory_mb: int = 0
    docker_run: bool = False
    docker_build: bool = False
    unknown: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"cores": self.cores, "memory": format_memory(self.memory_mb),
                                "docker_run": self.docker_run, "docker_build": self.docker_build}
        return data


@dataclass(frozen=True, slots=True)
class Offer:
    """What a bidder can give now."""

    cores: int
    memory_mb: int
    disk_mb: int
    docker_run: bool
    docker_build: bool


def derive(raw: Mapping[str, Any], given: Mapping[str, Any] | None = None) -> Ask:
    """The task's capabilities: those given, the rest derived from ``raw`` (otto.md 3)."""
    given = dict(given or {})
    unknown = tuple(sorted(k for k in given if k not in KNOWN))
    cores = given.get("cores", 1)
    if not isinstance(cores, int) or isinstance(cores, bool) or cores <= 0:
        raise CapabilityError(f"cores must be an integer > 0, got {cores!r}")
    if "memory" in given:
        memory_mb = parse_memory(given["memory"])
    else:
        memory_mb = int(raw.get("memory_mb") or 0)
    rootfs = str(raw.get("rootfs", ""))
    docker_run = given.get("docker_run", rootfs.startswith("docker:"))
    docker_build = given.get("docker_build", False)
    for name, value in (("docker_run", docker_run), ("docker_build", docker_build)):
        if not isinstance(value, bool):
            raise CapabilityError(f"{name} must be a boolean, got {value!r}")
    return Ask(cores, memory_mb, docker_run, docker_build, unknown)


def missing(ask: Ask, offer: Offer, disk_mb: int = 0) -> list[str]:
    """The capabilities ``offer`` lacks for ``ask``, in Table 3's order; [] means it may bid."""
    lacks = list(ask.unknown)
    if offer.cores < ask.cores:
        lacks.append("cores")
    if offer.memory_mb < ask.memory_mb:
        lacks.append("memory")
    if offer.disk_mb < disk_mb:
        lacks.append("disk")
    if ask.docker_run and not offer.docker_run:
        lacks.append("docker_run")
    if ask.docker_build and not offer.docker_build:
        lacks.append("docker_build")
    return lacks


def unmet_by_all(ask: Ask, offers: list[Offer]) -> list[str]:
    """Capabilities that no offer has at all (the board names them, otto.md 7)."""
    names = list(ask.unknown)
    if ask.docker_build and not any(o.docker_build for o in offers):
        names.append("docker_build")
    if ask.docker_run and not any(o.docker_run for o in offers):
        names.append("docker_run")
    if not any(o.cores >= ask.cores for o in offers):
        names.append("cores")
    if not any(o.memory_mb >= ask.memory_mb for o in offers):
        names.append("memory")
    return names
