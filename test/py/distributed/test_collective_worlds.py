"""Every collective on hccl and on lccl, 2 and 4 ranks, against values computed on CPU (and
lccl against hccl): internal formats, PREMUL_SUM and receives from any source included.

One spawned world per size runs every check on both backends (collective_checks.run_checks);
each check is reported as its own test."""
import pytest

from collective_checks import CHECKS_BY_BACKEND, run_checks
from spawn_ranks import run_ranks

_outcomes: dict[int, list[dict]] = {}


def outcomes(world: int) -> list[dict]:
    if world not in _outcomes:
        _outcomes[world] = run_ranks(run_checks, world, timeout=400.0)  # both backends, every check
    return _outcomes[world]


CASES = [(backend, check) for backend, checks in CHECKS_BY_BACKEND.items() for check in sorted(checks)]


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("backend,check", CASES)
def test_collective(backend: str, check: str, world: int) -> None:
    failures = [f"rank {r}:\n{o[backend][check]}" for r, o in enumerate(outcomes(world)) if o[backend][check]]
    assert not failures, "\n".join(failures)
