"""App colours: hashed from the process guid into 12 colour-blind-safe hues (dashboard.md G3).

The same guid gets the same colour on every page; a pattern index doubles the hue so
two apps sharing a colour still differ (U4: never colour alone).
"""

from __future__ import annotations

import zlib

# Paul Tol's "muted" and "light" qualitative hues, the darkest ones lightened: apart
# under the common colour-vision deficiencies, at least 3:1 against the dark bar behind
# the blocks and at least 4.5:1 under the blocks' dark labels (dashboard.md U3; tested).
PALETTE = (
    "#CC6677", "#9F8FE0", "#DDCC77", "#5FB760", "#88CCEE", "#E0A0C0",
    "#44AA99", "#999933", "#D08AD0", "#EE8866", "#77AADD", "#BBCC33",
)
BAR_BACKGROUND = "#0b1016"
BLOCK_LABEL = "#111111"
PATTERNS = 3


def app_hue(process_guid: str) -> int:
    return zlib.crc32(process_guid.encode("utf-8")) % len(PALETTE)


def app_colour(process_guid: str) -> str:
    return PALETTE[app_hue(process_guid)]


def app_pattern(process_guid: str) -> int:
    return (zlib.crc32(process_guid.encode("utf-8")) // len(PALETTE)) % PATTERNS


def relative_luminance(hex_colour: str) -> float:
    """WCAG 2.x relative luminance of ``#rrggbb``."""
    value = hex_colour.lstrip("#")
    channels = [int(value[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
