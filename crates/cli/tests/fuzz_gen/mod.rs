//! Inputs for the fuzz target (tests/fuzz.rs): programs generated in every input kind
//! scopecheck reads (PTX and C litmus tests, `.cu`, `.cl`, a `.ptx` module with its `.cu`
//! harness), sized by two knobs (operations per thread, nesting depth), and mutations of the
//! files the repository already has.
//!
//! Everything is drawn from one seeded generator, so a case is reproduced by its seed alone.
//! The generated programs are meant to be mostly valid (so that the checker, not only the
//! parser, is exercised); the mutations are meant to be mostly broken.

use std::fmt::Write as _;

/// splitmix64: small, fast, and the same on every platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// How big the generated programs get.
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// The most operations of one thread (or one kernel branch).
    pub ops: usize,
    /// The deepest nesting of conditionals and loops.
    pub nest: usize,
    /// Whether barriers may sit under a branch, not only at a thread's top level. Off in CI:
    /// `__syncthreads()` under a branch could panic ("a round holds arrivals") until the fix
    /// of issue 31's explorer work lands; the long campaigns turn it on.
    pub nested_barriers: bool,
}

/// The input kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    PtxLitmus,
    CLitmus,
    Cuda,
    OpenCl,
    PtxModule,
}

pub const KINDS: [Kind; 5] = [
    Kind::PtxLitmus,
    Kind::CLitmus,
    Kind::Cuda,
    Kind::OpenCl,
    Kind::PtxModule,
];

/// One input to check: its files (name, bytes), the first the one checked; with a harness
/// (a `.ptx` module), the harness's file name.
pub struct Input {
    pub what: String,
    pub files: Vec<(String, Vec<u8>)>,
    pub harness: Option<String>,
}

/// A generated program of `kind`.
pub fn generate(kind: Kind, rng: &mut Rng, k: Knobs) -> Input {
    let single = |what: &str, name: &str, text: String| Input {
        what: what.into(),
        files: vec![(name.into(), text.into_bytes())],
        harness: None,
    };
    match kind {
        Kind::PtxLitmus => single("generated PTX litmus", "gen.litmus", ptx_litmus(rng, k)),
        Kind::CLitmus => single("generated C litmus", "gen.litmus", c_litmus(rng, k)),
        Kind::Cuda => single("generated .cu", "gen.cu", cuda(rng, k)),
        Kind::OpenCl => single("generated .cl", "gen.cl", opencl(rng, k)),
        Kind::PtxModule => {
            let (ptx, harness) = ptx_module(rng, k);
            Input {
                what: "generated .ptx + harness".into(),
                files: vec![
                    ("gen.ptx".into(), ptx.into_bytes()),
                    ("harness.cu".into(), harness.into_bytes()),
                ],
                harness: Some("harness.cu".into()),
            }
        }
    }
}

const LOCS: [&str; 3] = ["x", "y", "z"];
const VALUES: [i64; 4] = [0, 1, 2, 3];

/// A PTX litmus test: 2 or 3 threads in one or two CTAs, loads, stores, RMWs, fences, forward
/// branches (the nesting) and await loops.
fn ptx_litmus(rng: &mut Rng, k: Knobs) -> String {
    let threads = 2 + rng.below(2);
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut regs: Vec<(usize, usize)> = Vec::new();
    for t in 0..threads {
        let mut code = Vec::new();
        let mut next = 0;
        let mut labels = 0;
        ptx_block(rng, k, k.nest, &mut code, &mut next, &mut labels);
        regs.extend((0..next).map(|r| (t, r)));
        columns.push(code);
    }
    let mut s = String::from("PTX gen\n\"generated\"\n{ x=0; y=0; z=0; }\n");
    let heads: Vec<String> = (0..threads)
        .map(|t| format!("P{t}@cta {},gpu 0", rng.below(2)))
        .collect();
    let _ = writeln!(s, " {} ;", heads.join(" | "));
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    for row in 0..rows {
        let cells: Vec<&str> = columns
            .iter()
            .map(|c| c.get(row).map_or("", String::as_str))
            .collect();
        let _ = writeln!(s, " {} ;", cells.join(" | "));
    }
    let mut terms: Vec<String> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        if !regs.is_empty() && rng.chance(60) {
            let (t, r) = *rng.pick(&regs);
            terms.push(format!("P{t}:r{r} == {}", rng.pick(&VALUES)));
        } else {
            terms.push(format!("{} == {}", rng.pick(&LOCS), rng.pick(&VALUES)));
        }
    }
    let q = *rng.pick(&["exists", "~exists", "forall"]);
    let _ = writeln!(s, "{q} ({})", terms.join(" /\\ "));
    s
}

fn ptx_block(
    rng: &mut Rng,
    k: Knobs,
    depth: usize,
    code: &mut Vec<String>,
    next: &mut usize,
    labels: &mut usize,
) {
    let n = 1 + rng.below(k.ops.max(1));
    for _ in 0..n {
        let loc = *rng.pick(&LOCS);
        let v = *rng.pick(&VALUES[1..]);
        let sc = *rng.pick(&["cta", "gpu", "sys"]);
        let roll = rng.below(100);
        if depth > 0 && *next > 0 && roll < 12 {
            // A forward branch over a nested block: `if (r != v) { block }`.
            let r = rng.below(*next);
            let l = format!("S{}", *labels);
            *labels += 1;
            code.push(format!("beq r{r}, {v}, {l}"));
            ptx_block(rng, k, depth - 1, code, next, labels);
            code.push(format!("{l}:"));
            continue;
        }
        if depth > 0 && roll < 16 {
            // An await loop: spin until the location holds v (may hang: a verdict too).
            let l = format!("W{}", *labels);
            *labels += 1;
            let r = *next;
            *next += 1;
            code.push(format!("{l}: ld.acquire.{sc} r{r}, {loc}"));
            code.push(format!("bne r{r}, {v}, {l}"));
            continue;
        }
        if roll >= 96 && (depth == k.nest || k.nested_barriers) {
            code.push("bar.sync 0".into());
            continue;
        }
        let ins = match roll % 8 {
            0 => format!("st.weak {loc}, {v}"),
            1 => format!("st.{}.{sc} {loc}, {v}", rng.pick(&["relaxed", "release"])),
            2 | 3 => {
                let r = *next;
                *next += 1;
                let o = *rng.pick(&["weak", "relaxed", "acquire"]);
                if o == "weak" {
                    format!("ld.weak r{r}, {loc}")
                } else {
                    format!("ld.{o}.{sc} r{r}, {loc}")
                }
            }
            4 => format!("fence.{}.{sc}", rng.pick(&["sc", "acq_rel"])),
            5 => {
                let r = *next;
                *next += 1;
                let op = *rng.pick(&["add", "exch", "max", "or"]);
                format!(
                    "atom.{}.{sc}.{op} r{r}, {loc}, {v}",
                    rng.pick(&["relaxed", "acq_rel"])
                )
            }
            6 => {
                let r = *next;
                *next += 1;
                format!("atom.acq_rel.{sc}.cas r{r}, {loc}, 0, {v}")
            }
            _ => format!("red.relaxed.{sc}.add {loc}, {v}"),
        };
        code.push(ins);
    }
}

/// C statements over the pointers `x`, `y`, `z` (atomic or plain as `atomics` says), the
/// registers `r0`, `r1`, ... declared up front (`regs` counts them), nested `if`s and bounded
/// `for` loops, in CUDA's or OpenCL's spelling.
struct CGen<'a> {
    rng: &'a mut Rng,
    k: Knobs,
    regs: usize,
    opencl: bool,
    loops: usize,
    /// Whether the block being made is a thread's top level (a kernel's branch on its block
    /// number is not).
    top: bool,
}

impl CGen<'_> {
    fn block(&mut self, depth: usize, indent: usize, out: &mut String) {
        let n = 1 + self.rng.below(self.k.ops.max(1));
        for _ in 0..n {
            self.statement(depth, indent, out);
        }
    }

    fn reg(&mut self) -> String {
        let r = self.regs;
        self.regs += 1;
        format!("r{r}")
    }

    fn statement(&mut self, depth: usize, indent: usize, out: &mut String) {
        let pad = "  ".repeat(indent);
        let loc = *self.rng.pick(&LOCS);
        let v = *self.rng.pick(&VALUES[1..]);
        let roll = self.rng.below(100);
        if depth > 0 && self.regs > 0 && roll < 15 {
            let r = self.rng.below(self.regs);
            let cmp = *self.rng.pick(&["==", "!=", "<"]);
            let _ = writeln!(out, "{pad}if (r{r} {cmp} {v}) {{");
            self.block(depth - 1, indent + 1, out);
            if self.rng.chance(30) {
                let _ = writeln!(out, "{pad}}} else {{");
                self.block(depth - 1, indent + 1, out);
            }
            let _ = writeln!(out, "{pad}}}");
            return;
        }
        if depth > 0 && roll < 20 {
            let i = format!("i{}", self.loops);
            self.loops += 1;
            let _ = writeln!(
                out,
                "{pad}for (int {i} = 0; {i} < {}; {i}++) {{",
                1 + self.rng.below(2)
            );
            self.block(depth - 1, indent + 1, out);
            let _ = writeln!(out, "{pad}}}");
            return;
        }
        if roll >= 96 && (depth == self.k.nest && self.top || self.k.nested_barriers) {
            let b = if self.opencl {
                "barrier(CLK_GLOBAL_MEM_FENCE);"
            } else {
                "__syncthreads();"
            };
            let _ = writeln!(out, "{pad}{b}");
            return;
        }
        let line = if self.opencl {
            let sc = *self
                .rng
                .pick(&["memory_scope_device", "memory_scope_work_group"]);
            match roll % 6 {
                0 => format!("atomic_store_explicit({loc}, {v}, memory_order_release, {sc});"),
                1 => format!("atomic_store_explicit({loc}, {v}, memory_order_relaxed, {sc});"),
                2 | 3 => {
                    let r = self.reg();
                    let o = *self
                        .rng
                        .pick(&["memory_order_acquire", "memory_order_relaxed"]);
                    format!("{r} = atomic_load_explicit({loc}, {o}, {sc});")
                }
                4 => {
                    let r = self.reg();
                    format!(
                        "{r} = atomic_fetch_add_explicit({loc}, {v}, memory_order_acq_rel, {sc});"
                    )
                }
                _ => format!(
                    "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, {sc});"
                ),
            }
        } else {
            match roll % 9 {
                0 => format!("*{loc} = {v};"),
                1 => {
                    let r = self.reg();
                    format!("{r} = *{loc};")
                }
                2 => {
                    let r = self.reg();
                    format!("{r} = atomicAdd({loc}, {v});")
                }
                3 => format!("atomicExch({loc}, {v});"),
                4 => {
                    let r = self.reg();
                    format!("{r} = atomicCAS({loc}, 0, {v});")
                }
                5 => self.rng.pick(&["__threadfence();", "__threadfence_block();"]).to_string(),
                6 => format!(
                    "{{ cuda::atomic_ref<int, cuda::thread_scope_{}> a(*{loc}); a.store({v}, cuda::std::memory_order_release); }}",
                    self.rng.pick(&["block", "device", "system"])
                ),
                7 => {
                    let r = self.reg();
                    format!(
                        "{{ cuda::atomic_ref<int, cuda::thread_scope_device> a(*{loc}); {r} = a.load(cuda::std::memory_order_acquire); }}"
                    )
                }
                _ => {
                    if self.regs > 0 {
                        let r = self.rng.below(self.regs);
                        format!("r{r} += {v};")
                    } else {
                        format!("*{loc} = {v};")
                    }
                }
            }
        };
        let _ = writeln!(out, "{pad}{line}");
    }
}

/// The declarations of `regs` registers, each 0.
fn decls(regs: usize, indent: usize) -> String {
    let pad = "  ".repeat(indent);
    (0..regs).map(|r| format!("{pad}int r{r} = 0;\n")).collect()
}

fn c_litmus(rng: &mut Rng, k: Knobs) -> String {
    let threads = 2 + rng.below(2);
    let mut s = String::from("CUDA gen\n\"generated\"\n{ x=0; y=0; z=0; }\n\n");
    let mut all_regs = Vec::new();
    for t in 0..threads {
        let block = rng.below(2);
        let mut body = String::new();
        let mut g = CGen {
            rng: &mut *rng,
            k,
            regs: 0,
            opencl: false,
            loops: 0,
            top: true,
        };
        g.block(k.nest, 1, &mut body);
        let regs = g.regs;
        all_regs.extend((0..regs).map(|r| (t, r)));
        let _ = writeln!(
            s,
            "P{t}@block {block}, gpu 0 (int* x, int* y, int* z) {{\n{}{body}}}\n",
            decls(regs, 1)
        );
    }
    let mut terms = Vec::new();
    for _ in 0..1 + rng.below(3) {
        if !all_regs.is_empty() && rng.chance(60) {
            let (t, r) = *rng.pick(&all_regs);
            terms.push(format!("P{t}:r{r}={}", rng.pick(&VALUES)));
        } else {
            terms.push(format!("{}={}", rng.pick(&LOCS), rng.pick(&VALUES)));
        }
    }
    let q = *rng.pick(&["exists", "~exists", "forall"]);
    let _ = writeln!(s, "{q} ({})", terms.join(" /\\ "));
    s
}

/// A kernel whose blocks take different branches, launched by a host that checks a result.
fn cuda(rng: &mut Rng, k: Knobs) -> String {
    let mut arms = Vec::new();
    let mut regs = 0;
    for _ in 0..2 {
        let mut body = String::new();
        let mut g = CGen {
            rng: &mut *rng,
            k,
            regs,
            opencl: false,
            loops: 0,
            top: false,
        };
        g.block(k.nest, 2, &mut body);
        regs = g.regs;
        arms.push(body);
    }
    let blocks = 2 + rng.below(2);
    let v = *rng.pick(&VALUES);
    let loc = *rng.pick(&LOCS);
    let sync = if rng.chance(30) {
        "  __syncthreads();\n"
    } else {
        ""
    };
    format!(
        "// generated\n__global__ void k(int *x, int *y, int *z) {{\n{}{sync}  if (blockIdx.x == 0) {{\n{}  }} else {{\n{}  }}\n}}\n\nvoid scopecheck_main() {{\n  int *x, *y, *z;\n  cudaMallocManaged(&x, sizeof(int));\n  cudaMallocManaged(&y, sizeof(int));\n  cudaMallocManaged(&z, sizeof(int));\n  *x = 0;\n  *y = 0;\n  *z = 0;\n  k<<<{blocks}, 1>>>(x, y, z);\n  cudaDeviceSynchronize();\n  assert(*{loc} != {v});\n}}\n",
        decls(regs, 1),
        arms[0],
        arms[1]
    )
}

/// An OpenCL kernel of two work-groups, and its host code.
fn opencl(rng: &mut Rng, k: Knobs) -> String {
    let mut arms = Vec::new();
    let mut regs = 0;
    for _ in 0..2 {
        let mut body = String::new();
        let mut g = CGen {
            rng: &mut *rng,
            k,
            regs,
            opencl: true,
            loops: 0,
            top: false,
        };
        g.block(k.nest, 2, &mut body);
        regs = g.regs;
        arms.push(body);
    }
    let out = if regs > 0 {
        format!("  *out = r{};\n", rng.below(regs))
    } else {
        String::new()
    };
    let v = *rng.pick(&VALUES);
    let sync = if rng.chance(30) {
        "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    } else {
        ""
    };
    let mut s = format!(
        "// generated\n__kernel void k(__global atomic_int *x, __global atomic_int *y, __global atomic_int *z, __global int *out) {{\n{}{sync}  if (get_group_id(0) == 0) {{\n{}  }} else {{\n{}  }}\n{out}}}\n\n",
        decls(regs, 1),
        arms[0],
        arms[1]
    );
    s.push_str("void scopecheck_main() {\n  cl_context ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, NULL);\n  cl_command_queue queue = clCreateCommandQueue(ctx, NULL, 0, NULL);\n  cl_program program = clCreateProgramWithSource(ctx, 1, NULL, NULL, NULL);\n  clBuildProgram(program, 0, NULL, NULL, NULL, NULL);\n  cl_kernel kern = clCreateKernel(program, \"k\", NULL);\n");
    for (i, name) in ["x", "y", "z", "out"].iter().enumerate() {
        let _ = writeln!(
            s,
            "  cl_mem {name} = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, NULL);\n  clSetKernelArg(kern, {i}, sizeof(cl_mem), &{name});"
        );
    }
    let _ = write!(
        s,
        "  size_t global = 2, local = 1;\n  clEnqueueNDRangeKernel(queue, kern, 1, NULL, &global, &local, 0, NULL, NULL);\n  clFinish(queue);\n  int result;\n  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof(int), &result, 0, NULL, NULL);\n  assert(result != {v});\n}}\n"
    );
    s
}

/// A PTX module in nvcc's style with one kernel of two pointer parameters, and the `.cu`
/// harness that launches it on two blocks.
fn ptx_module(rng: &mut Rng, k: Knobs) -> (String, String) {
    let mut body = Vec::new();
    let mut regs = 1;
    let mut labels = 0;
    ptx_module_block(rng, k, k.nest, &mut body, &mut regs, &mut labels);
    let mut s = String::from(
        "// generated\n.version 8.5\n.target sm_90\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .u64 k_param_1\n)\n{\n",
    );
    let _ = writeln!(
        s,
        "\t.reg .pred \t%p<{}>;\n\t.reg .b32 \t%r<{}>;\n\t.reg .b64 \t%rd<5>;\n",
        labels + 2,
        regs + 1
    );
    s.push_str("\tld.param.u64 \t%rd1, [k_param_0];\n\tld.param.u64 \t%rd2, [k_param_1];\n\tcvta.to.global.u64 \t%rd3, %rd1;\n\tcvta.to.global.u64 \t%rd4, %rd2;\n");
    for line in body {
        let _ = writeln!(s, "{line}");
    }
    s.push_str("\tret;\n}\n");
    let harness = format!(
        "// generated harness\n__global__ void k(int *x, int *y);\n\nint main() {{\n  int *x, *y;\n  cudaMallocManaged(&x, sizeof(int));\n  cudaMallocManaged(&y, sizeof(int));\n  cudaMemset(x, 0, sizeof(int));\n  cudaMemset(y, 0, sizeof(int));\n  k<<<{}, 1>>>(x, y);\n  cudaDeviceSynchronize();\n  if (*x == {}) return 1;\n  return 0;\n}}\n",
        2 + rng.below(2),
        rng.pick(&VALUES)
    );
    (s, harness)
}

fn ptx_module_block(
    rng: &mut Rng,
    k: Knobs,
    depth: usize,
    out: &mut Vec<String>,
    regs: &mut usize,
    labels: &mut usize,
) {
    for _ in 0..1 + rng.below(k.ops.max(1)) {
        let a = *rng.pick(&["%rd3", "%rd4"]);
        let sc = *rng.pick(&["cta", "gpu", "sys"]);
        let v = 1 + rng.below(3);
        let roll = rng.below(100);
        if depth > 0 && *regs > 1 && roll < 15 {
            let r = 1 + rng.below(*regs - 1);
            *labels += 1;
            let l = *labels;
            out.push(format!("\tsetp.eq.s32 \t%p{l}, %r{r}, {v};"));
            out.push(format!("\t@%p{l} bra \t$L__skip{l};"));
            ptx_module_block(rng, k, depth - 1, out, regs, labels);
            out.push(format!("$L__skip{l}:"));
            continue;
        }
        if roll >= 96 && (depth == k.nest || k.nested_barriers) {
            out.push("\tbar.sync \t0;".into());
            continue;
        }
        let r = *regs;
        match roll % 6 {
            0 => {
                out.push(format!("\tmov.u32 \t%r{r}, {v};"));
                out.push(format!("\tst.global.u32 \t[{a}], %r{r};"));
            }
            1 => {
                out.push(format!("\tmov.u32 \t%r{r}, {v};"));
                out.push(format!("\tst.release.{sc}.global.u32 \t[{a}], %r{r};"));
            }
            2 => out.push(format!("\tld.acquire.{sc}.global.u32 \t%r{r}, [{a}];")),
            3 => out.push(format!("\tld.global.u32 \t%r{r}, [{a}];")),
            4 => out.push(format!("\tatom.global.{sc}.add.u32 \t%r{r}, [{a}], {v};")),
            _ => out.push(format!("\tfence.{}.{sc};", rng.pick(&["sc", "acq_rel"]))),
        }
        *regs += 1;
    }
}

/// Tokens a mutation inserts: the punctuation every grammar here leans on, comment and string
/// openers, preprocessor words, and bytes that are not UTF-8.
const TOKENS: [&[u8]; 16] = [
    b"{",
    b"}",
    b"(",
    b")",
    b";",
    b"|",
    b"/\\",
    b"\"",
    b"(*",
    b"*)",
    b"/*",
    b"#define A A\n",
    b"#include \"nothing.h\"\n",
    b"\xff",
    b"\0",
    b"@",
];

const NUMBERS: [&str; 8] = [
    "0",
    "-1",
    "2147483647",
    "4294967296",
    "99999999999999999999",
    "1000",
    "-2147483648",
    "0x7fffffff",
];

/// `text` with 1 to 3 random changes: lines deleted, duplicated (many times: size) or swapped,
/// numbers replaced by extreme ones, tokens inserted, nesting added, the text cut short, or
/// one identifier replaced by another of the file.
pub fn mutate(text: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<String>) {
    let mut out = text.to_vec();
    let mut what = Vec::new();
    let wanted = 1 + rng.below(3);
    // A change that does not apply (no number on the line, a line swapped with itself) is
    // drawn again; a bounded number of times, for an input with nothing to change.
    for _ in 0..20 {
        if what.len() >= wanted {
            break;
        }
        let mut lines: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len().max(1);
        let i = rng.below(n).min(lines.len().saturating_sub(1));
        match rng.below(9) {
            0 if lines.len() > 1 => {
                lines.remove(i);
                what.push(format!("delete line {}", i + 1));
            }
            1 => {
                let times = *rng.pick(&[1usize, 2, 10, 100]);
                let line = lines[i].clone();
                for _ in 0..times {
                    lines.insert(i, line.clone());
                }
                what.push(format!("duplicate line {} x{times}", i + 1));
            }
            2 if lines.len() > 1 => {
                let j = rng.below(lines.len());
                if i == j {
                    continue;
                }
                lines.swap(i, j);
                what.push(format!("swap lines {} and {}", i + 1, j + 1));
            }
            3 => {
                let num = *rng.pick(&NUMBERS);
                let line = &mut lines[i];
                if let Some(p) = line.iter().position(u8::is_ascii_digit) {
                    let end = line[p..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(line.len(), |e| p + e);
                    line.splice(p..end, num.bytes());
                    what.push(format!("number on line {} -> {num}", i + 1));
                }
            }
            4 => {
                let tok = *rng.pick(&TOKENS);
                let line = &mut lines[i];
                let at = rng.below(line.len() + 1);
                line.splice(at..at, tok.iter().copied());
                what.push(format!(
                    "insert {:?} on line {}",
                    String::from_utf8_lossy(tok),
                    i + 1
                ));
            }
            5 => {
                let depth = *rng.pick(&[3usize, 30, 300]);
                let line = &mut lines[i];
                let open: Vec<u8> = std::iter::repeat_n(b'(', depth).collect();
                let close: Vec<u8> = std::iter::repeat_n(b')', depth).collect();
                if let Some(p) = line.iter().position(|b| b.is_ascii_alphanumeric()) {
                    let end = line[p..]
                        .iter()
                        .position(|b| !b.is_ascii_alphanumeric() && *b != b'_')
                        .map_or(line.len(), |e| p + e);
                    line.splice(end..end, close);
                    line.splice(p..p, open);
                    what.push(format!("{depth} parentheses on line {}", i + 1));
                }
            }
            6 => {
                let cut = rng.below(out.len() + 1);
                lines = out[..cut]
                    .split(|&b| b == b'\n')
                    .map(<[u8]>::to_vec)
                    .collect();
                what.push(format!("cut at byte {cut}"));
            }
            _ => {
                let words = identifiers(&out);
                if words.len() > 1 {
                    let a = rng.pick(&words).clone();
                    let b = rng.pick(&words).clone();
                    let line = &mut lines[i];
                    if let Some(p) = find(line, a.as_bytes()) {
                        line.splice(p..p + a.len(), b.bytes());
                        what.push(format!("{a} -> {b} on line {}", i + 1));
                    }
                }
            }
        }
        out = lines.join(&b'\n');
    }
    (out, what)
}

fn identifiers(text: &[u8]) -> Vec<String> {
    let mut words: Vec<String> = String::from_utf8_lossy(text)
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| w.len() > 1 && w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect();
    words.sort();
    words.dedup();
    words
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}
