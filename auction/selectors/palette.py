"""App colours: hashed from the process guid into 12 colour-blind-safe hues (dashboard.md G3).

The same guid gets the same colour on every page; a pattern index doubles the hue so
two apps sharing a colour still differ (U4: never colour alone).
"""

from __future__ import annotations

import zlib

# Paul Tol's "muted" + "light" qualitative schemes: distinguishable under the common
# colour-vision deficiencies, and all at least 3:1 against the dark cell background.
PALETTE = (
    "#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255",
    "#44AA99", "#999933", "#AA4499", "#EE8866", "#77AADD", "#BBCC33",
)
PATTERNS = 3


def app_hue(process_guid: str) -> int:
    return zlib.crc32(process_guid.encode("utf-8")) % len(PALETTE)


def app_colour(process_guid: str) -> str:
    return PALETTE[app_hue(process_guid)]


def app_pattern(process_guid: str) -> int:
    return (zlib.crc32(process_guid.encode("utf-8")) // len(PALETTE)) % PATTERNS
