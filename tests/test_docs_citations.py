"""Every behaviour citation in the repository resolves in ``docs/behaviour/``.

Tests and code name the rule they implement or check, e.g. ``auction.md 4.6`` or
``dashboard.md G8`` (the convention is in docs/behaviour/README.md). A citation
resolves when ``docs/behaviour/<area>.md`` has

- for a section number, a Markdown heading whose text starts with it
  (``### 4.6 Winner, ties and reservation``);
- for a dashboard ID, a list item that starts with it as a bold label
  (``- **G8** *Modes.* …``).

A heading renamed or deleted without updating its citations fails here, naming the file
and line of every citation left dangling. Plain pytest: no database.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "behaviour"
THIS = Path(__file__).resolve()

#: Where citations are looked for (static/vendor/ is third-party code).
SCANNED_DIRS = ("auction", "tests", "templates", "tools", "diego_web", "static")
SCANNED_FILES = ("README.md",)
SKIPPED_DIRS = frozenset({"__pycache__", "vendor", "node_modules"})
SUFFIXES = frozenset({".py", ".html", ".js", ".css", ".md", ".json", ".txt", ".toml"})

AREAS = ("auction", "bbs", "otto", "dashboard", "conformance", "cfdot", "plans")
_AREA = "|".join(AREAS)
NUMBER = r"\d+(?:\.\d+)*"
LABEL = r"[A-Z]{1,2}\d+"
_SECTION = rf"(?:{NUMBER}|{LABEL})(?!\w)"
# Between "x.md" and its section: spaces, or a line break inside a wrapped comment.
_GAP = r",?(?:[ \t]+|[ \t]*\n[ \t]*(?:#[ \t]*)?)"
_SEP = r"(?:[ \t]*[,/\-–][ \t]*|[ \t]+(?:and|or)[ \t]+)"
CITATION = re.compile(
    rf"\b(?P<area>{_AREA})\.md{_GAP}(?:(?:sections?|s|§)[ \t]*)?"
    rf"(?P<sections>{_SECTION}(?:{_SEP}{_SECTION})*)"
)
_PART = re.compile(rf"(?P<sep>[,/\-–]|and|or)?[ \t]*(?P<section>{NUMBER}|{LABEL})")
# The same citation in a test function's name: test_..._auction_md_2_1 is auction.md 2.1.
NAME_CITATION = re.compile(rf"(?<![A-Za-z0-9])(?P<area>{_AREA})_md_(?P<section>\d+(?:_\d+)*)(?![0-9A-Za-z])")

HEADING = re.compile(rf"^#{{1,6}}[ \t]+(?P<section>{NUMBER})\.?(?=[ \t]|$)")
LABELLED_ITEM = re.compile(rf"^[ \t]*(?:[-*+]|\d+\.)[ \t]+\*\*(?P<section>{LABEL})\*\*")

#: References to specification files that live outside the repository.
OUTSIDE_SPEC = re.compile(r"shared/spec|stack-notes\.md")

Citation = tuple[str, str]  # (area, section)


def _expand(first: str, last: str) -> list[str]:
    """A range ``G1-G4`` or ``4.2-4.6``: every section from ``first`` to ``last``."""
    if re.fullmatch(NUMBER, first) and re.fullmatch(NUMBER, last):
        head_a, _, tail_a = first.rpartition(".")
        head_b, _, tail_b = last.rpartition(".")
        if head_a == head_b and int(tail_a) <= int(tail_b):
            prefix = f"{head_a}." if head_a else ""
            return [f"{prefix}{n}" for n in range(int(tail_a), int(tail_b) + 1)]
    else:
        a = re.fullmatch(r"([A-Z]+)(\d+)", first)
        b = re.fullmatch(r"([A-Z]+)(\d+)", last)
        if a and b and a[1] == b[1] and int(a[2]) <= int(b[2]):
            return [f"{a[1]}{n}" for n in range(int(a[2]), int(b[2]) + 1)]
    return [first, last]


def citations_in(text: str) -> Iterator[tuple[Citation, int]]:
    """Every ``(area, section)`` cited in ``text``, with the line it is on."""
    for match in CITATION.finditer(text):
        area = match["area"]
        line = text.count("\n", 0, match.start()) + 1
        sections: list[str] = []
        for part in _PART.finditer(match["sections"]):
            section = part["section"]
            if area != "dashboard" and re.fullmatch(LABEL, section):
                break  # "bbs.md 6.3 / C3": the ID belongs to the dashboard, not to bbs.md
            if part["sep"] in ("-", "–") and sections:
                sections[-1:] = _expand(sections[-1], section)
            else:
                sections.append(section)
        for section in sections:
            yield (area, section), line
    for match in NAME_CITATION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        yield (match["area"], match["section"].replace("_", ".")), line


def sections_of(page: str) -> set[str]:
    """The numbers of a page's headings and the IDs of its bold-labelled list items."""
    found: set[str] = set()
    fenced = False
    for line in page.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = HEADING.match(line) or LABELLED_ITEM.match(line)
        if match:
            found.add(match["section"])
    return found


def scanned_files() -> Iterator[Path]:
    for name in SCANNED_FILES:
        path = REPO / name
        if path.is_file():
            yield path
    for top in SCANNED_DIRS:
        for path in sorted((REPO / top).rglob("*")):
            if (path.is_file() and path.suffix in SUFFIXES
                    and not SKIPPED_DIRS.intersection(path.relative_to(REPO).parts)):
                yield path


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def repository_citations() -> dict[Citation, list[str]]:
    """Every citation in the scanned files -> where it is (``path:line``)."""
    found: dict[Citation, list[str]] = {}
    for path in scanned_files():
        for citation, line in citations_in(_read(path)):
            found.setdefault(citation, []).append(f"{path.relative_to(REPO)}:{line}")
    return found


def behaviour_pages() -> dict[str, str]:
    return {path.stem: _read(path) for path in DOCS.glob("*.md") if path.stem in AREAS}


def dangling(citations: Mapping[Citation, list[str]], pages: Mapping[str, str]) -> list[str]:
    """One line per citation that does not resolve, with where it is cited."""
    sections = {area: sections_of(text) for area, text in pages.items()}
    problems = []
    for (area, section), where in sorted(citations.items()):
        if area not in sections:
            problems.append(f"{area}.md {section}: no docs/behaviour/{area}.md "
                            f"(cited at {', '.join(where[:3])})")
        elif section not in sections[area]:
            more = f" and {len(where) - 3} more" if len(where) > 3 else ""
            problems.append(f"{area}.md {section}: no such heading or label in "
                            f"docs/behaviour/{area}.md (cited at {', '.join(where[:3])}{more})")
    return problems


@pytest.fixture(scope="module")
def citations() -> dict[Citation, list[str]]:
    return repository_citations()


def test_every_citation_resolves_in_docs_behaviour(citations):
    problems = dangling(citations, behaviour_pages())
    assert not problems, (f"{len(problems)} dangling citation(s) of docs/behaviour/ "
                          "(see docs/behaviour/README.md):\n  " + "\n  ".join(problems))


def test_the_scan_finds_the_citations(citations):
    """A scanner that silently found nothing would pass the test above."""
    assert len(citations) > 100
    for known in [("auction", "4.6"), ("auction", "2.1"), ("bbs", "1.2"), ("otto", "10"),
                  ("conformance", "2"), ("dashboard", "G8"), ("dashboard", "T16")]:
        assert known in citations, known


@pytest.mark.parametrize(("text", "expected"), [
    ("(auction.md 4.6)", [("auction", "4.6")]),
    ("see bbs.md 1.2 rule 3.", [("bbs", "1.2")]),
    ("auction.md 2.", [("auction", "2")]),
    ("dashboard.md G1-G4, G6", [("dashboard", f"G{n}") for n in (1, 2, 3, 4, 6)]),
    ("dashboard.md section 2, A1-A3", [("dashboard", "2"), ("dashboard", "A1"),
                                       ("dashboard", "A2"), ("dashboard", "A3")]),
    ("auction.md 4.2-4.4 and 7", [("auction", "4.2"), ("auction", "4.3"), ("auction", "4.4"),
                                  ("auction", "7")]),
    ("bbs.md 6.3 / C3", [("bbs", "6.3")]),
    ("bbs.md sections 1, 2.1, 5, 7", [("bbs", "1"), ("bbs", "2.1"), ("bbs", "5"), ("bbs", "7")]),
    ("errors (``x``, bbs.md\n    1.2): a client", [("bbs", "1.2")]),
    ("otto.md 9/10", [("otto", "9"), ("otto", "10")]),
    ("dashboard.md M2, KOV #84", [("dashboard", "M2")]),
    ("auction.md vocabulary", []),
    ("stack.md 4", []),
    ("def test_go_order_auction_md_2_1_up_to_12_items():", [("auction", "2.1")]),
    ("def test_reject_bbs_md_7_4th_rejection():", [("bbs", "7")]),
])
def test_citation_parser(text, expected):
    assert [c for c, _ in citations_in(text)] == expected


def test_headings_and_labels_are_read_outside_code_blocks():
    page = ("## 4. The diego strategy\n### 4.6 Winner\n- **G8** *Modes.*\n"
            "```\n# 9 not a heading\n```\n1. **AD2** *Validation.*\n#### 10 Running\n")
    assert sections_of(page) == {"4", "4.6", "G8", "AD2", "10"}


def test_a_deleted_heading_leaves_its_citations_dangling(citations):
    """Delete auction.md's 4.6 heading: its citations are reported, with their places."""
    pages = behaviour_pages()
    assert "auction" in pages and "### 4.6 " in pages["auction"]
    pages["auction"] = re.sub(r"(?m)^### 4\.6 .*$", "### Winner, ties and reservation",
                              pages["auction"])
    problems = dangling(citations, pages)
    assert problems and all(p.startswith("auction.md 4.6: ") for p in problems)
    assert "tests/" in problems[0] or "auction/" in problems[0]


def test_no_reference_to_a_specification_outside_the_repository():
    """The repository documents itself: comments point at docs/behaviour/, not outside."""
    found = []
    for path in scanned_files():
        if path == THIS:
            continue
        for number, line in enumerate(_read(path).splitlines(), 1):
            if OUTSIDE_SPEC.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
