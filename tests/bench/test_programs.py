"""The lazy-programs benchmark (lazysparse/bench/programs.py) on a small matrix: each program's
lazy result matches scipy's loop before anything is timed, and the tables carry every row."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lazysparse.bench import programs
from lazysparse.bench.inputs import Item


@pytest.mark.parametrize("kind", ["jacobi", "pagerank", "cg"])
def test_each_program_matches_scipy_and_is_timed(kind):
    A = sp.csr_array(sp.random(300, 300, density=0.03, format="csr", random_state=4))
    item = Item("small", "matrix", A.shape, A.nnz, matrix=A)
    row = programs.measure(item, kind, 20, rounds=1)
    assert row["rel_err"] < 1e-10, row
    assert all(row[f"{v}_ms"] > 0 for v in ("lazy", "each", "scipy"))
    assert f"| {kind} | small | 20 |" in programs.table([row])


def test_the_slope_is_fitted_over_k():
    rows = [{"program": "jacobi", "matrix": "m", "k": k, "plan_ms": 2.0 + 0.5 * k} for k in (10, 100, 1000)]
    assert "| jacobi | m | 0.5000 | 7.0 |" in programs.slopes(rows)
