"""Convolutions through affine subscripts ("Compiler Support for Sparse Tensor Convolutions"),
side by side with SciPy and NumPy: that paper's 1-d, 2-d and 3-d cases at several sparsities and a
corpus of sparse images, lazysparse's sparse and dense kernels against ``scipy.signal``, shifted
scipy.sparse slices, NumPy's sliding windows and a numba loop, every result checked first."""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.signal
import scipy.sparse as sp

import lazysparse as ls

NOTATION = {1: "A[i] = I[i+p] * F[p]",
            2: "O[h,w] = I[h+r, w+q] * F[r,q]",
            3: "O[h,w,v] = I[h+r, w+q, v+s] * F[r,q,s]",
            "images": "O[n,h,w] = I[n, h+r, w+q] * F[r,q]"}
SIZES = {"1d": ((999_999,), (3,)), "2d": ((999, 999), (3, 3)), "3d": ((99, 99, 99), (3, 3, 3)),
         "4k": ((4096, 4096), (3, 3))}  # shared/PEERS.md's conv2d row


def _data_dir(arg):
    if arg:
        return Path(arg)
    if os.environ.get("LAZYSPARSE_DATA"):
        return Path(os.environ["LAZYSPARSE_DATA"])
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def _sparse_of(dense):
    """A new lazysparse operand of the sparse input per call: over a scipy CSR matrix in 2-d
    (zero-copy), else over a pydata/sparse COO array, as a user holding sparse data has it."""
    if dense.ndim == 2:
        M = sp.csr_array(dense)
        return lambda: ls.asarray(M)
    import sparse
    coo = sparse.COO.from_numpy(dense)
    return lambda: ls.asarray(coo)


def cases(names, sparsities, data):
    rng = np.random.default_rng(0)
    for name in names:
        if name == "images":
            path = data / "sparse-images-1024.npz"
            if not path.is_file():
                print(f"(images: {path} not found, skipped)")
                continue
            M = sp.load_npz(path).tocsr()
            dense = M.toarray().reshape(M.shape[0], 32, 32)
            F = rng.random((3, 3))
            yield name, f"{M.nnz / dense.size:.3f}", dense, F, NOTATION["images"]
            continue
        shape, fshape = SIZES[name]
        F = rng.random(fshape)
        for s in sparsities:
            dense = rng.random(shape) * (rng.random(shape) >= s)
            yield name, f"{s:g}", dense, F, NOTATION[len(shape)]


def peers(dense, F, name):
    out = {"signal": lambda: scipy.signal.correlate(dense, F, mode="valid", method="direct")}
    if name == "images":
        out["signal"] = lambda: scipy.signal.correlate(dense, F[None], mode="valid", method="direct")
    win = np.lib.stride_tricks.sliding_window_view
    if name == "images":
        out["numpy"] = lambda: np.tensordot(win(dense, F.shape, axis=(1, 2)), F, axes=2)
    else:
        out["numpy"] = lambda: np.tensordot(win(dense, F.shape), F, axes=F.ndim)
    if dense.ndim <= 2 and name != "images":
        M = sp.csr_array(dense.reshape(1, -1) if dense.ndim == 1 else dense)
        taps = [(t, F[t]) for t in np.ndindex(*F.shape)]
        if dense.ndim == 1:
            n = dense.shape[0] - F.shape[0] + 1
            out["shifted"] = lambda: sum(f * M[:, p:p + n] for (p,), f in taps)
        else:
            h, w = dense.shape[0] - F.shape[0] + 1, dense.shape[1] - F.shape[1] + 1
            out["shifted"] = lambda: sum(f * M[r:r + h, q:q + w] for (r, q), f in taps)
            loop = _numba_conv2d()
            if loop is not None:
                out["numba"] = lambda: loop(M.indptr, M.indices, M.data, F, h, w)
    return out


_NUMBA = []


def _numba_conv2d():
    """shared/PEERS.md's "numba-hand" peer: the loop a capable user writes over a CSR input's
    entries and the filter's taps into a dense result (one thread); None without numba."""
    if _NUMBA:
        return _NUMBA[0]
    try:
        import numba
    except ImportError:
        _NUMBA.append(None)
        return None

    @numba.njit(cache=False)
    def conv(indptr, indices, data, F, H, W):
        R, Q = F.shape
        out = np.zeros((H, W))
        for y in range(len(indptr) - 1):
            for p in range(indptr[y], indptr[y + 1]):
                x, v = indices[p], data[p]
                for r in range(R):
                    h = y - r
                    if 0 <= h < H:
                        for q in range(Q):
                            w = x - q
                            if 0 <= w < W:
                                out[h, w] += v * F[r, q]
        return out
    _NUMBA.append(conv)
    return conv


def _dense_of(x):
    if isinstance(x, ls.Array):
        return np.asarray(x.todense())
    if sp.issparse(x):
        return x.toarray().reshape(-1) if x.shape[0] == 1 and x.ndim == 2 else x.toarray()
    return np.asarray(x)


def run_case(name, sparsity, dense, F, notation, repeat):
    make_sparse = _sparse_of(dense)
    kept = make_sparse()
    lF, lD = ls.asarray(F), ls.asarray(dense)
    funcs = {
        "ls sparse": lambda: ls.expr(notation, I=make_sparse(), F=lF).materialize(),
        "ls kept": lambda: ls.expr(notation, I=kept, F=lF).materialize(),
        "ls dense": lambda: ls.expr(notation, I=lD, F=lF).materialize(),
    }
    funcs.update(peers(dense, F, name))
    want = funcs["signal"]()
    bad = []
    for k, f in funcs.items():
        got = _dense_of(f())
        if got.shape != want.shape and got.size == want.size:
            got = got.reshape(want.shape)
        if not np.allclose(got, want):
            bad.append(k)
    times = {k: [] for k in funcs if k not in bad}
    order = list(times)
    for _ in range(repeat):
        random.shuffle(order)
        for k in order:
            t0 = time.perf_counter()
            funcs[k]()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    return med, bad, int(np.count_nonzero(dense))


_EPILOG = """\
example:
  python -m lazysparse.bench.conv [--repeat 7] [--sparsity 0.5 0.9 0.99 0.999] [--cases 1d 2d 3d images]
                                  [--data DIR] [--json PATH]

Cases (that paper's sizes, its third experiment): ``1d`` ``A[i] = I[i+p] F[p]`` on 999,999 points, 3 taps;
``2d`` ``O[h,w] = I[h+r, w+q] F[r,q]`` on 999 x 999, 3 x 3; ``3d`` on 99^3, 3 x 3 x 3 (inputs
uniformly random at each ``--sparsity``); ``images``: the corpus's sparse-images-1024 (1,200
MNIST digits of 32 x 32, binary, about 10% nonzero) as a 1,200 x 32 x 32 tensor, 3 x 3 filter,
``O[n,h,w] = I[n,h+r,w+q] F[r,q]``; ``4k``: shared/PEERS.md's conv2d row, 4096 x 4096, 3 x 3.

Columns (ms, medians of interleaved rounds; one thread):

* ``ls sparse``: the input a new lazysparse array each call (CSR, or the all-compressed tensor),
  so its window is built every call: what a pipeline whose input changes pays;
* ``ls kept``: the same sparse input every call (the window kept with it: another filter, or
  a second pass);
* ``ls dense``: the dense input through a strided view, the generated dense loops (the paper's
  "dense convolution" baseline);
* ``signal``: ``scipy.signal.correlate(..., mode="valid", method="direct")`` on the dense input;
* ``shifted``: the idiomatic scipy.sparse code, a sum over the taps of sliced CSR matrices
  scaled by the tap (1-d and 2-d);
* ``numpy``: ``sliding_window_view`` + ``tensordot`` on the dense input;
* ``numba``: shared/PEERS.md's "numba-hand", a loop over the CSR input's entries and the taps
  into a dense result (2-d; when numba is installed).

Every result is checked against ``signal`` first.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m lazysparse.bench.conv", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=_EPILOG)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sparsity", type=float, nargs="+", default=[0.5, 0.8, 0.9, 0.99, 0.999])
    ap.add_argument("--cases", nargs="+", default=["1d", "2d", "3d", "images", "4k"],
                    choices=["1d", "2d", "3d", "images", "4k"])
    ap.add_argument("--data", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    ls.set_num_threads(1)
    cols = ["ls sparse", "ls kept", "ls dense", "signal", "shifted", "numpy", "numba"]
    print(f"convolutions, one thread, medians of {args.repeat} interleaved rounds (ms)")
    print("| case | sparsity | nnz | " + " | ".join(cols) + " | best peer / ls sparse | best peer / ls kept | dense / ls kept |")
    print("|---|---:|---:|" + "---:|" * (len(cols) + 3))
    rows = []
    for name, s, dense, F, notation in cases(args.cases, args.sparsity, _data_dir(args.data)):
        med, bad, nnz = run_case(name, s, dense, F, notation, args.repeat)
        peer = min((med[k] for k in ("signal", "shifted", "numpy", "numba") if k in med), default=float("nan"))
        cells = [f"{med[k]:.3f}" if k in med else ("WRONG" if k in bad else "-") for k in cols]
        r1 = peer / med["ls sparse"] if "ls sparse" in med else float("nan")
        r2 = peer / med["ls kept"] if "ls kept" in med else float("nan")
        r3 = med["ls dense"] / med["ls kept"] if "ls kept" in med and "ls dense" in med else float("nan")
        print(f"| {name} | {s} | {nnz:,} | " + " | ".join(cells) + f" | {r1:.2f} | {r2:.2f} | {r3:.2f} |", flush=True)
        rows.append({"case": name, "sparsity": s, "nnz": nnz, "ms": med, "wrong": bad})
    if args.json:
        import datetime
        meta = {"lazysparse": ls.__version__, "threads": 1, "repeat": args.repeat,
                "date": datetime.datetime.now().isoformat(timespec="seconds")}
        Path(args.json).write_text(json.dumps({"meta": meta, "conv": rows}, indent=1))


if __name__ == "__main__":
    main()
