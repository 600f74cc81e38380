//! Host code that runs *while* a kernel runs, on memory the kernel may access: the programs
//! the native host path cannot check, found statically at split time.
//!
//! The native path explores the device only where the host observes it (a synchronization,
//! a copy), and the host's own loads and stores are not events of the explored program. A
//! host access concurrent with a kernel would therefore be run once, in whatever order the
//! child happens to take, not explored under the model: a host thread polling a flag would
//! spin forever (the kernel "runs" only at the next observation), and a host RMW racing with
//! the device's would be missed. Such programs keep the interpreted harness, which makes the
//! host a thread of the explored program. What sends a file there:
//! - zero-copy memory: `cudaHostAllocMapped`, `cudaHostRegister`(`Mapped`),
//!   `cudaHostGetDevicePointer` (host memory a kernel reaches through a device pointer);
//! - host threads: `std::thread`, `std::jthread`, `std::async`, `pthread_create` (a host
//!   thread runs beside the launches of the main one);
//! - polling a kernel's completion: `cudaStreamQuery`, `cudaEventQuery` (the host loops
//!   while the kernel runs);
//! - a cooperative launch (`cudaLaunchCooperativeKernel`): not concurrency, but the native
//!   path's explored launches are not cooperative yet, and the interpreted harness's are;
//! - managed memory (`cudaMallocManaged`'s pointer, a `__managed__` variable) named in a host
//!   function after a launch and before the next call that waits for the device
//!   (`cudaDeviceSynchronize`, a synchronous copy, ...), in source order.
//!
//! The test is syntactic and errs towards the interpreted harness: a pointer merely copied
//! after a launch counts as an access. What it cannot see: an access in a helper function
//! called after the launch without the managed name as an argument, and a loop whose next
//! turn touches managed memory before the synchronization at its end.

use tree_sitter::Node;

/// Where and why a file needs the interpreted harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concurrent {
    /// 1-based line and column of the construct.
    pub line: usize,
    pub column: usize,
    pub why: String,
}

impl std::fmt::Display for Concurrent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

/// Calls after which the device work issued before has finished (the host waits for it).
const WAITS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaThreadSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemcpy2D",
    "cudaMemset",
    "cudaFree",
    "cudaDeviceReset",
];

/// Names that make the host touch memory a kernel may access concurrently, and why.
fn zero_copy_or_threads(name: &str) -> Option<&'static str> {
    Some(match name {
        "cudaHostAllocMapped"
        | "cudaHostRegister"
        | "cudaHostRegisterMapped"
        | "cudaHostGetDevicePointer" => {
            "zero-copy host memory (`NAME`): the host may touch it while a kernel runs"
        }
        "pthread_create" => "a host thread (`NAME`) runs beside the kernels",
        "cudaStreamQuery" | "cudaEventQuery" => {
            "the host polls a kernel's completion (`NAME`) while the kernel runs"
        }
        // Not concurrency, but the interpreted harness's too: the native path's explored
        // launches are not cooperative yet, and `this_grid().sync()` needs one.
        "cudaLaunchCooperativeKernel" => {
            "a cooperative launch (`NAME`): the native path does not make cooperative launches yet"
        }
        _ => return None,
    })
}

/// The first construct of `root` (a translation unit as written) that needs the interpreted
/// harness, in source order.
pub fn find(root: Node, src: &str) -> Option<Concurrent> {
    let mut managed = Vec::new();
    managed_names(root, src, &mut managed);
    let mut found = Vec::new();
    walk(root, src, &managed, &mut found);
    found.into_iter().min_by_key(|c| (c.line, c.column))
}

fn at(n: Node, why: String) -> Concurrent {
    Concurrent {
        line: n.start_position().row + 1,
        column: n.start_position().column + 1,
        why,
    }
}

fn text<'s>(n: Node, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

/// The identifiers and keywords of `s`.
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Whether `f` (a function definition) is device code: a kernel or `__device__` alone.
fn device_function(f: Node, src: &str) -> bool {
    let end = f
        .child_by_field_name("body")
        .map_or(f.end_byte(), |b| b.start_byte());
    let head: Vec<&str> = words(&src[f.start_byte()..end]).collect();
    head.contains(&"__global__") || (head.contains(&"__device__") && !head.contains(&"__host__"))
}

/// The names of managed memory: `__managed__` variables, and what `cudaMallocManaged`'s first
/// argument takes the address of.
fn managed_names(n: Node, src: &str, out: &mut Vec<String>) {
    match n.kind() {
        "declaration" if words(text(n, src)).any(|w| w == "__managed__") => {
            let mut c = n.walk();
            for d in n.children_by_field_name("declarator", &mut c) {
                if let Some(name) = declared_name(d, src) {
                    out.push(name);
                }
            }
            return;
        }
        "call_expression" if callee(n, src) == Some("cudaMallocManaged") => {
            let first = n
                .child_by_field_name("arguments")
                .and_then(|a| a.named_child(0));
            if let Some(first) = first {
                // `&p`, `(void **)&p`, `reinterpret_cast<void **>(&p)`: the last word named.
                if let Some(w) = words(text(first, src)).last() {
                    out.push(w.to_string());
                }
            }
        }
        "function_definition" if device_function(n, src) => return,
        _ => {}
    }
    let mut c = n.walk();
    for k in n.named_children(&mut c) {
        managed_names(k, src, out);
    }
}

fn declared_name(mut d: Node, src: &str) -> Option<String> {
    loop {
        if d.kind() == "identifier" {
            return Some(text(d, src).to_string());
        }
        d = d.child_by_field_name("declarator")?;
    }
}

/// The name a call calls, when it is a plain or qualified name.
fn callee<'s>(call: Node, src: &'s str) -> Option<&'s str> {
    let f = call.child_by_field_name("function")?;
    if !matches!(
        f.kind(),
        "identifier" | "qualified_identifier" | "template_function"
    ) {
        return None;
    }
    // `::cudaFree`, `cudaMallocManaged<int>`: the name itself.
    let name = text(f, src).trim_start_matches("::");
    Some(name.split('<').next().unwrap_or(name).trim())
}

/// Whether `call` is a launch: `k<<<...>>>(...)`, `cudaLaunchKernel`, `cudaLaunchCooperativeKernel`.
fn is_launch(call: Node, src: &str) -> bool {
    let mut c = call.walk();
    let chevrons = call
        .children(&mut c)
        .any(|k| k.kind() == "kernel_call_syntax");
    chevrons
        || matches!(
            callee(call, src),
            Some("cudaLaunchKernel" | "cudaLaunchCooperativeKernel")
        )
}

/// Host code of the file: every function that is not device code, and the namespace-scope
/// declarations, searched for zero-copy memory, threads, completion polling, and (in a
/// function body) managed memory touched while a kernel may run.
fn walk(n: Node, src: &str, managed: &[String], out: &mut Vec<Concurrent>) {
    match n.kind() {
        "comment" | "string_literal" | "raw_string_literal" | "char_literal" => return,
        "function_definition" if device_function(n, src) => return,
        "function_definition" => {
            if let Some(body) = n.child_by_field_name("body") {
                let mut running = None;
                in_order(body, src, managed, &mut running, out);
            }
        }
        "identifier" | "type_identifier" | "field_identifier" => {
            if let Some(why) = zero_copy_or_threads(text(n, src)) {
                out.push(at(n, why.replace("NAME", text(n, src))));
            }
        }
        "qualified_identifier" => {
            let t: String = text(n, src).split_whitespace().collect();
            if matches!(
                t.as_str(),
                "std::thread" | "std::jthread" | "std::async" | "std::thread::thread"
            ) {
                out.push(at(
                    n,
                    format!("a host thread (`{t}`) runs beside the kernels"),
                ));
                return;
            }
        }
        _ => {}
    }
    let mut c = n.walk();
    for k in n.children(&mut c) {
        walk(k, src, managed, out);
    }
}

/// A host function's body in source order: `running` holds the line of the last launch not
/// yet waited for; a managed name used meanwhile is a concurrent access.
fn in_order(
    n: Node,
    src: &str,
    managed: &[String],
    running: &mut Option<usize>,
    out: &mut Vec<Concurrent>,
) {
    match n.kind() {
        "comment" | "string_literal" | "raw_string_literal" | "char_literal" => return,
        "call_expression" if is_launch(n, src) => {
            *running = Some(n.start_position().row + 1);
            // The launch's arguments hand pointers to the kernel; they touch nothing.
            return;
        }
        "call_expression" => {
            let name = callee(n, src).unwrap_or("");
            if WAITS.contains(&name) {
                *running = None;
                return;
            }
            // Other runtime calls (async copies, prefetches, advice) are device work or
            // bookkeeping, not host accesses of their pointer arguments.
            if name.starts_with("cuda") {
                return;
            }
        }
        "identifier" => {
            let name = text(n, src);
            if let (Some(line), true) = (*running, managed.iter().any(|m| m == name)) {
                out.push(at(
                    n,
                    format!(
                        "managed memory (`{name}`) used by the host while the kernel launched at line {line} may still run"
                    ),
                ));
                // One report per launch is enough.
                *running = None;
            }
            return;
        }
        _ => {}
    }
    let mut c = n.walk();
    for k in n.children(&mut c) {
        in_order(k, src, managed, running, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(src: &str) -> Option<Concurrent> {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&tree_sitter_cuda::LANGUAGE.into())
            .expect("grammar");
        let tree = p.parse(src, None).expect("tree");
        find(tree.root_node(), src)
    }

    /// A managed flag polled between the launch and the synchronization needs the
    /// interpreted harness; read after the synchronization it does not.
    #[test]
    fn managed_memory_between_launch_and_wait() {
        let polled = "__global__ void k(int *f) { *f = 1; }\nint main() {\n  int *flag;\n  cudaMallocManaged(&flag, 4);\n  k<<<1, 1>>>(flag);\n  while (*flag == 0) {}\n  cudaDeviceSynchronize();\n}\n";
        let c = first(polled).expect("the poll is concurrent");
        assert_eq!((c.line, c.column), (6, 11), "{c}");
        assert!(c.why.contains("`flag`") && c.why.contains("line 5"), "{c}");
        let after = polled.replace(
            "  while (*flag == 0) {}\n  cudaDeviceSynchronize();\n",
            "  cudaDeviceSynchronize();\n  while (*flag == 0) {}\n",
        );
        assert_eq!(first(&after), None);
    }

    /// Zero-copy memory, host threads and completion queries, in code; not in comments,
    /// strings or kernels.
    #[test]
    fn zero_copy_threads_and_queries() {
        let mapped = "int main() {\n  int *h;\n  cudaHostAlloc(&h, 4, cudaHostAllocMapped);\n}\n";
        assert_eq!(first(mapped).map(|c| c.line), Some(3));
        let thread =
            "#include <thread>\nvoid f() {}\nint main() {\n  std::thread t(f);\n  t.join();\n}\n";
        assert!(first(thread).is_some_and(|c| c.line == 4 && c.why.contains("std::thread")));
        let query =
            "int main() {\n  cudaStream_t s;\n  while (cudaStreamQuery(s) != cudaSuccess) {}\n}\n";
        assert_eq!(first(query).map(|c| c.line), Some(3));
        let quiet = "// cudaHostAllocMapped in a comment\nconst char *m = \"cudaHostRegister\";\n__global__ void k(int *p) { int cudaHostGetDevicePointer = 0; *p = cudaHostGetDevicePointer; }\nint main() { return 0; }\n";
        assert_eq!(first(quiet), None);
    }
}
