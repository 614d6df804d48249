"""Expressions of the loop IR: variables, literals, operators, loads, casts, selects, NumPy's
scalar operations and casts (with NumPy's semantics), calls of named math functions and of
named runtime support routines, operation counts of an instrumented build, and SIMD vector
operations over lanes (loads, gathers, broadcasts, arithmetic, compares, reductions, compress)
with their lane masks. Frozen values; printers spell them (the C printer: compiler/codegen/c/exprs.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Expr:
    """Base of expression nodes (``children`` lists sub-expressions, for walks)."""
    __slots__ = ()

    def children(self):
        return tuple(v for v in vars(self).values() if isinstance(v, Expr))


@dataclass(frozen=True)
class Var(Expr):
    name: str


@dataclass(frozen=True)
class Int(Expr):
    """An integer constant of the index type (``unsigned``: of the target's unsigned int)."""
    value: int
    unsigned: bool = False


@dataclass(frozen=True)
class Lit(Expr):
    """A value of NumPy dtype ``dtype`` (identities, fill values): NaN and infinities included.
    ``spelling``, a layout hint like ``oneline``: the literal's text where it must read other
    than the printer's own (``1e300`` for a work estimate that always passes, not ``1e+300``);
    it must denote ``value``."""
    value: object
    dtype: str
    spelling: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))
        if self.spelling is not None and np.dtype(self.dtype).type(self.spelling) != self.value:
            raise ValueError(f"{self.spelling!r} does not spell {self.value!r}")


@dataclass(frozen=True)
class Null(Expr):
    """The null pointer."""


@dataclass(frozen=True)
class Raw(Expr):
    """An expression given as C text (``var`` makes one of text that is not a name or a number).
    No lowering module builds one (tests/compiler/loopir checks it); the printers' tests do, and
    ``loopir.walk.text_debt`` counts them in a lowered program."""
    text: str


UNARY = frozenset(("-", "!", "~"))
BINARY = frozenset(("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||",
                    "<", "<=", ">", ">=", "==", "!="))


@dataclass(frozen=True)
class Unary(Expr):
    op: str
    a: Expr

    def __post_init__(self):
        if self.op not in UNARY:
            raise ValueError(f"unknown unary operator {self.op!r}")


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    a: Expr
    b: Expr

    def __post_init__(self):
        if self.op not in BINARY:
            raise ValueError(f"unknown binary operator {self.op!r}")
        for f in ("a", "b"):
            if not isinstance(getattr(self, f), Expr):
                raise TypeError(f"Binary {self.op!r}: operand {getattr(self, f)!r} is not an expression")


@dataclass(frozen=True)
class Paren(Expr):
    """``a``, parenthesised where printed as text (layout only: generated text stays stable)."""
    a: Expr


@dataclass(frozen=True)
class Load(Expr):
    """``base[index]``: an element of an array (a pointer-valued expression)."""
    base: Expr
    index: Expr


@dataclass(frozen=True)
class Cast(Expr):
    """``a`` converted to ``type`` (a loopir.types type)."""
    type: object
    a: Expr


@dataclass(frozen=True)
class Select(Expr):
    """``a`` where ``cond`` holds, else ``b`` (only the one chosen is evaluated)."""
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True)
class NumOp(Expr):
    """NumPy's elementwise operation ``op`` (a ufunc's name, ``where``, ``cast``, or one of
    ir.ops' extras: ``relu``, ``sigmoid``) on ``args`` already converted to ``in_dtypes``,
    giving a value of ``dtype``: NumPy's semantics (NaN, integer division by zero, shifts...),
    as the printers spell them."""
    op: str
    args: tuple
    in_dtypes: tuple
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "in_dtypes", tuple(str(np.dtype(d)) for d in self.in_dtypes))
        object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))


@dataclass(frozen=True)
class NumCast(Expr):
    """``value`` (of dtype ``src``) converted to dtype ``dst`` as NumPy's ``astype`` does:
    itself when the dtypes are equal, a test against zero to bool, a complex value's real part
    to a real dtype."""
    value: Expr
    src: str
    dst: str

    def __post_init__(self):
        object.__setattr__(self, "src", str(np.dtype(self.src)))
        object.__setattr__(self, "dst", str(np.dtype(self.dst)))


@dataclass(frozen=True)
class Counted(Expr):
    """``a``, adding ``counts`` (``(counter, n)`` pairs) to an instrumented build's counters
    (ls.opcount) when it is evaluated: the operations of a ``where`` branch that runs."""
    counts: tuple
    a: Expr


# NumPy operations whose spelling calls a math function that has SIMD variants (glibc's
# libmvec), by the kinds of input for which it does: a loop that calls one vectorises into
# calls of the vector variant (compiler/lower/stores.py keeps such loops free of other work)
_VECTOR_MATH = {op: "biufc" for op in (
    "exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "cbrt", "log2", "log10", "exp2", "sigmoid", "arctan2",
    "hypot", "logaddexp", "logaddexp2")}
_VECTOR_MATH.update({"log1p": "biuf", "expm1": "biuf", "power": "fc"})


def vector_math(e: NumOp) -> bool:
    """Whether NumPy operation ``e`` calls a math function that has SIMD variants."""
    kinds = _VECTOR_MATH.get(e.op)
    k = np.dtype(e.in_dtypes[0]).kind if e.in_dtypes else "f"
    return kinds is not None and k in kinds


@dataclass(frozen=True)
class Call(Expr):
    """A named math function (``exp``, ``log1p``, ``sqrt``...) of its arguments."""
    fn: str
    args: tuple


@dataclass(frozen=True)
class SupportCall(Expr):
    """A named runtime support routine (compiler/codegen/<target>/support.py defines it):
    ``merge_sort``, ``ws_size``, ``ism_reserve``..."""
    routine: str
    args: tuple


@dataclass(frozen=True)
class Scoped(Expr):
    """The value of ``value`` after ``stmts`` (statements, in a scope of their own) run."""
    stmts: tuple
    value: Expr


@dataclass(frozen=True)
class PostInc(Expr):
    """The value of ``a``, which is then incremented by one."""
    a: Expr


@dataclass(frozen=True)
class AddrOf(Expr):
    a: Expr


@dataclass(frozen=True)
class Deref(Expr):
    """The value at the address ``a`` (a pointer-valued expression)."""
    a: Expr


@dataclass(frozen=True)
class Field(Expr):
    """A field of a support routine's state (``ism.an``)."""
    a: Expr
    name: str


@dataclass(frozen=True)
class Zero(Expr):
    """The zero of ``type`` (every lane or member zero, for an aggregate such as a vector, an
    array or a support routine's state)."""
    type: object


@dataclass(frozen=True)
class SizeOf(Expr):
    """The bytes of a value of ``type`` (a loopir type, or an expression: of its type)."""
    type: object


@dataclass(frozen=True)
class Alloc(Expr):
    """A new array of ``count`` elements of ``elem`` (zeroed when ``zero``), or null when out of
    memory. ``huge``: a large one asks for huge pages (as NumPy's arrays do). ``sized``: the
    count is already of the ``size`` type (printed without a conversion)."""
    elem: object
    count: Expr
    zero: bool = False
    huge: bool = True
    sized: bool = False


@dataclass(frozen=True)
class MaxOf(Expr):
    """The largest value of the integer type ``type``."""
    type: object


@dataclass(frozen=True)
class ThreadNum(Expr):
    """This thread's number in the parallel team running it (0 outside one)."""


@dataclass(frozen=True)
class NumThreads(Expr):
    """The size of the team running it (1 outside one)."""


# -- SIMD ---------------------------------------------------------------------------------------
# ``vt`` is a loopir.types.Vec; a ``mask`` of None is all lanes. Masked-off lanes of a load or a
# gather are zero; of an arithmetic operation, its first operand's.

@dataclass(frozen=True)
class VZero(Expr):
    vt: object


@dataclass(frozen=True)
class VSplat(Expr):
    """Every lane ``a``."""
    vt: object
    a: Expr


@dataclass(frozen=True)
class VLoad(Expr):
    """Consecutive lanes from the address ``ptr`` (unaligned)."""
    vt: object
    ptr: Expr
    mask: Expr = None


@dataclass(frozen=True)
class VGather(Expr):
    """``base[idx[lane]]`` per lane; ``idx`` a vector of ``idx_dtype`` lanes."""
    vt: object
    base: Expr
    idx: Expr
    idx_dtype: str
    mask: Expr = None


VOPS = frozenset(("add", "sub", "mul", "div", "max", "min"))


@dataclass(frozen=True)
class VBinary(Expr):
    op: str
    vt: object
    a: Expr
    b: Expr
    mask: Expr = None


@dataclass(frozen=True)
class VUnary(Expr):
    """``neg`` (the sign bit flipped, as a scalar ``-x``), ``abs``, ``sqrt``."""
    op: str
    vt: object
    a: Expr


@dataclass(frozen=True)
class VCmp(Expr):
    """The lane mask where ``a pred b``: ``unord`` (either is NaN), ``neq_uq`` (not equal,
    or unordered); lanes off in ``mask`` are off."""
    pred: str
    vt: object
    a: Expr
    b: Expr
    mask: Expr = None


@dataclass(frozen=True)
class VReduce(Expr):
    """The ``add``/``max``/``min`` of all lanes (of a target-width vector: ``add`` only)."""
    op: str
    vt: object
    a: Expr


@dataclass(frozen=True)
class VCompress(Expr):
    """The lanes of ``a`` on in ``mask``, packed to the low lanes (the rest zero)."""
    vt: object
    mask: Expr
    a: Expr


@dataclass(frozen=True)
class VNarrow(Expr):
    """64-bit integer lanes narrowed to 32 bits (``vt``: the wide type)."""
    vt: object
    a: Expr


@dataclass(frozen=True)
class VecBytes(Expr):
    """The bytes of the target's vector registers (a compile-time constant: 16, 32 or 64), the
    width of a ``Vec`` of no fixed lane count."""


def lanes(isz) -> Expr:
    """The lanes of a target-width vector of ``isz``-byte values: ``(VecBytes / isz)``."""
    return Paren(Binary("/", VecBytes(), Int(isz)))


@dataclass(frozen=True)
class VFma(Expr):
    """``c + a * b`` lane by lane in one rounding (vectors of ``vt``)."""
    vt: object
    a: Expr
    b: Expr
    c: Expr


@dataclass(frozen=True)
class MaskAll(Expr):
    lanes: int


@dataclass(frozen=True)
class MaskFirst(Expr):
    """The first ``n`` lanes on (``0 <= n < lanes``)."""
    lanes: int
    n: Expr


@dataclass(frozen=True)
class PopCount(Expr):
    """How many lanes of a mask are on."""
    a: Expr


def var(x) -> Expr:
    """``x`` as an expression: an Expr as is, an int as Int, a name as Var, other text as Raw."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return Int(int(x))
    if isinstance(x, str):
        if x.isidentifier():
            return Var(x)
        if x.isdigit():
            return Int(int(x))
        return Raw(x)
    raise TypeError(f"not an expression: {x!r}")


def add(a, b) -> Binary:
    return Binary("+", var(a), var(b))


def sub(a, b) -> Binary:
    return Binary("-", var(a), var(b))


def mul(a, b) -> Binary:
    return Binary("*", var(a), var(b))


def lt(a, b) -> Binary:
    return Binary("<", var(a), var(b))


def load(base, index) -> Load:
    return Load(var(base), var(index))
