"""``ls.Schedule``'s loop transformations ("A Sparse Iteration Space Transformation Framework for
Sparse Tensor Algebra", the scheduling paper): recorded with their provenance, printed, and, where
the schedule alone shows it cannot hold, refused with an error naming the transformation and the
reason; a split, a parallel loop or a divide applies next to a workspace choice. (The kernels that
follow a schedule are tested in tests/compiler/lower/test_schedule_loops.py.)"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.ir.provenance import Fuse, Pos, Split


def test_nonzero_tile_schedule_is_recorded_with_its_provenance():
    s = (ls.Schedule().fuse("i", "j", "f").pos("f", "p", "B").split("p", "p0", "p1", 16)
         .parallelize("p0", races="atomics"))
    assert repr(s) == ("Schedule().fuse('i', 'j', 'f').pos('f', 'p', 'B').split('p', 'p0', 'p1', 16)"
                       ".parallelize('p0', unit='cpu-thread', races='atomics')")
    g = s.provenance
    assert g.roots == ("i", "j") and g.leaves == ("p0", "p1")
    assert g.relations == (Fuse("i", "j", "f"), Pos("f", "p", "B"), Split("p", "p0", "p1", 16))
    assert g.is_position("p0") and not g.is_position("f")
    d = ls.Schedule().divide("i", "i0", "i1", 4).bound("i1", "ib", 8).unroll("ib", 4).reorder("i0", "ib")
    assert d.provenance.relations[0] == Split("i", "i0", "i1", 4, up=True)
    assert repr(d) == "Schedule().divide('i', 'i0', 'i1', 4).bound('i1', 'ib', 8).unroll('ib', 4).reorder('i0', 'ib')"
    # a schedule is a value: deriving one leaves the other as it was
    t = s.provenance
    ls.Schedule().split("i", "a", "b", 2)
    assert s.provenance == t


@pytest.mark.parametrize("make, msg", [
    (lambda: ls.Schedule().split("i", "i0", "i1", 0), "split: the factor must be a positive int"),
    (lambda: ls.Schedule().divide("i", "i0", "i1", -2), "divide: the factor must be a positive int"),
    (lambda: ls.Schedule().unroll("i", 0), "unroll: the factor must be a positive int"),
    (lambda: ls.Schedule().bound("i", "ib", True), "bound: the factor must be a positive int"),
    (lambda: ls.Schedule().pos("j", "p", "B").pos("p", "q", "B"), "pos: 'p' is already in position space"),
    (lambda: ls.Schedule().pos("i", "p", "B").fuse("p", "j", "f"), "fuse: the outer variable 'p' is in position space"),
    (lambda: ls.Schedule().split("i", "i0", "i1", 4).split("i", "a", "b", 2), "split: 'i' was already transformed"),
    (lambda: ls.Schedule().split("i", "i0", "i1", 4).fuse("i0", "x", "i1"), "fuse: index variable 'i1' already exists"),
    (lambda: ls.Schedule().split("i", "i0", "i1", 4).parallelize("i0").unroll("i1", 2), "no transformation may follow parallelize"),
    (lambda: ls.Schedule().parallelize("i").split("j", "a", "b", 2), "no transformation may follow parallelize"),
    (lambda: ls.Schedule().parallelize("i").parallelize("i", unit="cpu-vector"), "'i' is already parallel"),
    (lambda: ls.Schedule().parallelize("i", unit="gpu-warp"), "unknown unit 'gpu-warp'"),
    (lambda: ls.Schedule().parallelize("i", races="maybe"), "unknown race strategy 'maybe'"),
    (lambda: ls.Schedule().split("i); system(\"x", "a", "b", 2), "names are identifiers"),
    (lambda: ls.Schedule().pos("i", "p", "B[0]"), "names are identifiers"),
    (lambda: ls.Schedule().reorder("i"), "two or more distinct"),
    (lambda: ls.Schedule().reorder("i", "i"), "two or more distinct"),
])
def test_transformations_refused_with_the_reason(make, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_loop_transformations_apply_next_to_a_workspace_choice():
    A = sp.random(6, 6, density=0.4, format="csr", random_state=0)
    a = ls.asarray(A)
    ref = (A @ A).toarray()
    for s in (ls.Schedule().split("i0", "a", "b", 4), ls.Schedule().parallelize("i0"),
              ls.Schedule().workspace("hash").divide("i0", "a", "b", 4)):
        np.testing.assert_allclose(np.asarray((a @ a).materialize(schedule=s).todense()), ref)
        np.testing.assert_allclose(np.asarray(ls.compute(a @ a, schedule=s)[0].todense()), ref)
    # the workspace alone still applies
    out = (a @ a).materialize(format="csr", schedule=ls.Schedule().workspace("hash"))
    np.testing.assert_allclose(out.todense(), (A @ A).toarray())
    # a split of the hashed workspace kernel's rows, with a sparse result
    s = ls.Schedule().workspace("hash").split("i0", "a", "b", 4)
    out = (a @ a).materialize(format="csr", schedule=s)
    assert out.format == "csr"
    np.testing.assert_allclose(out.todense(), ref)
