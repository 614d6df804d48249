"""The work guard (runtime/work.py): a statement that walks the implicit zeros of a sparse
operand is refused, before its kernel runs, when its index space has more points than
``LAZYSPARSE_WORK_LIMIT``; work over stored entries and dense work over dense operands never is."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.runtime.work import WorkLimitError

HUGE = r"""
import time, numpy as np, scipy.sparse as sp, lazysparse as ls
from lazysparse.runtime.work import WorkLimitError
n = 10**6
rows = np.arange(0, n, n // 100)
A = ls.asarray(sp.csr_array((np.ones(len(rows)), (rows, rows)), shape=(n, n)))
for f in (lambda a: (a + 1).sum(), lambda a: np.exp(a).sum(axis=0), lambda a: (a - 1).max(),
          lambda a: np.exp(a).T @ np.ones(n)):
    t0 = time.perf_counter()
    try:
        ls.compute(f(A))
        print("ran")
    except WorkLimitError as e:
        assert str(e).startswith("materialize: `") and "LAZYSPARSE_WORK_LIMIT" in str(e), e
        print("refused", round(time.perf_counter() - t0, 3))
"""


def test_a_walk_over_a_huge_operands_zeros_is_refused_at_once():
    r = subprocess.run([sys.executable, "-c", HUGE], capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "LAZYSPARSE_WORK_LIMIT"})
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.split("\n")[:4]
    assert all(ln.startswith("refused") and float(ln.split()[1]) < 5 for ln in lines), r.stdout


def _A(n=40, m=30, density=0.1, seed=0):
    return sp.random_array((n, m), density=density, format="csr", random_state=seed)


def test_the_bound_plan_checks_too(monkeypatch):
    """Warm calls run a bound plan (no planning): it checks on every call, for the operand at
    hand and the limit in force."""
    S = _A()
    lS = ls.asarray(S)
    assert float((lS + 1).sum().materialize().todense()) == pytest.approx(S.sum() + 1200)
    assert float((lS + 1).sum().materialize().todense()) == pytest.approx(S.sum() + 1200)
    monkeypatch.setenv("LAZYSPARSE_WORK_LIMIT", "1000")
    with pytest.raises(WorkLimitError, match=r"visit all 1\.2e\+03 points"):
        (lS + 1).sum().materialize()
    small = _A(20, 30, seed=1)
    assert float((ls.asarray(small) + 1).sum().materialize().todense()) == pytest.approx(small.sum() + 600)


@pytest.mark.parametrize("limit", ["none", "0", "2k"])
def test_the_limit_can_be_raised_or_turned_off(monkeypatch, limit):
    S = _A(50, 50)
    monkeypatch.setenv("LAZYSPARSE_WORK_LIMIT", limit)  # 2k = 2048 points, under 2500
    if limit == "2k":
        with pytest.raises(WorkLimitError):
            np.exp(ls.asarray(S)).sum(axis=0).materialize()
        return
    got = np.exp(ls.asarray(S)).sum(axis=0).materialize().todense()
    np.testing.assert_allclose(got, np.exp(S.toarray()).sum(axis=0))


def test_a_malformed_limit_names_the_variable(monkeypatch):
    monkeypatch.setenv("LAZYSPARSE_WORK_LIMIT", "lots")
    with pytest.raises(ValueError, match="LAZYSPARSE_WORK_LIMIT='lots'"):
        (ls.asarray(_A()) + 1).sum().materialize()


def test_work_over_stored_entries_or_dense_operands_is_never_refused(monkeypatch):
    monkeypatch.setenv("LAZYSPARSE_WORK_LIMIT", "1")
    S, T = _A(30, 30, 0.2, 2), _A(30, 30, 0.2, 3)
    D = np.arange(900.0).reshape(30, 30) / 900
    lS, lT, lD = ls.asarray(S), ls.asarray(T), ls.asarray(D)
    x = np.linspace(0, 1, 30)
    Sd, Td = S.toarray(), T.toarray()
    cases = [(lS @ x, Sd @ x), (lS @ lT, Sd @ Td), (lS + lT, Sd + Td), ((lS * 2).sum(axis=0), 2 * Sd.sum(0)),
             (lS * lD, Sd * D), (lD @ lD, D @ D), ((lD + 1).sum(), (D + 1).sum()),
             (((lS + 1) * lS).sum(), ((Sd + 1) * Sd).sum())]
    for got, want in cases:
        np.testing.assert_allclose(np.asarray(got.materialize().todense()), want, rtol=1e-12)
