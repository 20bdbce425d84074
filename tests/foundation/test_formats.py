"""One formatter for instants, durations and scores (dashboard.md U1's pages; issue 16)."""

from __future__ import annotations

from auction.templatetags.diego_format import duration, instant, score


def test_instants_durations_and_scores_one_way() -> None:
    """Sim instants as the clock writes them; durations in s / min / h; scores without exponents."""
    assert instant(363.11600613594055) == "0:06:03.1"
    assert instant(None) == "—" and instant("nan") == "—"
    assert [duration(s) for s in (2.345, 12.5, 589, 5220, 7380)] == [
        "2.3 s", "12 s", "9 min 49 s", "1 h 27 min", "2 h 03 min"]
    assert [score(v) for v in (0.095083, 0.47, 0.0, 1000.0, 1234567.8)] == [
        "0.095083", "0.47", "0", "1,000", "1,234,568"]
