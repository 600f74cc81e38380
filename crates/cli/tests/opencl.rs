//! `scopecheck check` on the OpenCL examples (examples/opencl/*.cl, read by scopecheck-cuda's
//! OpenCL entry), each with its verdict under the default model (scoped C11) and PTX.

use std::path::Path;
use std::process::Command;

fn expect(file: &str, model: &str, result: &str, racy: bool) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/opencl")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", model])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{file}: not JSON: {text}: {e}"));
    assert_eq!(v["result"], result, "{file} ({model}): {v}");
    assert_eq!(v["racy"], racy, "{file} ({model}): races {}", v["races"]);
    assert_eq!(v["terminates"], true, "{file} ({model}): {}", v["hangs"]);
    assert_eq!(v["complete"], true, "{file} ({model})");
}

/// Release/acquire at memory_scope_device between two work-groups: the data is always seen.
#[test]
fn message_passing_at_device_scope() {
    expect("mp-device.cl", "src11", "Ok", false);
    expect("mp-device.cl", "ptx", "Ok", false);
    assert!(Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/opencl/mp-device.cl"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("\"name\":\"mp-device\""))
        .unwrap_or(false));
}

/// The same at memory_scope_work_group across work-groups: out of scope, a race, 0 possible.
#[test]
fn message_passing_at_work_group_scope_across_groups_races() {
    expect("mp-workgroup.cl", "src11", "No", true);
    expect("mp-workgroup.cl", "ptx", "No", true);
}

/// A local-memory reduction with barrier(CLK_LOCAL_MEM_FENCE), after a fill kernel on the
/// same in-order queue: both groups' sums are 3.
#[test]
fn local_reduction_with_barrier() {
    expect("local-reduction.cl", "src11", "Ok", false);
    expect("local-reduction.cl", "ptx", "Ok", false);
}

/// Without the barrier the partner's slot may be read before it is written.
#[test]
fn local_reduction_without_barrier_races() {
    expect("local-reduction-nobarrier.cl", "src11", "No", true);
    expect("local-reduction-nobarrier.cl", "ptx", "No", true);
}

/// Work-items exchanging values through global memory at barrier(CLK_GLOBAL_MEM_FENCE): the
/// barrier's fences global-synchronize, the sum is always 3.
#[test]
fn global_exchange_with_global_barrier() {
    expect("global-exchange.cl", "src11", "Ok", false);
    expect("global-exchange.cl", "ptx", "Ok", false);
}

/// The same at barrier(CLK_LOCAL_MEM_FENCE): under OpenCL's model the barrier orders local
/// memory only, so the global exchange races and the sum may be 1; PTX's bar.sync, which the
/// barrier compiles to, orders all memory, so under the PTX model the sum is 3.
#[test]
fn global_exchange_with_local_barrier_races_under_opencl() {
    expect("global-exchange-local-barrier.cl", "src11", "No", true);
    expect("global-exchange-local-barrier.cl", "ptx", "Ok", false);
}

/// `atomic_int` and `atomic_uint` wrap at their width, as PTX's `.s32`/`.u32` and C's `int`
/// and `unsigned` do (tests/cuda_sources.rs): INT_MAX + 1 is INT_MIN, UINT_MAX + 2 is 1.
#[test]
fn opencl_atomics_wrap_at_their_width() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opencl-wrap.cl");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or("null")).unwrap();
    assert_eq!(v["result"], "Ok", "{v}");
    assert_eq!(v["racy"], false, "{v}");
    let state = &v["states"][0]["values"];
    assert_eq!(state["x"], i64::from(i32::MIN), "{v}");
    assert_eq!(state["u"], 1, "{v}");
}
