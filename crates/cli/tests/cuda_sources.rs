//! `scopecheck check` on CUDA files as people write them: the preprocessor (headers,
//! object-like and function-like macros, conditional code, pragmas) with findings and errors
//! at the lines of the file as written; `atomic_ref` bound to a name; symbol copies and the
//! exit status of `main`.

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

/// `cuda::atomic_ref<int, cuda::thread_scope_block> h(x);` (C++'s most vexing parse: it reads
/// as a function declaration) binds `h` to the global `x`. Two threads of one block add 1 at
/// block scope, in each other's scope: atomic together, so `x` ends at 2, and `main` returns
/// `v == 2 ? 0 : 1`, the requirement `v == 2`: Ok. With the two threads in two blocks the
/// block scope does not include the other thread: a heterogeneous race, reported as such.
#[test]
fn atomic_ref_bound_to_a_name_and_a_computed_exit_status() {
    let src = |grid: &str, want: i32| {
        format!(
            r#"#include <cuda/atomic>
__device__ int x = 0;
__global__ void k() {{
    cuda::atomic_ref<int, cuda::thread_scope_block> h(x);
    h.fetch_add(1, cuda::memory_order_relaxed);
}}
int main() {{
    k<<<{grid}>>>();
    cudaDeviceSynchronize();
    int v = 0;
    cudaMemcpyFromSymbol(&v, x, sizeof(int));
    return v == {want} ? 0 : 1;
}}
"#
        )
    };
    let run = |name: &str, source: String| {
        let (code, json, stderr) = check(name, &source);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&json).expect("JSON")
    };
    let v = run("ref-block.cu", src("1, 2", 2));
    assert_eq!(
        (&v["result"], &v["racy"]),
        (&"Ok".into(), &false.into()),
        "{v}"
    );
    // Requiring 3 fails in every execution.
    let v = run("ref-three.cu", src("1, 2", 3));
    assert_eq!(v["result"], "No", "{v}");
    let v = run("ref-grid.cu", src("2, 1", 2));
    assert_eq!(v["racy"], true, "{v}");
    assert_eq!(v["races"][0]["kind"], "heterogeneous", "{}", v["races"]);
}

/// `cudaMemcpyToSymbol` sets `__device__` variables before the launch (host to device, with
/// and without the optional offset and kind), `cudaMemcpyFromSymbol` reads one back after it.
/// Three threads, `limit` = 2: threads 0 and 1 add 1 with device-scope atomics, so `hits` is 2
/// in every execution; requiring 3 fails.
#[test]
fn symbol_copies_set_and_read_device_variables() {
    let src = |want: i32| {
        format!(
            r#"__device__ int limit;
__device__ int hits;
__global__ void k() {{ if (threadIdx.x < limit) atomicAdd(&hits, 1); }}
int main() {{
    int two = 2, zero = 0;
    cudaMemcpyToSymbol(limit, &two, sizeof(int));
    cudaMemcpyToSymbol(hits, &zero, sizeof(int), 0, cudaMemcpyHostToDevice);
    k<<<1, 3>>>();
    int h = -1;
    cudaMemcpyFromSymbol(&h, hits, sizeof(int));
    if (h != {want}) return 1;
    return 0;
}}
"#
        )
    };
    for (want, result) in [(2, "Ok"), (3, "No")] {
        let (code, json, stderr) = check(&format!("symbols-{want}.cu"), &src(want));
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(v["result"], result, "{want}: {v}");
    }
    // An offset is not supported yet: said at its line.
    let (code, json, _) = check(
        "symbol-offset.cu",
        "__device__ int a[2];\nint main() {\n int v = 1;\n cudaMemcpyToSymbol(a, &v, 4, 4);\n return 0;\n}\n",
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["line"], 4, "{v}");
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("offset")),
        "{v}"
    );
}

/// Events order work across streams. `produce` (stream s1) writes `*d`; `ready` is recorded
/// on s1 after it, and s2 waits for `ready` before `consume` copies `*d` to `*out`: the
/// consumer starts after the producer finished (launch order), so it reads 42 with plain
/// accesses and no race, and the host's copy back, after the synchronizations, sees 42: Ok.
/// Without `cudaStreamWaitEvent` the two kernels may run at once: a data race on `*d` and
/// `out` may hold 0: No. `cudaEventSynchronize` on an event recorded on the default stream
/// makes the host wait for the kernel before it: Ok.
#[test]
fn events_order_streams_and_the_host() {
    let two_streams = |wait: &str| {
        format!(
            r#"__global__ void produce(int *d) {{ *d = 42; }}
__global__ void consume(int *d, int *out) {{ *out = *d; }}
int main() {{
    int *d, *out;
    cudaMalloc(&d, sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEvent_t ready;
    cudaEventCreate(&ready);
    produce<<<1, 1, 0, s1>>>(d);
    cudaEventRecord(ready, s1);
    {wait}
    consume<<<1, 1, 0, s2>>>(d, out);
    cudaStreamSynchronize(s2);
    int h = 0;
    cudaMemcpy(&h, out, sizeof(int), cudaMemcpyDeviceToHost);
    if (h != 42) return 1;
    return 0;
}}
"#
        )
    };
    let verdict = |name: &str, source: &str| {
        let (code, json, stderr) = check(name, source);
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        (
            v["result"].as_str().unwrap_or("?").to_string(),
            v["racy"] == true,
        )
    };
    assert_eq!(
        verdict(
            "wait.cu",
            &two_streams("cudaStreamWaitEvent(s2, ready, 0);")
        ),
        ("Ok".to_string(), false)
    );
    assert_eq!(
        verdict("nowait.cu", &two_streams("")),
        ("No".to_string(), true)
    );
    let host_waits = r#"__global__ void k(int *a) { atomicAdd(a, 1); }
int main() {
    int *d;
    cudaMalloc(&d, sizeof(int));
    cudaMemset(d, 0, sizeof(int));
    cudaEvent_t e;
    cudaEventCreate(&e);
    k<<<1, 1>>>(d);
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    int h;
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    if (h != 1) return 1;
    return 0;
}
"#;
    assert_eq!(verdict("record.cu", host_waits), ("Ok".to_string(), false));
    // An event used before it is created is an error at its line.
    let (code, json, _) = check(
        "uncreated.cu",
        "__global__ void k() {}\nint main() {\n cudaEvent_t e;\n cudaEventRecord(e);\n return 0;\n}\n",
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["line"], 4, "{v}");
}

/// `cudaMemcpyAsync` is ordered on its stream like a launch and does not block the host. The
/// host array `h` goes to the device, `twice` doubles it, and it comes back, all on stream
/// `s`; after `cudaStreamSynchronize(s)` the host reads 2 and 4: Ok. Without the
/// synchronization the host's reads of `h` are concurrent with the copy back: a data race on
/// `h[0]` and `h[1]`, and the old values may be read: No.
#[test]
fn async_copies_are_ordered_on_their_stream() {
    let src = |sync: &str| {
        format!(
            r#"__global__ void twice(int *d) {{ d[threadIdx.x] = 2 * d[threadIdx.x]; }}
int main() {{
    int h[2] = {{1, 2}};
    int *d;
    cudaMalloc(&d, 2 * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemcpyAsync(d, h, 2 * sizeof(int), cudaMemcpyHostToDevice, s);
    twice<<<1, 2, 0, s>>>(d);
    cudaMemcpyAsync(h, d, 2 * sizeof(int), cudaMemcpyDeviceToHost, s);
    {sync}
    if (h[0] != 2 || h[1] != 4) return 1;
    return 0;
}}
"#
        )
    };
    for (sync, result, racy) in [("cudaStreamSynchronize(s);", "Ok", false), ("", "No", true)] {
        let (code, json, stderr) = check(&format!("async-{racy}.cu"), &src(sync));
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(
            (&v["result"], v["racy"] == true),
            (&result.into(), racy),
            "{v}"
        );
    }
    // A host local cannot take an asynchronous copy (its value would live in another thread).
    let (code, json, _) = check(
        "async-local.cu",
        "int main() {\n int *d; cudaMalloc(&d, 4);\n int h;\n cudaMemcpyAsync(&h, d, 4, cudaMemcpyDeviceToHost, 0);\n return 0;\n}\n",
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["line"], 4, "{v}");
}

/// Namespace-scope compile-time constants are values in host and device code: `N` sizes the
/// launch and the host's check, `START` is negative and folds with `N`. Each of the `N` = 2
/// blocks adds `START + N + 1` = 2 with a device-scope atomic, so the total is 4 = `2 * N` in
/// every execution, without a race.
#[test]
fn constexpr_constants_are_values_everywhere() {
    let src = r#"
constexpr int N = 2;
const int START = -1;
__global__ void add(int *total) {
    atomicAdd(total, START + N + 1);
}
int main() {
    int *total;
    cudaMallocManaged(&total, sizeof(int));
    add<<<N, 1>>>(total);
    cudaDeviceSynchronize();
    if (*total != 2 * N) return 1;
    return 0;
}
"#;
    let (code, json, stderr) = check("constexpr.cu", src);
    assert_eq!(code, 0, "{stderr}\n{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        (&v["result"], &v["racy"]),
        (&"Ok".into(), &false.into()),
        "{v}"
    );
}

/// A struct of an `int` and a `long long` has 4 bytes of padding in C, which the IR's layout
/// lacks: the PTX view refuses it (and says so) rather than let the PTX's byte offsets reach
/// the wrong field; the PTX verdict is then scopecheck's own mapping, which does not use byte
/// offsets, and holds (the host reads the 5 the kernel wrote before the synchronization).
#[test]
fn the_ptx_view_refuses_a_struct_with_padding() {
    let src = r#"
struct Rec { int tag; long long value; };
__global__ void put(Rec* r) { r->value = 5; r->tag = 1; }
int main() {
    Rec* r;
    cudaMallocManaged(&r, sizeof(Rec));
    put<<<1, 1>>>(r);
    cudaDeviceSynchronize();
    if (r->value != 5) return 1;
    return 0;
}
"#;
    let dir = std::env::temp_dir().join(format!("scopecheck-pad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let path = dir.join("padding.cu");
    std::fs::write(&path, src).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", "ptx"])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let v: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default(),
    )
    .expect("JSON");
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("fields of different widths"),
        "{warnings}"
    );
    assert_eq!(v["result"], "Ok", "{v}");
}

/// `cudaMemsetAsync` runs in its stream's order: on stream `s` it clears the flag after `set`
/// (earlier on `s`) and before `get` (later on `s`), so `get` reads 0 in every execution. On
/// another stream `t` it is ordered with neither kernel, so `get` may read the 1 `set` wrote
/// (or the 0 of either memset) and the check can fail.
#[test]
fn memset_async_follows_its_stream() {
    let program = |stream: &str| {
        format!(
            r#"
__global__ void set(int *flag) {{ atomicExch(flag, 1); }}
__global__ void get(int *flag, int *out) {{ *out = atomicAdd(flag, 0); }}
int main() {{
    int *flag, *out;
    cudaMalloc(&flag, sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    cudaStream_t s, t;
    cudaStreamCreate(&s);
    cudaStreamCreate(&t);
    set<<<1, 1, 0, s>>>(flag);
    cudaMemsetAsync(flag, 0, sizeof(int), {stream});
    get<<<1, 1, 0, s>>>(flag, out);
    cudaDeviceSynchronize();
    if (*out != 0) return 1;
    return 0;
}}
"#
        )
    };
    let result = |name: &str, stream: &str| {
        let (code, json, stderr) = check(name, &program(stream));
        assert_eq!(code, 0, "{stderr}\n{json}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        v["result"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(result("memset-same.cu", "s"), "Ok");
    assert_eq!(result("memset-other.cu", "t"), "No");
}

/// The verdict fields of a `check --json` line: (result, racy).
fn verdict(json: &str) -> (String, bool) {
    let v: serde_json::Value = serde_json::from_str(json).expect("a JSON line");
    (
        v["result"].as_str().unwrap_or_default().to_string(),
        v["racy"].as_bool().unwrap_or(false),
    )
}

/// Two blocks exchange values across `this_grid().sync()` in a cooperative launch. The sync
/// is every thread's acq_rel device-scope add on the launch's counter and an acquire wait for
/// both adds: the RMW chain orders each block's write before the other block's read, so each
/// reads the other's value, with no race. With `this_thread_block().sync()` instead, the CTA
/// barrier orders nothing across blocks: the plain write and read race and the old value 0 can
/// be read.
#[test]
fn a_grid_sync_in_a_cooperative_launch_orders_the_blocks_and_a_block_sync_does_not() {
    let grid = r#"#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void exchange(int *data, int *out) {
    cg::grid_group grid = cg::this_grid();
    int me = blockIdx.x;
    data[me] = me + 1;
    SYNC;
    out[me] = data[1 - me];
}

int main() {
    int *data, *out;
    cudaMallocManaged(&data, 2 * sizeof(int));
    cudaMallocManaged(&out, 2 * sizeof(int));
    void *args[] = {&data, &out};
    cudaLaunchCooperativeKernel((void *)exchange, 2, 1, args, 0, 0);
    cudaDeviceSynchronize();
    if (out[0] != 2 || out[1] != 1) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("grid-sync.cu", &grid.replace("SYNC", "grid.sync()"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
    let block = grid.replace("SYNC", "cg::this_thread_block().sync()");
    let (_, json, _) = check("block-sync.cu", &block);
    assert_eq!(verdict(&json), ("No".into(), true), "{json}");
    // With <<<...>>> the blocks need not be resident together: grid.sync() is refused.
    let plain = grid.replace("SYNC", "grid.sync()").replace(
        "cudaLaunchCooperativeKernel((void *)exchange, 2, 1, args, 0, 0);",
        "exchange<<<2, 1>>>(data, out);",
    );
    let (code, json, _) = check("grid-sync-plain.cu", &plain);
    assert_ne!(code, 0);
    assert!(json.contains("needs a cooperative launch"), "{json}");
}

/// `CUDA_CHECK(call)` wraps each call in `do { ... } while (0)`: a body that runs once, so a
/// synchronizing call inside it is as good as at the top of `main`. The kernel's relaxed
/// device-scope increments are atomic together, and after the synchronization the host reads
/// 2: Ok, no race.
#[test]
fn calls_inside_a_do_while_0_macro_are_at_the_top_of_main() {
    let src = r#"#include <cuda/atomic>
#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { return 1; } } while (0)

__global__ void count(int *c) {
    cuda::atomic_ref<int, cuda::thread_scope_device> r(*c);
    r.fetch_add(1, cuda::memory_order_relaxed);
}

int main() {
    int *c;
    CUDA_CHECK(cudaMallocManaged(&c, sizeof(int)));
    count<<<2, 1>>>(c);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (*c != 2) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("cuda-check.cu", src);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
}

/// A stream created `cudaStreamNonBlocking` is not ordered with the legacy default stream
/// (CUDA Runtime API, "Stream synchronization behavior"): the reader on it may run before the
/// writer on stream 0, so the plain write and read race and the read may see 0. On a blocking
/// stream the default stream's kernel finishes first: Ok.
#[test]
fn a_non_blocking_stream_is_not_ordered_with_the_default_stream() {
    let src = r#"
__global__ void wr(int *d) { *d = 42; }
__global__ void rd(int *d, int *out) { *out = *d; }
int main() {
    int *d, *out;
    cudaMallocManaged(&d, sizeof(int));
    cudaMallocManaged(&out, sizeof(int));
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, FLAGS);
    wr<<<1, 1>>>(d);
    rd<<<1, 1, 0, s>>>(d, out);
    cudaDeviceSynchronize();
    if (*out != 42) return 1;
    return 0;
}
"#;
    let (_, json, _) = check("nb.cu", &src.replace("FLAGS", "cudaStreamNonBlocking"));
    assert_eq!(verdict(&json), ("No".into(), true), "{json}");
    let (_, json, _) = check("b.cu", &src.replace("FLAGS", "cudaStreamDefault"));
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
}

/// A spin that backs off with a growing `__nanosleep` delay: the delay register only feeds
/// itself and the sleep, so it is not live and the loop is an await loop (explored by its
/// exiting iteration, no `--unroll` cut). The acquire CAS and release exchange order the two
/// critical sections: the counter ends at 2, no race.
#[test]
fn a_backoff_register_does_not_keep_a_spin_from_being_an_await_loop() {
    let src = r#"
__device__ int lock = 0;
__global__ void inc(int *counter) {
    unsigned ns = 8;
    while (atomicCAS(&lock, 0, 1) != 0) { __nanosleep(ns); ns = ns * 2; }
    __threadfence();
    *counter = *counter + 1;
    __threadfence();
    atomicExch(&lock, 0);
}
int main() {
    int *counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    inc<<<2, 1>>>(counter);
    cudaDeviceSynchronize();
    if (*counter != 2) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("backoff.cu", src);
    assert_eq!(code, 0, "{err}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["complete"], true, "{json}");
}

/// `sizeof(*p)` is the size of what `p` points at (here a 64-bit element), as idiomatic host
/// code sizes its allocations and copies: two 8-byte elements, each written by one block, and
/// the copy back brings both. Ok, no race (the host reads after the synchronizing copy).
#[test]
fn sizeof_of_a_dereferenced_pointer_is_its_element_size() {
    let src = r#"
__global__ void fill(long long *d) { d[blockIdx.x] = 5000000000LL + blockIdx.x; }
int main() {
    long long *d;
    long long h[2];
    cudaMalloc(&d, 2 * sizeof(*d));
    fill<<<2, 1>>>(d);
    cudaMemcpy(h, d, 2 * sizeof(d[0]), cudaMemcpyDeviceToHost);
    if (h[0] != 5000000000LL || h[1] != 5000000001LL) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("sizeof-deref.cu", src);
    assert_eq!(code, 0, "{err} {json}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
}

/// `cuda::atomic_ref<int, S> f(p[i]);` (the most vexing parse reads `p[i]` as an array
/// parameter named by type `p`): it binds to element i. Each block adds 1 to its own element
/// and to p[2] at device scope: p = {1, 1, 2}, no race.
#[test]
fn an_atomic_ref_bound_to_an_element_with_parentheses() {
    let src = r#"#include <cuda/atomic>
__global__ void k(int *p) {
    int i = blockIdx.x;
    cuda::atomic_ref<int, cuda::thread_scope_device> f(p[i]);
    f.fetch_add(1, cuda::memory_order_relaxed);
    cuda::atomic_ref<int, cuda::thread_scope_device> g(p[2]);
    g.fetch_add(1, cuda::memory_order_relaxed);
}
int main() {
    int *p;
    cudaMallocManaged(&p, 3 * sizeof(int));
    k<<<2, 1>>>(p);
    cudaDeviceSynchronize();
    if (p[0] != 1 || p[1] != 1 || p[2] != 2) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("aref-element.cu", src);
    assert_eq!(code, 0, "{err} {json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(!v["warnings"].to_string().contains("cannot read"), "{json}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
}

/// A look-back loop that stops at the first block: `if (pred < 0) break;` folds for block 0,
/// whose `flag[pred]` after it would index -1. That code never runs, so it is not lowered and
/// is no error; block 0 sums nothing: out[0] = 0.
#[test]
fn code_after_a_break_that_always_runs_is_not_lowered() {
    let src = r#"
__device__ int flag[3];
__global__ void k(int *out) {
    int tile = blockIdx.x;
    int sum = 0;
    for (int j = 1; j < 3; ++j) {
        int pred = tile - j;
        if (pred < 0) break;
        sum += flag[pred];
    }
    out[tile] = sum;
}
int main() {
    int *out;
    cudaMallocManaged(&out, 3 * sizeof(int));
    k<<<3, 1>>>(out);
    cudaDeviceSynchronize();
    if (out[0] != 0) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("folded-break.cu", src);
    assert_eq!(code, 0, "{err} {json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["model"], "src11",
        "read by the language-level front-end: {json}"
    );
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
}

/// A kernel that waits for a flag nobody sets: every execution hangs, so none reaches the
/// harness's check. The verdict is vacuous, and since the host waits for the kernel, the
/// requirement fails (No) instead of passing on no state at all.
#[test]
fn a_harness_that_never_completes_fails_its_requirement() {
    let src = r#"
__device__ int flag = 0;
__global__ void wait_forever(int *out) {
    while (atomicAdd(&flag, 0) == 0) { }
    *out = 1;
}
int main() {
    int *out;
    cudaMallocManaged(&out, sizeof(int));
    *out = 0;
    wait_forever<<<1, 1>>>(out);
    cudaDeviceSynchronize();
    if (*out != 1) return 1;
    return 0;
}
"#;
    let (_, json, _) = check("hang.cu", src);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["result"], "No", "{json}");
    assert_eq!(v["vacuous"], true, "{json}");
    assert_eq!(v["terminates"], false, "{json}");
    assert_eq!(v["executions"], 0, "{json}");
}

/// A litmus test whose only reader spins on a flag nobody writes (tests/litmus/ptx,
/// Await+never-written): no execution terminates, and the text says the result is vacuous.
#[test]
fn a_result_over_no_terminating_execution_is_marked_vacuous() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/litmus/ptx/Await+never-written.litmus");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .arg("check")
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(vacuous: no execution terminates)"),
        "{text}"
    );
}

/// Integers wrap at their width in both views: `atomicAdd(x, INT_MAX)` then `atomicAdd(x, 1)`
/// on an `int` gives INT_MIN, and an `unsigned` passing 2^32 - 1 wraps to what is left
/// (`<climits>` gives the limits, as a host header does). The host's checks hold: Ok.
#[test]
fn atomics_wrap_at_their_width_in_both_views() {
    let src = r#"#include <climits>
__global__ void k(int *x, unsigned *u) {
    atomicAdd(x, INT_MAX);
    atomicAdd(x, 1);
    atomicAdd(u, UINT_MAX);
    atomicAdd(u, 2u);
}
int main() {
    int *x; unsigned *u;
    cudaMallocManaged(&x, sizeof(int));
    cudaMallocManaged(&u, sizeof(unsigned));
    *x = 0; *u = 0;
    k<<<1, 1>>>(x, u);
    cudaDeviceSynchronize();
    if (*x != INT_MIN) return 1;
    if (*u != 1u) return 1;
    return 0;
}
"#;
    let (code, json, err) = check("wrap.cu", src);
    assert_eq!(code, 0, "{err} {json}");
    assert_eq!(verdict(&json), ("Ok".into(), false), "{json}");
    let dir = std::env::temp_dir().join(format!("scopecheck-pp-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", "ptx"])
        .arg(dir.join("wrap.cu"))
        .output()
        .expect("run scopecheck");
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert_eq!(verdict(&line), ("Ok".into(), false), "{line}");
    assert!(!line.contains("own mapping"), "NVRTC's code: {line}");
}

/// A division by a value read at run time that is 0, and a shift by the width, are faults of
/// the test at their line in device code (C leaves both undefined), not a silent 0.
#[test]
fn run_time_division_by_zero_and_wide_shifts_are_faults_with_their_line() {
    for (name, expr, what) in [
        ("div0.cu", "1 / d", "division by zero"),
        ("shift.cu", "1 << d", "shift"),
    ] {
        let src = format!(
            "__global__ void k(int *z, int *out) {{\n    int d = *z;\n    *out = {expr};\n}}\n\
             int main() {{\n    int *z, *out;\n    cudaMallocManaged(&z, sizeof(int));\n    \
             cudaMallocManaged(&out, sizeof(int));\n    *z = {};\n    k<<<1, 1>>>(z, out);\n    \
             cudaDeviceSynchronize();\n    return 0;\n}}\n",
            if name == "div0.cu" { 0 } else { 32 }
        );
        let (code, json, _) = check(name, &src);
        assert_ne!(code, 0, "{json}");
        assert!(
            json.contains(what) && json.contains("line 3"),
            "{name}: {json}"
        );
    }
}
