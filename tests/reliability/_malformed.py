"""Malformed inputs, one per defect, for ``ls.asarray`` (validation at the boundary).

Shared by ``test_validation.py`` (in process) and ``_fenced_run.py`` (a subprocess): the entries in
``RISKY`` are containers that scipy or pydata convert with unchecked native loops. Were lazysparse's
checks before those conversions lost, they would crash the interpreter, so they only ever run in
the subprocess. Each entry: (name, constructor, exception type, regex the message must match
after ``asarray: ``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import sparse as pydata


def csr(**broken):
    """A valid 3 x 4 CSR (scipy), then its attributes replaced, bypassing scipy's own checks."""
    m = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]]))
    for k, v in broken.items():
        setattr(m, k, np.asarray(v) if not isinstance(v, np.ndarray) else v)
    return m


def csc(**broken):
    m = sp.csc_array(np.array([[1.0, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 4]]))
    for k, v in broken.items():
        setattr(m, k, np.asarray(v))
    return m


def coo(coords=None, data=None, shape=(3, 4)):
    m = sp.coo_array(np.arange(np.prod(shape), dtype=float).reshape(shape) % 3 == 1).astype(float)
    if coords is not None:
        m.coords = tuple(np.asarray(c) for c in coords)
    if data is not None:
        m.data = np.asarray(data)
    return m


def shaped(m, shape):
    m._shape = shape
    return m


def pycoo(coords=None, data=None):
    c = pydata.COO.from_numpy(np.eye(3))
    if coords is not None:
        c.coords = np.asarray(coords)
    if data is not None:
        c.data = np.asarray(data)
    return c


def gcxs(ndim=2, axes=(0,), **broken):
    g = pydata.GCXS.from_numpy(np.arange(1.0, 9.0).reshape((2, 4) if ndim == 2 else (2, 2, 2)),
                               compressed_axes=axes)
    for k, v in broken.items():
        setattr(g, k, np.asarray(v))
    return g


def bsr(**broken):
    b = sp.bsr_array(np.kron(np.eye(2), np.ones((2, 2))), blocksize=(2, 2))
    for k, v in broken.items():
        setattr(b, k, np.asarray(v))
    return b


def lil(rows=None, data=None):
    m = sp.lil_array(np.eye(3))
    if rows is not None:
        m.rows = np.array(rows + [[]], dtype=object)[:-1]
    if data is not None:
        m.data = np.array(data + [[]], dtype=object)[:-1]
    return m


def dia(**broken):
    d = sp.dia_array(np.eye(4))
    for k, v in broken.items():
        setattr(d, k, np.asarray(v))
    return d


I32 = lambda *v: np.array(v, np.int32)  # noqa: E731

CATALOGUE = [
    # CSR / CSC
    ("csr indptr decreasing", lambda: csr(indptr=I32(0, 2, 1, 4)), ValueError,
     r"invalid CSR input: indptr is decreasing: indptr\[2\]=1 < indptr\[1\]=2"),
    ("csr indptr[0] != 0", lambda: csr(indptr=I32(1, 2, 2, 4)), ValueError, r"indptr\[0\]=1 but must be 0"),
    ("csr indptr[-1] != nnz", lambda: csr(indptr=I32(0, 2, 2, 3)), ValueError,
     r"indptr\[-1\]=3 does not match len\(indices\)=4"),
    ("csr indptr too long", lambda: csr(indptr=I32(0, 2, 2, 4, 4)), ValueError,
     r"indptr has length 5 but expected 4"),
    ("csr indptr empty", lambda: csr(indptr=I32()), ValueError, r"indptr has length 0"),
    ("csr index negative", lambda: csr(indices=I32(0, -1, 1, 3)), ValueError,
     r"indices\[1\]=-1 is out of range for 4 columns"),
    ("csr index too large", lambda: csr(indices=I32(0, 2, 1, 4)), ValueError,
     r"indices\[3\]=4 is out of range for 4 columns"),
    ("csr index int64 max", lambda: csr(indices=np.array([0, 2, 1, 2**63 - 1], np.int64)), ValueError,
     r"indices\[3\]=9223372036854775807 is out of range"),
    ("csr index uint64 wraps", lambda: csr(indices=np.array([0, 2, 1, 2**64 - 1], np.uint64)), ValueError,
     r"indices\[3\]=-1 is out of range"),
    ("csc index too large", lambda: csc(indices=I32(0, 3, 0, 2)), ValueError,
     r"invalid CSC input: indices\[1\]=3 is out of range for 3 rows"),
    ("csr data short", lambda: csr(data=np.ones(3)), ValueError, r"data has length 3 but expected 4"),
    ("csr data long", lambda: csr(data=np.ones(5)), ValueError, r"data has length 5 but expected 4"),
    ("csr data 2-d", lambda: csr(data=np.ones((4, 1))), ValueError, r"data must be a 1-d array"),
    ("csr float indices", lambda: csr(indices=np.array([0.0, 2, 1, 3])), TypeError,
     r"index arrays must be integers, got dtype float64"),
    ("csr float indptr", lambda: csr(indptr=np.array([0.0, 2, 2, 4])), TypeError, r"must be integers"),
    ("csr bool indices", lambda: csr(indices=np.array([False, True, True, True])), TypeError,
     r"must be integers, got dtype bool"),
    ("csr 2-d indices", lambda: csr(indices=I32(0, 2, 1, 3).reshape(2, 2)), ValueError,
     r"indices must be a 1-d array, got 2-d"),
    ("csr 0-d indptr", lambda: csr(indptr=np.array(0)), ValueError, r"indptr must be a 1-d array, got 0-d"),
    ("csr object data", lambda: csr(data=np.array([1, "a", None, 2], dtype=object)), TypeError,
     r"unsupported dtype object"),
    ("csr string data", lambda: csr(data=np.array(["a", "b", "c", "d"])), TypeError, r"unsupported dtype <U1"),
    ("csr negative shape", lambda: shaped(csr(), (3, -4)), ValueError, r"negative dimension"),
    ("csr shape smaller than indices", lambda: shaped(csr(), (3, 2)), ValueError,
     r"indices\[1\]=2 is out of range for 2 columns"),
    ("csr shape beyond int64", lambda: shaped(csr(), (3, 2**64)), ValueError, r"dimension beyond int64"),
    ("csr 3-d shape", lambda: shaped(csr(), (3, 4, 1)), ValueError, r"invalid CSR input: shape \(3, 4, 1\) has 3 dimensions"),
    ("csr shape with more rows", lambda: shaped(csr(), (4, 4)), ValueError, r"indptr has length 4 but expected 5"),
    # COO (scipy, 2-d and n-d)
    ("coo row too large", lambda: coo(coords=(I32(0, 1, 3, 2), I32(1, 0, 3, 2))), ValueError,
     r"invalid COO input: coords\[0\]\[2\]=3 is out of range for 3 rows"),
    ("coo negative col", lambda: coo(coords=(I32(0, 1, 2, 2), I32(1, -1, 3, 2))), ValueError,
     r"coords\[1\]\[1\]=-1 is out of range for 4 columns"),
    ("coo coords lengths differ", lambda: coo(coords=(I32(0, 1, 2), I32(1, 0, 3, 2))), ValueError,
     r"coords\[\d\]"),
    ("coo data short", lambda: coo(data=np.ones(2)), ValueError, r"coords\[0\]"),
    ("coo float coords", lambda: coo(coords=(np.array([0.0, 1, 2, 2]), I32(1, 0, 3, 2))), TypeError,
     r"must be integers"),
    ("coo 3-d axis 2", lambda: coo(coords=(I32(0, 1), I32(1, 0), I32(0, 5)), data=np.ones(2), shape=(2, 2, 2)),
     ValueError, r"coords\[2\]\[1\]=5 is out of range for axis 2 of size 2"),
    ("coo 3-d missing coords", lambda: coo(coords=(I32(0, 1), I32(1, 0)), data=np.ones(2), shape=(2, 2, 2)),
     ValueError, r"invalid COO input: shape \(2, 2, 2\) has 3 dimensions but there are 2 coordinate arrays"),
    # pydata COO / GCXS
    ("pydata coo row too large", lambda: pycoo(coords=[[0, 1, 7], [0, 1, 2]]), ValueError,
     r"coords\[0\]\[2\]=7 is out of range for 3 rows"),
    ("pydata coo negative", lambda: pycoo(coords=[[0, 1, 2], [0, -1, 2]]), ValueError,
     r"coords\[1\]\[1\]=-1 is out of range"),
    ("pydata coo data short", lambda: pycoo(data=np.ones(2)), ValueError, r"does not match len\(coords\[0\]\)"),
    ("pydata coo coords 1-d", lambda: pycoo(coords=[0, 1, 2]), ValueError, r"coords has shape \(3,\)"),
    ("pydata fill value", lambda: pydata.COO.from_numpy(np.eye(2), fill_value=1.0), ValueError, r"fill_value"),
    ("gcxs csr index", lambda: gcxs(indices=np.array([0, 1, 2, 9, 0, 1, 2, 3])), ValueError,
     r"invalid CSR input: indices\[3\]=9 is out of range for 4 columns"),
    ("gcxs csc indptr", lambda: gcxs(axes=(1,), indptr=np.array([0, 2, 1, 6, 8])), ValueError,
     r"invalid CSC input: indptr is decreasing"),
    ("gcxs 3-d indptr", lambda: gcxs(3, indptr=np.array([0, 10**8, 8])), ValueError,
     r"invalid GCXS input: indptr is decreasing"),
    ("gcxs 3-d indptr end", lambda: gcxs(3, indptr=np.array([0, 4, 10**6])), ValueError,
     r"invalid GCXS input: indptr\[-1\]=1000000 does not match len\(indices\)=8"),
    ("gcxs 3-d index", lambda: gcxs(3, indices=np.array([0, 1, 2, 3, 0, 1, 2, -5])), ValueError,
     r"invalid GCXS input: indices\[7\]=-5 is out of range for 4 flattened columns"),
    # scipy formats that scipy converts with unchecked native loops
    ("bsr indptr huge", lambda: bsr(indptr=I32(0, 1, 10**8)), ValueError,
     r"invalid BSR input: indptr\[-1\]=100000000 does not match len\(indices\)=2"),
    ("bsr indptr negative", lambda: bsr(indptr=I32(0, -10**8, 2)), ValueError, r"invalid BSR input: indptr is decreasing"),
    ("bsr index", lambda: bsr(indices=I32(0, 10**9)), ValueError,
     r"invalid BSR input: indices\[1\]=1000000000 is out of range for 2 block columns"),
    ("bsr data short", lambda: bsr(data=np.ones((1, 2, 2))), ValueError, r"data holds 1 entries but indices has 2"),
    ("bsr blocks", lambda: bsr(data=np.ones((2, 3, 3))), ValueError, r"blocks of shape \(3, 3\) do not tile"),
    ("lil rows short", lambda: lil(rows=[[0]]), ValueError, r"invalid LIL input: rows and data must hold one list per row"),
    ("lil lengths", lambda: lil(rows=[[0], [1], [2]], data=[[1.0, 2.0], [1.0], [1.0]]), ValueError,
     r"row 0 has 1 column indices but 2 values"),
    ("lil index overflow", lambda: lil(rows=[[10**12], [1], [2]]), ValueError, r"invalid LIL input"),
    ("lil index range", lambda: lil(rows=[[7], [1], [2]]), ValueError, r"indices\[0\]=7 is out of range for 3 columns"),
    ("dia offsets", lambda: dia(offsets=np.array([0, 1, 2])), ValueError, r"invalid DIA input: 3 offsets for 1 diagonals"),
    ("dia data 1-d", lambda: dia(data=np.ones(4)), ValueError, r"invalid DIA input: data must be a 2-d array"),
    ("dia float offsets", lambda: dia(offsets=np.array([0.5])), ValueError, r"offsets must be a 1-d integer array"),
    # not arrays at all
    ("ragged lists", lambda: [[1.0, 2.0], [3.0]], ValueError, r"cannot make an array from list"),
    ("strings", lambda: "abc", TypeError, r"cannot make an array from str"),
    ("object array", lambda: np.array([object()]), TypeError, r"unsupported dtype object"),
]

# scipy BSR/LIL/DIA and n-d pydata GCXS reach their library's own (unchecked) converters
RISKY = {name for name, *_ in CATALOGUE
         if name.split()[0] in ("bsr", "lil", "dia") or (name.startswith("gcxs") and "3-d" in name)}
