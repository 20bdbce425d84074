"""Every shape a person has a capture in (plans.md 3.1, the cfdot reference section 9):
jq-pretty objects back to back, an array, a terminal transcript, gzip, a BOM, Windows
line ends, a rep's ``/state``; and the cut paste and the gzip bomb that are refused."""

from __future__ import annotations

import gzip
import io
import json
import time
import zlib
from pathlib import Path

import pytest

from auction.sim.cfdot import dump_lines
from auction.sim.cfdot_read import CaptureError, read_capture, summary
from auction.sim.cfdot_split import VALUE_LIMIT

SHAPES = Path(__file__).parent / "shapes"
CAPTURES = Path(__file__).parent / "captures"
CELL = "5c2b9f4e-8a71-4d3e-9b06-1f7e2a4c8d90"


def shape(name: str) -> tuple[str, bytes]:
    return name, (SHAPES / name).read_bytes()


def compact(*names: str) -> list[tuple[str, bytes]]:
    """The same records as cfdot prints them: one compact line each."""
    out = []
    for name in names:
        view_lines = []
        text = (SHAPES / name).read_text()
        decoder, pos = json.JSONDecoder(), 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos == len(text):
                break
            value, pos = decoder.raw_decode(text, pos)
            for v in value if isinstance(value, list) else [value]:
                view_lines.append(json.dumps(v, separators=(",", ":")))
        out.append((name, "\n".join(view_lines).encode() + b"\n"))
    return out


def test_jq_pretty_objects_back_to_back_read_as_their_lines_plans_md_3_1() -> None:
    view = read_capture([shape("cells-pretty.json")])
    assert [c.cell_id for c in view.cells] == [CELL, "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"]
    assert list(dump_lines(view)) == list(dump_lines(read_capture(compact("cells-pretty.json"))))
    assert view.warnings == ()


def test_an_array_of_objects_reads_as_its_elements_plans_md_3_1() -> None:
    view = read_capture([shape("actual-array.json")])
    assert summary(view)["actual_lrps"] == 2
    assert list(dump_lines(view)) == list(dump_lines(read_capture(compact("actual-array.json"))))
    # An element's error names the element's own line, not the array's.
    text = (SHAPES / "actual-array.json").read_text().replace('"UNCLAIMED"', '"UNCLAIMABLE"')
    opens = [n for n, line in enumerate(text.splitlines(), 1) if line == "  {"]
    assert len(opens) == 2
    second = opens[1]
    with pytest.raises(CaptureError) as info:
        read_capture([("a.json", text.encode())])
    assert info.value.message == f'a.json:{second}: state: unknown value "UNCLAIMABLE"'


def test_a_transcript_skips_the_prompt_and_the_notice_and_says_so_plans_md_3_1() -> None:
    view = read_capture([shape("groups-transcript.txt")])
    assert summary(view)["actual_lrps"] == 2
    assert len(view.warnings) == 3
    assert view.warnings[0].startswith("groups-transcript.txt:1: skipped, not JSON: diego_cell/")
    assert view.warnings[1] == ('groups-transcript.txt:2: skipped, not JSON: Command '
                                '"actual-lrp-groups" is deprecated, use actual-lrps instead')
    last = len((SHAPES / "groups-transcript.txt").read_text().splitlines())
    assert view.warnings[2].startswith(f"groups-transcript.txt:{last}: skipped")
    # A prompt in brackets opens no array.
    view = read_capture([("d", b'[user@host ~]$ cfdot domains\n"cf-apps"\n')])
    assert view.warnings == ("d:1: skipped, not JSON: [user@host ~]$ cfdot domains",)
    assert dict(view.domains) == {"cf-apps": None}


def test_a_line_that_is_not_json_inside_a_value_is_refused_plans_md_3_1() -> None:
    text = (SHAPES / "cells-pretty.json").read_text().splitlines()
    text.insert(3, "diego_cell/0:~$ cfdot cells | jq .")
    with pytest.raises(CaptureError) as info:
        read_capture([("c.json", "\n".join(text).encode())])
    assert info.value.message == "c.json:4: not JSON (Expecting property name enclosed in double quotes)"


def test_a_cut_paste_names_where_its_value_starts_and_what_was_expected_plans_md_3_1() -> None:
    lines = (SHAPES / "actual-cut.json").read_text().splitlines()
    start = lines.index("{", 1) + 1
    with pytest.raises(CaptureError) as info:
        read_capture([shape("actual-cut.json")])
    assert info.value.message == (
        f"actual-cut.json:{start}: a JSON value starts here and does not end (Expecting property "
        "name enclosed in double quotes at the end of the file): cut short? Capture or paste it whole")
    with pytest.raises(CaptureError, match="^a:1: the array that opens here does not end"):
        read_capture([("a", b'[{"cell_id": "c", "capacity": {"memory_mb": 1}},\n')])


@pytest.mark.parametrize("dress", ["gzip", "bom", "crlf", "all three"])
def test_gzip_bom_and_windows_line_ends_read_alike_plans_md_3_1(dress: str) -> None:
    files = [shape("cells-pretty.json"), shape("rep-state.json"), shape("groups-transcript.txt")]
    expected = read_capture(files)

    def dressed(content: bytes) -> bytes:
        if dress in ("crlf", "all three"):
            content = content.replace(b"\n", b"\r\n")
        if dress in ("bom", "all three"):
            content = b"\xef\xbb\xbf" + content
        if dress in ("gzip", "all three"):
            content = gzip.compress(content)
        return content

    view = read_capture([(name, dressed(content)) for name, content in files])
    assert list(dump_lines(view)) == list(dump_lines(expected))
    assert [w.split(": skipped")[0] for w in view.warnings] == \
        [w.split(": skipped")[0] for w in expected.warnings]


def test_every_reference_capture_reads_alike_in_every_shape_plans_md_3_1() -> None:
    """The hand-written captures of the cfdot reference, each pretty-printed back to back,
    as one array, gzip and CRLF: the same cluster as their JSON Lines."""
    lines = [(p.name, p.read_text()) for p in sorted(CAPTURES.glob("*.jsonl"))]
    expected = list(dump_lines(read_capture((n, t.encode()) for n, t in lines)))
    values = [(n, [json.loads(x) for x in t.splitlines() if x.strip()]) for n, t in lines]
    pretty = [(n, "".join(json.dumps(v, indent=2) + "\n" for v in vs).encode()) for n, vs in values]
    array = [(n, json.dumps(vs, indent=4).encode()) for n, vs in values]
    windows = [(n, gzip.compress(b.replace(b"\n", b"\r\n"))) for n, b in pretty]
    for files in (pretty, array, windows):
        assert list(dump_lines(read_capture(files))) == expected


def test_the_reps_state_object_today_and_in_2016_plans_md_3_1() -> None:
    today = read_capture([shape("rep-state.json")])
    assert [(c.cell_id, c.index, c.memory_mb, c.zone) for c in today.cells] == \
        [("0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a", 1, 26127, "z1")]
    # 2016: no cell_id; the file's name says which cell it is.
    old = read_capture([shape("cell-z1-0.state.json")])
    assert [(c.cell_id, c.memory_mb, c.disk_mb, c.preloaded_rootfses) for c in old.cells] == \
        [("cell-z1-0", 16000, 32000, ("cflinuxfs2",))]
    with pytest.raises(CaptureError) as info:
        read_capture([("state.json", (SHAPES / "cell-z1-0.state.json").read_bytes())])
    assert info.value.message == ("state.json:1: cell_id: missing (a rep's /state from before "
                                  "2017 names no cell: save it as CELL_ID.state.json)")


def test_a_gzip_bomb_is_refused_quickly_with_bounded_memory_plans_md_3_1() -> None:
    """Half a megabyte inflating to 512 MiB with no newline (issue 32): refused at the
    limit, never inflated whole."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"0" * 2**20
    bomb = b"".join(packer.compress(zeros) for _ in range(512)) + packer.flush()
    assert len(bomb) < 2**20
    started = time.monotonic()
    with pytest.raises(CaptureError) as info:
        read_capture([("bomb.gz", bomb)], limit_bytes=200 * 2**20)
    assert time.monotonic() - started < 20
    assert info.value.message == (f"bomb.gz:1: a line longer than {VALUE_LIMIT // 2**20} MiB: "
                                  "no cfdot record is that long")
    # Short lines past the capture's limit are refused at the limit too.
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    lines = b"".join(packer.compress(b'"d"\n' * 2**18) for _ in range(8)) + packer.flush()
    with pytest.raises(CaptureError, match=r"^lines.gz:\d+: the capture passes 4 MiB \(decompressed\)"):
        read_capture([("lines.gz", lines)], limit_bytes=4 * 2**20)


def test_a_text_stream_reads_as_its_bytes() -> None:
    text = (SHAPES / "cells-pretty.json").read_text()
    assert summary(read_capture([("c", io.StringIO(text))]))["cells"] == 2
