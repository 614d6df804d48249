"""C99 backend: prints loop IR as one ``ls_kernel(void **p, int64_t *d)`` function, with OpenMP
pragmas for parallel, atomic and SIMD nodes, AVX-512 intrinsics for vector nodes (under ``#if``
on the target's macros), and the support code the kernel names before it."""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.compiler.codegen.c import exprs, support
from lazysparse.compiler.codegen.c.exprs import ctype, expr, vstore
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import nodes as N
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T


def emit(block, header_comment: str = "", count: bool = False) -> str:
    """``count``: an instrumented build (compiler/lower/counting.py) declares its counters first."""
    out = [support.PRELUDE]
    if count:
        out.append(support.COUNTERS)
    # support code of this kernel (compiler/lower/workspace.py, locate.py, lowering.py)
    out += [support.text(s) for s in getattr(block, "prelude", ())]
    if header_comment:
        # the comment is built from IR reprs: generated names and numbers only; '*/' is impossible
        # but neutralised anyway
        out.append("/* " + header_comment.replace("*/", "* /") + " */")
    out.append("int32_t ls_kernel(void **p, int64_t *d) {")
    n = len(out)
    _emit_block(block, out, 1)
    out.append("}")
    if any("_mm512_" in s for s in out[n:]):
        # vector schedules (compiler/lower/simd.py) only: the header is slow to parse
        out.insert(1, "#if defined(__AVX512F__) && defined(__AVX512VL__)\n#include <immintrin.h>\n#endif")
    return "\n".join(out) + "\n"


# the preprocessor test of each feature a FeatureGuard may name: the printer needs no facts
# about the toolchain, since the compiler's own macros guard what only some targets have
# (``LS_MVEC`` too, which runtime/toolchain.py defines where libmvec works)
FEATURE_TEST = {"avx512": "#if defined(__AVX512F__) && defined(__AVX512VL__)", "openmp": "#ifdef _OPENMP",
                "ws_zero": "#ifdef LS_WS_ZERO"}
_RED = {"+": "+", "*": "*", "max": "max", "min": "min"}


def _emit_block(block, out, ind):
    for s in _stmts(block):
        _emit(s, out, ind)


def _stmts(b):
    if isinstance(b, N.Block):
        return b.body
    if isinstance(b, N.Seq):
        return b.stmts
    if isinstance(b, S.Scope):
        return b.stmts
    return [] if b is None else [b]


def _emit(s, out, ind):
    pad = "  " * ind
    if isinstance(s, (N.Block, N.Seq)) or isinstance(s, S.Scope) and not s.oneline:
        out.append(pad + "{")
        _emit_block(s, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, N.Decl):
        out.append(pad + f"{s.ctype} {s.name}" + (f" = {s.init};" if s.init is not None else ";"))
    elif isinstance(s, N.For):
        step = s.step or f"{s.var}++"
        out.append(pad + f"for (int64_t {s.var} = {s.lo}; {s.var} < {s.hi}; {step}) {{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, N.While):
        out.append(pad + f"while ({s.cond}) {{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, N.If) or isinstance(s, S.If) and not s.oneline:
        out.append(pad + f"if ({expr(s.cond)}) {{")
        _emit_block(s.then, out, ind + 1)
        if s.orelse is not None and _stmts(s.orelse):
            out.append(pad + "} else {")
            _emit_block(s.orelse, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, S.For):
        _hints(s, out, pad)
        head = pad + _for_head(s)
        if s.oneline:
            body, = _stmts(s.body)
            out.append(head + " " + _line(body, True))
            return
        if s.brace_line:
            out.append(head)
            _emit(N.Block(list(_stmts(s.body))), out, ind)
            return
        out.append(head + " {")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, S.While) and not s.oneline:
        if s.step is not None:
            out.append(pad + f"for (; {expr(s.cond)}; {_line(s.step).rstrip(';')}) {{")
        else:
            out.append(pad + f"while ({expr(s.cond)}) {{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, S.ParallelFor):
        out.append(pad + "#pragma omp parallel for" + _sched(s.schedule) + _team(s))
        _emit(s.loop, out, ind)
    elif isinstance(s, S.Parallel):
        out.append(pad + "#pragma omp parallel" + _team(s))
        out.append(pad + "{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, S.Atomic) and not s.relaxed:
        out.append(pad + "#pragma omp atomic" + ("" if s.kind == "update" else " " + s.kind))
        _emit(s.stmt, out, ind)
    elif isinstance(s, S.Recover):
        # (the failure path's label renamed: support macros such as LS_GROW jump to ``ls_fail``)
        out.append(pad + f"#define ls_fail ls_{s.name}")
        _emit_block(s.body, out, ind)
        out.append(pad + "#undef ls_fail")
        _emit_block(s.then, out, ind)
        out.append(pad + f"ls_{s.name}: ;")
        _emit_block(s.handler, out, ind)
    elif isinstance(s, S.FeatureGuard):
        out.append(pad + FEATURE_TEST[s.feature])
        _emit_block(s.then, out, ind)
        if s.orelse is not None:
            out.append(pad + "#else")
            _emit_block(s.orelse, out, ind)
        out.append(pad + "#endif")
    elif isinstance(s, S.TargetIf):
        out.append(pad + f"#if {expr(s.cond)}")
        _emit_block(s.then, out, ind)
        if s.orelse is not None:
            out.append(pad + "#else")
            _emit_block(s.orelse, out, ind)
        out.append(pad + "#endif")
    elif isinstance(s, S.FeatureIf):
        # where the target has the feature: if (cond) {then} else {orelse}; elsewhere {orelse}
        out.append(pad + FEATURE_TEST[s.feature])
        out.append(pad + f"if ({expr(s.cond)}) {{")
        _emit_block(s.then, out, ind + 1)
        out.append(pad + "} else")
        out.append(pad + "#endif")
        _emit(s.orelse if isinstance(s.orelse, (N.Block, N.Seq)) else N.Block([s.orelse]), out, ind)
    else:
        out.append(pad + _line(s))


def _for_head(s):
    step = _line(s.step).rstrip(";") if s.step is not None else f"{s.var}++"
    cond = expr(s.cond) if s.cond is not None else f"{s.var} < {expr(s.hi)}"
    return f"for (int64_t {s.var} = {expr(s.lo)}; {cond}; {step})"


def _hints(s, out, pad):
    if s.worksharing is not None:
        ws = s.worksharing
        out.append(pad + "#pragma omp for" + _sched(ws.schedule) + (" nowait" if ws.nowait else ""))
    if s.unroll is not None:
        out.append(pad + f"#pragma GCC unroll {s.unroll}")
    if s.simd is not None and s.simd.merged:
        ops = dict.fromkeys(r.op for r in s.simd.reductions)
        out.append(pad + "#pragma omp simd" + "".join(
            f" reduction({_RED[op]}:{', '.join(r.var for r in s.simd.reductions if r.op == op)})" for op in ops))
    elif s.simd is not None:
        out.append(pad + "#pragma omp simd" + "".join(f" reduction({_RED[r.op]}:{r.var})" for r in s.simd.reductions))


def _sched(sc):
    return f" schedule({sc.kind}" + (f", {expr(sc.chunk)})" if sc.chunk is not None else ")")


def _team(s):
    t = f" num_threads((int){expr(s.threads)})" if s.threads is not None else ""
    t += f" if({expr(s.when)})" if s.when is not None else ""
    return t + "".join(f" reduction({_RED[r.op]}:{r.var})" for r in s.reductions)


def _line(s, tight=False) -> str:
    """A statement on one line (``tight``: inside a one-line statement, a pointer declared
    ``T *name``)."""
    if isinstance(s, N.RawText):
        return s.text
    if isinstance(s, N.Comment):
        return "/* " + s.text.replace("*/", "* /") + " */"
    if isinstance(s, S.Declare):
        t = s.type
        if isinstance(t, T.Array):
            head = f"{ctype(t.elem)} {s.name}[{expr(t.count)}]"
        else:
            c = ctype(t)
            head = f"{c}{s.name}" if tight and c.endswith(" *") else f"{c} {s.name}"
        if isinstance(s.init, E.Zero) and isinstance(t, (T.Array, T.Opaque)):  # (an aggregate's)
            return ("const " if s.const else "") + head + " = {0};"
        more = "".join(f", {n}" + (f" = {expr(i)}" if i is not None else "") for n, i in s.more)
        return ("const " if s.const else "") + head + (f" = {expr(s.init)}" if s.init is not None else "") + more + ";"
    if isinstance(s, S.Assign):
        ts = s.target if isinstance(s.target, tuple) else (s.target,)
        return "".join(f"{expr(x)} = " for x in ts) + f"{expr(s.value)};"
    if isinstance(s, S.Update):
        if s.op in "+-" and s.value == E.Int(1) and not s.compound:
            return f"{expr(s.target)}{s.op * 2};"
        return f"{expr(s.target)} {s.op}= {expr(s.value)};"
    if isinstance(s, S.Reduce):
        return C.reduce_step(s.op, expr(s.target), expr(s.value), s.dtype)
    if isinstance(s, S.ExprStmt):
        return expr(s.expr) + ";"
    if isinstance(s, S.Barrier):
        return "#pragma omp barrier"
    if isinstance(s, S.Break):
        return "break;"
    if isinstance(s, S.Continue):
        return "continue;"
    if isinstance(s, S.Return):
        return "return;" if s.value is None else f"return {expr(s.value)};"
    if isinstance(s, S.Fail):
        return "goto ls_fail;"
    if isinstance(s, S.FailPath):
        return "ls_fail:"
    if isinstance(s, S.Free):
        return f"free({expr(s.target)});"
    if isinstance(s, S.Memset):
        size = (f"sizeof {expr(s.dst.a)}" if s.count is None else
                f"{expr(E.Cast(T.SIZE, s.count))} * sizeof({ctype(s.elem)})")
        byte = "0xff" if s.byte == 0xff else str(s.byte)
        return f"memset({expr(s.dst)}, {byte}, {size});"
    if isinstance(s, S.Memcpy):
        return f"memcpy({expr(s.dst)}, {expr(s.src)}, {expr(E.Cast(T.SIZE, s.count))} * sizeof({ctype(s.elem)}));"
    if isinstance(s, S.Grow):
        return f"LS_GROW({ctype(s.elem)}, {expr(s.ptr)}, {expr(s.cap)}, {expr(s.need)});"
    if isinstance(s, S.Resize):
        return f"LS_RESIZE({ctype(s.elem)}, {expr(s.ptr)}, {expr(s.n)});"
    if isinstance(s, S.Fit):
        return f"LS_FIT({ctype(s.elem)}, {expr(s.ptr)}, {expr(s.n)}, {expr(s.cap)});"
    if isinstance(s, S.Prefetch):
        if not s.ahead and not s.write and s.locality == 3:  # (the builtin's defaults)
            return f"__builtin_prefetch({expr(s.addr)});"
        return (f"__builtin_prefetch((const void *)((uintptr_t)({expr(s.addr)}) + {s.ahead}), "
                f"{int(s.write)}, {s.locality});")
    if isinstance(s, S.Tally):  # (the counters' macro: compiler/codegen/c/support.py COUNTERS)
        return f"LS_COUNT({s.counter}, {expr(s.n)});"
    if isinstance(s, S.VStore):
        return vstore(s.vt, s.ptr, s.value, s.mask)
    if isinstance(s, S.Inline):
        return " ".join(_line(x, True) for x in s.stmts)
    if isinstance(s, S.Scope):
        return "{ " + " ".join(_line(x, True) for x in s.stmts) + " }"
    if isinstance(s, S.If):
        if s.bare:  # (no else: one would bind to an ``if`` in the arm)
            return f"if ({expr(s.cond)}) " + _line(s.then, True)
        return f"if ({expr(s.cond)}) {_arm(s.then)}" + (f" else {_arm(s.orelse)}" if s.orelse is not None else "")
    if isinstance(s, S.While):
        return f"while ({expr(s.cond)}) {_arm(s.body)}"
    if isinstance(s, S.For) and s.oneline and s.unroll is None and s.simd is None and s.worksharing is None:
        body, = _stmts(s.body)
        return _for_head(s) + " " + _line(body, True)
    if isinstance(s, S.Atomic) and s.relaxed and s.kind == "write":
        return f"__atomic_store_n({expr(E.AddrOf(s.stmt.target))}, {expr(s.stmt.value)}, __ATOMIC_RELAXED);"
    if isinstance(s, S.Atomic):
        raise TypeError("an atomic statement is printed on lines of its own")
    raise TypeError(f"unknown loop IR node {s!r}")


exprs.statement_line = _line  # (statements inside expressions: E.Scoped)

_SIMPLE = (S.Assign, S.Update, S.ExprStmt, S.Break, S.Continue, S.Return, S.Fail, S.Free, S.Grow,
           S.Resize, N.RawText)


def _arm(b) -> str:
    """A branch on one line: one simple statement bare, else in braces."""
    st = list(b.stmts if isinstance(b, S.Inline) else _stmts(b))
    if len(st) == 1 and isinstance(st[0], _SIMPLE):
        return _line(st[0], True)
    return "{ " + " ".join(_line(x, True) for x in st) + " }"
