"""OpenMP on single-operation kernels (``Lowerer.parallel``): the outermost loop over a result
index of a dense result runs on the threads of ``ls.set_num_threads``; values equal the serial
ones bitwise and NumPy's; loops that carry state between iterations stay serial."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.runtime.execute import kernel_log

PRAGMA = "#pragma omp parallel"


@pytest.fixture
def threads():
    yield ls.set_num_threads
    ls.set_num_threads(1)


def _run(expr, n):
    ls.set_num_threads(n)
    with kernel_log() as log:
        got = expr.materialize(fusion="none")
    return got.todense(), [runner.source for _, runner in log]


def _cases():
    rng = np.random.default_rng(0)
    As = sp.random(300, 200, density=0.05, format="csr", random_state=1)
    As = As.tolil()
    As[5, :] = 0
    As = As.tocsr()
    Ad = As.toarray()
    A = ls.asarray(As)
    Bs = sp.random(300, 200, density=0.05, format="csr", random_state=2)
    X, W, x = rng.random((200, 16)), rng.random((16, 7)), rng.random(200)
    D = rng.random((300, 200))
    return [
        ("spmm", A @ ls.asarray(X), Ad @ X, True),
        ("dense product", ls.asarray(X) @ ls.asarray(W), X @ W, True),
        ("spmv", A @ ls.asarray(x), Ad @ x, True),
        ("row sums", A.sum(axis=1), Ad.sum(axis=1), True),
        ("dense elementwise", ls.asarray(D) * 2.0 + ls.asarray(D), D * 2.0 + D, True),
        ("dcsr spmv", A.asformat("dcsr") @ ls.asarray(x), Ad @ x, True),
        ("csc spmv", A.asformat("csc") @ ls.asarray(x), Ad @ x, False),  # scatters into y
        ("sparse result", A + ls.asarray(Bs), Ad + Bs.toarray(), False),  # appends in order
    ]


@pytest.mark.parametrize("case", range(len(_cases())))
def test_two_threads_give_the_serial_values(case, threads):
    name, expr, want, parallel = _cases()[case]
    one, src1 = _run(expr, 1)
    two, src2 = _run(_cases()[case][1], 2)  # a new lazy array: the first one is computed
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(two, want, rtol=1e-12)
    assert src1 == src2 and src1  # the thread count is a run-time argument, not a new kernel
    assert any(PRAGMA in s for s in src2) == parallel, name
