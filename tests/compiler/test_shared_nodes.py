"""Programs whose DAG shares nodes, as a loop written lazily builds them: each step uses the last
value twice (``x + dinv * (b - A @ x)``), so walked as a tree a k-step chain has 2^k paths. The
fused driver must see each node once, and the result must match NumPy's."""
import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import fused_pipeline


def _jacobi(k, n=40, fmt="csr", dtype=np.float64):
    rng = np.random.default_rng(k)
    A0 = sp.random_array((n, n), density=0.1, format="csr", random_state=rng, dtype=dtype)
    A0 = (A0 + sp.eye_array(n, dtype=dtype) * 4).asformat(fmt)
    d = (1 / A0.diagonal()).astype(dtype)
    b = rng.random(n).astype(dtype)
    A, dinv, lb = ls.asarray(A0), ls.asarray(d), ls.asarray(b)
    x, want = ls.asarray(np.zeros(n, dtype)), np.zeros(n, dtype)
    for _ in range(k):
        x = x + dinv * (lb - A @ x)
        want = want + d * (b - A0.toarray() @ want)
    return x, want


@pytest.mark.parametrize("k", [1, 5, 16])
def test_statements_of_a_shared_dag_are_listed_once(k):
    x, _ = _jacobi(k)
    # a step is four operations (matmul, subtract, multiply, add) on the step before; walked as
    # a tree the 16-step chain lists more than 2^16 statements
    assert len(fused_pipeline._stmts([x._node])) == 4 * k


@pytest.mark.parametrize("k, fmt, dtype", [(1, "csr", np.float64), (12, "csc", np.float32),
                                           (40, "csr", np.float64)])
def test_a_long_lazy_chain_matches_numpy(k, fmt, dtype):
    x, want = _jacobi(k, fmt=fmt, dtype=dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(np.asarray(x.materialize().todense()), want, rtol=rtol, atol=rtol)
