"""The array value every api module builds: concrete storage or a lazy DAG node, nothing else.
``lazysparse.Array`` (``array.py``, above this package) subclasses ``ArrayBase`` with the operators
and NumPy protocols; the api modules sit below it, so they construct arrays through
``ArrayBase._from_storage`` / ``_from_node`` (which make instances of that one user-facing class)
and test membership with ``isinstance(x, ArrayBase)``: no module here imports ``array.py``."""
from __future__ import annotations

import contextvars
import functools

# True while ``ls.jit`` runs a function on stand-ins: its results must stay lazy to be replayed
TRACING = contextvars.ContextVar("lazysparse_tracing", default=False)


def scalar_when_full(method):
    """A reduction method that returns a NumPy scalar where NumPy, scipy and pydata/sparse do:
    a 0-d result of a concrete operand is computed at once. Nothing upstream of a concrete
    operand is left to fuse, and a consumer takes the scalar as a kernel parameter (a plan hit,
    not a new kernel). A lazy operand keeps the reduction lazy, and so does a function that
    ``ls.jit`` is tracing (its arguments are stand-ins for later calls' values)."""
    @functools.wraps(method)
    def reduce(self, *args, **kwargs):
        r = method(self, *args, **kwargs)
        if (isinstance(r, ArrayBase) and not r.shape and self._storage is not None
                and not TRACING.get()):
            return r.todense()[()]
        return r
    return reduce


class ArrayBase:
    __slots__ = ("_storage", "_node", "shape", "dtype", "__weakref__")

    # the user-facing subclass (declared with ``class Array(ArrayBase, user_facing=True)``):
    # what the factories below make, whichever class they are called on
    _made = None

    def __init_subclass__(cls, user_facing=False, **kwargs):
        super().__init_subclass__(**kwargs)
        if user_facing:
            ArrayBase._made = cls

    @classmethod
    def _from_storage(cls, st) -> "ArrayBase":
        a = object.__new__(ArrayBase._made if cls is ArrayBase else cls)
        a._storage = st
        a._node = None
        a.shape = st.shape
        a.dtype = st.vals.dtype
        return a

    @classmethod
    def _from_node(cls, node) -> "ArrayBase":
        a = object.__new__(ArrayBase._made if cls is ArrayBase else cls)
        a._storage = None
        a._node = node
        a.shape = node.shape
        a.dtype = node.dtype
        return a
