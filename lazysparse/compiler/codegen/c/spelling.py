"""C spellings of dtypes, scalar operations and reductions (NumPy semantics)."""
from __future__ import annotations

import numpy as np

CTYPES = {
    "bool": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double",
    "complex64": "float _Complex", "complex128": "double _Complex",
}


def ctype(dtype) -> str:
    d = str(np.dtype(dtype))
    try:
        return CTYPES[d]
    except KeyError:
        raise TypeError(f"lazysparse cannot generate code for dtype {d}") from None


def kind(dtype) -> str:
    return np.dtype(dtype).kind  # b i u f c


def literal(value, dtype) -> str:
    """A C literal for a NumPy scalar (identities and fill values only)."""
    k = kind(dtype)
    if k == "b":
        return "1" if value else "0"
    if k in "iu":
        v = int(value)
        if v == np.iinfo(np.int64).min:
            return "INT64_MIN"
        return f"((int64_t){v}LL)" if k == "i" else f"((uint64_t){v}ULL)"
    if k == "f":
        v = float(value)
        if np.isnan(v):
            return "NAN"
        if np.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v)
    if k == "c":
        return f"({float(np.real(value))!r} + {float(np.imag(value))!r}*I)"
    raise TypeError(f"no C literal for {dtype}")


def cast(expr: str, src, dst) -> str:
    src, dst = str(np.dtype(src)), str(np.dtype(dst))
    if src == dst:
        return expr
    if kind(dst) == "b":
        return f"(({expr}) != 0)"
    if kind(src) == "c" and kind(dst) != "c":
        return f"(({ctype(dst)})creal({expr}))"
    return f"(({ctype(dst)})({expr}))"


def _fmax(a, b, k, big):
    if k == "c":
        raise TypeError("maximum/minimum of complex values is not supported")
    cmp = ">" if big else "<"
    if k == "f":
        return f"((({a}) {cmp} ({b}) || ({a}) != ({a})) ? ({a}) : ({b}))"
    return f"((({a}) {cmp} ({b})) ? ({a}) : ({b}))"


# Integer results C computes in a wider type than NumPy's: C promotes 8- and 16-bit operands to
# int before arithmetic, and ls_ipow works in int64. Such a result is cast to its dtype where it
# is made, so that it wraps as NumPy's does before anything else (a comparison, a division) reads it.
_NARROW = frozenset(("int8", "int16", "uint8", "uint16"))
_IN_INT64 = frozenset(("power",))


def call(op: str, args: list, in_dtypes, out_dtype) -> str:
    """C expression for ``op`` on already-cast argument expressions, of type ``out_dtype``."""
    text = _call(op, args, in_dtypes, out_dtype)
    d = str(np.dtype(out_dtype))
    if d in _NARROW or (op in _IN_INT64 and kind(d) in "iu" and np.dtype(d).itemsize < 8):
        return f"(({CTYPES[d]})({text}))"
    return text


def _call(op: str, args: list, in_dtypes, out_dtype) -> str:
    k = kind(in_dtypes[0]) if in_dtypes else "f"
    a = args[0] if args else None
    b = args[1] if len(args) > 1 else None
    simple = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "less": "<",
              "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
              "not_equal": "!=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
    if op in simple:
        if op in _COMPARE and {kind(d) for d in in_dtypes} == {"i", "u"}:
            return _signed_unsigned(op, a, b, in_dtypes)
        if op in ("add",) and k == "b":
            return f"(({a}) | ({b}))"
        if op == "multiply" and k == "b":
            return f"(({a}) & ({b}))"
        if op in ("less", "less_equal", "greater", "greater_equal") and k == "c":
            c = simple[op]
            strict = c.rstrip("=")
            return (f"((creal({a}) {strict} creal({b})) || (creal({a}) == creal({b}) && "
                    f"cimag({a}) {c} cimag({b})))")
        return f"(({a}) {simple[op]} ({b}))"
    if op == "logical_and":
        return f"(({a}) && ({b}))"
    if op == "logical_or":
        return f"(({a}) || ({b}))"
    if op == "logical_xor":
        return f"((!!({a})) != (!!({b})))"
    if op == "logical_not":
        return f"(!({a}))"
    if op == "maximum":
        return _fmax(a, b, k, True)
    if op == "minimum":
        return _fmax(a, b, k, False)
    if op == "power":
        if k in "iu":
            return f"ls_ipow(({a}), ({b}))"
        if k == "b":
            return f"(({a}) | !({b}))"
        if k == "c":  # NumPy: 0 ** 0 == 1 for complex too (C's cpow gives nan)
            return f"((({b}) == 0) ? ({ctype(out_dtype)})1 : pow(({a}), ({b})))"
        return f"pow(({a}), ({b}))"
    if op == "negative":
        return f"(-({a}))"
    if op == "absolute":
        if k in "iu":
            return f"((({a}) < 0) ? -({a}) : ({a}))"
        if k == "b":
            return a
        if k == "c":
            return f"cabs({a})"
        return f"fabs({a})"
    if op == "invert":
        return f"(!({a}))" if k == "b" else f"(~({a}))"
    if op == "sign":
        if k == "f":
            return f"((({a}) != ({a})) ? ({a}) : (({ctype(out_dtype)})((({a}) > 0) - (({a}) < 0))))"
        if k == "c":  # NumPy 2's: z / |z|, and 0 at 0 (NaN parts give NaN)
            return f"((({a}) == 0) ? ({ctype(out_dtype)})0 : ({a}) / cabs({a}))"
        return f"(({ctype(out_dtype)})((({a}) > 0) - (({a}) < 0)))"
    if op == "square":
        return f"(({a}) * ({a}))"
    if op == "conjugate":
        return f"conj({a})" if k == "c" else a
    if op == "sigmoid":
        return f"(1 / (1 + exp(-({a}))))"
    if op == "relu":
        if k == "f":
            return f"((({a}) > 0 || ({a}) != ({a})) ? ({a}) : 0)"
        return f"((({a}) > 0) ? ({a}) : 0)"
    if op in _MORE:
        return _more(op, a, b, k, in_dtypes, out_dtype)
    if op == "where":
        return f"(({a}) ? ({b}) : ({args[2]}))"
    if op == "cast":
        return cast(a, in_dtypes[0], out_dtype)
    if op in ("rad2deg", "deg2rad"):  # (NumPy's: a multiplication by its constant)
        c = repr(180.0 / np.pi) if op == "rad2deg" else repr(np.pi / 180.0)
        return f"(({a}) * ({ctype(out_dtype)}){c})"
    if op in ("real", "imag"):  # (of a real number: itself, and zero)
        if k == "c":
            return f"{'creal' if op == 'real' else 'cimag'}({a})"
        return a if op == "real" else f"(({ctype(out_dtype)})0)"
    if k == "c" and op == "rint":  # each part rounded, as NumPy does
        return f"(rint(creal({a})) + rint(cimag({a})) * I)"
    if k == "c" and op in ("log2", "log10", "exp2"):  # (no complex spelling in tgmath.h)
        return {"log2": f"(clog({a}) / log(2.0))", "log10": f"(clog({a}) / log(10.0))",
                "exp2": f"cexp(({a}) * log(2.0))"}[op]
    fn = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin",
          "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "arcsin": "asin",
          "arctan": "atan", "arcsinh": "asinh", "arctanh": "atanh", "arccos": "acos",
          "arccosh": "acosh", "cosh": "cosh", "log2": "log2", "log10": "log10", "exp2": "exp2",
          "cbrt": "cbrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "rint"}.get(op)
    if fn is None:
        raise TypeError(f"no C code for operation {op}")
    if k == "c" and fn in ("log1p", "expm1"):
        return f"({'clog(1 + (' + a + '))' if fn == 'log1p' else '(cexp(' + a + ') - 1)'})"
    return f"{fn}({a})"


_COMPARE = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
            "not_equal": "!="}


def _signed_unsigned(op, a, b, in_dtypes):
    """A comparison of int64 with uint64, exact as NumPy 2's loop (C would convert a negative
    int64 to a huge uint64): a negative signed operand is below every unsigned one."""
    c = _COMPARE[op]
    signed_first = kind(in_dtypes[0]) == "i"
    # the answer when the signed operand is negative, read as "signed < unsigned"
    below = op in ("less", "less_equal", "not_equal") if signed_first else \
        op in ("greater", "greater_equal", "not_equal")
    s = "x_" if signed_first else "y_"
    return (f"({{ {ctype(in_dtypes[0])} x_ = ({a}); {ctype(in_dtypes[1])} y_ = ({b}); "
            f"({s} < 0) ? {int(below)} : ((uint64_t)x_ {c} (uint64_t)y_); }})")


# -- NumPy's other elementwise ufuncs ---------------------------------------------------------------
# Each argument is evaluated once: a GNU statement expression ``({ T x_ = (a); ...; value; })``
# (kernels are compiled as gnu99) binds it, so nested calls do not multiply the code. The names
# cannot capture an argument: an argument is evaluated in the enclosing scope of its declaration.
_MORE = frozenset((
    "isnan", "isinf", "isfinite", "signbit", "reciprocal", "fabs", "spacing", "arctan2", "hypot",
    "copysign", "floor_divide", "remainder", "fmod", "fmax", "fmin", "logaddexp", "logaddexp2",
    "heaviside", "nextafter", "left_shift", "right_shift", "ldexp"))

_LIBM2 = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign", "nextafter": "nextafter"}
_FLOAT_ONLY = frozenset(("signbit", "fabs", "spacing", "arctan2", "hypot", "copysign", "logaddexp",
                         "logaddexp2", "heaviside", "nextafter"))
_REAL_ONLY = frozenset(("signbit", "fabs", "spacing", "floor_divide", "remainder", "fmod"))


def _more(op, a, b, k, in_dtypes, out_dtype):
    """C for the ufuncs of ``_MORE`` with NumPy's semantics (npy_math's definitions)."""
    T = ctype(in_dtypes[0])
    if k == "c" and (op in _REAL_ONLY or op in _FLOAT_ONLY or op in ("left_shift", "right_shift", "ldexp")):
        raise TypeError(f"{op}: NumPy has no loop for complex values")
    if op in ("isnan", "isinf", "isfinite"):
        if k in "biu":  # NumPy's integer loops: constants
            return "1" if op == "isfinite" else "0"
        if k == "c":
            join = " && " if op == "isfinite" else " || "
            return (f"({{ {T} z_ = ({a}); ({op}(creal(z_)) != 0){join}({op}(cimag(z_)) != 0); }})")
        return f"({op}({a}) != 0)"
    if op in _FLOAT_ONLY and k != "f":
        raise TypeError(f"{op}: NumPy computes it in a floating-point type, not {in_dtypes[0]}")
    if op == "signbit":
        return f"(signbit({a}) != 0)"
    if op == "fabs":
        return f"fabs({a})"
    if op == "spacing":  # npy_spacing: the gap to the next value away from zero (+ at +-0)
        return (f"({{ {T} x_ = ({a}); isinf(x_) ? ({T})NAN : (x_ == 0) ? nextafter(({T})0, ({T})1) : "
                f"(nextafter(x_, copysign(({T})INFINITY, x_)) - x_); }})")
    if op in _LIBM2:
        return f"{_LIBM2[op]}(({a}), ({b}))"
    if op == "reciprocal":
        if k == "f":
            return f"(({T})1 / ({a}))"
        if k == "c":  # NumPy's (Smith's) complex reciprocal: 1/0 is nan+nanj, not C's inf+nanj
            R = "double" if T == "double _Complex" else "float"
            return (f"({{ {T} z_ = ({a}), o_; {R} zr_ = creal(z_), zi_ = cimag(z_), r_, d_; "
                    f"{R} *p_ = ({R} *)&o_; "
                    f"if (fabs(zi_) <= fabs(zr_)) {{ r_ = zi_ / zr_; d_ = zr_ + zi_ * r_; "
                    f"p_[0] = 1 / d_; p_[1] = -r_ / d_; }} "
                    f"else {{ r_ = zr_ / zi_; d_ = zr_ * r_ + zi_; p_[0] = r_ / d_; p_[1] = -1 / d_; }} "
                    f"o_; }})")
        # NumPy: (T)(1.0 / x); 1/0 converts an infinity, whose value NumPy's build decides:
        # asked of NumPy itself here
        with np.errstate(all="ignore"):
            z = int(np.reciprocal(np.zeros(1, dtype=np.dtype(in_dtypes[0])))[0])
        lit = literal(z, in_dtypes[0])
        ones = "(x_ == 1 || x_ == -1)" if k == "i" else "(x_ == 1)"
        return f"({{ {T} x_ = ({a}); (x_ == 0) ? ({T}){lit} : {ones} ? x_ : ({T})0; }})"
    if op in ("floor_divide", "remainder", "fmod"):
        return _divmod(op, a, b, k, T)
    if op in ("fmax", "fmin"):
        cmp = ">=" if op == "fmax" else "<="
        if k == "c":  # NumPy's CGE / CLE with NaN parts of the second argument losing
            R = "double" if T == "double _Complex" else "float"
            strict = cmp[0]
            return (f"({{ {T} x_ = ({a}), y_ = ({b}); {R} xr_ = creal(x_), xi_ = cimag(x_), "
                    f"yr_ = creal(y_), yi_ = cimag(y_); "
                    f"(yr_ != yr_ || yi_ != yi_ || (xr_ {strict} yr_ && xi_ == xi_ && yi_ == yi_) || "
                    f"(xr_ == yr_ && xi_ {cmp} yi_)) ? x_ : y_; }})")
        if k == "f":  # NaN is missing data: the other argument (the first one when both are)
            return f"({{ {T} x_ = ({a}), y_ = ({b}); (x_ {cmp} y_ || y_ != y_) ? x_ : y_; }})"
        return f"({{ {T} x_ = ({a}), y_ = ({b}); (x_ {cmp} y_) ? x_ : y_; }})"
    if op == "heaviside":
        return (f"({{ {T} x_ = ({a}), h_ = ({b}); (x_ != x_) ? ({T})NAN : (x_ == 0) ? h_ : "
                f"(x_ < 0) ? ({T})0 : ({T})1; }})")
    if op in ("logaddexp", "logaddexp2"):  # npy_logaddexp(2): stable, equal infinities exact
        sfx = "f" if T == "float" else ""  # (NumPy's NPY_LOGE2f, NPY_LOG2Ef for float32)
        if op == "logaddexp":
            same, term = f"0.693147180559945309417232121458176568{sfx}", "log1p(exp({}))"
        else:
            same, term = f"({T})1", f"1.442695040888963407359924681001892137{sfx} * log1p(exp2({{}}))"
        return (f"({{ {T} x_ = ({a}), y_ = ({b}), t_ = x_ - y_; (x_ == y_) ? x_ + {same} : "
                f"(t_ > 0) ? x_ + {term.format('-t_')} : (t_ <= 0) ? y_ + {term.format('t_')} : t_; }})")
    if op in ("left_shift", "right_shift"):
        if k not in "biu":
            raise TypeError(f"{op}: NumPy shifts integers only, not {in_dtypes[0]}")
        bits = np.dtype(in_dtypes[0]).itemsize * 8
        fits = f"((uint64_t)y_ < {bits})"  # NumPy's (size_t)b: a negative count is huge
        if op == "left_shift":  # shifted as unsigned (the same bits; no signed overflow)
            return f"({{ {T} x_ = ({a}), y_ = ({b}); {fits} ? ({T})((uint64_t)x_ << y_) : ({T})0; }})"
        fill = f"(x_ < 0) ? ({T})-1 : ({T})0" if k == "i" else f"({T})0"
        return f"({{ {T} x_ = ({a}), y_ = ({b}); {fits} ? ({T})(x_ >> y_) : {fill}; }})"
    if op == "ldexp":  # an exponent outside int clamps to INT_MIN / INT_MAX, as NumPy's
        return (f"({{ int64_t e_ = (int64_t)({b}); ldexp(({a}), (int)(e_ > INT32_MAX ? INT32_MAX : "
                f"e_ < INT32_MIN ? INT32_MIN : e_)); }})")
    raise TypeError(f"no C code for operation {op}")


def _divmod(op, a, b, k, T):
    """floor_divide / remainder / fmod. Integers: NumPy gives 0 for a zero divisor and wraps
    MIN // -1 (no trap, no undefined behaviour). Floats: npy_divmod (CPython's float divmod)."""
    if k in "biu":
        if k == "i":
            if op == "floor_divide":
                body = (f"(y_ == 0) ? ({T})0 : (y_ == -1) ? ({T})(0 - (uint64_t)x_) : "
                        f"({{ {T} q_ = x_ / y_, r_ = x_ % y_; "
                        f"(r_ != 0 && ((r_ < 0) != (y_ < 0))) ? ({T})(q_ - 1) : q_; }})")
            elif op == "remainder":
                body = (f"(y_ == 0 || y_ == -1) ? ({T})0 : ({{ {T} r_ = x_ % y_; "
                        f"(r_ != 0 && ((r_ < 0) != (y_ < 0))) ? ({T})(r_ + y_) : r_; }})")
            else:
                body = f"(y_ == 0 || y_ == -1) ? ({T})0 : ({T})(x_ % y_)"
        else:
            c = "/" if op == "floor_divide" else "%"
            body = f"(y_ == 0) ? ({T})0 : ({T})(x_ {c} y_)"
        return f"({{ {T} x_ = ({a}), y_ = ({b}); {body}; }})"
    if op == "fmod":
        return f"fmod(({a}), ({b}))"
    if op == "remainder":
        return (f"({{ {T} x_ = ({a}), y_ = ({b}), m_ = fmod(x_, y_); "
                f"if (y_) {{ if (m_) {{ if ((y_ < 0) != (m_ < 0)) m_ += y_; }} "
                f"else m_ = copysign(({T})0, y_); }} m_; }})")
    return (f"({{ {T} x_ = ({a}), y_ = ({b}), m_ = fmod(x_, y_), d_, f_; "
            f"if (!y_) f_ = x_ / y_; "
            f"else {{ d_ = (x_ - m_) / y_; "
            f"if (m_ && ((y_ < 0) != (m_ < 0))) d_ -= ({T})1; "
            f"if (d_) {{ f_ = floor(d_); if (d_ - f_ > ({T})0.5) f_ += ({T})1; }} "
            f"else f_ = copysign(({T})0, x_ / y_); }} "
            f"f_; }})")


def reduce_step(red: str, acc: str, v: str, dtype) -> str:
    """Statement folding ``v`` into ``acc``."""
    k = kind(dtype)
    if red == "sum":
        return f"{acc} |= {v};" if k == "b" else f"{acc} += {v};"
    if red == "prod":
        return f"{acc} &= {v};" if k == "b" else f"{acc} *= {v};"
    big = red == "max"
    if k == "b":
        return f"{acc} {'|' if big else '&'}= {v};"
    cmp = ">" if big else "<"
    if k == "f":
        return f"if (({v}) {cmp} {acc} || ({v}) != ({v})) {acc} = {v};"
    return f"if (({v}) {cmp} {acc}) {acc} = {v};"
