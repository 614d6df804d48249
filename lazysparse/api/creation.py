"""Creating concrete arrays (``asarray``, ``random``, ``zeros``, ``ones``, ``eye``) and converting
them to NumPy, scipy.sparse and pydata/sparse. Inputs become ``Storage`` directly, without copies
where the buffers allow; a *format change* is never hand-written here: ``convert`` builds an
identity node and lets the compiler generate it, while ``random``/``eye``/``ones`` build their
requested format from sorted coordinates (``_from_coords``), which is creation, not conversion."""
from __future__ import annotations

import math
import numbers
import operator
import sys

import numpy as np

from lazysparse.api.base import ArrayBase as Array
from lazysparse.formats import Format, Level, Storage, resolve_format
from lazysparse.formats.storage import VALUE_DTYPES
from lazysparse.formats.foreign import check_gcxs, check_scipy
from lazysparse.formats.validate import order_defect, validate
from lazysparse.errors import shown
from lazysparse.runtime import aligned

__all__ = ["asarray", "random", "zeros", "ones", "eye"]

_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)
_I32MAX = np.iinfo(np.int32).max
_I64MAX = np.iinfo(np.int64).max
_VALUE_SET = frozenset(VALUE_DTYPES)
# Relaxed twins of our formats: user input is validated against these (ranges and lengths only),
# then canonicalized when its order is not the one the real format promises.
_LOOSE = Level("compressed", ordered=False, unique=False)
_LOOSE_S = Level("singleton", ordered=False, unique=False)


# -- dtypes --------------------------------------------------------------------------------------
def _value_dtype(dt, name="asarray"):
    """The supported value dtype a NumPy dtype is stored as: the dtype itself (bool, every integer
    width, float32, float64, complex64, complex128) in native byte order, so that integers keep
    NumPy's wrap-around. float16, long double and other kinds (strings, objects, datetimes) raise
    ``TypeError``: a dtype is never widened or narrowed silently.
    """
    dt = np.dtype(dt)
    if dt in _VALUE_SET:
        return dt
    if dt.kind not in "biufc":
        raise TypeError(f"{name}: unsupported dtype {dt}{_DTYPE_HINT.get(dt.kind, '')}; lazysparse "
                        f"stores {', '.join(str(d) for d in VALUE_DTYPES)}")
    if dt.kind == "f" and dt.itemsize == 2:
        raise TypeError(float16_message(name, "the input's dtype"))
    dt = dt.newbyteorder("=")
    for cand in VALUE_DTYPES:
        if np.can_cast(dt, cand, "equiv"):  # (the same dtype in the other byte order)
            return cand
    # long double: storing it as float64 would round every value without saying so
    near = "float64" if dt.kind == "f" else "complex128"
    raise TypeError(f"{name}: the input's dtype is {dt}, which lazysparse does not support (its "
                    f"values would be rounded); convert the values first, e.g. x.astype(np.{near})")


def float16_message(name, operand):
    """The error for a float16 operand of operation ``name``: kernels have no half-precision type,
    and computing it in float32 instead would change both the dtype and the rounding."""
    return (f"{name}: {operand} is float16, which lazysparse does not support; convert the "
            f"values first, e.g. x.astype(np.float32)")


class ForeignOperand(TypeError):
    """An operand that is no array, array-like or number: an operator returns NotImplemented for
    it, so that Python asks the other operand's reflected method (its ``__radd__``, ...)."""


def operand_error(x, opname):
    """The TypeError for an operand of ``opname`` that ``asarray`` refused."""
    if getattr(x, "dtype", None) == np.float16:
        return TypeError(float16_message(opname, f"the dtype of an operand ({type(x).__name__})"))
    arraylike = isinstance(x, (list, tuple)) or any(
        hasattr(x, a) for a in ("__array__", "__array_interface__", "tocsr", "todense"))
    return (TypeError if arraylike else ForeignOperand)(
        f"{opname}: unsupported operand type {type(x).__name__}")


# what to do about a dtype of a kind no kernel stores
_DTYPE_HINT = {"O": " (Python objects: convert the values to a numeric dtype first, e.g. "
                    "np.asarray(x, dtype=np.float64), or x.astype(np.float64) for a scipy.sparse array)",
               "U": " (strings)", "S": " (bytes)", "M": " (datetimes)", "m": " (timedeltas)"}


def _requested_dtype(dtype, name):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: {shown(dtype)} is not a dtype") from None
    if dt not in _VALUE_SET:
        if dt == np.float16:
            raise TypeError(float16_message(name, "the requested dtype"))
        raise TypeError(f"{name}: unsupported dtype {dt}; lazysparse stores "
                        f"{', '.join(str(d) for d in VALUE_DTYPES)}")
    return dt


def _aligned(a):
    # kernels (and the C compiler's vectorizer) may assume naturally aligned elements; a buffer
    # sliced out of raw bytes is copied once here instead
    return a if a.flags.aligned else a.copy()


def _vals(a, name="asarray"):
    """A values array in a supported dtype, contiguous and aligned (no copy when it already is)."""
    a = np.asarray(a)
    return _aligned(np.ascontiguousarray(a, dtype=_value_dtype(a.dtype, name)))


def _index(*arrays):
    """Index arrays sharing one dtype: int32 pairs stay (zero-copy), anything else becomes int64."""
    arrays = [np.asarray(a) for a in arrays]
    dt = _I32 if all(a.dtype == _I32 for a in arrays) else _I64
    out = []
    for a in arrays:
        if a.dtype.kind not in "iu":
            raise TypeError(f"asarray: index arrays must be integers, got dtype {a.dtype}")
        out.append(_aligned(np.ascontiguousarray(a, dtype=dt)) if a.ndim == 1 else a.astype(dt))  # validate reports n-d
    return out


def _fits32(*ns):
    return max((int(n) for n in ns), default=0) <= _I32MAX


# -- canonical coordinates -----------------------------------------------------------------------
def _lex_sorted_unique(coords):
    """True iff the coordinate tuples (one array per level) strictly increase lexicographically."""
    if not coords or len(coords[0]) < 2:
        return True
    ok = np.ones(len(coords[0]) - 1, dtype=bool)
    undecided = ok.copy()
    for c in coords:
        a, b = c[:-1], c[1:]
        ok &= ~(undecided & (b < a))
        undecided &= b == a
    return bool(ok.all() and not undecided.any())


def _linear_key(coords):
    """``coords`` (non-negative, one array per level) as one int64 key of the same order, or
    None when the extents they span do not fit 63 bits."""
    if not coords or not len(coords[0]):
        return None
    spans = [int(c.max()) + 1 for c in coords]
    total = 1
    for n in spans:
        total *= n
    if total >= 2**62:
        return None
    key = coords[0].astype(np.int64)
    for c, n in zip(coords[1:], spans[1:]):
        key *= n
        key += c
    return key


def _canonical(coords, vals):
    """Sort coordinate tuples lexicographically and sum duplicates (new arrays; inputs untouched)."""
    if _lex_sorted_unique(coords):
        return list(coords), vals
    key = _linear_key(coords)
    # one stable sort of a linear key merges the sorted runs that joined or shifted inputs bring
    # (timsort); lexsort sorts every key in full: github-social's hstack 220 -> 40 ms
    o = np.argsort(key, kind="stable") if key is not None else np.lexsort(coords[::-1])
    coords = [c[o] for c in coords]
    vals = vals[o]
    new = np.ones(len(vals), dtype=bool)
    if len(vals):
        new[1:] = np.any([c[1:] != c[:-1] for c in coords], axis=0)
    if not new.all():
        starts = np.flatnonzero(new)
        vals = np.add.reduceat(vals, starts).astype(vals.dtype, copy=False)
        coords = [c[starts] for c in coords]
    return coords, vals


def _coo_storage(shape, coords, data, name, check):
    """Canonical COO storage (one compressed level for 1-d) from user coordinates; ``coords`` in mode order."""
    shape = tuple(int(s) for s in shape)
    nd = len(shape)
    vals = _vals(data, name)
    coords = _index(*coords) if coords else []
    if nd == 0:
        return Storage.from_dense(np.asarray(vals.sum(), dtype=vals.dtype))
    nnz = len(vals) if vals.ndim == 1 else -1
    if nnz >= 0 and coords and coords[0].dtype == _I32 and not _fits32(nnz):
        coords = [c.astype(_I64) for c in coords]
    idt = coords[0].dtype
    pos0 = np.array([0, max(nnz, 0)], dtype=idt)
    loose = Format([_LOOSE] + [_LOOSE_S] * (nd - 1))
    st = Storage(shape, loose, [pos0] + [None] * (nd - 1), coords, vals, idt)
    if check:
        validate(st, name, order=False, label="COO")
    coords, vals = _canonical(coords, vals)
    pos0 = np.array([0, len(vals)], dtype=idt)
    return Storage(shape, resolve_format("coo", nd), [pos0] + [None] * (nd - 1), coords, vals, idt)


def _compressed_storage(shape, indptr, indices, data, fmt_name, name, check):
    """CSR/CSC storage from (indptr, indices, data), zero-copy unless unsorted/duplicated."""
    fmt = resolve_format(fmt_name, 2)
    indptr, indices = _index(indptr, indices)
    vals = _vals(data, name)
    st = Storage(shape, fmt, [None, indptr], [None, indices], vals, indptr.dtype)
    if check:
        validate(st, name, order=False, label=fmt_name.upper())
    if order_defect(st) is None:
        return st
    outer_n = st.level_size(0)
    outer = np.repeat(np.arange(outer_n, dtype=indptr.dtype), np.diff(indptr))
    (outer, indices), vals = _canonical([outer, indices], vals)
    indptr = np.zeros(outer_n + 1, dtype=indptr.dtype)
    np.cumsum(np.bincount(outer, minlength=outer_n), out=indptr[1:])
    return Storage(shape, fmt, [None, indptr], [None, indices], vals, indptr.dtype)


def _from_coords(shape, fmt: Format, coords, vals, presorted=False):
    """Storage of format ``fmt`` from canonical (lexicographic in mode order, unique) coordinates.

    Used by the creation functions to build their requested format directly; positions are tracked
    per entry level by level (dense: ``parent*N + c``; compressed: one position per new prefix).
    ``presorted``: the coordinates (still given in mode order) are lexicographic in ``fmt``'s
    storage order already, so a permuted format needs no sort (api/affine.py builds them so).
    """
    nd = len(shape)
    vals = np.asarray(vals)
    nnz = len(vals)
    if nd and all(lv.unique for lv in fmt.levels) and all(lv.has_pos for lv in fmt.levels[1:]) \
            and (fmt.levels[0].has_pos or nd == 2):
        cs = [np.asarray(coords[m]) for m in fmt.order]
        if fmt.order != tuple(range(nd)) and nnz > 1 and not presorted:
            o = np.lexsort(cs[::-1])
            cs, vals = [c[o] for c in cs], vals[o]
        if fmt.levels[0].has_pos:
            return _all_compressed(shape, fmt, cs, vals)
        # CSR/CSC: the positions are the rows' counts summed, the coordinates as they are
        idt = _I32 if _fits32(nnz, *shape) else _I64
        p = np.zeros(shape[fmt.order[0]] + 1, dtype=idt)
        np.cumsum(np.bincount(cs[0], minlength=shape[fmt.order[0]]), out=p[1:])
        return Storage(shape, fmt, [None, p], [None, cs[1].astype(idt)], np.ascontiguousarray(vals), idt)
    if fmt.is_dense:
        out = np.zeros(shape, dtype=vals.dtype)
        if nd == 0:
            return Storage.from_dense(vals.reshape(()) if nnz else out)
        out[tuple(coords)] = vals
        return Storage.from_dense(out)
    idt = _I32 if _fits32(nnz, *shape) else _I64
    cs = [np.asarray(coords[m], dtype=idt) for m in fmt.order]
    if fmt.order != tuple(range(nd)) and nnz:
        o = np.lexsort(cs[::-1])
        cs = [c[o] for c in cs]
        vals = vals[o]
    posid = np.zeros(nnz, dtype=np.int64)  # each entry's position at the current level
    count = 1
    one_per_entry = False  # positions of the current level are one per entry (after a non-unique level)
    pos, crd = [], []
    for l, lv in enumerate(fmt.levels):
        n, c = shape[fmt.order[l]], cs[l]
        if lv.is_dense:
            posid = posid * n + c
            count *= n
            pos.append(None)
            crd.append(None)
            one_per_entry = False
            continue
        if lv.follows_parent:
            if not one_per_entry:
                raise ValueError(f"format {shown(fmt)}: a singleton level must follow a non-unique level")
            pos.append(None)
            crd.append(c)
            continue
        new = np.ones(nnz, dtype=bool)
        if lv.unique and nnz > 1:
            new[1:] = (posid[1:] != posid[:-1]) | (c[1:] != c[:-1])
        p = np.zeros(count + 1, dtype=idt)
        np.cumsum(np.bincount(posid[new], minlength=count), out=p[1:])
        pos.append(p)
        crd.append(np.ascontiguousarray(c[new]))
        posid = np.cumsum(new) - 1
        count = int(new.sum())
        one_per_entry = not lv.unique
    if count == nnz:
        out = np.ascontiguousarray(vals)
    else:
        out = np.zeros(count, dtype=vals.dtype)
        out[posid] = vals
    return Storage(shape, fmt, pos, crd, out, idt)


def _all_compressed(shape, fmt, cs, vals):
    """``_from_coords`` for formats whose levels are all unique compressed (CSF, DCSR, ...),
    ``cs`` in storage order: a level's entries are where the coordinate prefix changes, its
    positions where the parent's does (no per-entry position arithmetic: 3-20x faster than the
    general loop on a window's million entries)."""
    nnz = len(vals)
    idt = _I32 if _fits32(nnz, *shape) else _I64
    new = np.zeros(nnz, dtype=bool)  # the prefix up to this level changes here
    prev = None
    pos, crd = [], []
    for c in cs:
        if nnz:
            new[0] = True
            if prev is None:
                np.not_equal(c[1:], c[:-1], out=new[1:])
            else:
                new[1:] |= c[1:] != c[:-1]
        at = np.flatnonzero(new)
        # where a parent's entries start: the root's at 0, even with none
        starts = np.flatnonzero(prev[at]) if prev is not None else np.zeros(1, np.int64)
        p = np.empty(len(starts) + 1, dtype=idt)
        p[:-1] = starts
        p[-1] = len(at)
        pos.append(p)
        crd.append(c[at].astype(idt))
        prev = new.copy()
    return Storage(shape, fmt, pos, crd, np.ascontiguousarray(vals), idt)


# -- asarray -------------------------------------------------------------------------------------
def _sparse_module():
    try:
        import sparse
        return sparse
    except ImportError:
        return None


_WARNED = [False]


def _matrix_semantics_warning(name):
    """Once a process: a scipy sparse *matrix* becomes an array with scipy's *array* semantics
    (``sparray``'s, which is what NumPy users and scipy's own migration guide expect)."""
    if _WARNED[0]:
        return
    _WARNED[0] = True
    import warnings
    warnings.warn(f"{name}: a scipy.sparse matrix (spmatrix) becomes a lazysparse array with the "
                  "semantics of scipy's sparse *arrays*: `*` is elementwise (use `@` for the "
                  "matrix product), `**` is elementwise, and sum/mean/max over an axis are 1-d. "
                  "This warning is shown once.", UserWarning, stacklevel=4)


def _storage_of(obj, name, check):
    """Natural storage for ``obj`` (no format change beyond what the input needs)."""
    if isinstance(obj, (np.ndarray, np.generic, float, int, complex)):
        return _dense_storage(obj, name)
    import scipy.sparse as sp
    if sp.issparse(obj):
        _check_scipy_kind(obj, name)
        if isinstance(obj, sp.spmatrix):
            _matrix_semantics_warning(name)
        if obj.ndim == 2 and obj.format in ("csr", "csc"):
            return _compressed_storage(obj.shape, obj.indptr, obj.indices, obj.data, obj.format, name, check)
        if obj.ndim == 1 and obj.format == "csr":
            coords = [np.asarray(obj.indices)]
        else:
            if obj.format not in ("coo", "csr", "csc"):
                if check:
                    check_scipy(obj, name)  # scipy's converters trust the internals
                try:
                    obj = obj.tocsr() if obj.ndim == 2 else obj.tocoo()  # scipy converts its own input
                except OverflowError as e:  # a coordinate beyond scipy's index dtype
                    raise ValueError(f"{name}: invalid {obj.format.upper()} input: {e}") from None
                if obj.format == "csr":
                    return _compressed_storage(obj.shape, obj.indptr, obj.indices, obj.data, "csr", name, check)
            if obj.format in ("csr", "csc"):  # a shape scipy's CSR/CSC cannot have (set behind its back)
                raise ValueError(f"{name}: invalid {obj.format.upper()} input: shape {tuple(obj.shape)} "
                                 f"has {obj.ndim} dimensions")
            coords = list(obj.coords) if hasattr(obj, "coords") else [obj.row, obj.col]
        return _coo_storage(obj.shape, coords, obj.data, name, check)
    sparse = _sparse_module()
    if sparse is not None and isinstance(obj, sparse.SparseArray):
        fill = np.asarray(obj.fill_value)
        if fill.size != 1 or fill.reshape(()).item() != 0:
            raise ValueError(f"{name}: pydata/sparse arrays with fill_value={shown(obj.fill_value)} are not "
                             "supported (lazysparse arrays have fill value 0)")
        if isinstance(obj, sparse.GCXS) and obj.ndim == 2 and tuple(obj.compressed_axes) in ((0,), (1,)):
            kind = "csr" if tuple(obj.compressed_axes) == (0,) else "csc"
            return _compressed_storage(obj.shape, obj.indptr, obj.indices, obj.data, kind, name, check)
        if not isinstance(obj, sparse.COO):
            if check and isinstance(obj, sparse.GCXS):
                check_gcxs(obj, name)  # pydata's GCXS -> COO trusts indptr
            obj = obj.asformat("coo")
        coords = np.asarray(obj.coords)
        if coords.ndim != 2 or coords.shape[0] != obj.ndim:
            raise ValueError(f"{name}: invalid COO input: coords has shape {coords.shape}, "
                             f"expected ({obj.ndim}, nnz)")
        return _coo_storage(obj.shape, list(coords), obj.data, name, check)
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"{name}: cannot make an array from {type(obj).__name__} {shown(obj)}")
    return _dense_storage(obj, name)


# the ranks scipy.sparse gives each format (1.15: 1-d COO, CSR and DOK; n-d COO)
_SCIPY_RANKS = {"csr": (1, 2), "dok": (1, 2), "csc": (2,), "bsr": (2,), "dia": (2,), "lil": (2,)}


def _check_scipy_kind(obj, name):
    """A scipy.sparse input's rank and value dtype, checked before anything reads its arrays:
    scipy's own converters assume them (a BSR whose shape was given three dimensions failed
    with "too many values to unpack"; object values with "no supported conversion")."""
    fmt, shape = obj.format, tuple(obj.shape)
    ranks = _SCIPY_RANKS.get(fmt)
    if ranks is not None and len(shape) not in ranks:
        want = " or ".join(f"{r}-d" for r in ranks)
        raise ValueError(f"{name}: invalid {fmt.upper()} input: shape {shape} has {len(shape)} "
                         f"dimension{'s' * (len(shape) != 1)}; scipy.sparse {fmt.upper()} arrays are {want}")
    if fmt == "coo":
        coords = obj.coords if hasattr(obj, "coords") else (obj.row, obj.col)
        if len(coords) != len(shape):
            raise ValueError(f"{name}: invalid COO input: shape {shape} has {len(shape)} dimensions "
                             f"but there are {len(coords)} coordinate arrays")
    dt = np.dtype(obj.dtype)
    if dt.kind not in "biufc":
        raise TypeError(f"{name}: unsupported dtype {dt} of a scipy.sparse {type(obj).__name__}"
                        f"{_DTYPE_HINT.get(dt.kind, '')}; lazysparse stores "
                        f"{', '.join(str(d) for d in VALUE_DTYPES)}")


def _dense_storage(obj, name):
    try:
        arr = np.asarray(obj)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name}: cannot make an array from {type(obj).__name__}: {e}") from None
    dt = _value_dtype(arr.dtype, name)
    if arr.dtype != dt:
        arr = arr.astype(dt)
    return Storage.from_dense(arr)


def _copy_storage(st):
    cp = lambda a: None if a is None else a.copy(order="K")
    return Storage(st.shape, st.format, [cp(a) for a in st.pos], [cp(a) for a in st.crd],
                   _copy_values(st.vals), st.index_dtype)


def _copy_values(a):
    """A copy of a values array; a C-order array of rows on a 64-byte boundary (runtime/aligned.py:
    rows that kernels gather then start on a cache line; the copy costs more than placing it)."""
    if not a.flags.c_contiguous:
        return a.copy(order="K")
    out = aligned.empty(a.shape, a.dtype, 4096)
    out[...] = a
    return out


def _cast_storage(st, dt):
    vals = st.vals.astype(dt)  # a new values array; index arrays are shared, never written
    return Storage(st.shape, st.format, st.pos, st.crd, vals, st.index_dtype)


def asarray(obj, *, format=None, dtype=None, copy=False, device=None, check=True) -> Array:
    """Make a concrete lazysparse ``Array`` from NumPy, scipy.sparse, pydata/sparse, lists or scalars.

    CSR/CSC/dense buffers are used as they are (no copy) unless ``copy=True`` or a conversion is
    needed; COO input is sorted and its duplicates summed (on a copy). ``check`` validates sparse
    structure in O(nnz).

    >>> import numpy as np, scipy.sparse as sp, lazysparse as ls
    >>> m = sp.csr_array(np.array([[0, 1.5], [2.0, 0]]))
    >>> a = ls.asarray(m)
    >>> a.format, a.nnz, np.shares_memory(a.storage.vals, m.data)
    (ls.csr, 2, True)

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.array([[1.0, 0.0], [0.0, 2.0]]), format="csr")
    >>> (A @ np.ones(2)).todense().tolist()
    [1.0, 2.0]

    CSR/CSC/dense buffers are used without copies (int32 indices included); COO input is
    canonicalized (sorted, duplicates summed) on a copy, since compressed levels are ordered and
    unique.
    """
    if (type(obj) is np.ndarray and obj.dtype in _VALUE_SET and format is None and dtype is None
            and not copy and device is None):
        return Array._from_storage(Storage.from_dense(obj))  # hot path: NumPy operands of expressions
    name = "asarray"
    if device not in (None, "cpu"):
        raise ValueError(f"{name}: device {shown(device)} is not supported (only 'cpu')")
    dt = None if dtype is None else _requested_dtype(dtype, name)
    if isinstance(obj, Array):
        x = obj
        if dt is not None and dt != x.dtype:
            x = x.astype(dt).materialize() if x.is_lazy else Array._from_storage(_cast_storage(x.storage, dt))
    else:
        st = _storage_of(obj, name, check)
        x = Array._from_storage(_cast_storage(st, dt) if dt is not None and dt != st.dtype else st)
    if format is not None:
        # checked here so that a bad format names asarray; the conversion is the array's own
        x = x.asformat(_result_format(format, x.ndim, name))
    if copy:
        x = Array._from_storage(_copy_storage(x.storage))
    return x


# -- creation ------------------------------------------------------------------------------------
def _shape(shape, name):
    if isinstance(shape, (numbers.Integral, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints, got {shown(shape)}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: negative dimensions are not allowed (shape {shape})")
    return checked_shape(shape, name, f"shape {shape} was asked for")


def checked_shape(dims, name, operands, *, elements=False, itemsize=None):
    """``dims`` (exact Python ints, never NumPy's wrapping int64) as a result shape, else a
    ``ValueError`` naming ``name``, ``operands`` (what the shape came from: the inputs' shapes
    and the arguments) and the problem. Shapes, coordinates and loop bounds are int64 in storage
    and in every kernel, so no dimension may pass the int64 maximum (``vstack`` once returned a
    shape past it, and ``pad``'s int64 sum wrapped to a negative one). ``elements``: a dense result (or a
    NumPy view), whose elements must have an int64 linear index; ``itemsize``: one that is
    allocated too, whose bytes must fit the address space (beyond that no memory limit applies:
    the size is not a real request)."""
    shape = tuple(int(d) for d in dims)
    for k, d in enumerate(shape):
        if d > _I64MAX:
            raise ValueError(f"{name}: the result would have shape {shape}, whose axis {k} ({d}) is "
                             f"past the int64 maximum {_I64MAX}; {operands}")
    if elements or itemsize is not None:
        n = math.prod(shape)
        if n > _I64MAX:
            raise ValueError(f"{name}: the dense result of shape {shape} would have {n} elements, more "
                             f"than an int64 index numbers ({_I64MAX}); {operands}")
        if itemsize is not None and n * itemsize > sys.maxsize:
            raise ValueError(f"{name}: the dense result of shape {shape} would take {n * itemsize} bytes, "
                             f"more than the address space holds; {operands}")
    return shape


def _guard_sparse(shape, fmt, nnz, dt, name):
    """A sparse array a creation function stores (``nnz`` entries in ``fmt``), refused with a
    ``ValueError`` before NumPy is asked for it when its arrays could not be addressed at all:
    NumPy's own refusal ("array is too big") named neither the function nor the shape. (The
    memory limit is for dense arrays: a sparse one the memory can hold is made.)"""
    lead, l = 1, 0
    while l < len(fmt.levels) and fmt.levels[l].is_dense:
        lead *= shape[fmt.order[l]]
        l += 1
    positions = lead + 1 if l < len(fmt.levels) else 0  # the first compressed level's
    nbytes = positions * 8 + nnz * (np.dtype(dt).itemsize + 8 * len(shape))
    if nnz > _I64MAX or nbytes > sys.maxsize:
        from lazysparse.runtime.memory import _human
        raise ValueError(f"{name}: an array of shape {shape} in format {fmt!r} would store {nnz} entries "
                         f"({_human(nbytes)} with its positions), more than a 64-bit address space holds")
    return nbytes


class _NamedOOM:
    """NumPy's ``MemoryError`` while a creation function builds its arrays, raised again naming
    the function, the shape and the format (NumPy's names only an array's dtype and length)."""

    def __init__(self, name, shape, fmt, nbytes):
        self.what = (name, shape, fmt, nbytes)

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if kind is not None and issubclass(kind, MemoryError):
            from lazysparse.runtime.memory import _human
            name, shape, fmt, nbytes = self.what
            raise MemoryError(f"{name}: out of memory making an array of shape {shape} in format {fmt!r} "
                              f"(about {_human(nbytes)}): {err}") from None
        return False


def _fill_values(n, dt, rng=None):
    """Nonzero values for created entries: uniform [0, 1) floats, ints in 1..9, True."""
    if rng is None or dt.kind == "b":
        return np.ones(n, dtype=dt)
    if dt.kind in "iu":
        return rng.integers(1, 10, size=n).astype(dt)
    if dt.kind == "c":
        return (rng.random(n) + 1j * rng.random(n)).astype(dt)
    return rng.random(n, dtype=dt)  # float32 drawn directly: rounding float64 could give 1.0


def _sample(rng, size, k):
    """``k`` distinct sorted integers drawn uniformly from ``range(size)``."""
    if k == 0:
        return np.zeros(0, np.int64)
    # Generator.choice without replacement is O(k) when k << size (a hash-set Floyd draw) and a
    # partial shuffle, O(size), otherwise; both beat rejection + np.unique here
    return np.sort(rng.choice(size, size=k, replace=False, shuffle=False))


def random(shape, *, density=0.01, format="csr", dtype="float64", seed=None) -> Array:
    """A random array with exactly ``round(density * size)`` distinct stored coordinates.

    Values are uniform in [0, 1) (integers: 1..9; bool: True). ``seed`` is an int, a
    ``numpy.random.Generator`` or None.

    >>> import lazysparse as ls
    >>> A = ls.random((100, 50), density=0.1, seed=0)
    >>> A.format, A.nnz
    (ls.csr, 500)
    """
    name = "random"
    shape = _shape(shape, name)
    dt = _requested_dtype(dtype, name)
    if not isinstance(density, numbers.Real) or isinstance(density, (bool, np.bool_)):
        raise TypeError(f"{name}: density must be a number in [0, 1], got {shown(density)}")
    if not 0 <= density <= 1:
        raise ValueError(f"{name}: density must be in [0, 1], got {density}")
    fmt = _result_format(format, len(shape), name)
    _guard_dense(shape, dt, fmt, name)
    size = int(np.prod(shape, dtype=object))
    if size > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: shape {shape} has too many elements to sample")
    k = int(round(density * size))
    nbytes = size * dt.itemsize if fmt.is_dense else _guard_sparse(shape, fmt, k, dt, name)
    with _NamedOOM(name, shape, fmt, nbytes):
        rng = np.random.default_rng(seed)
        flat = _sample(rng, size, k)
        coords = np.unravel_index(flat, shape) if shape else ()
        return Array._from_storage(_from_coords(shape, fmt, list(coords), _fill_values(k, dt, rng)))


def zeros(shape, *, format="dense", dtype="float64") -> Array:
    """An all-zero array (sparse formats store nothing).

    >>> import lazysparse as ls
    >>> ls.zeros((2, 3), format="csr").nnz
    0
    """
    return _constant(shape, format, dtype, "zeros", 0)


def ones(shape, *, format="dense", dtype="float64") -> Array:
    """An all-one array; sparse formats store every element.

    >>> import lazysparse as ls
    >>> ls.ones((2, 3), format="csr").nnz
    6
    """
    return _constant(shape, format, dtype, "ones", 1)


def _guard_dense(shape, dt, fmt, name):
    """The memory guard (runtime/memory.py) for a dense array a creation function makes,
    before NumPy allocates it: the same MemoryError, naming the function, as any dense result."""
    if fmt.is_dense:
        from lazysparse.runtime import memory
        checked_shape(shape, name, f"shape {shape} was asked for", itemsize=np.dtype(dt).itemsize)
        nbytes = math.prod(shape) * np.dtype(dt).itemsize
        memory.check_dense(nbytes, shape, "the result", name)


def _constant(shape, format, dtype, name, value):
    """zeros/ones: sparse formats store nothing for 0 and every element for 1."""
    shape = _shape(shape, name)
    dt = _requested_dtype(dtype, name)
    fmt = _result_format(format, len(shape), name)
    _guard_dense(shape, dt, fmt, name)
    if fmt.is_dense:
        return Array._from_storage(Storage.from_dense(np.full(shape, value, dtype=dt)))
    size = 0 if value == 0 else math.prod(shape)  # (exact: np.prod wraps past int64)
    with _NamedOOM(name, shape, fmt, _guard_sparse(shape, fmt, size, dt, name)):
        # (no entries: no unravel_index, which refuses shapes of more than 2**63 elements)
        coords = [np.zeros(0, np.int64)] * len(shape) if not size else \
            np.unravel_index(np.arange(size), shape) if shape else ()
        return Array._from_storage(_from_coords(shape, fmt, list(coords), np.full(size, value, dt)))


def eye(n, m=None, *, k=0, format="csr", dtype="float64") -> Array:
    """Ones on the ``k``-th diagonal of an ``n x m`` array.

    >>> import lazysparse as ls
    >>> ls.eye(3, 4, k=1).to_scipy().toarray()[0].tolist()
    [0.0, 1.0, 0.0, 0.0]
    """
    shape = _shape((n, n if m is None else m), "eye")
    dt = _requested_dtype(dtype, "eye")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"eye: the diagonal offset k must be an integer, got {shown(k)}") from None
    fmt = _result_format(format, 2, "eye")
    _guard_dense(shape, dt, fmt, "eye")
    nnz = max(0, min(shape[0] + min(k, 0), shape[1] - max(k, 0)))  # the diagonal's length
    nbytes = math.prod(shape) * dt.itemsize if fmt.is_dense else _guard_sparse(shape, fmt, nnz, dt, "eye")
    with _NamedOOM("eye", shape, fmt, nbytes):
        i = np.arange(max(0, -k), max(0, min(shape[0], shape[1] - k)), dtype=np.int64)
        return Array._from_storage(_from_coords(shape, fmt, [i, i + k], np.ones(len(i), dt)))


# -- conversions ---------------------------------------------------------------------------------
class UnsupportedFormatError(ValueError, NotImplementedError):
    """A well-formed format the compiler cannot assemble results in yet. A ``ValueError`` because
    it is reported where the user writes the format (not as a failure inside ``compute()``), and a
    ``NotImplementedError`` because it is a missing feature rather than a mistake."""


def result_format(format, ndim, opname):
    """The Format a result of ``ndim`` dimensions is asked to have, checked now: unknown names, a
    wrong number of levels and formats no kernel can assemble raise here, naming ``opname``."""
    from lazysparse.compiler.plan.kernel import _appendable  # the assembler's own rule, so the two cannot drift
    fmt = resolve_format(format, ndim, opname)
    if fmt.is_sparse and not _appendable(fmt):
        raise UnsupportedFormatError(
            f"{opname}: lazysparse cannot assemble results in format {shown(fmt)} yet; use a named format "
            "(csr, csc, coo, dcsr, dcsc, csf, dense) or dense levels followed by unique compressed levels")
    return fmt


def _format(format, ndim, opname):
    # resolved now so that a bad format is a build-time error
    return None if format is None else result_format(format, ndim, opname)


def _result_format(format, ndim, name):
    # every format an Array is given is one the compiler can also produce: a result inferred
    # from an operand's format must never be an unassemblable one (result_format)
    return result_format(format, ndim, name)


def _coords(st):
    """Per-entry coordinates (mode order) of sparse storage, expanded level by level."""
    fmt = st.format
    cs = []
    count = 1
    for l, lv in enumerate(fmt.levels):
        n = st.level_size(l)
        if lv.is_dense:
            cs = [np.repeat(c, n) for c in cs] + [np.tile(np.arange(n, dtype=st.index_dtype), count)]
            count *= n
        elif lv.has_pos:
            rep = np.diff(st.pos[l])
            cs = [np.repeat(c, rep) for c in cs] + [st.crd[l]]
            count = len(st.crd[l])
        else:
            cs.append(st.crd[l])
    out = [None] * len(cs)
    for l, m in enumerate(fmt.order):
        out[m] = cs[l]
    return out
