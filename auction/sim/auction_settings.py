"""The auctioneer's settings as a request may change them: names and bounds, checked once.

The live settings (``services.auction_settings``) and a plan's ``auction_config`` change
(plans.md 1.2) both check values here, with the same messages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from auction.engine import STRATEGIES

FIELDS = ("placement_strategy", "starting_container_weight", "bin_pack_first_fit_weight",
          "starting_container_count_maximum", "locality_offset", "go_compat")
#: Bounds that keep every score finite (auction.md 4.5) [project rule].
MAX_WEIGHT = 1e6
MAX_LOCALITY_OFFSET = 10**12


def auction_settings_errors(values: Mapping[str, Any]) -> list[str]:
    """One message per bad value, in ``FIELDS`` order (``Invalid field: <name>``)."""
    errors = []
    for name in FIELDS:
        if name not in values:
            continue
        value = values[name]
        if name == "placement_strategy":
            ok = value in STRATEGIES
        elif name == "go_compat":
            ok = isinstance(value, bool)
        elif name in ("starting_container_count_maximum", "locality_offset"):
            ok = (isinstance(value, int) and not isinstance(value, bool)
                  and abs(value) <= (MAX_LOCALITY_OFFSET if name == "locality_offset" else 10**9))
        else:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value) and abs(value) <= MAX_WEIGHT)
        if not ok:
            errors.append(f"Invalid field: {name}")
    return errors
