use super::*;

fn pp(src: &str) -> String {
    match preprocess(src, &[]) {
        Ok(p) => p.text,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn pp_with(src: &str, predefined: &[(&str, &str)]) -> String {
    match preprocess(src, predefined) {
        Ok(p) => p.text,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// The error, as `line:column: message`.
fn pp_err(src: &str) -> String {
    match preprocess(src, &[]) {
        Ok(p) => panic!("expected an error, got {:?}", p.text),
        Err(e) => format!("{}:{}: {}", e.line(), e.column(), e.message),
    }
}

fn lines(s: &str) -> usize {
    s.split('\n').count()
}

#[test]
fn object_like_macros() {
    let src = "#define N 4\n#define M (N + 1)\nint a[N]; int b = M;\nint N2 = 0;\n";
    let out = pp(src);
    assert_eq!(out, "\n\nint a[4]; int b = (4 + 1);\nint N2 = 0;\n");
    assert_eq!(lines(out.as_str()), lines(src));
}

#[test]
fn text_without_macros_is_unchanged() {
    let src = "  int  x\t= 1;   // a comment\n\tfloat y = 2.5e+3f; /* c */ char c = 'a';\r\n";
    assert_eq!(pp(src), src);
}

#[test]
fn function_like_macros() {
    let src = "#define ADD(a, b) ((a) + (b))\n#define SQ(x) ((x) * (x))\nint z = ADD(1, SQ(2));\n";
    assert_eq!(pp(src), "\n\nint z = ((1) + (((2) * (2))));\n");
}

#[test]
fn function_like_name_without_parenthesis_is_left_alone() {
    let src = "#define F(x) [x]\nint F; int (*p)(int) = F;\nF (1) F(2)\n";
    assert_eq!(pp(src), "\nint F; int (*p)(int) = F;\n[1] [2]\n");
}

#[test]
fn nested_parentheses_and_commas_in_arguments() {
    let src =
        "#define FIRST(a, b) a\n#define SECOND(a, b) b\nFIRST((1, 2), 3) SECOND(f(x, y), g(z))\n";
    assert_eq!(pp(src), "\n\n(1, 2) g(z)\n");
}

#[test]
fn empty_arguments_and_no_parameters() {
    let src = "#define F() 1\n#define G(x) <x>\n#define H(a, b) a|b\nF() G() H(,) H(1,)\n";
    assert_eq!(pp(src), "\n\n\n1 <> | 1|\n");
}

#[test]
fn self_reference_is_not_expanded_again() {
    let src = "#define foo foo\n#define bar (4 + bar)\n#define x (4 + y)\n#define y (2 * x)\nfoo bar x y\n";
    assert_eq!(
        pp(src),
        "\n\n\n\nfoo (4 + bar) (4 + (2 * x)) (2 * (4 + y))\n"
    );
}

#[test]
fn nested_and_indirect_expansion() {
    // The function-like `f` named by `g` takes its arguments from the text after `g`;
    // `f(f(1))` expands the inner use as an argument, which is no recursion.
    let src = "#define f(x) (x + 1)\n#define g f\n#define h(y) g(y)\ng(2) h(3) f(f(1))\n";
    assert_eq!(pp(src), "\n\n\n(2 + 1) (3 + 1) ((1 + 1) + 1)\n");
}

#[test]
fn stringize() {
    let src = "#define S(x) #x\n#define XS(x) S(x)\n#define N 4\nS(a  +\t b) S(\"q\\n\") S( ) S(N) XS(N)\n";
    assert_eq!(
        pp(src),
        "\n\n\n\"a + b\" \"\\\"q\\\\n\\\"\" \"\" \"N\" \"4\"\n"
    );
}

#[test]
fn token_paste() {
    let src =
        "#define CAT(a, b) a ## b\n#define XCAT(a, b) CAT(a, b)\n#define N 4\n#define var_4 ok\n\
                   CAT(x, y) CAT(x, ) CAT(, y) CAT(1, 2) CAT(var_, N) XCAT(var_, N) CAT(<, <)\n";
    assert_eq!(pp(src), "\n\n\n\nxy x y 12 var_N ok <<\n");
}

#[test]
fn paste_result_is_rescanned_and_chains() {
    let src = "#define ONE 1\n#define C3(a, b, c) a ## b ## c\n#define MK(n) O ## n\nC3(a, b, c) MK(NE)\n";
    assert_eq!(pp(src), "\n\n\nabc 1\n");
}

#[test]
fn variadic_macros() {
    let src = "#define LOG(fmt, ...) printf(fmt, __VA_ARGS__)\n\
                   #define ELOG(fmt, ...) printf(fmt , ## __VA_ARGS__)\n\
                   #define OPT(x, ...) f(x __VA_OPT__(,) __VA_ARGS__)\n\
                   #define NAMED(args...) g(args)\n\
                   #define ALL(...) #__VA_ARGS__\n\
                   LOG(\"%d %d\", 1, (2, 3)); ELOG(\"x\"); ELOG(\"y\", 7); OPT(1) OPT(1, 2, 3) NAMED(a, b) ALL(p, q)\n";
    assert_eq!(
            pp(src),
            "\n\n\n\n\nprintf(\"%d %d\", 1, (2, 3)); printf(\"x\"); printf(\"y\" , 7); f(1) f(1 , 2, 3) g(a, b) \"p, q\"\n"
        );
}

#[test]
fn continuation_lines_keep_the_line_count() {
    let src = "#define MAX(a, b) \\\n  ((a) > (b) ? \\\n   (a) : (b))\nint m = MAX(1, 2);\nint s = 1 + \\\n 2;\n";
    let out = pp(src);
    assert_eq!(
        out,
        "\n\n\nint m = ((1) > (2) ? (1) : (2));\nint s = 1 +  2;\n\n"
    );
    assert_eq!(lines(&out), lines(src));
}

#[test]
fn multi_line_macro_call_keeps_the_line_count() {
    let src =
        "#define ADD(a, b) (a + b)\nint x = ADD(1,\n            2\n           ); int y;\nint z;\n";
    let out = pp(src);
    assert_eq!(out, "\nint x = (1 + 2)\n\n            ; int y;\nint z;\n");
    assert_eq!(lines(&out), lines(src));
}

#[test]
fn if_elif_else_with_arithmetic() {
    let src = "#define V 3\n#if V * 2 == 6 && (V << 2) > 10 && -1 < 0 && ~0 == -1\nyes1\n#else\nno1\n#endif\n\
                   #if V % 2 == 0\nno2\n#elif V == 3 ? 0 : 1\nno3\n#elif (V | 4) == 7 && 0x10 == 16 && 010 == 8 && 1u - 2 > 0\nyes2\n#else\nno4\n#endif\n";
    assert_eq!(pp(src), "\n\nyes1\n\n\n\n\n\n\n\n\nyes2\n\n\n\n");
}

#[test]
fn defined_and_ifdef() {
    let src = "#define A\n#if defined(A) && defined A && !defined(B)\n1\n#endif\n\
                   #ifdef B\n2\n#endif\n#ifndef B\n3\n#endif\n#if UNKNOWN == 0 && !UNKNOWN\n4\n#endif\n\
                   #undef A\n#ifdef A\n5\n#endif\n";
    assert_eq!(pp(src), "\n\n1\n\n\n\n\n\n3\n\n\n4\n\n\n\n\n\n");
}

#[test]
fn nested_conditionals_and_inactive_directives() {
    let src = "#if 0\n#if 1\na\n#else\nb\n#endif\n#error not here\n#bogus\n#elif 1\nc\n#if 0\nd\n#elif 1\ne\n#endif\n#else\nf\n#endif\n";
    assert_eq!(pp(src), "\n\n\n\n\n\n\n\n\nc\n\n\n\ne\n\n\n\n\n");
}

#[test]
fn short_circuit_skips_division_by_zero() {
    let src = "#if 0 && (1 / 0)\na\n#elif 1 || (2 % 0)\nb\n#endif\n#if 1 ? 2 : 1 / 0\nc\n#endif\n";
    assert_eq!(pp(src), "\n\n\nb\n\n\nc\n\n");
}

#[test]
fn character_constants_and_suffixes_in_if() {
    let src = "#if 'A' == 65 && '\\n' == 10 && '\\x41' == 'A' && 10UL == 10 && 0xffffffffffffffff > 0\nok\n#endif\n";
    assert_eq!(pp(src), "\nok\n\n");
}

#[test]
fn include_and_pragma_are_dropped() {
    let src = "#include <cuda/atomic>\n#include \"local.h\"\n#pragma once\n  #  pragma unroll 4\nint x;\n_Pragma(\"unroll\") int y;\n";
    assert_eq!(pp(src), "\n\n\n\nint x;\n int y;\n");
    // The user's own header is not read, and the output says so at its line.
    let out = preprocess(src, &[]).expect("preprocesses");
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert_eq!(out.warnings[0].0.line, 2);
    assert!(
        out.warnings[0].1.contains("is not read"),
        "{:?}",
        out.warnings
    );
}

#[test]
fn no_expansion_in_strings_and_comments() {
    let src = "#define X 1\nchar *s = \"X\"; char c = 'X'; // X\nint a = X; /* X\nstill X\n */ int b = X;\n";
    assert_eq!(
        pp(src),
        "\nchar *s = \"X\"; char c = 'X'; // X\nint a = 1; /* X\nstill X\n */ int b = 1;\n"
    );
}

#[test]
fn directives_inside_comments_are_text() {
    let src = "/*\n#define X 2\n*/\nX\n#define Y 1 /* a comment\n that goes on */\nY\n";
    assert_eq!(pp(src), "/*\n#define X 2\n*/\nX\n\n\n1\n");
}

#[test]
fn predefined_and_builtin_macros() {
    let src = "#if __CUDA_ARCH__ >= 700 && defined(__CUDACC__)\nint arch = __CUDA_ARCH__;\n#endif\nint l = __LINE__; const char *f = __FILE__;\nM(2)\n";
    let out = pp_with(
        src,
        &[
            ("__CUDACC__", "1"),
            ("__CUDA_ARCH__", "900"),
            ("M(x)", "x * x"),
        ],
    );
    assert_eq!(
        out,
        "\nint arch = 900;\n\nint l = 4; const char *f = \"input\";\n2 * 2\n"
    );
}

#[test]
fn line_macro_in_a_macro_body_gives_the_line_of_the_use() {
    let src = "#define HERE __LINE__\n\n\nint a = HERE;\n";
    assert_eq!(pp(src), "\n\n\nint a = 4;\n");
}

#[test]
fn expansions_do_not_paste_tokens() {
    let src = "#define MINUS -\n#define E\nint a = -MINUS 1; int b = x/E/y; int c = MINUS-1;\n";
    assert_eq!(pp(src), "\n\nint a = - - 1; int b = x/ /y; int c = - -1;\n");
}

#[test]
fn redefinition_warns_and_warning_directive() {
    let src = "#define A 1\n#define A 1\n#define A 2\n#warning careful here\nA\n";
    let p = preprocess(src, &[]).expect("preprocesses");
    assert_eq!(p.text, "\n\n\n\n2\n");
    let w: Vec<(u32, u32, &str)> = p
        .warnings
        .iter()
        .map(|(s, m)| (s.line, s.column, m.as_str()))
        .collect();
    assert_eq!(
        w,
        vec![
            (3, 9, "macro `A` redefined (it was defined at line 1)"),
            (4, 1, "#warning careful here"),
        ]
    );
}

#[test]
fn error_directive() {
    assert_eq!(
        pp_err("#if 1\n#error stop \"now\"\n#endif\n"),
        "2:1: #error stop \"now\""
    );
}

#[test]
fn line_and_unknown_directives_are_errors() {
    assert_eq!(pp_err("int x;\n#line 10\n"), "2:1: #line is not supported");
    assert_eq!(
        pp_err("\n# 3 \"file.cu\"\n"),
        "2:1: line markers (`# 3`) are not supported"
    );
    assert_eq!(
        pp_err("\n\n  #frobnicate x\n"),
        "3:3: unknown directive #frobnicate"
    );
    assert_eq!(pp_err("#ident \"v1\"\n"), "1:1: unknown directive #ident");
}

#[test]
fn unbalanced_conditionals_are_errors() {
    assert_eq!(pp_err("a\n#endif\n"), "2:1: #endif without #if");
    assert_eq!(pp_err("#else\n"), "1:1: #else without #if");
    assert_eq!(pp_err("\n#elif 1\n"), "2:1: #elif without #if");
    assert_eq!(
        pp_err("#if 1\n#else\n#else\n#endif\n"),
        "3:1: #else after #else (line 2)"
    );
    assert_eq!(
        pp_err("#ifdef A\n#else\n#elif 1\n#endif\n"),
        "3:1: #elif after #else (line 2)"
    );
    assert_eq!(
        pp_err("x\n#if 1\n#ifndef Q\n#endif\ny\n"),
        "2:1: unterminated #if: no #endif before the end of the file"
    );
}

#[test]
fn bad_if_expressions_are_errors() {
    assert_eq!(
        pp_err("\n#if 1 / 0\n#endif\n"),
        "2:7: division by zero in #if"
    );
    assert_eq!(
        pp_err("#if 3 % (2 - 2)\n#endif\n"),
        "1:7: division by zero in #if"
    );
    assert_eq!(pp_err("#if\n#endif\n"), "1:1: #if with no expression");
    assert_eq!(
        pp_err("#if (1\n#endif\n"),
        "1:6: expected `)` at the end of the #if expression"
    );
    assert_eq!(
        pp_err("#if 1 2\n#endif\n"),
        "1:7: unexpected `2` in #if expression (missing operator?)"
    );
    assert_eq!(
        pp_err("#if 1.5\n#endif\n"),
        "1:5: floating-point constant `1.5` in #if"
    );
    assert_eq!(
        pp_err("#if __has_include(<x.h>)\n#endif\n"),
        "1:5: `__has_include` is not supported (headers are not read)"
    );
    assert_eq!(
        pp_err("#if defined\n#endif\n"),
        "1:5: operator `defined` requires an identifier"
    );
    assert_eq!(pp_err("#ifdef\n#endif\n"), "1:1: #ifdef needs a macro name");
}

#[test]
fn wrong_argument_counts_are_errors() {
    let defs = "#define F(a, b) a b\n#define G() g\n#define V(a, b, ...) a\n";
    assert_eq!(
        pp_err(&format!("{defs}int x;\n  y = F(1);\n")),
        "5:7: macro `F` takes 2 arguments, but 1 was given"
    );
    assert_eq!(
        pp_err(&format!("{defs}F(1, 2, 3)\n")),
        "4:1: macro `F` takes 2 arguments, but 3 were given"
    );
    assert_eq!(
        pp_err(&format!("{defs}z G(1)\n")),
        "4:3: macro `G` takes no arguments, but 1 was given"
    );
    assert_eq!(
        pp_err(&format!("{defs}V(1)\n")),
        "4:1: macro `V` takes at least 2 arguments, but 1 was given"
    );
}

#[test]
fn unterminated_macro_calls_are_errors() {
    assert_eq!(
        pp_err("#define F(x) x\nint a = F(1,\n"),
        "2:9: unterminated argument list invoking macro `F`: the file ends before its `)`"
    );
    assert_eq!(
        pp_err("#define F(x) x\nF(1\n#ifdef A\n)\n#endif\n"),
        "2:1: unterminated argument list invoking macro `F`: the directive at line 3 comes \
             before its `)` (directives inside macro arguments are not supported)"
    );
}

#[test]
fn bad_definitions_are_errors() {
    assert_eq!(pp_err("#define\n"), "1:1: #define needs a macro name");
    assert_eq!(
        pp_err("#define 3 x\n"),
        "1:9: macro names must be identifiers, found `3`"
    );
    assert_eq!(
        pp_err("#define defined 1\n"),
        "1:9: `defined` cannot be defined"
    );
    assert_eq!(
        pp_err("#define F(a, a) a\n"),
        "1:14: duplicate macro parameter `a`"
    );
    assert_eq!(
        pp_err("#define F(a b\n"),
        "1:13: expected `,` or `)` in the parameter list of macro `F`, found `b`"
    );
    assert_eq!(
        pp_err("#define F(a,\n"),
        "1:9: missing `)` in the parameter list of macro `F`"
    );
    assert_eq!(
        pp_err("#define S(x) #y\n"),
        "1:14: `#` is not followed by a macro parameter"
    );
    assert_eq!(
        pp_err("#define P(x) ## x\n"),
        "1:14: `##` cannot appear at either end of a macro body"
    );
    assert_eq!(
        pp_err("#define Q __VA_ARGS__\n"),
        "1:11: `__VA_ARGS__` can only appear in the body of a variadic macro declared with `...`"
    );
}

#[test]
fn invalid_paste_is_an_error() {
    assert_eq!(
        pp_err("#define CAT(a, b) a ## b\nx\n  CAT(+, /)\n"),
        "3:3: pasting `+` and `/` does not give a valid preprocessing token"
    );
}

#[test]
fn error_positions_on_continued_lines() {
    assert_eq!(
        pp_err("#if 1 + \\\n   (2 / 0)\n#endif\n"),
        "2:7: division by zero in #if"
    );
}

#[test]
fn bad_predefined_macro_is_an_error() {
    let e = preprocess("x\n", &[("F(a,", "")]).expect_err("refused");
    assert_eq!(
        e.message,
        "predefined macro `F(a,`: missing `)` in the parameter list of macro `F`"
    );
    assert_eq!(e.span, Some(Span::default()));
}

#[test]
fn realistic_cuda_snippet() {
    let src = "\
#include <cuda/atomic>
#define N 4
#define IDX(b, t) ((b) * blockDim.x + (t))
#ifndef __CUDA_ARCH__
#error device code only
#endif
__device__ int data[N];
__global__ void k(int *flag) {
    int i = IDX(blockIdx.x,
                threadIdx.x);
    #pragma unroll
    for (int j = 0; j < N; ++j) {
        data[j] = i; // N stays in this comment
    }
    atomicExch(flag, 1);
}
";
    let out = pp_with(src, &[("__CUDACC__", "1"), ("__CUDA_ARCH__", "900")]);
    let got: Vec<&str> = out.split('\n').collect();
    let want = vec![
        "",
        "",
        "",
        "",
        "",
        "",
        "__device__ int data[4];",
        "__global__ void k(int *flag) {",
        "    int i = ((blockIdx.x) * blockDim.x + (threadIdx.x))",
        "                            ;",
        "",
        "    for (int j = 0; j < 4; ++j) {",
        "        data[j] = i; // N stays in this comment",
        "    }",
        "    atomicExch(flag, 1);",
        "}",
        "",
    ];
    assert_eq!(got, want);
    assert_eq!(
        pp_err(src),
        "5:1: #error device code only",
        "without __CUDA_ARCH__ the #error fires"
    );
}

#[test]
fn crlf_line_endings_are_kept() {
    let src = "#define A 1\r\nint x = A;\r\nint y;\r\n";
    assert_eq!(pp(src), "\r\nint x = 1;\r\nint y;\r\n");
}

#[test]
fn raw_strings_and_prefixed_literals_are_not_expanded() {
    let src = "#define X 1\nauto a = R\"(X)\"; auto b = u8\"X\"; auto c = L'X'; auto d = X;\n";
    assert_eq!(
        pp(src),
        "\nauto a = R\"(X)\"; auto b = u8\"X\"; auto c = L'X'; auto d = 1;\n"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!("#if {}1{}\n#endif\n", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(pp_err(&src), "1:205: #if expression nested too deeply");
    let src = format!(
        "#define F(x) x\n{}1{}\n",
        "F(".repeat(5000),
        ")".repeat(5000)
    );
    assert!(pp_err(&src).contains("macro uses nested too deeply"));
}

#[test]
fn argument_naming_the_macro_stays_unexpanded() {
    let src = "#define f(x) x\n#define g(x) x(2)\nf(f)(1) g(f)\n";
    assert_eq!(pp(src), "\n\nf(1) 2\n");
}

#[test]
fn reserved_names_cannot_be_redefined() {
    assert_eq!(
        pp_err("#undef __LINE__\n"),
        "1:8: `__LINE__` cannot be undefined"
    );
    assert_eq!(
        pp_err("#define __FILE__ x\n"),
        "1:9: `__FILE__` cannot be defined"
    );
}

/// The examples of the C standard (C11 6.10.3.5, examples 3, 4 and 7).
#[test]
fn c_standard_examples() {
    let src = "#define x 3\n#define f(a) f(x * (a))\n#undef x\n#define x 2\n#define g f\n\
                   #define z z[0]\n#define h g(~\n#define m(a) a(w)\n#define w 0,1\n#define t(a) a\n\
                   #define p() int\n#define q(x) x\n#define r(x,y) x ## y\n#define str(x) # x\n\
                   f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);\ng(x+(3,4)-w) | h 5) & m\n(f)^m(m);\n\
                   p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };\n\
                   char c[2][6] = { str(hello), str() };\n";
    let out = pp(src);
    let got: Vec<&str> = out.split('\n').skip(14).collect();
    assert_eq!(
        got,
        vec![
            "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);",
            "f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))",
            "   ^m(0,1);",
            "int i[] = { 1, 23, 4, 5,  };",
            "char c[2][6] = { \"hello\", \"\" };",
            "",
        ]
    );
    let src = "#define hash_hash # ## #\n#define mkstr(a) # a\n#define in_between(a) mkstr(a)\n\
                   #define join(c, d) in_between(c hash_hash d)\nchar p[] = join(x, y);\n";
    assert_eq!(pp(src), "\n\n\n\nchar p[] = \"x ## y\";\n");
    let src = "#define debug(...) fprintf(stderr, __VA_ARGS__)\n\
                   #define showlist(...) puts(#__VA_ARGS__)\n\
                   #define report(test, ...) ((test)?puts(#test): printf(__VA_ARGS__))\n\
                   debug(\"Flag\");\ndebug(\"X = %d\\n\", x);\nshowlist(The first, second, and third items.);\n\
                   report(x>y, \"x is %d but y is %d\", x, y);\n";
    assert_eq!(
        pp(src),
        "\n\n\nfprintf(stderr, \"Flag\");\nfprintf(stderr, \"X = %d\\n\", x);\n\
             puts(\"The first, second, and third items.\");\n\
             ((x>y)?puts(\"x>y\"): printf(\"x is %d but y is %d\", x, y));\n"
    );
}

#[test]
fn adjacent_expansions_are_kept_apart() {
    let src = "#define K k<<<1, 2>>>\nK(p);\n#define A(x) x\nA(a)A(b) A(+)A(+) A(-)>\n";
    assert_eq!(pp(src), "\nk<<<1, 2>>>(p);\n\na b + + - >\n");
}
