"""The user-facing ``Array``: either concrete storage or a lazy DAG node. Operators only build nodes
(see ``api/primitives.py``); ``materialize``/``compute`` run the compiler."""
from __future__ import annotations

import math

import os

import numpy as np

from lazysparse.api import operations as _frontend
from lazysparse.api import primitives as build
from lazysparse.api.base import ArrayBase, scalar_when_full
from lazysparse.api.creation import ForeignOperand as _ForeignOperand
from lazysparse.api.sparray import SparrayMethods
from lazysparse.compiler import pipeline as _pipeline
from lazysparse.formats import Storage


def _known(x):
    """The storage of an operand that needs no kernel: a concrete array's, a lazy one's value
    computed already, or the view a relabelling of a concrete array is (``A.T``), made by an
    earlier call (compiler/pipeline.py ``_relabel_view`` keeps it in the source's stats); else
    None. ``A.T @ x`` in a loop then takes the bound plan straight away, as ``A @ x`` does."""
    st = x._storage
    if st is not None:
        return st
    n = x._node
    if n.result is not None:
        return n.result
    if len(n.children) == 1:
        src = n.children[0]._storage
        if src is not None and src.stats is not None:
            view = src.stats.get(("view", n.stmt, n.format))
            if view is not None:
                n.result = view
                return view
    return None


class Array(ArrayBase, SparrayMethods, user_facing=True):
    """A lazysparse array. Create one with ``ls.asarray``; operators on it are lazy.

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.eye(3)) * 2
    >>> A.is_lazy
    True
    >>> float(A.todense()[1, 1])
    2.0
    """

    __slots__ = ()
    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        """``ls.Array(obj, dtype=..., copy=...)`` is ``ls.asarray(obj, ...)`` (scipy code makes
        copies as ``type(A)(A, copy=True)``); with no arguments, a blank object for pickle."""
        if not args and not kwargs:
            return object.__new__(cls)
        from lazysparse.api.creation import asarray
        return asarray(*args, **kwargs)

    def __init__(self, *args, **kwargs):
        pass  # (__new__ made it)

    def __round__(self, ndigits=0):
        """``round(A, n)``: NumPy's ``round`` of every value (lazy)."""
        from lazysparse.api.ufuncs import round as round_
        return round_(self, ndigits)

    # -- attributes --------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # (exact; np.prod cost microseconds a call: A.mean())

    @property
    def is_lazy(self) -> bool:
        return self._storage is None and (self._node is None or self._node.result is None)

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def fill_value(self):
        return np.zeros((), dtype=self.dtype)[()]

    @property
    def format(self):
        if self._storage is not None:
            return self._storage.format
        if self._node.result is not None:
            return self._node.result.format
        from lazysparse.compiler.plan.format_inference import infer_node_format
        return infer_node_format(self._node)

    @property
    def nnz(self) -> int:
        return self.storage.nnz

    @property
    def nnz_bound(self) -> int:
        """At most this many nonzeros, without computing a lazy array (its pattern's points over
        its operands' entries); a concrete array's stored entries.

        >>> import numpy as np, scipy.sparse as sp, lazysparse as ls
        >>> A = ls.asarray(sp.eye(4, format="csr"))
        >>> (A * ls.asarray(np.ones(4))).nnz_bound, (A + 1.0).nnz_bound
        (4, 16)
        """
        if self._storage is not None:
            return self._storage.nnz
        if self._node.result is not None:
            return self._node.result.nnz
        from lazysparse.compiler.plan.format_inference import nnz_bounds
        return nnz_bounds([self._node])[id(self._node)]

    @property
    def storage(self) -> Storage:
        """The concrete storage (materializes a lazy array). Its buffers are the array's own
        (or the caller's, wrapped by ``asarray`` without a copy): read them, never write them;
        ``todense``/``to_scipy`` hand out read-only views of them."""
        if self._storage is not None:
            return self._storage
        if self._node.result is None:
            _pipeline.compute_nodes([self._node])
        return self._node.result

    # -- running -----------------------------------------------------------------------------
    def materialize(self, *, format=None, device=None, fusion="auto", schedule=None) -> "Array":
        """Compute this array; returns a concrete ``Array`` (this one's value is kept).

        >>> import numpy as np, lazysparse as ls
        >>> x = (ls.asarray(np.ones(3)) + 1).materialize()
        >>> x.is_lazy, x.todense().tolist()
        (False, [2.0, 2.0, 2.0])
        """
        if fusion != "auto" or device is not None or schedule is not None:
            _pipeline.check_options("materialize", fusion=fusion, device=device, schedule=schedule)
        node = self._node
        if format is not None:
            # a bad or unassemblable format is reported here, before anything runs
            format = _frontend.result_format(format, self.ndim, "materialize")
        if node is None:
            st = self._storage
        elif node.result is not None:
            st = node.result
        elif format is not None and node.format is None:
            # compute straight into the requested format (a dense result that would not fit in
            # memory is never formed); the node keeps that value, as API.md asks
            from lazysparse.ir.dag import Node
            fmt = format
            tmp = Node(node.stmt, node.children, node.shape, node.dtype, fmt)
            _pipeline.compute_nodes([tmp], fusion=fusion, schedule=schedule)
            node.result = tmp.result
            return Array._from_storage(tmp.result)
        else:
            ex = _pipeline
            ch = node.children
            a, b = (_known(ch[0]), _known(ch[1])) if len(ch) == 2 else (None, None)
            if len(ch) == 1 and schedule is None and ch[0]._storage is not None:
                # one operation on one concrete operand (A.sum(), A.max(axis=1), abs(A)): the
                # same inline lookup as below, keyed as execute keys one storage
                a = ch[0]._storage
                st = None
                if a.spec is not None:
                    bound = ex._BOUND.get((id(node.stmt), id(a.spec), node.format))
                    # (on several threads, a skewed operand's rows may run in nonzero tiles
                    # instead: compiler/plan/skew.py)
                    nt = _THREADS._num_threads
                    if bound is not None and (nt < 2 or _SKEW.skewed(node.stmt, (a,), nt) is None):
                        st = bound([a], node.shape, "materialize")
                if st is None:
                    ex.compute_nodes([node], fusion=fusion)
                    st = node.result
                node.result = st
            elif a is not None and b is not None and schedule is None:
                # one binary operation on concrete operands (A @ x in a loop): straight to its
                # bound plan (execute's lookup, inline), else to execute. Every Python frame
                # counts here: after a kernel that swept the cache, each one costs microseconds
                # (docs/design.md, "Warm path")
                sts = [a, b]
                st = None
                if a.spec is not None and b.spec is not None:
                    bound = ex._BOUND.get((id(node.stmt), id(a.spec), id(b.spec), node.format))
                    nt = _THREADS._num_threads
                    if bound is not None and (nt < 2 or _SKEW.skewed(node.stmt, sts, nt) is None):
                        st = bound(sts, node.shape, "materialize")
                if st is None:
                    if fusion == "auto" and ex.may_split(node.stmt):
                        # a factor outside the sum: planned as a DAG (split, then fused); never
                        # bound, so the warm path of every other operation pays nothing for it
                        ex.compute_nodes([node], fusion=fusion)
                        st = node.result
                    else:
                        st = ex._execute_one(node.stmt, sts, node.shape, node.format, False)
                node.result = st
            else:
                ex.compute_nodes([node], fusion=fusion, schedule=schedule)
                st = node.result
        out = object.__new__(Array)  # Array._from_storage, inline (see above)
        out._storage, out._node, out.shape, out.dtype = st, None, st.shape, st.vals.dtype
        if format is not None:
            out = out.asformat(format)
        return out

    # -- conversions -------------------------------------------------------------------------
    def todense(self, order=None, out=None) -> np.ndarray:
        """The values as a dense NumPy array: a read-only view (no buffer of an array is ever
        written; a dense array's buffer is shared, not copied). ``np.array(x)`` or ``.todense().copy()`` gives
        a writable copy. ``order`` ('C' or 'F', as scipy's) asks for a layout (a copy where the
        buffer has another); ``out``: a NumPy array to write the values into, returned."""
        from lazysparse.api.conversion import to_numpy
        if out is not None:
            return _into(self, out, "todense")
        arr = to_numpy(self)
        if order is not None:
            if order not in ("C", "F"):
                raise ValueError(f"todense: order must be 'C' or 'F', got {order!r}")
            arr = np.asarray(arr, order=order)
        return arr

    def toarray(self, order=None, out=None) -> np.ndarray:
        return self.todense(order, out)

    def to_scipy(self, format=None):
        from lazysparse.api.conversion import to_scipy
        return to_scipy(self, format)

    def to_pydata(self):
        from lazysparse.api.conversion import to_pydata
        return to_pydata(self)

    # -- a linear operator (scipy.sparse.linalg.aslinearoperator reads these) ----------------
    def matvec(self, x) -> np.ndarray:
        """``self @ x`` computed now, as a writable NumPy array: the protocol scipy's
        ``aslinearoperator`` reads, so ``scipy.sparse.linalg.cg(A, b)`` takes a lazysparse ``A``
        and its products run in lazysparse's kernels.

        >>> import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as sla, lazysparse as ls
        >>> A = ls.asarray(sp.diags([4.0, 5.0]).tocsr())
        >>> x, info = sla.cg(A, np.ones(2))
        >>> info, np.allclose(x, [0.25, 0.2])
        (0, True)
        """
        from lazysparse.api.operator import apply
        return apply(self, x, False, "matvec")

    def rmatvec(self, x) -> np.ndarray:
        """``self^H @ x`` (the conjugate transpose) computed now, as ``matvec``."""
        from lazysparse.api.operator import apply
        return apply(self, x, True, "rmatvec")

    def matmat(self, X) -> np.ndarray:
        """``self @ X`` for a 2-d ``X``, computed now, as ``matvec``."""
        from lazysparse.api.operator import apply
        return apply(self, X, False, "matmat")

    def rmatmat(self, X) -> np.ndarray:
        """``self^H @ X`` for a 2-d ``X``, computed now, as ``matvec``."""
        from lazysparse.api.operator import apply
        return apply(self, X, True, "rmatmat")

    def asformat(self, format, copy=False) -> "Array":
        """This array in ``format`` (itself when it has it already, unless ``copy``, as scipy's).
        scipy's names of formats lazysparse does not store (bsr, dia, dok, lil) give scipy's
        object, as ``tobsr()`` does, and ``"array"`` a NumPy array, as scipy's ``asformat``."""
        from lazysparse.api.conversion import convert
        if isinstance(format, str) and format in ("bsr", "dia", "dok", "lil"):
            return self.to_scipy().asformat(format, copy=copy)
        if format == "array":
            return self.toarray()
        out = convert(self, format)
        return out.copy() if copy and (out is self or not out.is_lazy and out.storage is self._storage) else out

    def tocsr(self, copy=False):
        return self.asformat("csr", copy)

    def tocsc(self, copy=False):
        return self.asformat("csc", copy)

    def tocoo(self, copy=False):
        return self.asformat("coo", copy)

    def __array__(self, dtype=None, copy=None):
        """NumPy 2's protocol: ``copy=None`` (``np.asarray``) gives a read-only view of a dense
        array's buffer (see ``todense``); ``copy=True`` (``np.array``) a writable copy, which
        NumPy returns as it is; ``copy=False`` raises ``ValueError`` where a copy is needed (a
        sparse array, another dtype)."""
        fmt = self.format
        if not fmt.is_dense and os.environ.get("LAZYSPARSE_AUTO_DENSIFY", "0") != "1":
            # (scipy.sparse converts the operand of ``S @ A``, ``S.multiply(A)``, ``vstack`` and
            # its constructors with np.asarray: this message is what a scipy user meets there)
            raise TypeError(f"np.asarray: this lazysparse array has sparse format {fmt!r}; "
                            "call .todense() to get a dense NumPy array, or .to_scipy() for a scipy "
                            "sparse array (scipy.sparse on the left of an operator converts it with "
                            "np.asarray: write ls.asarray(S) @ A, or S @ A.to_scipy()); "
                            "or set LAZYSPARSE_AUTO_DENSIFY=1")
        if copy is False and not fmt.is_dense:
            raise ValueError(f"np.asarray(copy=False): this lazysparse array has sparse format {fmt!r}; "
                             "its dense values are a new array, never a view")
        arr = self.todense()  # read-only (creation.to_numpy)
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError(f"np.asarray(copy=False): the values are {arr.dtype}; {np.dtype(dtype)} "
                                 "needs a copy")
            return arr.astype(dtype)  # a new, writable array
        return arr.copy() if copy else arr

    # -- scalars -----------------------------------------------------------------------------
    def _scalar(self, kind):
        if self.size != 1:
            if kind is bool:  # (NumPy's: a ValueError for bool, a TypeError for the numbers)
                raise ValueError(f"bool(): the truth value of an array with more than one element "
                                 f"is ambiguous (shape {self.shape}); use a.any() or a.all()")
            raise TypeError(f"{kind.__name__}(): only arrays with one element can be converted to "
                            f"Python scalars (shape {self.shape})")
        return kind(self.todense().reshape(())[()])

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __bool__(self):
        return self._scalar(bool)

    def __complex__(self):
        return self._scalar(complex)

    def __getitem__(self, key):
        """NumPy's basic indexing and one integer or boolean array (lazysparse/api/indexing.py);
        eager, as in scipy: the result is concrete."""
        from lazysparse.api.indexing import getitem
        return getitem(self, key)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self):
        if self.is_lazy:
            from lazysparse.ir.dag import describe
            state = f"lazy {describe(self._node)}"
        else:
            state = f"format={self.format!r}, nnz={self.storage.nnz}"
        return f"<lazysparse.Array shape={self.shape} dtype={self.dtype} {state}>"

    __hash__ = object.__hash__

    # -- lazy operators ----------------------------------------------------------------------
    def __neg__(self): return build.elementwise("negative", self, opname="unary -")
    def __pos__(self): return _frontend.positive(self)
    def __abs__(self): return build.elementwise("absolute", self, opname="abs")
    def __invert__(self): return build.elementwise("invert", self, opname="~")
    def __divmod__(self, o): return self // o, self % o
    def __rdivmod__(self, o): return o // self, o % self  # (o a scalar; NumPy arrays: np.divmod)
    # (the binary operators: ``_binary`` below the class)

    # scipy.sparse's methods of the same names: lazy, as the ufuncs they are (each has f(0) = 0,
    # so a sparse operand's result keeps its pattern, as scipy's apply to stored values)
    def arcsin(self): return build.elementwise("arcsin", self, opname="arcsin")
    def arcsinh(self): return build.elementwise("arcsinh", self, opname="arcsinh")
    def arctan(self): return build.elementwise("arctan", self, opname="arctan")
    def arctanh(self): return build.elementwise("arctanh", self, opname="arctanh")
    def ceil(self): return build.elementwise("ceil", self, opname="ceil")
    def deg2rad(self): return build.elementwise("deg2rad", self, opname="deg2rad")
    def expm1(self): return build.elementwise("expm1", self, opname="expm1")
    def floor(self): return build.elementwise("floor", self, opname="floor")
    def log1p(self): return build.elementwise("log1p", self, opname="log1p")
    def rad2deg(self): return build.elementwise("rad2deg", self, opname="rad2deg")
    def rint(self): return build.elementwise("rint", self, opname="rint")
    def sign(self): return build.elementwise("sign", self, opname="sign")
    def sin(self): return build.elementwise("sin", self, opname="sin")
    def sinh(self): return build.elementwise("sinh", self, opname="sinh")
    def sqrt(self): return build.elementwise("sqrt", self, opname="sqrt")
    def tan(self): return build.elementwise("tan", self, opname="tan")
    def tanh(self): return build.elementwise("tanh", self, opname="tanh")
    def trunc(self): return build.elementwise("trunc", self, opname="trunc")
    def conjugate(self): return build.elementwise("conjugate", self, opname="conjugate")

    @property
    def real(self) -> "Array":
        """The real part (lazy; NumPy's ``.real``: a real array is its own real part)."""
        return build.elementwise("real", self, opname="real")

    @property
    def imag(self) -> "Array":
        """The imaginary part (lazy; zero, with nothing stored, for a real sparse array)."""
        return build.elementwise("imag", self, opname="imag")
    conj = conjugate
    def maximum(self, o): return build.elementwise("maximum", self, o, opname="maximum")
    def minimum(self, o): return build.elementwise("minimum", self, o, opname="minimum")

    def power(self, n):
        """scipy's ``A.power(n)``: each stored value to the power ``n``. For ``n > 0`` that is
        ``A ** n`` (an implicit zero stays zero); scipy's ``n <= 0`` applies to stored values
        only, leaving implicit zeros at zero, which ``**`` does not: not offered."""
        import numbers
        if isinstance(n, bool) or not isinstance(n, numbers.Real) or not n > 0:
            raise ValueError(f"power: the exponent must be a positive real number, got {n!r} "
                             f"(A ** n computes every element, implicit zeros included)")
        return self ** n

    def conj(self): return self.conjugate()

    def copy(self) -> "Array":
        """A concrete copy that shares no buffer with this array (computes a lazy one)."""
        from lazysparse.api.creation import asarray
        return asarray(self, copy=True)

    def diagonal(self, k=0) -> "Array":
        """The ``k``-th diagonal as a dense vector (scipy's ``diagonal``; api/indexing.py)."""
        from lazysparse.api.indexing import diagonal
        return diagonal(self, k)

    def reshape(self, *shape, order="C", copy=False) -> "Array":
        """NumPy's and scipy's ``reshape`` (eager; api/indexing.py); the same shape gives this
        array unless ``copy``, as scipy's."""
        from lazysparse.api.indexing import reshape
        return reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape,
                       order, same=None if copy else self)

    def __matmul__(self, o):
        if type(o) is Array:
            # operands of shapes and dtypes checked before: the node at once (frontend.matmul)
            hit = _frontend._MATMUL.get((self.shape, o.shape, self.dtype, o.dtype))
            if hit is not None:
                # Node(...) and Array._from_node, inline: right after a kernel has swept the
                # cache each Python frame costs microseconds (docs/design.md, "Warm path")
                node = object.__new__(_Node)
                node.stmt, node.children, node.shape, node.dtype, node.format, node.result = \
                    hit[0], (self, o), hit[1], hit[2], hit[3], None
                a = object.__new__(Array)
                a._storage, a._node, a.shape, a.dtype = None, node, node.shape, node.dtype
                return a
        try:
            return _frontend.matmul(self, o)
        except _ForeignOperand:
            return NotImplemented

    def __rmatmul__(self, o):
        try:
            return _frontend.matmul(o, self)
        except _ForeignOperand:
            return NotImplemented

    def multiply(self, o): return self.__mul__(o)

    def dot(self, o):
        from lazysparse.api.operations import dot
        return dot(self, o)

    @property
    def T(self):
        return self.transpose()

    def transpose(self, *axes, **kw):
        if kw:  # (scipy's keyword: ``transpose(axes=(1, 0))``)
            if axes or set(kw) != {"axes"}:
                raise TypeError(f"transpose: unexpected arguments {sorted(kw)}; give the axes "
                                "as arguments or as axes=")
            axes = (kw["axes"],)
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            return build.relabel(self, tuple(reversed(range(self.ndim))))
        return _frontend.transpose(self, tuple(axes))  # checks the axes (integers, a permutation)

    def astype(self, dtype, casting="unsafe", copy=True):
        """The values cast to ``dtype`` (lazy), as NumPy's and scipy's ``astype``; the same dtype
        gives this array when ``copy`` is False."""
        if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(f"astype: cannot cast {self.dtype} to {np.dtype(dtype)} under "
                            f"casting={casting!r}")
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        from lazysparse.api.operations import astype
        return astype(self, dtype)

    @scalar_when_full
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """NumPy's and scipy's ``sum`` (lazy; with ``out``, computed into it)."""
        if dtype is not None:
            dtype = _frontend.reduce_dtype(dtype, "sum")
        return _into(build.reduction(self, axis, "sum", keepdims, dtype), out, "sum")

    @scalar_when_full
    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        if dtype is not None:
            dtype = _frontend.reduce_dtype(dtype, "prod")
        return _into(build.reduction(self, axis, "prod", keepdims, dtype), out, "prod")

    @scalar_when_full
    def max(self, axis=None, out=None, keepdims=False, *, explicit=False):
        """NumPy's and scipy's ``max`` over every element (``explicit=True``, scipy's stored
        entries only, is not offered)."""
        _implicit(explicit, "max")
        return _into(build.reduction(self, axis, "max", keepdims), out, "max")

    @scalar_when_full
    def min(self, axis=None, out=None, keepdims=False, *, explicit=False):
        _implicit(explicit, "min")
        return _into(build.reduction(self, axis, "min", keepdims), out, "min")

    @scalar_when_full
    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        from lazysparse.api.operations import mean
        return _into(mean(self, axis, keepdims, dtype), out, "mean", "unsafe")

    def clip(self, min=None, max=None):
        """Lazy ``numpy.clip`` (``frontend.clip``)."""
        from lazysparse.api.operations import clip
        return clip(self, min, max)

    @scalar_when_full
    def any(self, axis=None, keepdims=False):
        from lazysparse.api.logic import any
        return any(self, axis, keepdims)

    @scalar_when_full
    def all(self, axis=None, keepdims=False):
        from lazysparse.api.logic import all
        return all(self, axis, keepdims)

    # -- statistics (lazysparse/api/statistics.py) -----------------------------------------------
    @scalar_when_full
    def var(self, axis=None, dtype=None, ddof=0, keepdims=False):
        from lazysparse.api.statistics import var
        return var(self, axis, dtype, ddof, keepdims)

    @scalar_when_full
    def std(self, axis=None, dtype=None, ddof=0, keepdims=False):
        from lazysparse.api.statistics import std
        return std(self, axis, dtype, ddof, keepdims)

    @scalar_when_full
    def argmax(self, axis=None, out=None, *, keepdims=False, explicit=False):
        """scipy's/NumPy's ``argmax`` (eager: ``statistics.argmax``); ``explicit=True`` (scipy's
        stored-entries-only variant) is not offered."""
        from lazysparse.api.statistics import arg_method
        return arg_method(self, axis, out, keepdims, explicit, "argmax")

    @scalar_when_full
    def argmin(self, axis=None, out=None, *, keepdims=False, explicit=False):
        from lazysparse.api.statistics import arg_method
        return arg_method(self, axis, out, keepdims, explicit, "argmin")

    @scalar_when_full
    def nanmax(self, axis=None, out=None, *, keepdims=False, explicit=False):
        from lazysparse.api.statistics import arg_method
        return arg_method(self, axis, out, keepdims, explicit, "nanmax")

    @scalar_when_full
    def nanmin(self, axis=None, out=None, *, keepdims=False, explicit=False):
        from lazysparse.api.statistics import arg_method
        return arg_method(self, axis, out, keepdims, explicit, "nanmin")

    @scalar_when_full
    def ptp(self, axis=None, keepdims=False):
        from lazysparse.api.statistics import ptp
        return ptp(self, axis, keepdims)

    amax = max  # (pydata/sparse's names)
    amin = min

    # -- NumPy/pydata methods of other modules (api/ufuncs.py, api/shaping.py) ------------------------
    def round(self, decimals=0):
        from lazysparse.api.ufuncs import round
        return round(self, decimals)

    round_ = round  # (pydata/sparse's older name)

    def isnan(self):
        from lazysparse.api.ufuncs import isnan
        return isnan(self)

    def isinf(self):
        from lazysparse.api.ufuncs import isinf
        return isinf(self)

    def squeeze(self, axis=None):
        from lazysparse.api.shaping import squeeze
        return squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        from lazysparse.api.shaping import swapaxes
        return swapaxes(self, axis1, axis2)

    def flatten(self, order="C"):
        from lazysparse.api.shaping import flatten
        return flatten(self, order)

    def ravel(self, order="C"):
        from lazysparse.api.shaping import ravel
        return ravel(self, order)

    def repeat(self, repeats, axis=None):
        from lazysparse.api.shaping import repeat
        return repeat(self, repeats, axis)

    def broadcast_to(self, shape):
        from lazysparse.api.shaping import broadcast_to
        return broadcast_to(self, shape)

    @property
    def mT(self):
        from lazysparse.api.shaping import matrix_transpose
        return matrix_transpose(self)

    # -- NumPy protocols (NEP-18, NEP-13) ----------------------------------------------------
    def __array_function__(self, func, types, args, kwargs):
        from lazysparse.api.protocols import array_function
        return array_function(func, types, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from lazysparse.api.protocols import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)


def _binary(op, opname, checked, reflected):
    """A binary operator method. An operand that is no array, array-like or number gets
    NotImplemented, so that Python asks its reflected method (scipy's and NumPy's protocol);
    ``checked``: NumPy's result dtype may be one no kernel stores (``bool ** bool`` is int8), so
    it is checked when the line is written."""
    elementwise, foreign = build.elementwise, _ForeignOperand

    def method(self, o):
        try:
            out = elementwise(op, o, self, opname=opname) if reflected else \
                elementwise(op, self, o, opname=opname)
        except foreign:
            return NotImplemented
        return _frontend.checked(out, opname) if checked else out
    method.__name__ = f"__{'r' if reflected else ''}{_DUNDER[op]}__"
    return method


_DUNDER = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv", "power": "pow",
           "floor_divide": "floordiv", "remainder": "mod", "left_shift": "lshift",
           "right_shift": "rshift", "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
           "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
           "equal": "eq", "not_equal": "ne"}
for _op, _name, _checked, _both in (
        ("add", "+", False, True), ("subtract", "-", False, True), ("multiply", "*", False, True),
        ("divide", "/", False, True), ("power", "**", True, True), ("floor_divide", "//", True, True),
        ("remainder", "%", True, True), ("left_shift", "<<", True, True),
        ("right_shift", ">>", True, True), ("bitwise_and", "&", False, True),
        ("bitwise_or", "|", False, True), ("bitwise_xor", "^", False, True),
        ("less", "<", False, False), ("less_equal", "<=", False, False), ("greater", ">", False, False),
        ("greater_equal", ">=", False, False), ("equal", "==", False, False),
        ("not_equal", "!=", False, False)):
    setattr(Array, f"__{_DUNDER[_op]}__", _binary(_op, _name, _checked, False))
    if _both:
        setattr(Array, f"__r{_DUNDER[_op]}__", _binary(_op, _name, _checked, True))
Array.__hash__ = None  # (an array defines ==, as NumPy's: unhashable)


from lazysparse.compiler.plan import skew as _SKEW  # noqa: E402
from lazysparse.runtime import threads as _THREADS  # noqa: E402
from lazysparse.ir.dag import Node as _Node  # noqa: E402


def _into(x, out, name, casting="same_kind"):
    """``x``, or (NumPy's ``out=``) ``x`` computed and copied into the NumPy array ``out``
    (``casting``: NumPy's for the method; its ``mean`` divides into ``out`` unsafely)."""
    if out is None:
        return x
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name}: out must be a NumPy array, got {type(out).__name__}")
    from lazysparse.api.conversion import write_out
    return write_out(x, out, name, casting)


def _implicit(explicit, name):
    if explicit:
        raise TypeError(f"{name}: explicit=True (only stored entries) is not supported")


def compute(*arrays, fusion="auto", schedule=None):
    """Materialize several arrays in one plan; returns a tuple of concrete arrays.

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.arange(4.0).reshape(2, 2))
    >>> s, t = ls.compute(A.sum(), (A * 2).sum(axis=0))
    >>> float(s), t.todense().tolist()
    (6.0, [4.0, 8.0])
    """
    _pipeline.check_options("compute", fusion=fusion, schedule=schedule)
    nodes = [a._node for a in arrays if isinstance(a, Array) and a._node is not None]
    _pipeline.compute_nodes(nodes, fusion=fusion, schedule=schedule)
    out = []
    for a in arrays:
        out.append(Array._from_storage(a.storage) if isinstance(a, Array) else a)
    return tuple(out)
