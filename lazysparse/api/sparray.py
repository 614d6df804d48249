"""scipy.sparse's sparray interface beyond NumPy's: its buffers (``.data``, ``.indices``, ...),
its conversions to formats lazysparse does not store (dok, lil, bsr, dia: scipy objects), its
canonical-form methods and its counting helpers. ``lazysparse.Array`` inherits ``SparrayMethods``;
the methods build on the api modules below, imported where they are used."""
from __future__ import annotations

from lazysparse.api.base import scalar_when_full


def _scipy_buffer(x, name):
    from lazysparse.api.conversion import scipy_buffer
    return scipy_buffer(x, name)


class SparrayMethods:
    __slots__ = ()

    def todok(self):
        """scipy's DOK array of the values (a scipy object: lazysparse has no DOK format)."""
        return self.to_scipy().todok()

    def tolil(self):
        """scipy's LIL array of the values (a scipy object: lazysparse has no LIL format)."""
        return self.to_scipy().tolil()

    def tobsr(self, blocksize=None):
        """scipy's BSR array of the values (a scipy object: lazysparse has no BSR format yet)."""
        return self.to_scipy().tobsr(blocksize=blocksize)

    def todia(self):
        """scipy's DIA array of the values (a scipy object: lazysparse has no DIA format yet)."""
        return self.to_scipy().todia()

    # -- scipy's buffers (read-only views; convert with .asformat first for another format) ---
    data = property(lambda self: _scipy_buffer(self, "data"), doc="scipy's ``data``: stored values")
    indices = property(lambda self: _scipy_buffer(self, "indices"), doc="CSR/CSC coordinates")
    indptr = property(lambda self: _scipy_buffer(self, "indptr"), doc="CSR/CSC row/column offsets")
    coords = property(lambda self: _scipy_buffer(self, "coords"), doc="COO coordinates, per mode")
    row = property(lambda self: _scipy_buffer(self, "row"), doc="COO row coordinates")
    col = property(lambda self: _scipy_buffer(self, "col"), doc="COO column coordinates")

    # -- mutation by rebinding (lazysparse/api/assignment.py): in place as scipy's, no buffer written
    def __setitem__(self, key, value):
        """``A[key] = value``: A is rebound to the changed value (api/assignment.py)."""
        from lazysparse.api.assignment import setitem
        setitem(self, key, value)

    def setdiag(self, values, k=0):
        """scipy's ``setdiag``: the ``k``-th diagonal set to ``values``, in place (rebinding)."""
        from lazysparse.api.assignment import setdiag
        setdiag(self, values, k)

    def resize(self, *shape):
        """scipy's in-place ``resize``: truncated or padded with zeros (rebinding)."""
        from lazysparse.api.assignment import resize
        resize(self, *shape)

    def eliminate_zeros(self):
        """scipy's in-place ``eliminate_zeros``: stored zeros removed (rebinding); None."""
        from lazysparse.api.assignment import eliminate_zeros
        eliminate_zeros(self)

    @scalar_when_full
    def trace(self, offset=0):
        """The sum of the ``offset``-th diagonal (a NumPy scalar, as ``sum`` gives one)."""
        return self.diagonal(offset).sum()

    def nonzero(self):
        """The coordinates of the nonzero values, one NumPy array per axis, row-major."""
        from lazysparse.api.indexing import nonzero
        return nonzero(self)

    def count_nonzero(self, axis=None):
        """The number of nonzero values (stored or not), as scipy's ``count_nonzero(axis)``:
        an int for ``axis=None`` (computes the array), else a lazy int64 array."""
        if axis is None:
            import numpy as _np
            return int((self != 0).astype(_np.int64).sum().materialize().todense())
        from lazysparse.api.statistics import count_nonzero
        return count_nonzero(self, axis)

    # scipy's canonical-form interface: lazysparse's storage is always canonical (sorted, no
    # duplicates), so these ask nothing of it and change nothing
    # (settable, as scipy's, so code that clears them and calls sort_indices runs; they stay True)
    has_canonical_format = property(lambda self: True, lambda self, value: None)
    has_sorted_indices = property(lambda self: True, lambda self, value: None)

    def sum_duplicates(self):
        """scipy's in-place ``sum_duplicates``: nothing to do (duplicates are summed on input)."""

    def sort_indices(self):
        """scipy's in-place ``sort_indices``: nothing to do (coordinates are kept sorted)."""

    def sorted_indices(self):
        """scipy's ``sorted_indices``: the array itself (its indices are always sorted)."""
        return self

    def prune(self):
        """scipy's ``prune``: nothing to do (no spare capacity is kept in the stored arrays)."""

    def check_format(self, full_check=True):
        """scipy's ``check_format``: validates the storage (ValueError when it is malformed)."""
        if not self.is_lazy and not self.format.is_dense:
            from lazysparse.formats.validate import validate
            validate(self.storage, "check_format")

    def to_scipy_sparse(self):
        """pydata/sparse's name for ``to_scipy``."""
        return self.to_scipy()

    @property
    def density(self) -> float:
        """Stored entries over elements (pydata/sparse's; computes a lazy array)."""
        return self.nnz / self.size if self.size else float("nan")

    @property
    def nbytes(self) -> int:
        """Bytes of the stored arrays (values, positions, coordinates; computes a lazy array)."""
        st = self.storage
        arrays = [st.vals] + [a for a in list(st.pos) + list(st.crd) if a is not None]
        return int(sum(getattr(a, "nbytes", 0) for a in arrays))

