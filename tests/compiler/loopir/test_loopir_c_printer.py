"""The C printer spells each loop IR node: small hand-built IR against the expected C."""
from __future__ import annotations

import math

import pytest

from lazysparse.compiler.codegen.c import printer, support
from lazysparse.compiler.codegen.c.exprs import ctype, expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block, Comment, Decl, For, If, RawText, While
from lazysparse.compiler.loopir.printer import show

x, y, i, n = E.Var("x"), E.Var("y"), E.Var("i"), E.Var("n")


def body(*stmts):
    """The C lines of ``stmts`` as the kernel's body (indentation stripped of its first level)."""
    src = printer.emit(Block(list(stmts)))
    lines = src.split("int32_t ls_kernel(void **p, int64_t *d) {\n", 1)[1].rsplit("\n}\n", 1)[0]
    return [ln[2:] for ln in lines.splitlines()]


def one(stmt):
    (line,) = body(stmt)
    return line


@pytest.mark.parametrize("t, c", [
    (T.Scalar("float64"), "double"), (T.Scalar("float32"), "float"), (T.Scalar("int32"), "int32_t"),
    (T.Scalar("bool"), "uint8_t"), (T.Scalar("complex128"), "double _Complex"), (T.INT, "int"),
    (T.SIZE, "size_t"), (T.Ptr(T.INDEX), "int64_t *"), (T.Ptr(T.Scalar("float64"), const=True), "const double *"),
    (T.Ptr(T.Scalar("int32"), restrict=True), "int32_t *restrict"), (T.Opaque("ws_key"), "LS_WK"),
    (T.Vec("float64", 8), "__m512d"), (T.Vec("float32", 16), "__m512"), (T.Vec("int32", 8), "__m256i"),
    (T.Vec("int64", 8), "__m512i"), (T.Mask(16), "__mmask16")])
def test_types(t, c):
    assert ctype(t) == c


@pytest.mark.parametrize("e, c", [
    (E.Binary("*", E.add(x, 1), y), "(x + 1) * y"),
    (E.add(x, E.mul(y, 2)), "x + y * 2"),
    (E.sub(x, E.sub(y, 1)), "x - (y - 1)"),
    (E.sub(E.sub(x, y), 1), "x - y - 1"),
    (E.add(x, E.Binary(">>", E.sub(y, x), E.Int(1))), "x + ((y - x) >> 1)"),  # (clarity)
    (E.Binary("||", E.Binary("&&", x, y), i), "(x && y) || i"),
    (E.Cast(T.INDEX, E.load("p", i)), "(int64_t)p[i]"),
    (E.Cast(T.SIZE, E.Select(E.Binary(">", n, E.Int(0)), n, E.Int(1))), "(size_t)(n > 0 ? n : 1)"),
    (E.Select(x, E.Int(0), E.Select(y, E.Int(1), E.Int(2))), "x ? 0 : (y ? 1 : 2)"),
    (E.Unary("!", E.Binary("==", x, y)), "!(x == y)"),
    (E.Lit(math.inf, "float64"), "INFINITY"), (E.Unary("-", E.Lit(math.inf, "float64")), "-INFINITY"),
    (E.Lit(3, "int64"), "((int64_t)3LL)"), (E.Int(1, unsigned=True), "1u"), (E.Null(), "NULL"),
    (E.Lit(1e300, "float64"), "1e+300"), (E.Paren(E.Lit(1e300, "float64", spelling="1e300")), "(1e300)"),
    (E.Call("exp", (x,)), "exp(x)"),
    (E.SupportCall("msort", (x, y)), "ls_msort(x, y)"),
    (E.SupportCall("ws_size", (E.AddrOf(E.Var("ws")),)), "ls_ws_size(&ws)"),
    (E.Field(E.Var("ism"), "an"), "ism.an"), (E.PostInc(E.load("h", i)), "h[i]++"),
    (E.SizeOf(T.Scalar("float64")), "sizeof(double)"),
    (E.Alloc(T.INDEX, n), "(int64_t *)ls_malloc((size_t)n * sizeof(int64_t))"),
    (E.Alloc(T.Scalar("int32"), n, zero=True, huge=False), "(int32_t *)calloc(n, sizeof(int32_t))"),
    (E.ThreadNum(), "omp_get_thread_num()"), (E.NumThreads(), "omp_get_num_threads()"),
    (E.Binary("<", x, E.Raw("a * b")), "x < a * b"),  # (C text: parenthesised only as needed)
    (E.Binary("*", x, E.Raw("a + b")), "x * (a + b)"),
])
def test_expressions(e, c):
    assert expr(e) == c


def test_a_literals_spelling_denotes_its_value():
    with pytest.raises(ValueError, match="does not spell"):
        E.Lit(1e300, "float64", spelling="1e30")


V8, I8 = T.Vec("float64", 8), T.Vec("int32", 8)
m = E.Var("m")


@pytest.mark.parametrize("e, c", [
    (E.VZero(V8), "_mm512_setzero_pd()"),
    (E.VSplat(V8, x), "_mm512_set1_pd(x)"),
    (E.VLoad(V8, E.add("v0", i)), "_mm512_loadu_pd(v0 + i)"),
    (E.VLoad(V8, E.add("v0", i), m), "_mm512_maskz_loadu_pd(m, v0 + i)"),
    (E.VLoad(I8, E.add("c0", i)), "_mm256_loadu_si256((const void *)(c0 + i))"),
    (E.VLoad(I8, E.add("c0", i), m), "_mm256_maskz_loadu_epi32(m, c0 + i)"),
    (E.VGather(V8, x, E.Var("vi"), "int32"), "_mm512_i32gather_pd(vi, x, 8)"),
    (E.VGather(V8, x, E.Var("vi"), "int64", m), "_mm512_mask_i64gather_pd(_mm512_setzero_pd(), m, vi, x, 8)"),
    (E.VBinary("add", V8, x, y), "_mm512_add_pd(x, y)"),
    (E.VBinary("max", V8, x, y, m), "_mm512_mask_max_pd(x, m, x, y)"),
    (E.VUnary("sqrt", T.Vec("float32", 16), x), "_mm512_sqrt_ps(x)"),
    (E.VCmp("unord", V8, x, x, m), "_mm512_mask_cmp_pd_mask(m, x, x, _CMP_UNORD_Q)"),
    (E.VReduce("add", V8, x), "_mm512_reduce_add_pd(x)"),
    (E.VCompress(I8, m, x), "_mm256_maskz_compress_epi32(m, x)"),
    (E.VNarrow(T.Vec("int64", 8), x), "_mm512_cvtepi64_epi32(x)"),
    (E.MaskAll(8), "(__mmask8)~0u"),
    (E.MaskFirst(8, E.sub("z", "j")), "(__mmask8)((1u << (z - j)) - 1)"),
    (E.PopCount(m), "__builtin_popcount((unsigned)m)"),
])
def test_vector_expressions(e, c):
    assert expr(e) == c
    assert "_mm" in printer.emit(Block([S.ExprStmt(e)])).split("{", 1)[0] or "immintrin" in printer.emit(
        Block([S.ExprStmt(E.VZero(V8))]))


@pytest.mark.parametrize("s, c", [
    (S.Declare("x", T.INDEX, E.Int(0)), "int64_t x = 0;"),
    (S.Declare("x", T.Scalar("float32"), E.Lit(0.5, "float32"), const=True), "const float x = 0.5;"),
    (S.Declare("p", T.Ptr(T.Scalar("int32")), E.Null()), "int32_t * p = NULL;"),
    (S.Declare("rb", T.Array(T.Scalar("float64"), n)), "double rb[n];"),
    (S.Assign(E.load("o", i), y), "o[i] = y;"),
    (S.Assign((x, y), E.Null()), "x = y = NULL;"),
    (S.Update(x, "+", E.Int(1)), "x++;"),
    (S.Update(x, "+", y), "x += y;"),
    (S.Update(x, "|", E.Binary("==", y, E.Int(0))), "x |= y == 0;"),
    (S.Reduce("sum", x, y, "float64"), "x += y;"),
    (S.Reduce("max", x, y, "float64"), "if ((y) > x || (y) != (y)) x = y;"),
    (S.Reduce("sum", x, y, "bool"), "x |= y;"),
    (S.ExprStmt(E.SupportCall("ws_free", (E.AddrOf(E.Var("ws")),))), "ls_ws_free(&ws);"),
    (S.Break(), "break;"), (S.Continue(), "continue;"), (S.Return(E.Int(1)), "return 1;"),
    (S.Fail(), "goto ls_fail;"),
    (S.Free(x), "free(x);"),
    (S.Memset(E.AddrOf(E.Var("ws")), 0, None, None), "memset(&ws, 0, sizeof ws);"),
    (S.Memset(x, 0xff, n, T.INDEX), "memset(x, 0xff, (size_t)n * sizeof(int64_t));"),
    (S.Memcpy(x, y, n, T.Scalar("float64")), "memcpy(x, y, (size_t)n * sizeof(double));"),
    (S.Grow(T.Scalar("int32"), x, E.Var("cap"), E.add("on", 1)), "LS_GROW(int32_t, x, cap, on + 1);"),
    (S.Resize(T.Scalar("float64"), x, n), "LS_RESIZE(double, x, n);"),
    (S.Prefetch(E.add("v0", i), 4096), "__builtin_prefetch((const void *)((uintptr_t)(v0 + i) + 4096), 0, 0);"),
    (S.VStore(I8, E.add("oc", "on"), x, E.Var("lo")), "_mm256_mask_storeu_epi32(oc + on, lo, x);"),
    (S.VStore(V8, E.add("ov", "on"), x, E.Var("lo")), "_mm512_mask_storeu_pd(ov + on, lo, x);"),
    (S.Tally(3, E.Int(2)), "LS_COUNT(3, 2);"),
    (S.Inline((S.Free(x), S.Assign(x, E.Null()))), "free(x); x = NULL;"),
    (S.Scope((S.Declare("s", T.Ptr(T.INDEX), x), S.Assign(x, y), S.Assign(y, E.Var("s"))), oneline=True),
     "{ int64_t *s = x; x = y; y = s; }"),
    (S.If(E.Unary("!", x), S.Fail(), oneline=True), "if (!x) goto ls_fail;"),
    (S.If(x, S.Assign(y, x), S.Assign(y, i), oneline=True), "if (x) y = x; else y = i;"),
    (S.If(x, S.Inline((S.Assign(y, E.Int(1)), S.Break())), oneline=True), "if (x) { y = 1; break; }"),
    (S.If(x, S.Reduce("max", y, x, "float64"), oneline=True), "if (x) { if ((x) > y || (x) != (x)) y = x; }"),
    (S.While(E.lt(x, y), S.Update(x, "+", E.Int(1)), oneline=True), "while (x < y) x++;"),
    (Comment("why"), "/* why */"),
    (RawText("raw;"), "raw;"),
    (Decl("int64_t", "k", "0"), "int64_t k = 0;"),
])
def test_statements(s, c):
    assert one(s) == c


def test_loops_and_conditionals():
    loop = S.For("i", E.Int(0), n, Block([S.Update(x, "+", i)]), unroll=4)
    assert body(loop) == ["#pragma GCC unroll 4", "for (int64_t i = 0; i < n; i++) {", "  x += i;", "}"]
    red = S.SimdHint((S.Reduction("+", "acc"), S.Reduction("+", "cnt")))
    assert body(S.For("i", E.Int(0), n, Block(), simd=red))[0] == "#pragma omp simd reduction(+:acc) reduction(+:cnt)"
    assert body(S.For("i", E.Int(0), n, Block(), simd=S.SimdHint()))[0] == "#pragma omp simd"
    assert body(S.While(E.lt(x, n), Block([S.Update(x, "+", E.Int(2))]))) == ["while (x < n) {", "  x += 2;", "}"]
    step = S.While(E.Binary("<=", E.add(x, 8), n), Block([S.Break()]), step=S.Update(x, "+", E.Int(8)))
    assert body(step) == ["for (; x + 8 <= n; x += 8) {", "  break;", "}"]
    assert body(S.If(x, Block([S.Break()]), Block([S.Continue()]))) == [
        "if (x) {", "  break;", "} else {", "  continue;", "}"]
    assert body(S.If(x, Block([S.Break()]), Block())) == ["if (x) {", "  break;", "}"]
    assert body(Block([S.Break()])) == ["{", "  break;", "}"]
    assert body(For("i", "0", "n", Block().add("x += i;"))) == ["for (int64_t i = 0; i < n; i++) {", "  x += i;", "}"]
    assert body(While("x", Block())) == ["while (x) {", "}"]
    assert body(If("x", Block().add("y;"))) == ["if (x) {", "  y;", "}"]


def test_parallel_and_atomics():
    loop = S.For("i", E.Int(0), n, Block([S.Update(x, "+", i)]))
    par = S.ParallelFor(loop, S.Schedule("dynamic", E.Var("ls_chunk")), threads=E.Var("nt"),
                        when=E.Binary(">", E.Var("nt"), E.Int(1)), reductions=(S.Reduction("+", "nz"),))
    assert body(par)[0] == ("#pragma omp parallel for schedule(dynamic, ls_chunk) num_threads((int)nt) "
                            "if(nt > 1) reduction(+:nz)")
    assert body(par)[1] == "for (int64_t i = 0; i < n; i++) {"
    assert body(S.ParallelFor(loop))[0] == "#pragma omp parallel for schedule(static)"
    region = S.Parallel(Block([S.Barrier()]), threads=E.Var("nt"))
    assert body(region) == ["#pragma omp parallel num_threads((int)nt)", "{", "  #pragma omp barrier", "}"]
    assert body(S.Atomic(S.Update(E.load("o", i), "+", x))) == ["#pragma omp atomic", "o[i] += x;"]
    assert body(S.Atomic(S.Assign(y, E.load("o", i)), "read")) == ["#pragma omp atomic read", "y = o[i];"]
    with pytest.raises(ValueError):
        S.Atomic(S.Break(), "sometimes")


def test_feature_guards():
    assert body(S.FeatureGuard("avx512", S.Assign(x, E.Int(1)), S.Assign(x, E.Int(0)))) == [
        "#if defined(__AVX512F__) && defined(__AVX512VL__)", "x = 1;", "#else", "x = 0;", "#endif"]
    assert body(S.FeatureIf("avx512", E.Var("flag"), Block([S.Break()]), Block([S.Continue()]))) == [
        "#if defined(__AVX512F__) && defined(__AVX512VL__)", "if (flag) {", "  break;", "} else", "#endif",
        "{", "  continue;", "}"]
    assert body(S.FeatureGuard("ws_zero", S.Break())) == ["#ifdef LS_WS_ZERO", "break;", "#endif"]


def test_vector_code_includes_the_intrinsics_header():
    src = printer.emit(Block([S.Declare("v", V8, E.VZero(V8))]))
    assert "#include <immintrin.h>" in src
    assert "#include <immintrin.h>" not in printer.emit(Block([S.Break()]))


def test_support_code_by_name():
    from lazysparse.compiler.loopir import support as L
    src = printer.emit(Block([S.Declare("t", T.INDEX, E.ThreadNum())]))
    assert "omp_get_thread_num(void)" not in src  # (asked for by the block's prelude only)
    blk = Block([S.Declare("t", T.INDEX, E.ThreadNum())])
    blk.prelude = [L.THREAD_NUM, L.TEAM_NUM]
    src = printer.emit(blk)
    assert support.THREAD_NUM in src and support.TEAM_NUM in src
    blk.prelude = [L.workspace("dense", "float64", "int32", "sum", E.Lit(0.0, "float64"))]
    src = printer.emit(blk)
    assert "#define LS_WT double" in src and "#define LS_WK int32_t" in src and "#define LS_WIDENT ((double)0.0)" in src
    assert "typedef struct" in src and "ls_ism_spill" in src
    assert "LS_COUNT" not in src and support.COUNTERS in printer.emit(blk, count=True)


def test_counting_prelude_alias_matches_the_printers():
    from lazysparse.compiler.lower import counting
    assert counting.PRELUDE == support.COUNTERS


def test_libmvec_table_matches_the_toolchains_probe():
    from lazysparse.runtime import toolchain
    assert support.MVEC_UNARY == toolchain.MVEC_UNARY and support.MVEC_BINARY == toolchain.MVEC_BINARY
    assert support.mvec_declarations() == toolchain.mvec_declarations()
    assert support.calls_libm("y = expm1(x);") and not support.calls_libm("y = myexp(x);")


def test_debug_printer_is_not_c():
    prog = Block([S.For("i", E.Int(0), n, Block([S.Reduce("sum", E.Var("acc"), E.load("v", i), "float64")]),
                        unroll=2),
                  S.Declare("v", V8, E.VLoad(V8, E.add("v0", i), m)), RawText("raw;")])
    text = show(prog)
    assert text.splitlines()[0] == "for i in [0, n) unroll=2:"
    assert "acc sum<float64>= v[i]" in text and "vload(float64x8, (v0 + i), m)" in text and "raw `raw;`" in text
    assert "_mm" not in text and "int64_t" not in text
