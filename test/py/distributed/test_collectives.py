"""Every hccl collective on 2 and 4 ranks, against values computed on CPU."""
import pytest

from collective_checks import CHECKS, run_checks
from spawn_ranks import run_ranks

_outcomes: dict[int, list[dict]] = {}


def outcomes(world: int) -> list[dict]:
    # One process group per world size runs every check: spawning costs seconds per rank.
    if world not in _outcomes:
        _outcomes[world] = run_ranks(run_checks, world)
    return _outcomes[world]


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("check", sorted(CHECKS))
def test_collective(check: str, world: int) -> None:
    failures = [f"rank {r}:\n{o[check]}" for r, o in enumerate(outcomes(world)) if o[check]]
    assert not failures, "\n".join(failures)
