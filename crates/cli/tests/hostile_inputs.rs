//! `scopecheck check` on inputs nested or sized to break it (issue 31): each ends, quickly, in
//! a verdict or in an error line naming the file, the line and column, and the limit; never
//! in a stack overflow (SIGABRT) or memory exhausted. Every run has a deadline.

use std::path::{Path, PathBuf};

use std::time::Duration;

mod bounded_run;
use bounded_run::{run_within, Run};

/// A scratch directory, removed when the test ends (passing or not).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("hostile_inputs")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The one JSON line of a `check --json` run on one file.
fn line(r: &Run) -> serde_json::Value {
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "stdout {:?} stderr {:?}",
        r.stdout,
        r.stderr
    );
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON: {}: {e}", lines[0]))
}

/// Checks `file` (with `extra` arguments first) and expects an error object at
/// `line:column` whose message contains `needle`; exit status 1.
fn expect_error(file: &str, extra: &[&str], at: (u64, u64), needle: &str) {
    let mut args = vec!["check", "--json"];
    args.extend_from_slice(extra);
    args.push(file);
    let r = run_within(Duration::from_secs(60), &args);
    let v = line(&r);
    assert_eq!(r.code, Some(1), "{v}");
    assert_eq!(v["file"].as_str(), Some(file), "{v}");
    let message = v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {v}"));
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(at.0), Some(at.1)),
        "{v}"
    );
    assert!(!r.stderr.contains("overflow"), "{}", r.stderr);
}

/// Checks `file` and expects a verdict with the final state `state` (a JSON object).
fn expect_verdict(file: &str, state: serde_json::Value) {
    let r = run_within(Duration::from_secs(60), &["check", "--json", file]);
    let v = line(&r);
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["states"][0]["values"], state, "{v}");
}

fn c_litmus(body: &str) -> String {
    format!("C T\n{{ x=0; }}\nP0 (atomic_int* x) {{\n{body}\n}}\nexists (x=1)\n")
}

fn cuda(body: &str) -> String {
    format!(
        "__global__ void k(int *c) {{\n{body}\n}}\n\
         void scopecheck_main() {{\n  int *c;\n  cudaMallocManaged(&c, sizeof(int));\n  \
         k<<<1, 1>>>(c);\n  cudaDeviceSynchronize();\n}}\n"
    )
}

fn opencl(body: &str) -> String {
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

fn parens(lhs: &str, n: usize) -> String {
    format!("  {lhs} = {}1{};", "(".repeat(n), ")".repeat(n))
}

fn ifs(cond: &str, store: &str, n: usize) -> String {
    format!(
        "{}  {store} = 1;\n{}",
        format!("  if ({cond}) {{\n").repeat(n),
        "}\n".repeat(n)
    )
}

#[test]
fn c_litmus_nesting_is_an_error_and_long_sums_a_verdict() {
    let dir = Scratch::new("c");
    // Parentheses: the statement, its expression and operand take 3 of the 100 levels and
    // each `(` two (crates/litmus c/chain_tests.rs): the 50th `(` is refused, at column
    // 8 + 49 after `  int r = ` (10 columns).
    for n in [1_473, 10_000] {
        let f = dir.file(
            &format!("paren{n}.litmus"),
            &c_litmus(&format!(
                "{}\n  atomic_store_explicit(x, r, memory_order_relaxed);",
                parens("int r", n)
            )),
        );
        expect_error(
            &f,
            &[],
            (4, 60),
            "code nested too deeply (more than 100 levels)",
        );
    }
    // `if (r) {` one a line from line 5: each is two levels (the statement, its block), the
    // k-th at level 2k - 1 and its condition's operand two deeper, so the 50th's condition
    // (line 54, column 7 after `  if (`) is refused.
    for n in [641, 10_000] {
        let body = format!("  int r = 1;\n{}", ifs("r", "*x", n));
        let f = dir.file(&format!("if{n}.litmus"), &c_litmus(&body));
        expect_error(&f, &[], (54, 7), "code nested too deeply");
    }
    // A sum of 10,000 ones, and the audit's 985: chains are lowered by loops.
    for n in [985, 10_000] {
        let sum = vec!["1"; n].join(" + ");
        let body = format!("  atomic_store_explicit(x, {sum}, memory_order_relaxed);");
        let f = dir.file(&format!("sum{n}.litmus"), &c_litmus(&body));
        expect_verdict(&f, serde_json::json!({ "x": n }));
    }
    // A condition of 100,000 terms, in the C and the PTX dialect: a verdict (the tree is
    // balanced; walking the left-nested one overflowed the stack).
    let terms = vec!["x=1"; 100_000].join(" \\/ ");
    let f = dir.file(
        "cond.litmus",
        &c_litmus("  atomic_store_explicit(x, 1, memory_order_relaxed);")
            .replace("exists (x=1)", &format!("exists ({terms})")),
    );
    expect_verdict(&f, serde_json::json!({ "x": 1 }));
    let terms = vec!["x == 1"; 100_000].join(" /\\ ");
    let f = dir.file(
        "cond-ptx.litmus",
        &format!(
            "PTX T\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists ({terms})\n"
        ),
    );
    expect_verdict(&f, serde_json::json!({ "x": 1 }));
    // An array of 2^31 - 1 elements: refused at its length before anything is allocated.
    let f = dir.file(
        "array.litmus",
        "C T\n{ int a[2147483647]; }\nP0 (int* a) {\n  *a = 1;\n}\nexists (a[0]=1)\n",
    );
    expect_error(&f, &[], (2, 9), "too long (at most 4096 elements)");
}

#[test]
fn cuda_and_opencl_nesting_is_an_error_at_the_first_level_too_deep() {
    let dir = Scratch::new("cuda");
    // The k-th `(` of `  *c = ((...` is 5 + k levels below the file (crates/cuda
    // hostile_tests.rs): the 252nd, at column 8 + 251, is the first past 256.
    for n in [1_473, 10_000] {
        let f = dir.file(&format!("paren{n}.cu"), &cuda(&parens("*c", n)));
        expect_error(&f, &[], (2, 259), "nested too deeply: more than 256 levels");
    }
    // `if (r) {` is two levels: the condition of the 127th `if` (line 129) is the first past.
    for n in [641, 10_000] {
        let body = format!("  int r = *c;\n{}", ifs("r", "*c", n));
        let f = dir.file(&format!("if{n}.cu"), &cuda(&body));
        expect_error(&f, &[], (129, 6), "nested too deeply");
    }
    // A 10,000-term sum is 10,000 levels in the grammar's tree, but lowering follows such a
    // chain by a loop and it takes no level: checked, a verdict (exit 0).
    let sum = vec!["1"; 10_000].join(" + ");
    let f = dir.file("sum.cu", &cuda(&format!("  *c = {sum};")));
    let r = run_within(Duration::from_secs(60), &["check", "--json", &f]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(line(&r).get("name").is_some());
    // The same sum with each left operand in parentheses nests for real: an error on its line.
    let nested = format!("{}1{}", "(".repeat(10_000), " + 1)".repeat(10_000));
    let f = dir.file("nested-sum.cu", &cuda(&format!("  *c = {nested};")));
    let r = run_within(Duration::from_secs(60), &["check", "--json", &f]);
    assert_eq!(r.code, Some(1));
    let v = line(&r);
    assert_eq!(v["line"].as_u64(), Some(2), "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("nested too deeply"),
        "{v}"
    );
    // OpenCL C: the same front-end, the same limit.
    let f = dir.file("paren.cl", &opencl(&parens("c[0]", 10_000)));
    expect_error(&f, &[], (2, 261), "nested too deeply");
    let body = format!("  int r = c[0];\n{}", ifs("r", "c[0]", 10_000));
    let f = dir.file("if.cl", &opencl(&body));
    expect_error(&f, &[], (129, 6), "nested too deeply");
}

#[test]
fn macros_and_allocations_are_bounded() {
    let dir = Scratch::new("macros");
    // A 10,000-deep chain of object-like macros expands, and the kernel stores 1.
    let chain: String = (1..10_000)
        .map(|i| format!("#define M{i} M{}\n", i - 1))
        .collect();
    let f = dir.file(
        "chain.cu",
        &format!("#define M0 1\n{chain}{}", cuda("  *c = M9999;")),
    );
    expect_verdict(&f, serde_json::json!({ "c": 1 }));
    // 592 nested uses of `F(a)` stop at the 201st level (column 8 + 2 * 201); 100,000 at
    // the argument-token bound, at level 10 by the token count of crates/cuda's test.
    for (n, col, needle) in [
        (
            592,
            410,
            "macro uses nested too deeply (more than 200 levels)",
        ),
        (100_000, 28, "macro arguments too large"),
    ] {
        let body = format!("  *c = {}1{};", "F(".repeat(n), ")".repeat(n));
        let f = dir.file(
            &format!("nested{n}.cu"),
            &format!("#define F(a) (a)\n{}", cuda(&body)),
        );
        expect_error(&f, &[], (3, col), needle);
    }
    // 4,097 allocations in a harness: the one past 4,096 is refused at its line.
    let allocs: String = (0..4_097)
        .map(|i| format!("  int *c{i};\n  cudaMallocManaged(&c{i}, sizeof(int));\n"))
        .collect();
    let f = dir.file(
        "allocs.cu",
        &format!("__global__ void k(int *c) {{ *c = 1; }}\nvoid scopecheck_main() {{\n{allocs}  k<<<1, 1>>>(c0);\n}}\n"),
    );
    expect_error(
        &f,
        &[],
        (3 + 2 * 4_096 + 1, 3),
        "too many allocations: more than 4096",
    );
}

/// A PTX module of one kernel that stores to `*p`, with `decl` in its body or at module
/// scope, and its harness.
fn ptx_module(module_decl: &str, body_decl: &str) -> String {
    format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n{module_decl}\n\
         .visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\t.reg .b32 %r<2>;\n\
         \t.reg .b64 %rd<3>;\n{body_decl}\n\tld.param.u64 %rd1, [k_param_0];\n\
         \tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 1;\n\tst.global.u32 [%rd2], %r1;\n\
         \tret;\n}}\n"
    )
}

const PTX_HARNESS: &str = "__global__ void k(int *p);\n\nint main() {\n    int *p;\n    \
    cudaMallocManaged(&p, sizeof(int));\n    k<<<1, 1>>>(p);\n    cudaDeviceSynchronize();\n    \
    return 0;\n}\n";

#[test]
fn ptx_declarations_sized_by_the_input_are_refused_before_allocation() {
    let dir = Scratch::new("ptx");
    let harness = dir.file("h.cu", PTX_HARNESS);
    let args = ["--harness", harness.as_str()];
    // The module as is checks: the store of 1 is the only execution.
    let f = dir.file("ok.ptx", &ptx_module("", ""));
    let r = run_within(
        Duration::from_secs(60),
        &["check", "--json", "--harness", &harness, &f],
    );
    assert_eq!(r.code, Some(0), "{} {}", r.stdout, r.stderr);
    // `.reg .b64 %rd<2147483647>` took 3.2 GB: refused at the count (line 11, column 15
    // after a tab and `.reg .b64 %x<`), counting the 5 registers declared before it.
    let f = dir.file("reg.ptx", &ptx_module("", "\t.reg .b64 %x<2147483647>;"));
    expect_error(
        &f,
        &args,
        (11, 15),
        "too many registers: with `%x` this function declares 2147483652 of them, more than 65536",
    );
    // A module variable of 10^8 elements the kernel stores to took 6 GB and 30 s (killed):
    // refused at its declaration.
    let f = dir.file(
        "var.ptx",
        &ptx_module(
            ".global .u32 big[100000000];",
            "\tst.global.u32 [big], %r1;",
        ),
    );
    expect_error(
        &f,
        &args,
        (4, 1),
        "`big` has 100000000 elements: more than the 65536",
    );
}
