"""Contrast of the palettes (dashboard.md U3: text ≥ 4.5:1, blocks and icons ≥ 3:1)."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import pytest

from auction.selectors.palette import (
    BAR_BACKGROUND,
    BLOCK_LABEL,
    PALETTE,
    app_colour,
    contrast_ratio,
)

CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "app.css"


def test_wcag_formula_on_known_pairs() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize("hue", PALETTE)
def test_every_app_hue_stands_out_and_carries_a_label(hue: str) -> None:
    assert contrast_ratio(hue, BAR_BACKGROUND) >= 3.0
    assert contrast_ratio(hue, BLOCK_LABEL) >= 4.5


def test_hues_are_distinct_and_stable() -> None:
    assert len(set(PALETTE)) == 12
    assert all(contrast_ratio(a, b) > 1.0 for a, b in combinations(PALETTE, 2))
    assert app_colour("web") == app_colour("web")


def root_variables() -> dict[str, str]:
    root = re.search(r":root\s*\{([^}]*)\}", CSS.read_text()).group(1)
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", root))


@pytest.mark.parametrize("text", ["text", "muted", "accent", "ok", "warn", "bad"])
@pytest.mark.parametrize("ground", ["bg", "panel"])
def test_page_text_colours_reach_aa(text: str, ground: str) -> None:
    colours = root_variables()
    assert contrast_ratio(colours[text], colours[ground]) >= 4.5, (text, ground)
