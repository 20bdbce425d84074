"""The pure core of the BBS: convergence, crash back-off, task states, metrics.

Standard library only, no Django: a service layer loads a snapshot, calls the core
and applies the returned row changes (`docs/behaviour/bbs.md`). Import the
concept modules directly (``auction.bbs.convergence``, ``auction.bbs.restart``...);
this package module stays free of imports on purpose.
"""
