"""Five scipy workflows run twice, with only the import changed (``python -m
lazysparse.bench.workflows``): each function below is scipy code that takes the namespace as
``sp`` (``scipy.sparse`` or ``lazysparse.sparse``), as a port that edits one import line would
run. PageRank by power iteration, TF-IDF with row normalisation, the normalised graph Laplacian,
a CG solve and a spectral embedding by ``eigsh``; the script checks that both give scipy's values
and prints their median times side by side."""
from __future__ import annotations

import argparse

import numpy as np


def pagerank(sp, G, d=0.85, tol=1e-10, maxiter=200):
    """The PageRank vector of graph ``G`` by power iteration (dangling nodes spread evenly)."""
    A = sp.csr_array(G, dtype=np.float64)
    n = A.shape[0]
    out = A.sum(axis=1)
    dangling = out == 0
    P = (sp.diags_array(1.0 / np.where(dangling, 1.0, out)) @ A).T.tocsr()
    x = np.full(n, 1.0 / n)
    for _ in range(maxiter):
        lost = (x * dangling).sum()
        new = d * (P @ x) + (d * lost + 1.0 - d) / n
        err = abs(new - x).sum()
        x = new
        if err < tol:
            break
    return np.asarray(x)


def tfidf(sp, counts):
    """TF-IDF weights of a document-term count matrix, each row scaled to unit length."""
    X = sp.csr_array(counts, dtype=np.float64)
    df = (X > 0).sum(axis=0)
    idf = np.log((1.0 + X.shape[0]) / (1.0 + df)) + 1.0
    W = X.multiply(idf)
    norms = np.sqrt(W.multiply(W).sum(axis=1))
    W = sp.diags_array(1.0 / np.where(norms == 0, 1.0, norms)) @ W
    return W.tocsr()


def laplacian(sp, G):
    """The normalised Laplacian ``I - D^-1/2 A D^-1/2`` of the symmetrised graph ``G``."""
    A = sp.csr_array(G, dtype=np.float64)
    A = ((A + A.T) > 0).astype(np.float64)
    deg = A.sum(axis=1)
    scale = sp.diags_array(1.0 / np.sqrt(np.where(deg == 0, 1.0, deg)))
    return (sp.eye_array(A.shape[0]) - scale @ A @ scale).tocsr()


def cg_solve(sp, M, b):
    """``M x = b`` by scipy's conjugate gradients (``M`` symmetric positive definite)."""
    A = sp.csr_array(M, dtype=np.float64)
    x, info = sp.linalg.cg(A, b, rtol=1e-8, maxiter=2000)
    return x


def spectral_embedding(sp, G, k=4):
    """The ``k`` leading eigenvectors of ``D^-1/2 A D^-1/2`` (the normalised Laplacian's
    smallest) by ``eigsh``, and their eigenvalues."""
    L = laplacian(sp, G)
    S = sp.eye_array(L.shape[0]) - L
    v0 = np.random.default_rng(0).random(L.shape[0])
    vals, vecs = sp.linalg.eigsh(S, k=k, which="LA", v0=v0, tol=1e-10)
    return vals, vecs


WORKFLOWS = {  # name: (function, corpus matrix, what its input is made from)
    "PageRank": (pagerank, "ca-CondMat", "graph"),
    "TF-IDF rows": (tfidf, "citeseer_features", "counts"),
    "normalised Laplacian": (laplacian, "ca-CondMat", "graph"),
    "CG solve": (cg_solve, "bcsstk16", "spd"),
    "spectral embedding": (spectral_embedding, "ca-CondMat", "graph"),  # (connected: one subspace)
}


def inputs(kind, A):
    """The arguments of a workflow from a scipy CSR matrix ``A`` (for a CG solve, ``A`` itself
    when symmetric, as bcsstk16 is; else ``|A + A.T|`` made diagonally dominant)."""
    if kind == "spd":
        if (A != A.T).nnz:
            import scipy.sparse as ssp
            S = abs(A + A.T)
            A = (S + ssp.diags_array(np.asarray(S.sum(axis=1)).ravel() + 1.0)).tocsr()
        return (A, np.random.default_rng(0).random(A.shape[0]))
    if kind == "counts":
        return (abs(A).ceil() if A.dtype.kind == "f" else A,)
    return (A,)


def as_dense(result):
    """A workflow's result as NumPy values: a matrix densified, a pair compared item by item."""
    if isinstance(result, tuple):
        return tuple(as_dense(r) for r in result)
    if hasattr(result, "toarray"):
        return np.asarray(result.toarray())
    return np.asarray(result)


def agree(name, got, want, rtol=1e-7):
    """Whether a workflow's lazysparse result equals scipy's (eigenvectors: the same subspace,
    every singular value of ``Vg^T Vw`` 1, which allows signs and a basis of a repeated
    eigenvalue)."""
    if name == "spectral embedding":
        (vg, Vg), (vw, Vw) = got, want
        cosines = np.linalg.svd(Vg.T @ Vw, compute_uv=False)
        return np.allclose(vg, vw, rtol=rtol) and np.allclose(cosines, 1.0, atol=1e-6)
    if name == "CG solve":
        return np.allclose(got, want, rtol=1e-5, atol=1e-8)
    return np.allclose(got, want, rtol=rtol, atol=1e-12)


def main(argv=None):
    import scipy.sparse as ssp

    import lazysparse.sparse as lsp
    from lazysparse.bench.timing import fmt_ms, measure_interleaved
    from lazysparse.datasets import load
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--only", nargs="*", default=None)
    args = p.parse_args(argv)
    print("| workflow | input | scipy | lazysparse | lazy/scipy | same values |")
    print("|---|---|---|---|---|---|")
    for name, (fn, matrix, kind) in WORKFLOWS.items():
        if args.only and name not in args.only:
            continue
        given = inputs(kind, load(matrix))
        want, got = as_dense(fn(ssp, *given)), as_dense(fn(lsp, *given))
        same = agree(name, got, want)
        t = measure_interleaved({"scipy": lambda: fn(ssp, *given),
                                 "lazysparse": lambda: fn(lsp, *given)}, args.repeat, 60.0)
        s, lz = t["scipy"].get("median_ms"), t["lazysparse"].get("median_ms")
        ratio = f"{lz / s:.2f}" if s and lz else "-"
        print(f"| {name} | {matrix} | {fmt_ms(s)} | {fmt_ms(lz)} | {ratio} | {same} |", flush=True)


if __name__ == "__main__":
    main()
