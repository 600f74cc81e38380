//! `__syncthreads()` under a branch that not every thread of the block takes (barrier
//! divergence), in both models: the thread that waits while another finished without arriving
//! is a hang the tool reports, with the barrier's line, and the search is complete. A fuzzed
//! kernel of this shape once stopped the explorer with "a round holds arrivals" (issue 31); these
//! pin the verdicts of the shapes it took: a branch on the thread index, a loop whose trip count
//! depends on it, and a branch on a value another thread writes.

use std::path::Path;
use std::process::Command;

/// Checks `source` (a `.cu` file) under `model`: the JSON line.
fn check(name: &str, model: &str, source: &str) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("barrier_divergence");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.cu"));
    std::fs::write(&file, source).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", model, file.to_str().unwrap()])
        .output()
        .expect("run scopecheck");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!("no JSON: {}", String::from_utf8_lossy(&out.stderr));
    });
    serde_json::from_str(line).expect("JSON")
}

/// A host that launches `kernel` on one block of two threads over `flag` and `out[2]`.
fn program(kernel: &str) -> String {
    format!(
        "{kernel}\nint main() {{\n    int *flag, *out;\n    cudaMallocManaged(&flag, sizeof(int));\n    cudaMallocManaged(&out, 2 * sizeof(int));\n    *flag = 0; out[0] = 0; out[1] = 0;\n    k<<<1, 2>>>(flag, out);\n    cudaDeviceSynchronize();\n    return 0;\n}}\n"
    )
}

/// The verdict says the program may hang, at `line`, by barrier divergence, after a complete
/// search.
fn assert_divergence(v: &serde_json::Value, waiter: &str, line: u64) {
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["terminates"], false, "{v}");
    let hangs = v["hangs"].as_array().expect("hangs");
    assert!(
        hangs.iter().any(|h| {
            h["thread"] == waiter
                && h["line"] == line
                && h["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("barrier divergence"))
        }),
        "{v}"
    );
}

/// Thread 0 alone reaches the barrier; thread 1 finishes without it, so thread 0 waits at line
/// 3 forever in every execution.
#[test]
fn a_barrier_only_thread_zero_reaches_is_a_hang() {
    let src = program(
        "__global__ void k(int* flag, int* out) {\n    int t = threadIdx.x;\n    if (t == 0) __syncthreads();\n    out[t] = 1;\n}\n",
    );
    for model in ["src11", "ptx"] {
        let v = check("if-thread-zero", model, &src);
        assert_divergence(&v, "k.b0.t0", 3);
        // No execution terminates: no final state.
        assert_eq!(v["states"].as_array().map(Vec::len), Some(0), "{v}");
    }
}

/// Thread t meets the barrier in the loop t + 1 times: thread 0 once, thread 1 twice. Their first
/// meeting completes a round; thread 1's second arrival waits for thread 0, which finished.
#[test]
fn a_barrier_in_a_loop_of_thread_dependent_length_is_a_hang() {
    let src = program(
        "__global__ void k(int* flag, int* out) {\n    int t = threadIdx.x;\n    for (int i = 0; i < t + 1; i++) {\n        __syncthreads();\n        out[t] = i;\n    }\n}\n",
    );
    for model in ["src11", "ptx"] {
        let v = check("loop-thread-dependent", model, &src);
        assert_divergence(&v, "k.b0.t1", 4);
    }
}

/// Thread 0 meets the barrier only if its RMW of `flag` reads thread 1's 1. Reading 1: both
/// meet, and the one execution ends with flag = 1, out = {2, 1}. Reading the initial 0: thread
/// 0 skips the barrier and finishes, and thread 1 waits at line 8 forever.
#[test]
fn a_barrier_under_a_branch_on_another_threads_write() {
    let src = program(
        "__global__ void k(int* flag, int* out) {\n    int t = threadIdx.x;\n    if (t == 1) atomicExch(flag, 1);\n    if (t == 0) {\n        if (atomicAdd(flag, 0) == 1) __syncthreads();\n        out[0] = 2;\n    } else {\n        __syncthreads();\n        out[1] = 1;\n    }\n}\n",
    );
    for model in ["src11", "ptx"] {
        let v = check("if-read-value", model, &src);
        assert_divergence(&v, "k.b0.t1", 8);
        assert_eq!(v["executions"], 1, "{v}");
        let states = v["states"].as_array().expect("states");
        assert_eq!(states.len(), 1, "{v}");
        let values = &states[0]["values"];
        assert_eq!(
            (&values["flag"], &values["out[0]"], &values["out[1]"]),
            (&1.into(), &2.into(), &1.into()),
            "{v}"
        );
    }
}
