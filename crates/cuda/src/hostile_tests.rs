//! Hostile depths and sizes (issue 31): each ends in a program or in an error at a line and
//! column naming the limit, never in a stack overflow or in memory exhausted.

use crate::{
    parse_cuda, parse_opencl_with, CudaOptions, MAX_ALLOCATIONS, MAX_ARGUMENT_TOKENS,
    MAX_LOCATIONS, MAX_MACRO_NESTING, MAX_NESTING,
};
use scopecheck_ir::{Diagnostic, InstrKind, Operand, Program};

/// A kernel whose body is `body`, launched once by a harness; the body starts on line 2.
fn kernel(body: &str) -> String {
    format!(
        "__global__ void k(int *c) {{\n{body}\n}}\n\
         void scopecheck_main() {{\n  int *c;\n  cudaMallocManaged(&c, sizeof(int));\n  \
         k<<<1, 1>>>(c);\n  cudaDeviceSynchronize();\n}}\n"
    )
}

/// The same in OpenCL C.
fn cl_kernel(body: &str) -> String {
    format!(
        "__kernel void k(__global int *c) {{\n{body}\n}}\n\
         void scopecheck_main() {{\n\
           cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);\n\
           cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);\n\
           cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);\n\
           cl_kernel k = clCreateKernel(program, \"k\", NULL);\n\
           cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);\n\
           clSetKernelArg(k, 0, sizeof(cl_mem), &buf);\n\
           size_t global = 1, local = 1;\n\
           clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);\n\
           clFinish(queue);\n}}\n"
    )
}

fn lowered(src: &str) -> Program {
    match parse_cuda(src) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

fn error(r: Result<(Program, Vec<Diagnostic>), Diagnostic>) -> Diagnostic {
    match r {
        Ok(_) => panic!("lowered, expected an error"),
        Err(e) => e,
    }
}

/// The value the kernel thread (thread 0) stores.
fn stored(p: &Program) -> Operand {
    p.threads[0]
        .code
        .iter()
        .find_map(|i| match i.kind {
            InstrKind::Store { value, .. } => Some(value),
            _ => None,
        })
        .expect("a store")
}

fn parens(n: usize) -> String {
    format!("  *c = {}1{};", "(".repeat(n), ")".repeat(n))
}

fn ifs(n: usize) -> String {
    format!(
        "  int r = *c;\n{}  *c = 1;\n{}",
        "  if (r) {\n".repeat(n),
        "}\n".repeat(n)
    )
}

#[test]
fn nested_parentheses_end_in_an_error_at_the_first_one_too_deep() {
    // The statement `*c = (((...` is 4 levels below the file in tree-sitter-cuda's tree
    // (see the `if`s below), its assignment 5, and the k-th `(` at 5 + k: the 252nd
    // (MAX_NESTING - 4) is the first node past the limit, at column 8 + 251 on line 2.
    for n in [1_473, 10_000] {
        let e = error(parse_cuda(&kernel(&parens(n))));
        assert!(e.message.contains("nested too deeply"), "{e}");
        assert!(e.message.contains(&MAX_NESTING.to_string()), "{e}");
        assert_eq!(
            (e.line(), e.column()),
            (2, (8 + MAX_NESTING - 5) as u32),
            "{e}"
        );
    }
    // Well within the limit, the value folds.
    assert_eq!(stored(&lowered(&kernel(&parens(100)))), Operand::Imm(1));
}

#[test]
fn nested_ifs_and_blocks_end_in_an_error() {
    // In tree-sitter-cuda's tree a statement of the kernel's body is 4 levels below the
    // file, and each `if (r) {` two levels (the statement, its block), its condition one
    // below it: the k-th `if`, on line 2 + k, is at 4 + 2(k - 1), and the condition of the
    // 127th is the first node past MAX_NESTING (4 + 252 + 1 = 257), on line 129, column 6.
    for n in [641, 10_000] {
        let e = error(parse_cuda(&kernel(&ifs(n))));
        assert!(e.message.contains("nested too deeply"), "{e}");
        assert_eq!((e.line(), e.column()), (129, 6), "{e}");
    }
    // A block is one level: the k-th `{`, on line 1 + k, is at 4 + (k - 1), so the 254th
    // (line 255) is the first at 257.
    let blocks = |n: usize| format!("{}  *c = 1;\n{}", "{\n".repeat(n), "}\n".repeat(n));
    let e = error(parse_cuda(&kernel(&blocks(10_000))));
    assert!(e.message.contains("nested too deeply"), "{e}");
    assert_eq!((e.line(), e.column()), (255, 1), "{e}");
    // 100 nested `if`s lower: the store is reached when `r` is not 0.
    let p = lowered(&kernel(&ifs(100)));
    assert_eq!(stored(&p), Operand::Imm(1));
}

/// The kernel thread's instructions of one kind.
fn count(p: &Program, is: fn(&InstrKind) -> bool) -> usize {
    p.threads[0].code.iter().filter(|i| is(&i.kind)).count()
}

#[test]
fn long_operator_chains_lower_by_a_loop() {
    // `a + b + c` nests to the left in the grammar; lowering follows such a chain by a
    // loop, so its length costs no nesting: 985 terms (the audit's reproducer) and 10,000
    // fold to their sum.
    for n in [985, 10_000] {
        let sum = vec!["1"; n].join(" + ");
        let p = lowered(&kernel(&format!("  *c = {sum};")));
        assert_eq!(stored(&p), Operand::Imm(n as i64), "{n} terms");
    }
    // On a value known only at run time: one add per `+` (9,999), then the store.
    let sum = vec!["r"; 10_000].join(" + ");
    let p = lowered(&kernel(&format!("  int r = *c;\n  *c = {sum};")));
    let adds = count(&p, |k| matches!(k, InstrKind::Binary { .. }));
    assert!(adds >= 9_999, "{adds} binary instructions");
    // Mixed operators of one kind chain too: `r * 2 - r + 1 ...`.
    let mixed = (0..3_000)
        .map(|k| ["r", "2", "1"][k % 3])
        .collect::<Vec<_>>();
    let ops = ["*", "-", "+"];
    let mut e = mixed[0].to_string();
    for (k, t) in mixed.iter().enumerate().skip(1) {
        e += &format!(" {} {t}", ops[k % 3]);
    }
    lowered(&kernel(&format!("  int r = *c;\n  *c = {e};")));
    // `&&` and `||` chains in a condition and as values; pointer arithmetic `c + 0 - 0 ...`.
    let and = vec!["r"; 5_000].join(" && ");
    let or = vec!["r"; 5_000].join(" || ");
    let ptr = format!("c{}", " + 0 - 0".repeat(2_500));
    let p = lowered(&kernel(&format!(
        "  int r = *c;\n  if ({and}) *c = 1;\n  if ({or}) *c = 2;\n  *c = {and};\n  *({ptr}) = 3;"
    )));
    assert_eq!(count(&p, |k| matches!(k, InstrKind::Store { .. })), 4);
    // A sum of 1,000 terms in the harness too (host code, a constant).
    let src = kernel("  *c = 1;").replace(
        "  int *c;",
        &format!("  int n = {};\n  int *c;", vec!["1"; 1_000].join(" + ")),
    );
    lowered(&src);
}

#[test]
fn real_nesting_inside_a_chain_is_still_a_level() {
    // Parentheses around each left operand break the chain: `((1 + 1) + 1) ...` nests a
    // level per parenthesis, the error as before.
    let n = 10_000;
    let nested = format!("{}1{}", "(".repeat(n), " + 1)".repeat(n));
    let e = error(parse_cuda(&kernel(&format!("  *c = {nested};"))));
    assert!(e.message.contains("nested too deeply"), "{e}");
    assert_eq!(e.line(), 2, "{e}");
    // `&&` over `||` over `&&` ...: each change of operator is a level (lowered by calls).
    let alternating = (0..10_000)
        .map(|k| if k % 2 == 0 { "(r &&" } else { "(r ||" })
        .collect::<String>();
    let src = format!(
        "  int r = *c;\n  if ({alternating} r{}) *c = 1;",
        ")".repeat(10_000)
    );
    let e = error(parse_cuda(&kernel(&src)));
    assert!(e.message.contains("nested too deeply"), "{e}");
}

#[test]
fn long_else_if_chains_lower_by_a_loop() {
    // `if (r == 0) *c = 0; else if (r == 1) *c = 1; ...`: each `else if` nests in the
    // `else` in the grammar; lowered by a loop, 1,000 and 10,000 in a row lower, one store
    // per arm (the last `else` included).
    for n in [1_000, 10_000] {
        let mut body = String::from("  int r = *c;\n  if (r == 0) *c = 0;\n");
        for k in 1..n {
            body += &format!("  else if (r == {k}) *c = {k};\n");
        }
        body += "  else *c = -1;\n";
        let p = lowered(&kernel(&body));
        assert_eq!(
            count(&p, |k| matches!(k, InstrKind::Store { .. })),
            n + 1,
            "{n} arms"
        );
        // With braces, and with a folded condition first (`if (0)`: only the rest lowers).
        let braced = body
            .replace(") *c = ", ") { *c = ")
            .replace(";\n  else", "; }\n  else")
            .replace("else *c = -1;", "else { *c = -1; }");
        let p = lowered(&kernel(&braced));
        assert_eq!(count(&p, |k| matches!(k, InstrKind::Store { .. })), n + 1);
        let folded = body.replacen("if (r == 0)", "if (0)", 1);
        let p = lowered(&kernel(&folded));
        assert_eq!(count(&p, |k| matches!(k, InstrKind::Store { .. })), n);
    }
    // In OpenCL C too.
    let mut body = String::from("  int r = *c;\n  if (r == 0) *c = 0;\n");
    for k in 1..1_000 {
        body += &format!("  else if (r == {k}) *c = {k};\n");
    }
    parse_opencl_with(&cl_kernel(&body), &CudaOptions::default()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn opencl_nesting_ends_in_an_error() {
    let cl = |body: &str| parse_opencl_with(&cl_kernel(body), &CudaOptions::default());
    for body in [
        parens(10_000).replace("*c", "c[0]"),
        ifs(10_000).replace("*c", "c[0]"),
    ] {
        let e = error(cl(&body));
        assert!(e.message.contains("nested too deeply"), "{e}");
    }
    assert!(cl(&parens(100).replace("*c", "c[0]")).is_ok());
}

#[test]
fn an_inlined_body_counts_on_top_of_its_call_site() {
    // `h`'s body nests 150 parentheses and the call sits under 60 `if`s (120 levels): each
    // alone is well within the limit, both together are not, and the error is at the call.
    let helper = format!(
        "__device__ int h() {{\n  return {}1{};\n}}\n",
        "(".repeat(150),
        ")".repeat(150)
    );
    let shallow = format!("{helper}{}", kernel("  *c = h();"));
    // The helper's value comes back in its return register.
    assert!(matches!(stored(&lowered(&shallow)), Operand::Reg(_)));
    let deep_call = format!(
        "  int r = *c;\n{}  *c = h();\n{}",
        "  if (r) {\n".repeat(60),
        "}\n".repeat(60)
    );
    let src = format!("{helper}{}", kernel(&deep_call));
    let e = error(parse_cuda(&src));
    assert!(
        e.message.contains("this call here would lower a body"),
        "{e}"
    );
    // The helper takes 3 lines, the kernel's first line is 4, its body starts on 5: the call
    // is on line 5 + 1 + 60 at column 8.
    assert_eq!((e.line(), e.column()), (66, 8), "{e}");
}

#[test]
fn macro_chains_and_nested_macro_uses() {
    // A chain of 10,000 object-like macros, each naming the one before: expanded by
    // rescanning, without recursion; the store gets 1.
    let chain: String = (1..10_000)
        .map(|i| format!("#define M{i} M{}\n", i - 1))
        .collect();
    let src = format!("#define M0 1\n{chain}{}", kernel("  *c = M9999;"));
    assert_eq!(stored(&lowered(&src)), Operand::Imm(1));
    // 592 nested uses of a function-like macro (the audit's reproducer): refused at the
    // use MAX_MACRO_NESTING + 1 levels in. `*c = ` is 7 columns and each `F(` two more.
    let nested = |n: usize| {
        let body = format!("  *c = {}1{};", "F(".repeat(n), ")".repeat(n));
        error(parse_cuda(&format!("#define F(a) (a)\n{}", kernel(&body))))
    };
    let e = nested(592);
    assert!(
        e.message
            .contains("macro uses nested too deeply (more than 200 levels)"),
        "{e}"
    );
    let col = (8 + 2 * (MAX_MACRO_NESTING + 1)) as u32;
    assert_eq!((e.line(), e.column()), (3, col), "{e}");
    // Deeper, the copies of the arguments run out first: the use at level j holds its
    // argument, the 3(n - j) - 1 tokens `F(...1...)` inside it less the parentheses... that
    // is 3(n - j) - 2, and the levels being expanded hold them together. The use at which
    // the total passes MAX_ARGUMENT_TOKENS is refused: for 10,000 uses about level 100, for
    // 100,000 about level 10 (without the bound they took gigabytes).
    for n in [10_000usize, 100_000] {
        let mut total = 0;
        let level = (0..n)
            .find(|j| {
                total += 3 * (n - j) - 2;
                total > MAX_ARGUMENT_TOKENS
            })
            .expect("the bound is reached");
        let e = nested(n);
        assert!(e.message.contains("macro arguments too large"), "{e}");
        assert!(e.message.contains(&MAX_ARGUMENT_TOKENS.to_string()), "{e}");
        assert_eq!((e.line(), e.column()), (3, (8 + 2 * level) as u32), "{e}");
    }
}

#[test]
fn allocations_and_arrays_are_bounded_before_they_are_made() {
    // 2^31 - 1 elements: refused by the array limit, at the declaration.
    let e = error(parse_cuda(&kernel("  int a[2147483647];\n  *c = 1;")));
    assert!(e.message.contains("array size 2147483647"), "{e}");
    assert_eq!(e.line(), 2, "{e}");
    // MAX_ALLOCATIONS + 1 allocations in the harness: the one past the limit is refused at
    // its line (each allocation takes 2 lines; the first is on line 2).
    let allocs: String = (0..=MAX_ALLOCATIONS)
        .map(|i| format!("  int *c{i};\n  cudaMallocManaged(&c{i}, sizeof(int));\n"))
        .collect();
    let src = format!(
        "__global__ void k(int *c) {{ *c = 1; }}\nvoid scopecheck_main() {{\n{allocs}  k<<<1, 1>>>(c0);\n}}\n"
    );
    let e = error(parse_cuda(&src));
    assert!(e.message.contains("too many allocations"), "{e}");
    assert_eq!(e.line() as usize, 3 + 2 * MAX_ALLOCATIONS + 1, "{e}");
    // A struct of 2,000 fields, 64 of them in an array: 128,000 locations, past
    // MAX_LOCATIONS.
    let fields: String = (0..2_000).map(|i| format!("int f{i}; ")).collect();
    let src = format!(
        "struct S {{ {fields}}};\n__global__ void k(S *s) {{ s[0].f0 = 1; }}\n\
         void scopecheck_main() {{\n  S *s;\n  cudaMallocManaged(&s, 64 * sizeof(S));\n  k<<<1, 1>>>(s);\n}}\n"
    );
    let e = error(parse_cuda(&src));
    assert!(e.message.contains("too many memory locations"), "{e}");
    assert!(e.message.contains(&MAX_LOCATIONS.to_string()), "{e}");
}

#[test]
fn if_conditional_chains_are_read_by_a_loop() {
    use crate::preprocess;
    let pick = |cond: &str| {
        let src = format!("#if {cond}\nA\n#else\nB\n#endif\n");
        match preprocess(&src, &[]) {
            Ok(p) => p.text.trim().to_string(),
            Err(e) => panic!("{e:?}"),
        }
    };
    // `0 ? 0 : 0 ? 0 : ... : 1` 100,000 arms deep (it recursed once per arm): every
    // condition is false, so the last arm, 1, is the value.
    assert_eq!(pick(&format!("{}1", "0 ? 0 : ".repeat(100_000))), "A");
    // One true condition early picks its arm, 0, over everything after it.
    assert_eq!(
        pick(&format!("0 ? 1 : 1 ? 0 : {}1", "0 ? 0 : ".repeat(100_000))),
        "B"
    );
    // A conditional nested in a middle arm is a level: `1 ? 1 ? ... : 1 : 1` 10,000 deep is
    // refused at the `?` past the 200th level; `#if ` is 4 columns and each `1 ? ` 4 more,
    // so the 201st `?` is at column 4 * 201 + 3.
    let src = format!(
        "#if {}1{}\n#endif\n",
        "1 ? ".repeat(10_000),
        " : 1".repeat(10_000)
    );
    let e = preprocess(&src, &[]).unwrap_err();
    assert_eq!(e.message, "#if expression nested too deeply");
    assert_eq!((e.line(), e.column()), (1, 4 * 201 + 3), "{e:?}");
}
