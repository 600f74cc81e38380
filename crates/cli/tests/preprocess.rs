//! `scopecheck check` on CUDA files that use the preprocessor: headers, object-like and
//! function-like macros, conditional code and pragmas, with findings and errors at the lines
//! of the file as written.

use std::path::PathBuf;
use std::process::Command;

/// Writes `source` to a fresh `.cu` file and runs `check --json` on it: (exit status, the
/// first JSON line or the empty string, stderr).
fn check(name: &str, source: &str) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("scopecheck-pp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, source).expect("write the test file");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let stdout = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code().unwrap_or(-1),
        stdout.lines().next().unwrap_or_default().to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The harness both counters share: two blocks count, the host checks the total.
const HARNESS: &str = r#"
void scopecheck_main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    count<<<BLOCKS, 1>>>(counter);
    cudaDeviceSynchronize();
    assert(*counter == BLOCKS);
}
"#;

/// A device-scope counter written with the macros real code uses. `BLOCKS` is 2 and the
/// `#if` keeps the device-scope `fetch_add` (the `#else` branch, a plain increment that would
/// race, is not compiled), so the two relaxed device-scope RMWs are atomic together and the
/// host, after `cudaDeviceSynchronize()`, reads 2: the assertion always holds, no race.
#[test]
fn macros_and_headers_are_expanded_before_checking() {
    let src = r#"#include <cuda/atomic>
#include <cstdio>
#define BLOCKS 2
#define USE_ATOMICS 1
#define BUMP(c) (c).fetch_add(1, cuda::memory_order_relaxed)

__global__ void count(int *counter) {
#if USE_ATOMICS && BLOCKS > 1
    cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter);
    #pragma unroll
    BUMP(c);
#else
    *counter += 1;
#endif
}
"#;
    let (code, json, stderr) = check("macros.cu", &format!("{src}{HARNESS}"));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["result"], "Ok", "{v}");
    assert_eq!(v["racy"], false, "{v}");
    assert_eq!(v["executions"], 2, "{v}");
}

/// The same counter with the plain increment selected by the macro: two blocks' non-atomic
/// read-modify-write race (a data race) and one increment can be lost, so the assertion can
/// fail. The race is reported at line 8, where the increment is written, whatever the macro
/// lines before it did to the text.
#[test]
fn a_finding_in_macro_selected_code_names_the_line_as_written() {
    let src = r#"#define USE_ATOMICS 0
#define BLOCKS 2

__global__ void count(int *counter) {
#if USE_ATOMICS
    atomicAdd(counter, 1);
#else
    *counter += 1;
#endif
}
"#;
    let (code, json, stderr) = check("plain.cu", &format!("{src}{HARNESS}"));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["result"], "No", "{v}");
    assert_eq!(v["racy"], true, "{v}");
    assert_eq!(v["races"][0]["first"]["line"], 8, "{}", v["races"]);
}

/// A preprocessing error is an input error: its line, column and message, exit status 1.
#[test]
fn a_preprocessor_error_is_reported_at_its_line() {
    let src = "#define N 2\n#if N > 1\n#error two blocks are not supported here\n#endif\n";
    let (code, json, stderr) = check("error.cu", src);
    assert_eq!(code, 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        v["error"], "#error two blocks are not supported here",
        "{v}"
    );
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(3), Some(1)),
        "{v}"
    );
}
