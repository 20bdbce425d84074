"""Every kept answer of the memory store proved against a fresh one (check mode)."""

from check_derived import check_derived  # noqa: F401 - an autouse fixture
