"""Sort-based assembly of sparse results whose loop order cannot append in storage order.

The kernel emits ``(coordinates, value)`` pairs; this stage sorts them by storage order (stable
LSD counting sort, one pass per level, O(levels * (n + extent)); a stable merge sort for a level
whose extent is far larger than n), combines duplicates with the
statement's reduction (folding in the fill value where fewer than the full reduction extent
contributed), and compresses the unique coordinates into the output levels. The paper-003
workspaces (a later pass) replace this where they apply.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If


def emit_sort_assembly(lw, top: Block):
    nd = len(lw.outs)
    if (nd == 2 and lw.kd == 1 and not lw.ocoo and not lw.red and lw.olv[1].kind == "compressed"
            and lw.ovars[1] == lw.order[0]):
        emit_scatter_assembly(lw, top)
        return
    it, oct_ = lw.oit, lw.oct
    red = lw.stmt.reduce
    b = Block()
    top.add(b)
    # perm, tmp, h (and nx below) are declared NULL at the kernel's top (lowering.py) and freed
    # on its failure path; each is set back to NULL once freed here
    b.add("perm = (int64_t *)ls_malloc((size_t)(tn > 0 ? tn : 1) * sizeof(int64_t));",
          "tmp = (int64_t *)ls_malloc((size_t)(tn > 0 ? tn : 1) * sizeof(int64_t));",
          "if (!perm || !tmp) goto ls_fail;")
    b.add(For("t", "0", "tn", Block().add("perm[t] = t;")))
    # entries are emitted in loop order: if the innermost level's index is the outermost loop,
    # they are already sorted by it and that counting pass is skipped (CSR->CSC is one pass)
    skip = nd - 1 if nd > 1 and lw.ovars[nd - 1] == lw.order[0] else None
    for l in reversed(range(nd)):
        if l == skip:
            continue
        s = Block()
        # a counting pass needs a histogram over the level's extent: when that is much larger
        # than the entries (a huge, hypersparse dimension) a stable merge sort is used instead,
        # O(n log n) time and no O(extent) memory
        b.add(If(f"osz{l} > 4 * tn + 4096", Block().add(
            Decl("int64_t *", "ms", f"ls_msort(perm, tmp, tn, tc{l})"),
            "if (ms != perm) { tmp = perm; perm = ms; }"), s))
        s.add(f"h = (int64_t *)ls_calloc((size_t)osz{l} + 1, sizeof(int64_t));", "if (!h) goto ls_fail;")
        s.add(For("t", "0", "tn", Block().add(f"h[tc{l}[t] + 1]++;")))
        s.add(For("t", "0", f"osz{l}", Block().add("h[t + 1] += h[t];")))
        s.add(For("t", "0", "tn", Block().add(f"tmp[h[tc{l}[perm[t]]]++] = perm[t];")))
        s.add("{ int64_t *sw = perm; perm = tmp; tmp = sw; }", "free(h); h = NULL;")
    # combine duplicates and build levels; dense-prefix positions are implicit
    kd = lw.kd
    loop = Block()
    b.add(Decl("int64_t", "u", "-1"), Decl("int64_t", "ucnt", "0"))
    b.add(For("t", "0", "tn", loop))
    loop.add(Decl("int64_t", "r", "perm[t]"))
    loop.add(Decl("int", "dl", "t == 0 ? 0 : " + _first_diff(nd)))
    same = Block().add(C.reduce_step(red, "ov[u]", "tv[r]", lw.odt), "ucnt++;")
    new = Block()
    if red in ("max", "min", "prod"):
        new.add(f"if (u >= 0 && ucnt < {lw.red_total()}) {{ {C.reduce_step(red, 'ov[u]', lw.zero(), lw.odt)} }}")
    new.add("ucnt = 1;")
    if lw.ocoo:
        new.add("u++;")
        new.add("if (u >= ovc) { int64_t nc_ = ovc * 2 > u + 1 ? ovc * 2 : u + 1; "
                + " ".join(f"LS_RESIZE({it}, oc{l}, nc_); occ{l} = nc_;" for l in range(nd))
                + f" LS_RESIZE({oct_}, ov, nc_); ovc = nc_; }}")
        for l in range(nd):
            new.add(f"oc{l}[u] = ({it})tc{l}[r];")
        new.add("ov[u] = tv[r];")
        for l in range(nd):
            new.add(f"on{l} = u + 1;")
    else:
        append_levels(lw, new, lambda l: f"tc{l}[r]", 0, "0")
        new.add(f"u = on{nd - 1} - 1;")
        new.add(f"LS_GROW({oct_}, ov, ovc, u + 1);")
        new.add("ov[u] = tv[r];")
    loop.add(If(f"t == 0 || dl < {nd}", new, same))
    if red in ("max", "min", "prod"):
        b.add(f"if (u >= 0 && ucnt < {lw.red_total()}) {{ {C.reduce_step(red, 'ov[u]', lw.zero(), lw.odt)} }}")
    b.add("free(perm); free(tmp); perm = tmp = NULL;")
    for l in range(nd):
        b.add(f"free(tc{l}); tc{l} = NULL;")
    b.add("free(tv); tv = NULL;")


def append_levels(lw, blk, coord, first, dpos0, grow=True):
    """Append one entry to result levels ``first..`` from the level ``dl`` (a C variable: the
    first level where it differs from the previous entry) down: a coordinate per compressed
    level and its parent's end position. ``coord(l)``: C expression of its coordinate at level
    ``l``; ``dpos0``: the position of the dense levels before ``first`` ("0" when none);
    ``grow``: check the coordinate arrays' room per entry (else the caller reserved it). Dense
    levels store nothing: their coordinates make the position of the first compressed one.
    (The sort assembly appends all levels; a workspace's flush those below the hoisted ones.)"""
    it, kd, nd = lw.oit, lw.kd, len(lw.outs)
    dpos = dpos0
    for l in range(first, kd):
        dpos = f"({dpos}) * osz{l} + {coord(l)}"
    for l in range(max(first, kd), nd):
        app = Block()
        if grow:
            app.add(f"LS_GROW({it}, oc{l}, occ{l}, on{l} + 1);")
        app.add(f"oc{l}[on{l}] = ({it}){coord(l)};", f"on{l}++;")
        if l == kd:
            app.add(f"op{l}[({dpos}) + 1] = ({it})on{l};")
        elif l > first:  # (a hoisted compressed parent writes its end when it closes)
            app.add(f"if (on{l - 1} + 1 > opc{l}) {{ int64_t c_ = opc{l}; LS_GROW({it}, op{l}, c_, on{l - 1} + 1); opc{l} = c_; }}")
            app.add(f"op{l}[on{l - 1}] = ({it})on{l};")
        blk.add(If(f"dl <= {l}", app))


def _first_diff(nd):
    """C expression: first level where tuple perm[t] differs from perm[t-1] (nd if equal)."""
    expr = str(nd)
    for l in reversed(range(nd)):
        expr = f"(tc{l}[r] != tc{l}[perm[t - 1]] ? {l} : {expr})"
    return expr


def emit_scatter_assembly(lw, top: Block):
    """One counting pass, no permutation: a dense outer level over a compressed one, entries
    emitted already sorted by the inner index, no duplicates (no reduction). The histogram of
    outer coordinates is the position array; a stable scatter puts each entry in place (this is
    what CSR<->CSC transposition needs)."""
    it, oct_ = lw.oit, lw.oct
    b = Block()
    top.add(b)
    b.add(For("t", "0", "tn", Block().add("op1[tc0[t] + 1]++;")))
    b.add(For("t", "0", "osz0", Block().add("op1[t + 1] += op1[t];")))
    b.add("nx = (int64_t *)ls_malloc((size_t)(osz0 > 0 ? osz0 : 1) * sizeof(int64_t));",
          "if (!nx) goto ls_fail;")
    b.add(For("t", "0", "osz0", Block().add("nx[t] = op1[t];")))
    b.add(f"LS_GROW({it}, oc1, occ1, tn);", f"LS_GROW({oct_}, ov, ovc, tn);")
    b.add(For("t", "0", "tn", Block().add(Decl("int64_t", "at", "nx[tc0[t]]++"),
                                          f"oc1[at] = ({it})tc1[t];", "ov[at] = tv[t];")))
    b.add("on1 = tn;", "free(nx); free(tc0); free(tc1); free(tv);", "nx = tc0 = tc1 = NULL; tv = NULL;")
