"""``ls.jit``: a function of arrays traced once per signature and called again without building
its DAG, as JAX's ``jit`` does for a traced function. The first call with a signature (each
argument's format, dtype, shape, index width and nonzero bucket, which arguments are the same
array, the Python values of non-array arguments) runs the function on stand-ins for its array
arguments (new views of their buffers), computes its lazy results as one plan, and keeps that plan's entry with where each
of its operands comes from: an argument, or a constant of the trace (a closed-over array, a
literal). Later calls put the new arguments into those places and run the kernel: no nodes, no
DAG walk, no plan lookup. Where the results were not one plan (a single operation, a DAG cut
into regions), or a 0-d argument's value decides the plan differently, a call runs the function
as written instead: the same results, without the saving."""
from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

import numpy as np

from lazysparse.api.base import TRACING
from lazysparse.array import Array
from lazysparse.compiler import opcount as counting
from lazysparse.compiler import pipeline
from lazysparse.compiler.fused_pipeline import bind, replay
from lazysparse.compiler.plan import promise
from lazysparse.compiler.plan.dag_key import dag_walk, leaf_key
from lazysparse.formats import Storage
from lazysparse.runtime import kernel_cache

MAX_TRACES = 64  # signatures kept per jitted function (a Python scalar argument is one each)
_STATS = {"hits": 0}
_ALL = weakref.WeakSet()  # every jitted function, for ls.clear_cache


class _Trace(NamedTuple):
    """What a traced call keeps: the plan entry (``fused_pipeline.Bound``, or None where the
    function runs as written), the source of each of its operands in ``dag_key`` order
    (``("arg", i)`` or ``("const", storage)``), the results' structure (``tree``) and sources
    (``("root", j)``, an argument or a constant), and the DAG key, under which the roots'
    promised formats are kept (``plan/promise.py``: they depend on the sparse operands' entry
    counts and what the 0-d values decide, so each call looks them up)."""
    bound: Any
    slots: tuple
    tree: Any
    outs: tuple
    key: Any


class jit:
    """``ls.jit(fn)``: ``fn`` (arrays in, a lazysparse array or a tuple or list of them out)
    traced once per signature of its arguments and then called as its compiled plan.

    Arguments may be lazysparse arrays (a lazy one is computed first), NumPy arrays and scalars
    and scipy sparse arrays. Any other argument (a Python number, a flag) is a constant of the
    trace: a new value traces again, so pass a value that changes every call as a NumPy scalar
    or a 0-d array. Arrays that ``fn`` reads without taking them as arguments (closed-over
    ones) are constants of the trace too, as in JAX. The results are concrete arrays.

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.array([[2.0, 0.0], [1.0, 3.0]]))
    >>> step = ls.jit(lambda x, c: (0.5 * (A @ x) + c, (x * x).sum()))
    >>> x = np.ones(2)
    >>> for _ in range(3):
    ...     x, xx = step(x, np.float64(1.0))
    >>> x.todense().tolist(), float(xx)
    ([4.0, 12.25], 51.25)
    """

    def __init__(self, fn, *, fusion="auto"):
        pipeline.check_options("jit", fusion=fusion)
        if not callable(fn):
            raise TypeError(f"jit: expected a function, got {type(fn).__name__}")
        self.fn, self.fusion = fn, fusion
        self._traces = {}
        functools.update_wrapper(self, fn, updated=())
        _ALL.add(self)

    def __call__(self, *args):
        args, key = _signature(args)
        if counting.ON[0]:  # (ls.opcount counts the function's own DAG)
            return _plain(self.fn, args, self.fusion)
        tr = self._traces.get(key)
        if tr is None:
            if len(self._traces) >= MAX_TRACES:
                self._traces.clear()
            tr, out = _trace(self.fn, args, self.fusion)
            self._traces[key] = tr
            return out
        if tr.bound is not None:
            stores = [args[s[1]]._storage if s[0] == "arg" else s[1] for s in tr.slots]
            formats = promise.lookup(tr.key, stores)
            got = replay(tr.bound, stores, "jit") if formats is not None else None
            if got is not None:
                _STATS["hits"] += 1
                return _assemble(tr, got, formats, args)
        return _plain(self.fn, args, self.fusion)


def _signature(args):
    """The arguments as the function gets them (arrays as concrete lazysparse arrays) and the
    key of their signature."""
    out, key, tokens = [], [], []
    for k, a in enumerate(args):
        if type(a) is not Array:
            if isinstance(a, (np.ndarray, np.generic)) or hasattr(a, "tocsr"):
                from lazysparse.api.creation import asarray
                a = asarray(a)
            elif not isinstance(a, Array):
                try:
                    hash(a)
                except TypeError:
                    raise TypeError(f"jit: argument {k} ({type(a).__name__}) is neither an "
                                    f"array nor a hashable constant") from None
                out.append(a)
                key.append(("static", type(a), a))
                continue
        st = a._storage
        if st is None:  # (a lazy argument: computed first, as a concrete array)
            a = Array._from_storage(a.storage)
            st = a._storage
        stats = st.stats
        tok, part = (stats.get("dag") if stats is not None else None) or leaf_key(st)
        tokens.append(tok)
        out.append(a)
        key.append(part)
    # which array arguments are one array: a trace where two were one reads a single operand
    key.append(tuple([tokens.index(t) for t in tokens]))
    return out, tuple(key)


def _trace(fn, args, fusion):
    """Run ``fn`` on stand-ins for the array arguments, compute its lazy results as one plan and
    keep its entry (``_Trace``); returns the trace and the results."""
    held = [_copy(a) if isinstance(a, Array) else a for a in args]
    mine = {id(h._storage): k for k, h in enumerate(held) if isinstance(h, Array)}
    token = TRACING.set(True)
    try:
        flat, tree = _flatten(fn(*held))
    finally:
        TRACING.reset(token)
    roots, index = [], {}
    for a in flat:
        n = a._node
        if n is not None and n.result is None and id(n) not in index:
            index[id(n)] = len(roots)
            roots.append(n)
    walk = dag_walk(roots) if roots else None
    pipeline.compute_nodes(roots, fusion=fusion)
    bound = bind(walk, fusion) if roots else None
    slots = tuple(("arg", mine[id(st)]) if id(st) in mine else ("const", st)
                  for st in (walk.order if walk is not None else ()))
    outs = []
    for a in flat:
        n = a._node
        if n is not None and id(n) in index:
            outs.append(("root", index[id(n)]))
        else:
            st = a.storage
            outs.append(("arg", mine[id(st)]) if id(st) in mine else ("const", st))
    copies = [h._storage for h in held if isinstance(h, Array)]
    if any(_overlaps(s[1], copies) for s in (*slots, *outs) if s[0] == "const"):
        bound = None  # (a view of an argument made outside the plan: not a constant)
    if any(leaf_key(h._storage)[1] != leaf_key(a._storage)[1]
           for h, a in zip(held, args) if isinstance(a, Array)):
        bound = None  # (a stand-in planned differently from its original: not this signature's)
    tr = _Trace(bound, slots, tree, tuple(outs), walk.key if walk is not None else None)
    return tr, _assemble(tr, [r.result for r in roots], [r.result.format for r in roots], args)


def _plain(fn, args, fusion):
    """``fn`` as written: its lazy results computed as one plan."""
    flat, tree = _flatten(fn(*args))
    nodes = [a._node for a in flat if a._node is not None]
    pipeline.compute_nodes(nodes, fusion=fusion)
    return _unflatten(tree, [Array._from_storage(a.storage) for a in flat])


def _assemble(tr, got, formats, args):
    """The results of a call from its roots' storages ``got``, their promised ``formats`` and
    the arguments."""
    items = []
    for kind, v in tr.outs:
        if kind == "root":
            st = got[v]
            fmt = formats[v]
            ok = st.format is fmt or st.format == fmt
            items.append(Array._from_storage(st if ok else pipeline.convert_storage(st, fmt)))
        elif kind == "arg":
            items.append(args[v])
        else:
            items.append(Array._from_storage(v))
    return _unflatten(tr.tree, items)


def _flatten(out):
    if isinstance(out, Array):
        return [out], None
    if isinstance(out, (tuple, list)) and all(isinstance(a, Array) for a in out):
        return list(out), type(out)
    raise TypeError(f"jit: the function must return a lazysparse array or a tuple or list of "
                    f"them, got {type(out).__name__}")


def _unflatten(tree, items):
    return items[0] if tree is None else tree(items)


def _copy(a):
    """A lazysparse array over new views of ``a``'s buffers (the same memory, format, strides
    and index width): the trace's stand-in. Storages are told apart by their buffers' identity
    (``Storage.buffers_key``), so an array the function closes over stays a constant even where
    it is the very array passed as an argument."""
    st = a._storage
    cp = Storage(st.shape, st.format, [None if p is None else p.view() for p in st.pos],
                 [None if c is None else c.view() for c in st.crd], st.vals.view(), st.index_dtype)
    return Array._from_storage(cp)


def _overlaps(st, copies) -> bool:
    mine = [b for c in copies for b in (c.vals, *c.pos, *c.crd) if b is not None]
    return any(np.may_share_memory(b, m) for b in (st.vals, *st.pos, *st.crd) if b is not None
               for m in mine)


def _info():
    return _STATS["hits"], sum(len(j._traces) for j in list(_ALL))


def _clear():
    for j in list(_ALL):
        j._traces.clear()


def _reset():
    _clear()
    _STATS["hits"] = 0


kernel_cache.register_plan_cache(_info, _clear, _reset)
