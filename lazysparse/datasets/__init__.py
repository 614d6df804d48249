"""Small datasets for the demo, the docs and the benchmarks: ``load("cora")`` gives the Planetoid
Cora citation graph, the one matrix shipped inside the package (other names are looked up in the
benchmark corpus, ``data_dir()``, when it is present), and ``rmat`` generates a Graph500-style
R-MAT power-law graph."""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["load", "rmat", "data_dir", "list_shipped", "load_tensor"]

_SHIPPED = ("cora",)


def list_shipped() -> tuple[str, ...]:
    """Names of the matrices that ship inside the package."""
    return _SHIPPED


def data_dir() -> Path | None:
    """The benchmark corpus folder (``MANIFEST.md`` + ``*.npz``), or ``None`` if there is none.

    Looked up in order: the ``LAZYSPARSE_DATA`` environment variable, ``../shared/data`` beside the
    repository this package was imported from, ``./shared/data`` and ``../shared/data`` from the
    current directory.
    """
    env = os.environ.get("LAZYSPARSE_DATA")
    if env:
        p = Path(env).expanduser()
        return p if p.is_dir() else None
    here = Path(__file__).resolve()
    candidates = [here.parents[2] / ".." / "shared" / "data",      # <repo>/../shared/data
                  here.parents[2] / "shared" / "data",
                  Path.cwd() / "shared" / "data",
                  Path.cwd() / ".." / "shared" / "data"]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.npz")):
            return c.resolve()
    return None


def load(name: str) -> sp.csr_array:
    """Load a matrix by name as a ``scipy.sparse.csr_array`` (float64).

    ``"cora"`` ships with the package; any other name is read from ``data_dir()/<name>.npz``.

    >>> load("cora").shape
    (2708, 2708)

    >>> from lazysparse import datasets
    >>> A = datasets.load("cora")
    >>> A.shape, A.nnz
    ((2708, 2708), 10556)
    """
    if name in _SHIPPED:
        ref = resources.files(__name__).joinpath(f"{name}.npz")
        with resources.as_file(ref) as path:
            m = sp.load_npz(path)
        return sp.csr_array(m)
    d = data_dir()
    if d is None or not (d / f"{name}.npz").is_file():
        raise ValueError(f"datasets.load: unknown dataset {name!r}; shipped: {', '.join(_SHIPPED)}"
                         + ("" if d is None else f"; corpus at {d} has no {name}.npz"))
    with np.load(d / f"{name}.npz") as z:
        if "coords" in z.files:
            raise ValueError(f"datasets.load: {name!r} is a tensor; use datasets.load_tensor")
    return sp.csr_array(sp.load_npz(d / f"{name}.npz"))


def load_tensor(name: str):
    """Load a 3-order tensor from the corpus as ``(coords (ndim x nnz), data, shape)``."""
    d = data_dir()
    if d is None or not (d / f"{name}.npz").is_file():
        raise ValueError(f"datasets.load_tensor: no tensor {name!r} (corpus: {d})")
    with np.load(d / f"{name}.npz") as z:
        return z["coords"], z["data"], tuple(int(s) for s in z["shape"])


def rmat(scale: int, edge_factor: int = 16, seed: int = 0, *, a: float = 0.57, b: float = 0.19,
         c: float = 0.19, permute: bool = True) -> sp.csr_array:
    """A Graph500 R-MAT graph as a ``scipy.sparse.csr_array`` of float64.

    ``2**scale`` rows and columns, ``edge_factor * 2**scale`` directed edges drawn by recursive
    quadrant choice with probabilities ``a, b, c, 1-a-b-c``; duplicate edges are summed (so
    ``nnz <= edge_factor * 2**scale`` and values are edge multiplicities).  ``permute`` relabels
    the vertices with a random permutation, as Graph500 does, so that high-degree vertices are not
    clustered at low indices.  Deterministic for a given ``seed``.

    >>> A = rmat(10, seed=3)
    >>> A.shape, A.nnz <= 16 * 1024
    ((1024, 1024), True)

    >>> from lazysparse import datasets
    >>> datasets.rmat(8, seed=1).shape
    (256, 256)
    """
    if scale < 0 or scale > 31:
        raise ValueError(f"rmat: scale must be in [0, 31], got {scale}")
    if not 0 <= a + b + c <= 1:
        raise ValueError("rmat: a + b + c must lie in [0, 1]")
    n = 1 << scale
    m = int(edge_factor) * n
    rng = np.random.default_rng(seed)
    itype = np.int32 if n < 2**31 else np.int64
    rows = np.zeros(m, dtype=itype)
    cols = np.zeros(m, dtype=itype)
    ab = a + b
    a_given_top = a / ab if ab > 0 else 0.0          # P(left | top half)
    c_given_bottom = c / (1 - ab) if ab < 1 else 0.0  # P(left | bottom half)
    chunk = 1 << 22  # bound temporaries (float64 draws) at a few tens of MB
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        r = rows[lo:hi]
        q = cols[lo:hi]
        for level in range(scale):
            u = rng.random(hi - lo)
            v = rng.random(hi - lo)
            bottom = u > ab
            right = v > np.where(bottom, c_given_bottom, a_given_top)
            bit = itype(1 << level)
            r |= bottom.astype(itype) * bit
            q |= right.astype(itype) * bit
    if permute and n > 1:
        perm = rng.permutation(n).astype(itype)
        rows = perm[rows]
        cols = perm[cols]
    A = sp.coo_array((np.ones(m, dtype=np.float64), (rows, cols)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    return A
