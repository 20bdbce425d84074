"""Otto open auctions (otto.md, RFC-0003): the pure core, no Django.

One module per concept:
- ``times``: sim seconds <-> ISO-8601 UTC with milliseconds and ``Z`` (otto.md 3).
- ``capabilities``: the RFC's Table 3, derivation from ``raw``, matching (otto.md 4).
- ``cost``: the bid formula and its breakdown (otto.md 5).
- ``bids``: acceptance/lateness and the winner choice with tie-breaks (otto.md 5, 6).
- ``backoff``: the no-bid re-announcement schedule (otto.md 7).
- ``messages``: the typed messages on the channels and their validation (otto.md 2, 3).
- ``lifecycle``: the auction state machine: open, close, award, start, revoke (otto.md 6, 7).
"""
