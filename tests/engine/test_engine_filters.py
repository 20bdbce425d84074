"""Filters, fit and the exact placement errors (auction.md 3 and 6)."""

import pytest
from engine_builders import cell

from auction.engine import LRPWork, Resources, TaskWork, schedule
from auction.engine.filters import (
    filter_error,
    insufficient_resources_error,
    match_placement_tags,
    match_rootfs,
    placement_tag_error,
)


@pytest.mark.parametrize("rootfs,expected", [
    ("preloaded:cflinuxfs4", True),
    ("PreLoaded:cflinuxfs4", True),  # scheme lower-cased
    ("preloaded+layer:cflinuxfs4?layer=x", True),
    ("preloaded:cflinuxfs4#frag", True),
    ("preloaded:cflinuxfs3", False),
    ("preloaded:/cflinuxfs4", False),  # a stack starting with / never matches
    ("docker:///library/nginx", True),  # any other scheme: by provider
    ("oci:///x", False),
    ("cflinuxfs4", False),  # no scheme
    ("1abc:cflinuxfs4", False),  # invalid scheme
    ("", False),
])
def test_rootfs_filter_auction_md_3_1(rootfs, expected):
    """auction.md 3.1: scheme rules, preloaded stacks, providers."""
    c = cell(preloaded_rootfses=("cflinuxfs4", "/cflinuxfs4"), rootfs_providers=("docker",))
    assert match_rootfs(c, rootfs) is expected


@pytest.mark.parametrize("required,optional,wanted,expected", [
    ((), (), (), True), ((), (), ("a",), False), (("seg",), (), (), False),
    (("seg",), (), ("seg",), True), (("seg",), ("gpu",), ("seg", "gpu"), True),
    ((), ("gpu",), (), True), ((), ("gpu",), ("gpu",), True), ((), ("gpu",), ("x",), False),
])
def test_placement_tags_auction_md_3_3(required, optional, wanted, expected):
    """auction.md 3.3: R ⊆ D and D ⊆ R ∪ O."""
    c = cell(placement_tags=required, optional_placement_tags=optional)
    assert match_placement_tags(c, wanted) is expected


def test_tag_error_strings_in_request_order_auction_md_6():
    """auction.md 6: tag error wording for 0, 1, 2 and 3 tags, request order kept."""
    assert placement_tag_error([]) == "found no compatible cell with no placement tags"
    assert placement_tag_error(["iso-b"]) == 'found no compatible cell with placement tag "iso-b"'
    assert placement_tag_error(["b", "a"]) == (
        'found no compatible cell with placement tags "b" and "a"')
    assert placement_tag_error(["c", "a", "b"]) == (
        'found no compatible cell with placement tags "c", "a" and "b"')


def test_global_filter_error_rule_auction_md_6_3():
    """auction.md 6.3: rootfs first, then drivers among rootfs matches, then tags."""
    cells = [cell("a", volume_drivers=("nfs",), placement_tags=("x",)),
             cell("b", preloaded_rootfses=())]
    assert filter_error(cells, "preloaded:nope", (), ()) == (
        "found no compatible cell for required rootfs")
    assert filter_error(cells, "preloaded:cflinuxfs4", ("smb",), ()) == (
        "found no compatible cell with required volume drivers")
    assert filter_error(cells, "preloaded:cflinuxfs4", ("nfs",), ("y",)) == (
        'found no compatible cell with placement tag "y"')


def test_insufficient_resources_wording_auction_md_6_4():
    """auction.md 6.4: sorted, joined by ', '; bare when the intersection is empty."""
    assert insufficient_resources_error({"memory", "disk"}) == "insufficient resources: disk, memory"
    assert insufficient_resources_error(set()) == "insufficient resources"


def test_failure_intersection_and_proxy_in_fit_auction_md_3_and_6_4():
    """auction.md 3: m_eff = m + proxy for LRPs only; 6.4: intersection over unfit cells."""
    cells = [cell("a", available=Resources(100, 50, 10), proxy_memory_mb=32),
             cell("b", available=Resources(50, 1000, 0))]
    result = schedule(cells, [LRPWork("web", 0, 80, 40), TaskWork("t", 80, 40)])
    assert result.failures == {"web.0": "insufficient resources: memory"}
    assert result.placements == {"t": "a"}
    result = schedule(cells, [LRPWork("web", 0, 200, 2000)])
    assert result.failures == {"web.0": "insufficient resources: disk, memory"}


def test_no_cells_and_in_flight_cap_auction_md_4_1_and_6():
    """auction.md 6.1/6.2 and 4.1: empty auction error; cap counts starting + wins."""
    assert schedule([], [TaskWork("t", 1, 1)]).failures == {
        "t": "unable to communicate to compatible cells"}
    from auction.engine import AuctionConfig
    cells = [cell("a", starting_containers=1)]
    config = AuctionConfig(starting_container_count_maximum=3)
    work = [LRPWork("w", 0, 1, 1), LRPWork("w", 1, 1, 1), LRPWork("w", 2, 1, 1, rootfs="x:y")]
    result = schedule(cells, work, config)
    assert result.placements == {"w.0": "a", "w.1": "a"}
    # the cap applies before any filtering
    assert result.failures == {"w.2": "waiting to start instance: reached in-flight start limit"}


@pytest.mark.parametrize("rootfs", [
    "docker://registry:abc/image",  # a non-numeric port
    "docker:///lib/%zz", "docker://h/x#%zz",  # bad % escapes in path and fragment
    "docker://[::1/img",  # an unclosed IPv6 bracket
    "docker://ho st/x",  # a space in the host
    "docker:\x7f", "docker:///a\x00b",  # ASCII control characters
    "preloaded:cflinuxfs4#%zz", "preloaded:cflinux%fs4",
])
def test_rootfs_go_url_parse_rejects_match_no_cell_auction_md_3(rootfs):
    """auction.md 3: a rootfs Go's url.Parse rejects matches no cell, whatever its scheme,
    and the whole auction says so with the rootfs error."""
    c = cell(preloaded_rootfses=("cflinuxfs4",), rootfs_providers=("docker", "preloaded"))
    assert match_rootfs(c, rootfs) is False
    result = schedule([c], [LRPWork("a", 0, 1, 1, rootfs=rootfs)])
    assert result.failures == {"a.0": "found no compatible cell for required rootfs"}


@pytest.mark.parametrize("rootfs", [
    "docker://reg:5000/img", "DOCKER:///x", "Preloaded:cflinuxfs4",
    "preloaded:cflinuxfs4#frag", "docker://h:99999/x",  # Go checks digits, not the range
])
def test_rootfs_go_url_parse_accepts_and_matches_auction_md_3(rootfs):
    """auction.md 3: these parse in Go and match as the scheme rules say."""
    c = cell(preloaded_rootfses=("cflinuxfs4",), rootfs_providers=("docker",))
    assert match_rootfs(c, rootfs) is True
