"""The benchmarks' inputs: the matrices and 3-order tensors of the benchmark corpus (a folder of
``.npz`` files) and generated R-MAT graphs."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Item:
    name: str
    kind: str                      # "matrix" or "tensor"
    shape: tuple
    nnz: int
    matrix: object = None          # scipy csr_array (matrices)
    tensor: tuple | None = None    # (coords, data, shape) (tensors)


def find_data_dir(explicit: str | None):
    from lazysparse.datasets import data_dir
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise SystemExit(f"--data {explicit}: not a directory")
        return p
    return data_dir()


def load_items(data: Path | None, names, rmat_scales, seed: int):
    import numpy as np
    import scipy.sparse as sp
    from lazysparse.datasets import rmat

    items = []
    if data is not None:
        for f in sorted(data.glob("*.npz")):
            if names and f.stem not in names:
                continue
            with np.load(f) as z:
                if "coords" in z.files:
                    shape = tuple(int(s) for s in z["shape"])
                    items.append(Item(f.stem, "tensor", shape, int(z["data"].size),
                                      tensor=(z["coords"], z["data"], shape)))
                    continue
            A = sp.csr_array(sp.load_npz(f))
            A.sum_duplicates()
            A.sort_indices()
            items.append(Item(f.stem, "matrix", A.shape, A.nnz, matrix=A))
    for s in rmat_scales:
        A = rmat(s, edge_factor=16, seed=seed)
        items.append(Item(f"rmat-{s}", "matrix", A.shape, A.nnz, matrix=A))
    return items

