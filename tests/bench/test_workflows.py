"""The five scipy workflows of ``lazysparse.bench.workflows`` run with ``lazysparse.sparse`` in
place of ``scipy.sparse`` give scipy's values: on the largest component of the shipped cora graph, a
generated document-term count matrix and a generated SPD system."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as ssp
from scipy.sparse import csgraph

import lazysparse.sparse as lsp
from lazysparse.bench import workflows as W
from lazysparse.datasets import load


def _inputs(kind):
    rng = np.random.default_rng(3)
    if kind == "graph":  # (cora's largest component: a connected graph, as a spectral embedding wants)
        A = load("cora")
        _, label = csgraph.connected_components(A, directed=False)
        keep = np.flatnonzero(label == np.bincount(label).argmax())
        return (A[keep][:, keep],)
    if kind == "counts":  # (a document with no terms and a term in no document included)
        C = ssp.random_array((60, 40), density=0.1, rng=rng, format="csr")
        C = C.multiply(rng.integers(1, 5, C.shape)).tocsr()
        C = ssp.csr_array(C.toarray() * (np.arange(60) != 7)[:, None])
        return (C,)
    B = ssp.random_array((80, 80), density=0.05, rng=rng, format="csr")
    M = (B @ B.T + 80.0 * ssp.eye_array(80)).tocsr()
    return (M, rng.random(80))


@pytest.mark.parametrize("name", list(W.WORKFLOWS))
def test_workflow_gives_scipys_values(name):
    fn, _, kind = W.WORKFLOWS[name]
    given = _inputs(kind)
    snapshot = [g.copy() for g in given]
    want = W.as_dense(fn(ssp, *given))
    got = W.as_dense(fn(lsp, *given))
    assert W.agree(name, got, want)
    wrong = (got[0] * 1.01, got[1]) if name == "spectral embedding" else got * 1.01 + 1e-3
    assert not W.agree(name, wrong, want)  # (the comparison can fail)
    for g, g0 in zip(given, snapshot):  # the inputs are unchanged
        np.testing.assert_array_equal(g.toarray() if hasattr(g, "toarray") else g,
                                      g0.toarray() if hasattr(g0, "toarray") else g0)
