"""The formats a compute promises (one format truth): a lazy array's ``.format`` is inferred from
its DAG (``format_inference``), and its materialized result must have that format, whatever the
fusion mode made of the DAG (a fused kernel stores dense or in an input's pattern; association
and substitution change the statements the planner picks formats for). ``promised`` gives the
inferred formats of the roots, kept per DAG key with what else inference reads: the sparse
leaves' exact entry counts (their densities) and the pattern decisions of the nodes that read
0-d values at those values (``decisions.py``: CG's ``rr / rz`` decides the same at every step,
so its loop finds them). Inference costs about 30 us a node, far more than a step of a lazy
loop; the lookup about 2 us. The driver converts a result whose format differs
(compiler/pipeline.py)."""
from __future__ import annotations

from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.decisions import decisions, probe_item
from lazysparse.compiler.plan.dag_key import leaf_key
from lazysparse.compiler.plan.format_inference import infer_formats

MAX_KEYS = 1024  # DAG keys whose promises are kept
_BY_KEY = {}  # DAG key -> (probe, {0-d values' classes or bytes: decisions},
#                {(entries, decisions): formats}, store numbers of the sparse leaves)


def promised(roots, walk) -> tuple:
    """The format each of the lazy nodes ``roots`` promises (its ``.format``), for the DAG
    whose ``dag_walk`` is ``walk``; inferred on the first call of its key, entry counts and
    decisions, looked up after."""
    ent = _BY_KEY.get(walk.key)
    stores = walk.order
    if ent is None:
        if len(_BY_KEY) >= MAX_KEYS:
            _BY_KEY.clear()
        sparse = tuple(k for k, st in enumerate(stores) if not st.format.is_dense)  # (the key says which)
        ent = _BY_KEY[walk.key] = (_probe(walk), {}, {}, sparse)
    probe, seen, formats, sparse = ent
    key = (tuple([stores[k].vals.shape[0] for k in sparse]), decisions(probe, stores, seen) if probe else ())
    got = formats.get(key)
    if got is None:
        inferred = infer_formats(roots)
        got = formats[key] = tuple(inferred[id(r)][0] for r in roots)
    return got


def lookup(key, stores):
    """The promised formats of a DAG whose key ``promised`` has seen, at the operands
    ``stores`` (in the key's order: ``ls.jit`` passes new ones), or None where they were not
    inferred for those entry counts and decisions."""
    ent = _BY_KEY.get(key)
    if ent is None:
        return None
    probe, seen, formats, sparse = ent
    return formats.get((tuple([stores[k].vals.shape[0] for k in sparse]),
                        decisions(probe, stores, seen) if probe else ()))


def _probe(walk) -> tuple:
    """The nodes whose pattern decisions read 0-d values (``patterns.scalar_calls``), as
    ``decisions.probe_item``s in the walk's numbering."""
    items = []
    for n in walk.nodes:
        if not P.scalar_calls(n.stmt.expr):
            continue
        slots = []
        for q, c in enumerate(n.children):
            st = c._storage if c._storage is not None else c._node.result
            if st is not None and st.ndim == 0:
                slots.append((q, walk.stores[leaf_key(st)[0]]))
        if slots:
            items.append(probe_item(n.stmt.expr, slots))
    return tuple(items)


def clear():
    _BY_KEY.clear()
