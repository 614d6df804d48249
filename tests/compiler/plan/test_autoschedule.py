"""The autoscheduler's template space (the autoscheduler of "A Sparse Iteration Space
Transformation Framework for Sparse Tensor Algebra"): the rules' choices on SpMM and MTTKRP, the
pruning against the unpruned space, and CPU templates run through the compiler
(each either matches the oracle or is refused as not lowered yet)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler.plan.autoschedule import Problem, collapses, instantiate, partitions, problem, space_size, templates
from lazysparse.compiler.pipeline import kernel_log

SPMM = Problem(("i", "j", "k"), frozenset({"i", "k"}), (("A", ("i", "j")),), frozenset({"j"}))
MTTKRP = Problem(("i", "k", "l", "j"), frozenset({"j"}), (("B", ("i", "k", "l")),), frozenset({"k", "l"}))


def test_spmm_collapse_candidates_are_none_and_i_j():
    assert collapses(SPMM) == [(), (("i", "j"), "A")]


def test_with_the_collapse_the_splits_are_f_pos_with_or_without_k_coord():
    with_f = {frozenset(sp_.items()) for c, sp_ in partitions(SPMM) if c}
    assert with_f == {frozenset({("f", "pos"), ("k", None)}), frozenset({("f", "pos"), ("k", "coord")})}


@pytest.mark.parametrize("pb", [SPMM, MTTKRP])
@pytest.mark.parametrize("target", ["cpu", "gpu"])
def test_no_coord_splits_of_compressed_variables_and_no_double_splits(pb, target):
    for t in templates(pb, target):
        kinds = dict(t.splits)
        for v, kind in kinds.items():
            if v != "f" and v not in pb.dense:
                assert kind != "coord"
        split_cmds = [c for c in t.commands if c[0] == "split"]
        assert len({c[1] for c in split_cmds}) == len(split_cmds)
        assert all(c[0] != "coord" for c in t.commands)


@pytest.mark.parametrize("pb", [SPMM, MTTKRP])
def test_cpu_parallelizes_only_the_outermost_non_collapsed_loop(pb):
    ts = templates(pb, "cpu")
    assert ts
    for t in ts:
        par = [c for c in t.commands if c[0] == "parallelize"]
        assert len(par) <= 1
        if par:
            assert par[0][1] == t.order[0] and not t.order[0].startswith("f")
        elif t.collapse == ():
            pytest.fail(f"{t}: an uncollapsed CPU template without threads")


@pytest.mark.parametrize("pb", [SPMM, MTTKRP])
def test_gpu_templates_are_load_balanced(pb):
    ts = templates(pb, "gpu")
    assert ts
    sparse = {v for v in pb.vars if v not in pb.dense}
    for t in ts:
        assert t.collapse and sparse <= set(t.collapse[0])  # every sparse level in the collapse
        units = dict(t.units)
        assert units[t.order[0]] == "gpu-block" and t.order[0] == "fp0"  # tiles of positions
        for lp, unit in t.units:
            if unit in ("gpu-warp", "gpu-thread"):
                assert lp.endswith("1")  # a split's inner loop: a constant size


@pytest.mark.parametrize("pb, target, at_least", [(SPMM, "cpu", 100), (SPMM, "gpu", 1000),
                                                   (MTTKRP, "cpu", 1000), (MTTKRP, "gpu", 10**5)])
def test_the_rules_prune_at_least_a_hundredfold(pb, target, at_least):
    kept, total = len(templates(pb, target)), space_size(pb, target)
    assert kept > 0 and total / kept >= at_least


def test_cpu_templates_of_a_real_spmm_run_correctly_or_say_why_not():
    A0 = sp.random(37, 23, density=0.2, format="lil", random_state=0)
    A0[3, :] = 0  # an empty row
    A0 = A0.tocsr()
    X0 = np.random.default_rng(0).random((23, 5))
    A = ls.asarray(A0)
    with kernel_log() as log:
        (A @ X0).materialize()
    spec = [e[0] for e in log if isinstance(e, tuple)][0]
    pb = problem(spec.stmt, spec.inputs, spec.order)
    assert pb.vars == ("i0", "i2", "i1") and pb.dense == {"i0", "i1"}
    ran = 0
    for t in templates(pb, "cpu"):
        s = instantiate(t, {"S0": 4, "S1": 3, "S2": 5}, pb.reductions)
        try:
            out = (A @ X0).materialize(schedule=s).todense()
        except NotImplementedError as e:
            assert "not lowered yet" in str(e)
            continue
        np.testing.assert_allclose(out, A0 @ X0, err_msg=str(t))
        ran += 1
    assert ran >= 20
