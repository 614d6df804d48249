"""A sparse result's first capacity (compiler/runner.py, the ``ohint`` slot): the bound from the
operands (``A + B``: both operands' entries) on new operands, and the previous call's exact
entry count when the buffer set's previous call had the same operands (storages never change):
a shrink at the end then never happens, which glibc answered with fresh pages every call."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import runner as R


def test_same_operands_reuse_the_previous_count(monkeypatch):
    calls = []
    real = R.Runner._hint

    def counted(self, storages, out_shape):
        calls.append(tuple(id(s) for s in storages))
        return real(self, storages, out_shape)

    monkeypatch.setattr(R.Runner, "_hint", counted)
    ls.clear_cache()
    A = sp.random(70, 50, density=0.1, format="csr", random_state=1, dtype=np.float32)
    B = sp.random(70, 50, density=0.3, format="csr", random_state=2, dtype=np.float32)
    C = sp.random(70, 50, density=0.2, format="csr", random_state=3, dtype=np.float32)
    lA, lB, lC = ls.asarray(A), ls.asarray(B), ls.asarray(C)
    # (not lA + lA: one operand read twice copies its structure, no count: tests/compiler/lower/test_equal_accesses.py)
    for want_hint, (x, y, X, Y) in [(True, (lA, lC, A, C)), (False, (lA, lC, A, C)),
                                    (True, (lA, lB, A, B)), (False, (lA, lB, A, B)),
                                    (True, (lA, lC, A, C))]:
        before = len(calls)
        got = (x + y).materialize()
        assert (len(calls) > before) == want_hint
        np.testing.assert_allclose(got.todense(), (X + Y).toarray(), rtol=1e-6)
        assert got.nnz == (X + Y).nnz
    ls.clear_cache()


def test_an_empty_previous_result_falls_back_to_the_bound():
    Z = sp.csr_array((30, 20), dtype=np.float64)
    A = sp.random(30, 20, density=0.2, format="csr", random_state=3)
    lZ, lA = ls.asarray(Z), ls.asarray(A)
    for _ in range(2):
        assert (lZ + lZ).materialize().nnz == 0
    for _ in range(2):
        np.testing.assert_allclose((lA + lZ).materialize().todense(), A.toarray())
