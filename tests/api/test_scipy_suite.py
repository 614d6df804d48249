"""scipy's own sparse test suite (``scipy/sparse/tests/test_base.py``, ``sparse_test_class``)
run with ``lazysparse.sparse``'s ``csr_array``, ``csc_array`` and ``coo_array`` as its containers.
The tests that fail are listed below with their cause (strict: a listed test that starts to
pass fails here, so the list only shrinks); ``python -m pytest tests/api/test_scipy_suite.py
-rx`` prints them."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import lazysparse.sparse as lsp

TB = pytest.importorskip("scipy.sparse.tests.test_base")

EXPECTED_FAILURES = {  # test -> cause
}


def _creator(cls):
    @classmethod
    def spcreator(c, *args, **kwargs):
        from scipy.sparse import SparseEfficiencyWarning
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=SparseEfficiencyWarning)
            return cls(*args, **kwargs)
    return spcreator


def _expected_failure(fn, cause):
    @functools.wraps(fn)
    def test(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return pytest.mark.xfail(reason=cause, strict=True)(test)


class TestLazyCSR(TB.sparse_test_class()):
    spcreator = _creator(lsp.csr_array)
    math_dtypes = [np.bool_, np.int_, np.float64, np.complex128]
    csr_container, csc_container, coo_container = lsp.csr_array, lsp.csc_array, lsp.coo_array


for _name, _cause in EXPECTED_FAILURES.items():
    setattr(TestLazyCSR, _name, _expected_failure(getattr(TestLazyCSR, _name), _cause))
TestLazyCSR.init_class()
TestLazyCSR.is_array_test = True  # (scipy asks isinstance(x, its own sparray))
