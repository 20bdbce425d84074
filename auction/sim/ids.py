"""Names the simulated cluster gives things: deterministic, so two stores agree.

A real rep generates an instance guid when it claims work, and the BBS a modification
tag epoch when it creates a record: random in Diego. Here they are derived from what
identifies the event (the instance, the instant, its tag), so the database store and
the memory store name the same instance the same way and a run replays exactly.
"""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("6f1c9a3e-2b7d-4e5f-9a8b-7c6d5e4f3a2b")
_SHA1 = hashlib.sha1(_NAMESPACE.bytes, usedforsecurity=False)


def _uuid5_hex(name: str) -> str:
    """``uuid.uuid5(_NAMESPACE, name).hex`` without building a UUID (a scale to 100,000
    names 100,000 rows)."""
    digest = _SHA1.copy()
    digest.update(name.encode())
    raw = bytearray(digest.digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x50  # version 5
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def instance_guid(process_guid: str, index: int, at: float, tag: int) -> str:
    """28 characters, like the rep's (``auctioncellrep/helpers.go`` GenerateGuid)."""
    raw = _uuid5_hex(f"i/{process_guid}/{index}/{at!r}/{tag}")
    # ``str(uuid5(...))[:28]``: the 8-4-4-4 groups and 4 of the last 12 digits.
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:24]}"


def row_epoch(key: tuple[str, int] | tuple[str, int, str], at: float) -> str:
    """The modification-tag epoch of an ActualLRP row created at ``at``."""
    return _uuid5_hex(f"r/{key[0]}/{key[1]}/{at!r}")


def desired_epoch(process_guid: str, at: float) -> str:
    """The modification-tag epoch of a DesiredLRP desired at ``at``."""
    return _uuid5_hex(f"d/{process_guid}/{at!r}")
