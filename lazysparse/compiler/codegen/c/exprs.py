"""C spellings of loop IR types and expressions: C99 types from dtypes, operators with C's
precedence (parentheses where C needs them, and around shifts and bitwise operands for
clarity), support routines by their C names, and vector operations as AVX-512 intrinsics."""
from __future__ import annotations

import re

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import types as T

_EXTRA = {"int": "int", "unsigned": "unsigned", "size": "size_t", "uintptr": "uintptr_t"}
# vectors of the target's width: GCC vector types (support.VECTORS)
_TARGET_VEC = {"float64": "ls_vd", "float32": "ls_vf"}
_OPAQUE = {"ws_key": "LS_WK", "ws_value": "LS_WT", "void": "void", "ws": "ls_ws", "ism": "ls_ism"}


def ctype(t) -> str:
    """The C spelling of loop IR type ``t`` (a pointer as ``T *``, ``T *restrict``)."""
    if isinstance(t, T.Scalar):
        return _EXTRA.get(t.name) or C.ctype(t.name)
    if isinstance(t, T.Ptr):
        quals = " ".join(q for q, on in (("const", t.fixed), ("restrict", t.restrict)) if on)
        return ("const " if t.const else "") + ctype(t.elem) + " *" + quals
    if isinstance(t, T.Opaque):
        return _OPAQUE[t.name]
    if isinstance(t, T.Vec):
        return _TARGET_VEC[t.dtype] if t.lanes is None else _vec(t)["v"]
    if isinstance(t, T.Mask):
        return f"__mmask{t.lanes}"
    if isinstance(t, T.CText):  # (a type given as C text)
        return t.text
    if isinstance(t, str):
        return t
    raise TypeError(f"no C type for {t!r}")


# C's precedence: higher binds tighter
_PREC = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, "<=": 10, ">": 10,
         ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4}
_BITS = frozenset(("<<", ">>", "&", "|", "^"))
ATOM, UNARY, SELECT = 16, 15, 3


def prec(e) -> int:
    if isinstance(e, E.Binary):
        return _PREC[e.op]
    if isinstance(e, (E.Unary, E.Cast, E.AddrOf, E.Deref, E.Alloc)):
        return UNARY
    if isinstance(e, E.Select):
        return SELECT
    if isinstance(e, E.Raw):
        return _raw_prec(e.text)
    if isinstance(e, E.Zero):
        return UNARY
    if isinstance(e, E.Lit):
        return ATOM if not _literal(e).startswith("-") else UNARY
    return ATOM  # (NumOp, NumCast, Counted too: spelled as calls, in parentheses, or atoms)


_TOKEN = re.compile(r"\s*((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[A-Za-z]*|[A-Za-z_]\w*|<<|>>|<=|>=|==|!="
                    r"|&&|\|\||->|[-+*/%<>&|^?:!~(\[)\],.=])")


def _raw_prec(s):
    """The precedence of C text ``s`` as one operand: that of its loosest operator outside
    brackets (a name, a number, a call or an element: an atom; a cast: a prefix operator)."""
    depth, low, operand, i = 0, ATOM, False, 0
    group = None  # at depth 0: whether the open group stands where an operand goes (a cast's)
    while i < len(s):
        m = _TOKEN.match(s, i)
        if m is None:
            return 0 if s[i:].strip() else low  # (unknown text: always parenthesised)
        t, i = m.group(1), m.end()
        if t in "([":
            if depth == 0:
                group = not operand and t == "("
            depth += 1
            operand = False
            continue
        if t in ")]":
            depth -= 1
            operand = True
            if depth == 0 and group and i < len(s) and _TOKEN.match(s, i) and \
                    (_TOKEN.match(s, i).group(1)[0].isalnum() or _TOKEN.match(s, i).group(1) in "(_"):
                low, operand = min(low, UNARY), False  # ``(T)x``
            continue
        if depth:
            continue
        if t[0].isalnum() or t[0] in "_.":
            if operand:
                return 0
            operand = True
        elif t in ("?", ":"):
            low, operand = min(low, SELECT), False
        elif t in (",", "="):
            return 0
        elif operand and t in _PREC:
            low, operand = min(low, _PREC[t]), False
        else:  # a prefix operator
            low, operand = min(low, UNARY), False
    return low


def _literal(e):
    return e.spelling if e.spelling is not None else C.literal(e.value, e.dtype)


def _wrap(e, need):
    s = expr(e)
    return f"({s})" if prec(e) < need else s


def expr(e) -> str:
    """The C text of expression ``e``."""
    if isinstance(e, str):  # (C text, as is)
        return e
    if isinstance(e, E.Var):
        return e.name
    if isinstance(e, E.Int):
        return f"{e.value}u" if e.unsigned else str(e.value)
    if isinstance(e, E.Lit):
        return _literal(e)
    if isinstance(e, E.Null):
        return "NULL"
    if isinstance(e, E.Raw):
        return e.text
    if isinstance(e, E.NumOp):
        return C.call(e.op, [expr(a) for a in e.args], e.in_dtypes, e.dtype)
    if isinstance(e, E.NumCast):
        return C.cast(expr(e.value), e.src, e.dst)
    if isinstance(e, E.Counted):
        return "(" + ", ".join([f"LS_COUNT({k}, {n})" for k, n in e.counts] + [f"({expr(e.a)})"]) + ")"
    if isinstance(e, E.Binary):
        p = _PREC[e.op]
        left = _wrap(e.a, p + _clear(e.op, e.a))
        right = _wrap(e.b, p + 1 + _clear(e.op, e.b))
        return f"{left} {e.op} {right}"
    if isinstance(e, E.Unary):
        return e.op + _wrap(e.a, UNARY)
    if isinstance(e, E.Cast):
        return f"({ctype(e.type)})" + _wrap(e.a, UNARY)
    if isinstance(e, E.Load):
        return _wrap(e.base, ATOM) + f"[{expr(e.index)}]"
    if isinstance(e, E.Select):  # (a select under a select is parenthesised, for clarity)
        return f"{_wrap(e.cond, SELECT + 1)} ? {_wrap(e.a, SELECT + 1)} : {_wrap(e.b, SELECT + 1)}"
    if isinstance(e, E.Call):
        return f"{e.fn}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, E.SupportCall):
        return f"{routine(e.routine)}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, E.Paren):
        return f"({expr(e.a)})"
    if isinstance(e, E.Scoped):  # (a GNU statement expression)
        return "({ " + " ".join(statement_line(s, True) for s in e.stmts) + f" {expr(e.value)}; }})"
    if isinstance(e, E.PostInc):
        return _wrap(e.a, ATOM) + "++"
    if isinstance(e, E.AddrOf):
        return "&" + _wrap(e.a, UNARY)
    if isinstance(e, E.Deref):
        return "*" + _wrap(e.a, UNARY)
    if isinstance(e, E.Field):
        return _wrap(e.a, ATOM) + "." + e.name
    if isinstance(e, E.Zero):  # (a compound literal)
        return f"({ctype(e.type)}){{0}}"
    if isinstance(e, E.SizeOf):
        return f"sizeof({expr(e.type) if isinstance(e.type, E.Expr) else ctype(e.type)})"
    if isinstance(e, E.Alloc):
        t = ctype(e.elem)
        pt = t + ("*" if t.endswith("*") else " *")  # (the cast's type: ``void **``)
        if e.zero:
            fn = "ls_calloc" if e.huge else "calloc"
            return f"({pt}){fn}({expr(e.count)}, sizeof({t}))"
        fn = "ls_malloc" if e.huge else "malloc"
        n = _wrap(e.count, _PREC["*"]) if e.sized else expr(E.Cast(T.SIZE, e.count))
        return f"({pt}){fn}({n} * sizeof({t}))"
    if isinstance(e, E.MaxOf):
        return f"INT{C.ctype(e.type.name)[3:-2]}_MAX" if C.ctype(e.type.name).startswith("int") else \
            f"UINT{C.ctype(e.type.name)[4:-2]}_MAX"
    if isinstance(e, E.ThreadNum):
        return "omp_get_thread_num()"
    if isinstance(e, E.NumThreads):
        return "omp_get_num_threads()"
    return vector(e)


# a statement on one line (``statement_line(s, tight)``): the printer's, which sets it (printer.py)
statement_line = None


def _clear(op, child):
    """1 where ``child`` gets parentheses for clarity though C would not need them: an operator
    mixed with a shift or a bitwise one, ``&&`` under ``||``."""
    if not isinstance(child, E.Binary) or child.op == op and op not in ("<<", ">>"):
        return 0
    if op in _BITS or child.op in _BITS or (op == "||" and child.op == "&&"):
        return 100
    return 0


# support routines: C names (``LS_`` macros where the routine is one)
_ROUTINES = {"ws_zero": "LS_WS_ZERO"}


def routine(name: str) -> str:
    if name.startswith("gallop_"):  # (one a coordinate dtype: loopir.support.gallop)
        return f"ls_gallop_{C.ctype(name[7:])}"
    return _ROUTINES.get(name) or f"ls_{name}"


# -- AVX-512 --------------------------------------------------------------------------------------
def _vec(vt):
    d, n = vt.dtype, vt.lanes
    if d == "float64" and n == 8:
        return dict(v="__m512d", sfx="pd", bits=512)
    if d == "float32" and n == 16:
        return dict(v="__m512", sfx="ps", bits=512)
    if d in ("int32", "int64"):
        bits = (32 if d == "int32" else 64) * n
        if bits in (256, 512):
            return dict(v=f"__m{bits}i", sfx="epi" + d[3:], bits=bits)
    raise TypeError(f"no AVX-512 vector of {n} x {d}")


_PRED = {"unord": "_CMP_UNORD_Q", "neq_uq": "_CMP_NEQ_UQ"}
_NEG = {"pd": "_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512({}), "
              "_mm512_set1_epi64((long long)0x8000000000000000ULL)))",
        "ps": "_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512({}), "
              "_mm512_set1_epi32((int)0x80000000U)))"}


def _p(vt):
    """The intrinsics' prefix of the vector's width."""
    return "_mm256" if _vec(vt)["bits"] == 256 else "_mm512"


def vector(e) -> str:
    """The AVX-512 spelling of a vector expression (the GCC vector one of a target-width
    vector's)."""
    if isinstance(e, E.VecBytes):
        return "LS_VB"
    if isinstance(e, E.VFma):
        return f"LS_VFMA_{ctype(e.vt)}({expr(e.a)}, {expr(e.b)}, {expr(e.c)})"
    if isinstance(e, E.VReduce) and e.vt.lanes is None:
        return f"ls_hsum_{ctype(e.vt)[3:]}({expr(e.a)})"
    if isinstance(e, E.VZero):
        return f"_mm512_setzero_{_vec(e.vt)['sfx']}()"
    if isinstance(e, E.VSplat):
        return f"_mm512_set1_{_vec(e.vt)['sfx']}({expr(e.a)})"
    if isinstance(e, E.VLoad):
        k = _vec(e.vt)
        if e.mask is not None:
            return f"{_p(e.vt)}_maskz_loadu_{k['sfx']}({expr(e.mask)}, {expr(e.ptr)})"
        if e.vt.dtype.startswith("int"):
            return f"{_p(e.vt)}_loadu_si{k['bits']}((const void *)({expr(e.ptr)}))"
        return f"_mm512_loadu_{k['sfx']}({expr(e.ptr)})"
    if isinstance(e, E.VGather):
        sfx, isz = _vec(e.vt)["sfx"], 8 if e.vt.dtype == "float64" else 4
        w = "32" if str(e.idx_dtype) == "int32" else "64"
        if e.mask is not None:
            return (f"_mm512_mask_i{w}gather_{sfx}(_mm512_setzero_{sfx}(), {expr(e.mask)}, {expr(e.idx)}, "
                    f"{expr(e.base)}, {isz})")
        return f"_mm512_i{w}gather_{sfx}({expr(e.idx)}, {expr(e.base)}, {isz})"
    if isinstance(e, E.VBinary):
        sfx = _vec(e.vt)["sfx"]
        if e.mask is not None:
            return f"_mm512_mask_{e.op}_{sfx}({expr(e.a)}, {expr(e.mask)}, {expr(e.a)}, {expr(e.b)})"
        return f"_mm512_{e.op}_{sfx}({expr(e.a)}, {expr(e.b)})"
    if isinstance(e, E.VUnary):
        sfx = _vec(e.vt)["sfx"]
        if e.op == "neg":
            return _NEG[sfx].format(expr(e.a))
        return f"_mm512_{e.op}_{sfx}({expr(e.a)})"
    if isinstance(e, E.VCmp):
        sfx = _vec(e.vt)["sfx"]
        if e.mask is not None:
            return f"_mm512_mask_cmp_{sfx}_mask({expr(e.mask)}, {expr(e.a)}, {expr(e.b)}, {_PRED[e.pred]})"
        return f"_mm512_cmp_{sfx}_mask({expr(e.a)}, {expr(e.b)}, {_PRED[e.pred]})"
    if isinstance(e, E.VReduce):
        return f"_mm512_reduce_{e.op}_{_vec(e.vt)['sfx']}({expr(e.a)})"
    if isinstance(e, E.VCompress):
        return f"{_p(e.vt)}_maskz_compress_{_vec(e.vt)['sfx']}({expr(e.mask)}, {expr(e.a)})"
    if isinstance(e, E.VNarrow):
        return f"_mm512_cvtepi64_epi32({expr(e.a)})"
    if isinstance(e, E.MaskAll):
        return f"(__mmask{e.lanes})~0u"
    if isinstance(e, E.MaskFirst):
        one = E.Binary("<<", E.Int(1, unsigned=True), e.n)
        return f"(__mmask{e.lanes})({expr(E.Binary('-', one, E.Int(1)))})"
    if isinstance(e, E.PopCount):
        return f"__builtin_popcount((unsigned){_wrap(e.a, UNARY)})"
    raise TypeError(f"unknown loop IR expression {e!r}")


def vstore(vt, ptr, value, mask) -> str:
    k = _vec(vt)
    if mask is None:
        if vt.dtype.startswith("int"):
            return f"{_p(vt)}_storeu_si{k['bits']}((void *)({expr(ptr)}), {expr(value)});"
        return f"_mm512_storeu_{k['sfx']}({expr(ptr)}, {expr(value)});"
    return f"{_p(vt)}_mask_storeu_{k['sfx']}({expr(ptr)}, {expr(mask)}, {expr(value)});"
