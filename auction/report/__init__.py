"""The report card (plans.md 4): one self-contained HTML file for a comparison run.

Pure (no Django): ``comparison_report`` runs the strategy comparison of
``auction.sim.compare`` (sampling each pane's spread on the way) and renders it; the
``report`` command and the ``/compare/`` page's "Download report" both call it, so the
same inputs give the same bytes. A plan (plans.md) can build ``Card`` objects of its own
and call ``render_report`` with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from auction.report.card import (
    Card,
    CellRow,
    Report,
    cell_rows,
    project_version,
    report_from_comparison,
)
from auction.report.render import render_report
from auction.sim.compare import PaneSpec, compare

__all__ = [
    "SAMPLES", "Card", "CellRow", "Report", "cell_rows", "comparison_report", "project_version",
    "render_report", "report_from_comparison",
]

#: Points of each spread line: the run cut into this many equal steps, plus instant 0.
SAMPLES = 60


def comparison_report(scenario: str, specs: Sequence[PaneSpec], *, seed: int | None = None,
                      until: float = 60.0, version: str | None = None) -> str:
    """Run the comparison and return the report's HTML (``CompareError`` for bad input)."""
    result = compare(scenario, specs, seed=seed, until=until, samples=SAMPLES)
    return render_report(report_from_comparison(result, version=version))
