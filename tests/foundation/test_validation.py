"""bbs.md 1.2, 1.3, 5 and 7: field validation worded exactly as the BBS words it."""

from __future__ import annotations

import pytest

from auction.bbs.validation import (
    bbs_message,
    cell_errors,
    desired_lrp_errors,
    desired_lrp_update_errors,
    domain_errors,
    task_errors,
)

GOOD_LRP = dict(process_guid="web-1_a", domain="cf-apps", rootfs="preloaded:cflinuxfs4",
                instances=3, memory_mb=256, disk_mb=1024, max_pids=0, annotation="", routes={})


def lrp_message(**changes: object) -> str:
    return bbs_message(desired_lrp_errors(**{**GOOD_LRP, **changes}))  # type: ignore[arg-type]


def test_good_desired_lrp_has_no_errors() -> None:
    """bbs.md 1.2: a valid definition passes; instances 0 is valid."""
    assert lrp_message() == ""
    assert lrp_message(instances=0) == ""
    assert lrp_message(rootfs="docker:///library/nginx#latest") == ""


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"instances": -1}, "Invalid field: instances"),
        ({"rootfs": ""}, "Invalid field: rootfs, Invalid field: rootfs"),
        ({"rootfs": "cflinuxfs4"}, "Invalid field: rootfs"),
        ({"rootfs": "1abc:x"}, "Invalid field: rootfs"),
        # bbs.md 1.2 rule 3: a rootfs Go's url.Parse rejects, once.
        ({"rootfs": "docker://registry:abc/img"}, "Invalid field: rootfs"),
        ({"rootfs": "docker:///lib/%zz"}, "Invalid field: rootfs"),
        ({"rootfs": "docker://[::1/img"}, "Invalid field: rootfs"),
        ({"rootfs": "docker://ho st/x"}, "Invalid field: rootfs"),
        ({"rootfs": "docker:\x7f"}, "Invalid field: rootfs"),
        ({"domain": ""}, "Invalid field: domain, Invalid field: domain"),
        ({"memory_mb": -5, "disk_mb": -1}, "Invalid field: memory_mb, Invalid field: disk_mb"),
        ({"max_pids": -1}, "Invalid field: max_pids"),
        ({"annotation": "x" * 10_241}, "Invalid field: annotation"),
        ({"annotation": "é" * 5_121}, "Invalid field: annotation"),  # bytes, not characters
        ({"process_guid": "has space"}, "Invalid field: process_guid"),
        ({"process_guid": ""}, "Invalid field: process_guid"),
        ({"routes": {"cf-router": "x" * 131_071}}, "Invalid field: routes"),
        ({"routes": ["not", "an", "object"]}, "Invalid field: routes"),
        (
            {"domain": "", "rootfs": "", "instances": -1, "memory_mb": -1, "disk_mb": -1,
             "annotation": "x" * 10_241, "max_pids": -1, "routes": {"r": "x" * 131_071},
             "process_guid": "bad guid"},
            "Invalid field: domain, Invalid field: rootfs, Invalid field: rootfs, "
            "Invalid field: instances, Invalid field: memory_mb, Invalid field: disk_mb, "
            "Invalid field: annotation, Invalid field: max_pids, Invalid field: routes, "
            "Invalid field: domain, Invalid field: process_guid",
        ),
    ],
)
def test_desired_lrp_messages_in_bbs_order(changes: dict[str, object], message: str) -> None:
    """bbs.md 1.2 items 1-11 and its examples."""
    assert lrp_message(**changes) == message


def test_annotation_and_routes_limits_are_inclusive() -> None:
    """bbs.md 0: 10,240 bytes of annotation and 131,072 bytes of routes are allowed."""
    assert lrp_message(annotation="x" * 10_240) == ""
    # '"' + 131,070 x + '"' = 131,072 bytes of compact JSON
    assert lrp_message(routes={"cf-router": "x" * 131_070}) == ""
    assert lrp_message(routes={"a": "x" * 65_534, "b": "y" * 65_535}) == "Invalid field: routes"


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"instances": 17, "annotation": "meta", "routes": {"cf-router": []}}, ""),
        ({"instances": -1}, "Invalid field: instances"),
        ({"annotation": "x" * 10_241}, "Invalid field: annotation"),
        ({"routes": {"r": "x" * 131_071}}, "Invalid field: routes"),
        ({"memory_mb": 512}, "Invalid field: memory_mb"),
        ({"instances": -2, "rootfs": "docker:///x"}, "Invalid field: instances, Invalid field: rootfs"),
    ],
)
def test_desired_lrp_update(update: dict[str, object], message: str) -> None:
    """bbs.md 1.3: instances, annotation, routes, then any other member [project rule]."""
    assert bbs_message(desired_lrp_update_errors(update)) == message


GOOD_TASK = dict(task_guid="task-1", domain="cf-tasks", rootfs="preloaded:cflinuxfs4",
                 memory_mb=256, disk_mb=256, max_pids=0, annotation="")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, ""),
        ({"task_guid": "no/slash"}, "Invalid field: task_guid"),
        ({"domain": ""}, "Invalid field: domain"),
        ({"rootfs": ""}, "Invalid field: rootfs"),  # once for tasks
        ({"rootfs": "cflinuxfs4"}, "Invalid field: rootfs"),
        ({"rootfs": "docker://ho st/x"}, "Invalid field: rootfs"),  # bbs.md 1.2 rule 3
        ({"memory_mb": -1, "disk_mb": -1, "max_pids": -1},
         "Invalid field: memory_mb, Invalid field: disk_mb, Invalid field: max_pids"),
        ({"annotation": "x" * 10_241}, "Invalid field: annotation"),
        ({"task_guid": "", "domain": "", "rootfs": ""},
         "Invalid field: task_guid, Invalid field: domain, Invalid field: rootfs"),
    ],
)
def test_task_messages(changes: dict[str, object], message: str) -> None:
    """bbs.md 7: task validation order; the rootfs message appears once."""
    assert bbs_message(task_errors(**{**GOOD_TASK, **changes})) == message  # type: ignore[arg-type]


def test_domain_and_cell_checks() -> None:
    """bbs.md 5 (empty domain) and auction.md 3 (cell totals at least 1)."""
    assert bbs_message(domain_errors(domain="", ttl=10)) == "Invalid field: domain"
    assert bbs_message(domain_errors(domain="cf-apps", ttl=0)) == ""
    assert bbs_message(domain_errors(domain="cf-apps", ttl=-1)) == "Invalid field: ttl"
    assert bbs_message(cell_errors(cell_id="c-1", index=0, memory_mb=1, disk_mb=1, containers=1)) == ""
    assert bbs_message(
        cell_errors(cell_id="c 1", index=-1, memory_mb=0, disk_mb=0, containers=0, proxy_memory_mb=-1)
    ) == ("Invalid field: cell_id, Invalid field: index, Invalid field: memory_mb, "
          "Invalid field: disk_mb, Invalid field: containers, Invalid field: proxy_memory_mb")


def test_the_registry_of_limits_bbs_md_1_6() -> None:
    """bbs.md 1.6: closed ranges; integers must be ints (not bools, floats or text);
    numbers finite; ports a short list of 0…65535; text bounded and storable."""
    from auction.bbs.validation import (
        LIMITS,
        MAX_INSTANCES,
        out_of_range,
        ports_invalid,
        text_too_long,
    )

    assert not out_of_range("instances", 0) and not out_of_range("instances", MAX_INSTANCES)
    assert not out_of_range("instances", None)
    for bad in (-1, MAX_INSTANCES + 1, 10**20, True, 1.0, "1", float("nan")):
        assert out_of_range("instances", bad), bad
    assert not out_of_range("ttl", 0) and not out_of_range("ttl", 120.5)
    for bad in (1e300, float("inf"), -0.5, LIMITS["ttl"].maximum * 1.01):
        assert out_of_range("ttl", bad), bad
    assert not ports_invalid([]) and not ports_invalid([0, 8080, 65535]) and not ports_invalid(None)
    for bad in ([70000], ["a"], [-1], [True], [8080.0], list(range(65)), "8080", {"p": 1}):
        assert ports_invalid(bad), bad
    assert not text_too_long("domain", "d" * 255)
    assert text_too_long("domain", "d" * 256) and text_too_long("domain", "a\x00")
    assert text_too_long("domain", "\ud800")
