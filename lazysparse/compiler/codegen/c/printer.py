"""C99 backend: prints loop IR as one ``ls_kernel(void **p, int64_t *d)`` function."""
from __future__ import annotations

from lazysparse.compiler.loopir.nodes import Block, Comment, Decl, For, If, Line, While
from lazysparse.compiler.codegen.c import spelling as ctypes_


def emit(block: Block, header_comment: str = "", count: bool = False) -> str:
    """``count``: an instrumented build (compiler/lower/counting.py) declares its counters first."""
    out = [ctypes_.PRELUDE]
    if count:
        from lazysparse.compiler.lower.counting import PRELUDE
        out.append(PRELUDE)
    out += getattr(block, "prelude", ())  # support code of this kernel (compiler/lower/workspace.py)
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


def _emit_block(block, out, ind):
    for s in block.body:
        _emit(s, out, ind)


def _emit(s, out, ind):
    pad = "  " * ind
    if isinstance(s, Block):
        out.append(pad + "{")
        _emit_block(s, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, Line):
        out.append(pad + s.text)
    elif isinstance(s, Comment):
        out.append(pad + "/* " + s.text.replace("*/", "* /") + " */")
    elif isinstance(s, Decl):
        out.append(pad + f"{s.ctype} {s.name}" + (f" = {s.init};" if s.init is not None else ";"))
    elif isinstance(s, For):
        step = s.step or f"{s.var}++"
        out.append(pad + f"for (int64_t {s.var} = {s.lo}; {s.var} < {s.hi}; {step}) {{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, While):
        out.append(pad + f"while ({s.cond}) {{")
        _emit_block(s.body, out, ind + 1)
        out.append(pad + "}")
    elif isinstance(s, If):
        out.append(pad + f"if ({s.cond}) {{")
        _emit_block(s.then, out, ind + 1)
        if s.orelse is not None and s.orelse.body:
            out.append(pad + "} else {")
            _emit_block(s.orelse, out, ind + 1)
        out.append(pad + "}")
    else:
        raise TypeError(f"unknown loop IR node {s!r}")
