"""The report card (plans.md 4): one self-contained, byte-identical HTML file per comparison."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from auction.report import SAMPLES, comparison_report, render_report, report_from_comparison
from auction.report.svg import esc, histogram_bins, num, ticks
from auction.selectors.palette import app_colour
from auction.sim.compare import METRIC_ROWS, PaneSpec, compare, pane_spec
from auction.sim.quality import RunMetrics, run_metrics
from auction.sim.scenario import world_from_scenario

REPO = Path(__file__).resolve().parents[2]
ALL = ["diego", "dea", "objective", "random"]
# Anything that would make the browser fetch or link outside the file (plans.md 4.2).
URLISH = re.compile(r"https?:|//|src\s*=|url\(|@import|href\s*=", re.I)


def specs(*names: str) -> list[PaneSpec]:
    return [pane_spec(n) for n in names]


class Doc(HTMLParser):
    """The parts of the report a test looks at: svgs with their titles, cards, metric cells."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.svgs: list[dict[str, str]] = []
        self.svg_titles: dict[str, str] = {}
        self.cards: list[str] = []
        self.first_child_of_svg: list[str] = []
        self.best: dict[str, list[int]] = {}
        self.scripts = 0
        self._row: str | None = None
        self._col = 0
        self._title_id: str | None = None
        self._svg_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "img", "iframe", "link", "object", "embed"):
            self.scripts += 1
        if self._svg_open:
            self.first_child_of_svg.append(tag)
            self._svg_open = False
        if tag == "svg":
            self.svgs.append(a)
            self._svg_open = True
        if tag == "title" and a.get("id"):
            self._title_id = a["id"]
            self.svg_titles[a["id"]] = ""
        if tag == "article" and "card" in a.get("class", ""):
            self.cards.append(a["data-strategy"])
        if tag == "tr" and "data-metric" in a:
            self._row, self._col = a["data-metric"], 0
        if tag == "td" and self._row is not None:
            if a.get("data-best") == "true":
                self.best.setdefault(self._row, []).append(self._col)
            self._col += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._title_id = None
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._title_id is not None:
            self.svg_titles[self._title_id] += data


def parse(html: str) -> Doc:
    doc = Doc()
    doc.feed(html)
    return doc


@pytest.fixture(scope="module")
def az_loss() -> str:
    return comparison_report("az-loss", specs(*ALL), until=600)


def test_same_inputs_give_the_same_bytes_plans_md_4() -> None:
    """plans.md 4.6: two runs of the same inputs, byte for byte; another seed differs."""
    first = comparison_report("az-loss", specs("diego", "random"), until=600, seed=7)
    second = comparison_report("az-loss", specs("diego", "random"), until=600, seed=7)
    assert first == second
    assert comparison_report("az-loss", specs("diego", "random"), until=600, seed=8) != first


def test_same_bytes_across_processes_and_hash_seeds_plans_md_4_6(tmp_path: Path) -> None:
    """plans.md 4.6: two processes with different string hash seeds write the same file
    (no set or dict order leaks into it)."""
    files = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"r{hash_seed}.html"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run([sys.executable, "manage.py", "report", "boulders-pebbles", "--strategies",
                              "diego,dea,random", "--until", "300", "-o", str(out)], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        files.append(out.read_bytes())
    assert files[0] == files[1] and len(files[0]) > 1000


def test_sampling_changes_nothing_the_run_does_plans_md_4() -> None:
    """plans.md 4.5 item 3: a pane stopped at 61 instants ends where an unstopped one does."""
    plain = compare("inflight-cap", specs("diego", "dea"), until=400)
    sampled = compare("inflight-cap", specs("diego", "dea"), until=400, samples=SAMPLES)
    for a, b in zip(plain.panes, sampled.panes, strict=True):
        assert a.metrics is not None and b.metrics is not None
        assert a.metrics.as_dict() == b.metrics.as_dict()
        assert not a.series
        assert [s.at for s in b.series] == [400 * i / SAMPLES for i in range(SAMPLES + 1)]
        assert b.series[-1].at == 400
        assert b.series[-1].distribution == b.metrics.distribution_final
        assert b.series[-1].worst_skew == b.metrics.worst_skew


def test_no_url_script_or_external_fetch_plans_md_4_2(az_loss: str) -> None:
    """plans.md 4.2: nothing in the file points anywhere (no SVG namespace URL either)."""
    assert URLISH.findall(az_loss) == []
    assert parse(az_loss).scripts == 0
    assert "<style>" in az_loss and "@media print" in az_loss and "@page" in az_loss


def test_url_check_would_catch_a_link() -> None:
    """The URL pattern above is not vacuous: each kind of reference is caught."""
    for bad in ('<img src="x.png">', "a { background: url(x) }", "see https://x", "//cdn",
                '<a href="x">', "@import 'x'"):
        assert URLISH.search(bad), bad


def test_every_card_and_figure_is_there_with_a_title_plans_md_4_5(az_loss: str) -> None:
    """plans.md 4.2, 4.5: a card per strategy in order; every svg is role=img and named by
    its first child, a non-empty <title>; each card has its cells, histogram and two plots."""
    doc = parse(az_loss)
    assert doc.cards == ALL
    assert doc.svgs and all(s.get("role") == "img" for s in doc.svgs)
    assert doc.first_child_of_svg == ["title"] * len(doc.svgs)
    for svg in doc.svgs:
        labelled = svg["aria-labelledby"].split()
        assert labelled and all(i in doc.svg_titles or i.endswith("-d") for i in labelled)
        assert doc.svg_titles[labelled[0]].strip()
    ids = {s["aria-labelledby"].split()[0] for s in doc.svgs}
    for kind in ALL:
        for fig in ("cells", "wait", "dist", "skew"):
            assert f"{fig}-{kind}-t" in ids, (fig, kind)
    assert len(doc.svgs) == 4 * len(ALL) + 1  # and the colour legend
    # A count axis (the skew, the histogram's items) has whole-number ticks only.
    for fig in ("skew", "wait"):
        svg = az_loss[az_loss.index(f'id="{fig}-diego-t"'):]
        svg = svg[:svg.index("</svg>")]
        labels = re.findall(r'text-anchor="end">([^<]*)</text>', svg)
        assert labels and all(t.isdigit() for t in labels) and len(set(labels)) == len(labels), labels
    assert len(ids) == len(doc.svgs)  # ids unique in the document


def test_stamp_names_scenario_seed_config_and_version_plans_md_4_3(az_loss: str) -> None:
    """plans.md 4.3: scenario, seed, sim time, config, version, per-card parameters."""
    version = re.search(r'^version = "(.+)"$', (REPO / "pyproject.toml").read_text(), re.M)[1]
    for text in ("<dt>scenario</dt><dd>az-loss: ", "<dt>seed</dt><dd>3</dd>",
                 "<dt>sim time</dt><dd>0 to 600 s</dd>", "locality_offset=1000",
                 f"<dt>diego-web</dt><dd>{version}</dd>", "<dt>go_compat</dt>",
                 "<dt>starting_container_weight</dt>", "<dt>objective f</dt>"):
        assert text in az_loss, text
    go = comparison_report("cold-start", specs("diego", "diego-go"), until=10)
    assert 'data-strategy="diego-go"' in go
    card = go[go.index('id="card-diego-go"'):]
    assert '<dt>go_compat</dt><dd class="mono">true</dd>' in card


def _best_columns(metrics: list[RunMetrics]) -> dict[str, list[int]]:
    """Independently of the code under test: the columns holding the lowest value."""
    out: dict[str, list[int]] = {}
    for name, _ in METRIC_ROWS:
        if name == "placed":
            continue
        values = [m.value(name) for m in metrics]
        out[name] = [i for i, v in enumerate(values) if abs(v - min(values)) <= 1e-12]
    return out


@pytest.mark.parametrize("scenario", ["cold-start", "az-loss", "boulders-pebbles", "inflight-cap"])
def test_metrics_table_marks_the_lowest_plans_md_4_4(scenario: str) -> None:
    """plans.md 4.4 (auction.md 9): the ★ sits on the lowest value of each row, ties all
    marked, never on "instances placed"."""
    result = compare(scenario, specs(*ALL), until=300, samples=4)
    html = render_report(report_from_comparison(result, version="test"))
    metrics = [p.metrics for p in result.panes]
    assert all(m is not None for m in metrics)
    expected = _best_columns(metrics)  # type: ignore[arg-type]
    assert parse(html).best == expected
    # The rows differ somewhere, so the check has something to tell apart.
    if scenario == "cold-start":
        assert 0 in expected["distribution_final"] and 3 not in expected["distribution_final"]
        assert expected["communications"] != [0, 1, 2, 3]


def test_one_strategy_with_figures_marks_nothing_plans_md_4_4() -> None:
    """plans.md 4.1, 4.4: an objective the strategy refuses gets an error card; alone
    against it, the other strategy wins nothing."""
    bad = replace(pane_spec("objective"), objective=replace(pane_spec("objective").objective,
                                                              expression="r.available_memory_mb +"))
    html = comparison_report("cold-start", [pane_spec("diego"), bad], until=10)
    doc = parse(html)
    assert doc.cards == ["diego", "objective"]
    assert doc.best == {}
    assert "invalid objective: " in html[html.index('id="card-objective"'):]


def test_cells_are_drawn_to_scale_in_the_grid_colours_plans_md_4_5() -> None:
    """plans.md 4.5 item 1: one bar per cell, blocks as wide as their memory at one scale,
    filled with the grid palette's colour of their app."""
    result = compare("boulders-pebbles", specs("diego", "dea"), until=60, samples=2)
    html = render_report(report_from_comparison(result, version="test"))
    world = result.panes[0].world
    assert world is not None
    cells_svg = html[html.index('id="cells-diego-t"'):html.index("</svg>", html.index('id="cells-diego-t"'))]
    blocks = re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" '
                        r'class="blk st-(\w+) pr-\w+" fill="(#[0-9A-Fa-f]{6})"', cells_svg)
    running = [r for r in world.rows.values() if r.state != "UNCLAIMED" and r.cell_id in world.cells]
    largest = max(c.memory_mb for c in world.cells.values())
    expected = []
    for cell in sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)):
        on_cell = sorted((r for r in running if r.cell_id == cell.cell_id),
                         key=lambda r: (r.process_guid, r.index, r.presence))
        expected += [(pytest.approx(world.apps[r.process_guid].memory_mb * 468 / largest, abs=0.01),
                      app_colour(r.process_guid)) for r in on_cell]
    assert len(expected) > 0
    assert [(float(width), fill) for _, width, _, fill in blocks] == expected
    assert len({width for _, width, _, _ in blocks}) > 1  # boulders and pebbles differ
    assert len(re.findall(r'class="cellbar st-', cells_svg)) == len(world.cells)


def test_failures_and_unplaced_work_are_listed_plans_md_4_5() -> None:
    """plans.md 4.5 item 4: exact error strings with counts, unplaced by reason."""
    world = world_from_scenario("boulders-pebbles")
    world.run_until(120)
    metrics = run_metrics(world)
    assert metrics.failures_by_error and metrics.unplaced
    html = comparison_report("boulders-pebbles", specs("diego", "dea"), until=120)
    card = html[html.index('id="card-diego"'):html.index('id="card-dea"')]
    for error, count in metrics.failures_by_error.items():
        assert f'<span class="reason">{esc(error)}</span> × {count}' in card
    assert f"{metrics.unplaced} unplaced at the end" in card


def test_svg_helpers_numbers_ticks_bins_and_escaping_plans_md_4_6() -> None:
    """plans.md 4.5, 4.6: stable number text, 1-2-5 ticks, bins from 0 with the maximum in
    the last bin, all-zero waits in one bin, text escaped."""
    assert [num(v) for v in (0.0, -0.0, -0.001, 2.5, 2.0, 1 / 3, float("nan"))] == [
        "0", "0", "0", "2.5", "2", "0.33", "0"]
    assert ticks(0, 600, 6) == [0, 100, 200, 300, 400, 500, 600]
    assert ticks(0, 0.37, 4) == [0, 0.1, 0.2, 0.3, 0.4]
    assert ticks(0, 2, 4) == [0, 0.5, 1, 1.5, 2] and ticks(0, 2, 4, 1.0) == [0, 1, 2]
    bins = histogram_bins([0, 0, 1.5, 3, 10])
    assert (bins[0].low, bins[-1].high, len(bins)) == (0, 10, 10)
    assert [b.count for b in bins] == [2, 1, 0, 1, 0, 0, 0, 0, 0, 1]
    assert [(b.low, b.high, b.count) for b in histogram_bins([0.0, 0.0])] == [(0, 1, 2)]
    assert esc('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"


def test_text_from_inputs_is_escaped_plans_md_4_2() -> None:
    """plans.md 4.2: an objective with markup in it cannot open a tag in the report."""
    objective = replace(pane_spec("objective").objective, expression="<script>x</script> + 1")
    html = comparison_report("cold-start", [pane_spec("diego"), replace(pane_spec("objective"),
                                                                          objective=objective)], until=5)
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt; + 1" in html


def test_command_writes_the_file_plans_md_4_1(tmp_path: Path) -> None:
    """plans.md 4.1: manage.py report writes the same bytes comparison_report returns."""
    out = tmp_path / "report.html"
    call_command("report", "az-loss", "--strategies", "diego,dea", "--until", "600", "--seed", "5",
                 "-o", str(out), stdout=open(tmp_path / "log", "w"))
    assert out.read_bytes() == comparison_report("az-loss", specs("diego", "dea"), until=600,
                                                 seed=5).encode("utf-8")
    assert parse(out.read_text()).cards == ["diego", "dea"]


@pytest.mark.parametrize("args, message", [
    (["no-such-scenario", "--strategies", "diego,dea"], "unknown scenario 'no-such-scenario'"),
    (["az-loss", "--strategies", "diego,bogus"], "unknown strategy 'bogus'"),
    (["az-loss", "--strategies", "diego"], "choose 2 to 4 strategies"),
])
def test_command_refuses_bad_input_in_one_line_plans_md_4_1(tmp_path: Path, args: list[str],
                                                             message: str) -> None:
    """plans.md 4.1: a bad scenario or strategy: one line on stderr, exit 1, no file."""
    out = tmp_path / "report.html"
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("report", *args, "-o", str(out))
    run = subprocess.run([sys.executable, "manage.py", "report", *args, "-o", str(out)], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [run.stderr.strip()]
    assert message in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


@pytest.mark.django_db
def test_compare_page_download_is_the_same_report_plans_md_4_1(client: Client) -> None:
    """plans.md 4.1: the page links its own comparison; the link answers an attachment
    with the bytes the command writes."""
    page = client.get("/compare/?strategies=diego,random&scenario=az-loss&seed=4&t=600")
    assert page.status_code == 200
    href = re.search(r'<a class="cmp-step cmp-report" href="([^"]+)" download>Download report</a>',
                     page.content.decode())
    assert href, "the Download report link"
    link = href[1].replace("&amp;", "&")
    assert link.startswith("/compare/report/?")
    response = client.get(link)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert re.fullmatch(r'attachment; filename="report-az-loss-diego-random-[0-9a-f]{12}\.html"',
                        response["Content-Disposition"])
    expected = comparison_report("az-loss", specs("diego", "random"), until=600, seed=4)
    assert response.content == expected.encode("utf-8")
    assert client.get(link).content == response.content
    bad = client.get("/compare/report/?strategies=diego,bogus&scenario=az-loss")
    assert bad.status_code == 400 and b"unknown strategy 'bogus'" in bad.content
