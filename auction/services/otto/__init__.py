"""The Otto shell (otto.md 6-7, 9): the rows and the bus around the pure core ``auction.otto``.

One module per concept; the core decides, the shell selects rows, applies and sends:
- ``routing``: a task enters the open auction (sources, convergence's re-feed, placement mode).
- ``auctions``: the auction lifecycle: open, the due transitions, recovery, the next deadline.
- ``bids``: recording bids, each judged by ``auction.otto.bids.rejection``.
- ``awards``: the SQL close and award, declines, start timeouts and re-auctions, superseded starts.
- ``rows``: rows <-> the core's values, the effects a transaction returns, shared writes.

The names below are the entry points other apps use (convergence, task desire, admin).
"""

from auction.services.otto.auctions import (
    otto_auction_open,
    otto_auctions_open,
    otto_due,
    otto_next_deadline,
    otto_recover,
)
from auction.services.otto.awards import otto_award_latencies_record, otto_started_seen
from auction.services.otto.bids import IncomingBid, otto_bids_record
from auction.services.otto.routing import (
    otto_refeed,
    otto_task_capabilities_set,
    otto_task_message,
    otto_task_submit,
    task_placement_mode_set,
)

__all__ = [
    "IncomingBid",
    "otto_auction_open",
    "otto_auctions_open",
    "otto_award_latencies_record",
    "otto_bids_record",
    "otto_due",
    "otto_next_deadline",
    "otto_recover",
    "otto_refeed",
    "otto_started_seen",
    "otto_task_capabilities_set",
    "otto_task_message",
    "otto_task_submit",
    "task_placement_mode_set",
]
