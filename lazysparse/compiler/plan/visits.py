"""A deterministic count of what the planner walks: nodes and operations visited by its passes.
Tests read it to check that planning cost grows linearly with a DAG's size (wall time would be
noisy); it counts visits, not microseconds, so it is the same on every machine and every run."""

VISITS = [0]


def count(n: int) -> None:
    VISITS[0] += n


def planner_visits() -> int:
    """Nodes and operations the planner's passes have visited in this process."""
    return VISITS[0]
