"""Support code a kernel refers to by name: the pieces a printer puts before the kernel
(``Support``: the thread number without OpenMP, a workspace's routines...), and the registry
of workspace accumulation policies (built in, or added by ``register_policy`` with a
target's source). The code itself is each printer's (compiler/codegen/<target>/support.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Support:
    """A piece of support code a kernel needs, named ``name``, built with ``params`` (a tuple
    of ``(key, value)`` pairs). Kernels list them in their block's ``prelude``."""
    name: str
    params: tuple = ()

    def get(self, key, default=None):
        return dict(self.params).get(key, default)


THREAD_NUM = Support("thread_num")   # ThreadNum() where the target may lack threads
TEAM_NUM = Support("num_threads")    # NumThreads() likewise
KEPT_BUFFERS = Support("kept_buffers")  # the keep_* routines: buffers a kernel keeps between calls
VECTORS = Support("target_vectors")  # Vec types of the target's width, VecBytes and VFma on them
VECTOR_SUMS = Support("target_vector_sums")  # VReduce("add") of a target-width vector


def gallop(index) -> Support:
    """The galloping search over a sorted coordinate array of dtype ``index`` (the support
    routine ``gallop_<index>``: ``(crd, lo, hi, x)`` -> the first position in [lo, hi) holding
    at least x, hi if none)."""
    return Support("gallop", (("index", index),))


def workspace(policy, value, key, reduce, identity, count=None) -> Support:
    """A workspace's routines (compiler/lower/workspace.py): the accumulation ``policy`` over
    values of dtype ``value`` keyed by ``key`` (an index dtype), combining duplicates with
    ``reduce`` (whose identity is ``identity``, a loopir.expr.Lit); ``count``: the ls.opcount
    counter each combination adds one to, or None."""
    return Support("workspace", (("policy", policy), ("value", value), ("key", key), ("reduce", reduce),
                                 ("identity", identity), ("count", count)))


@dataclass(frozen=True)
class Policy:
    """A workspace accumulation policy: ``insert_b``: it has a second, branch-free insert;
    ``sources``: its code per target, for a policy added at run time (the built-in ones'
    code is the printers')."""
    insert_b: bool = False
    sources: tuple = ()

    def source(self, target):
        return dict(self.sources).get(target)


# name -> Policy; register_policy (compiler/lower/workspace.py) adds to it
POLICIES = {"dense": Policy(insert_b=True), "hash": Policy(), "coord": Policy(), "bucket": Policy()}
