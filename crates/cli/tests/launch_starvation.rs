//! Which threads of a `.cu` program the scheduler could starve, and what the checks of such
//! programs then report.
//!
//! A kernel's threads start after the host code that launched them (`Thread::after`), and the
//! host code after a synchronization starts after the kernel's threads. Such a thread never
//! starts if one it starts after is starved; one that hangs instead leaves it unlaunched at
//! the hang's leaf, which says so. So a thread is starved through the launch order only with
//! a predecessor starved too. Counting every launched-after thread as starvable on its own
//! made every subset of a harness's threads a starvation search (2^8 = 256 searches for six
//! blocks and the two host threads), each re-exploring the program once a thread spun.

use scopecheck_explore::progress::{Progress, Scheduler};
use std::process::Command;

/// A CAS spin lock taken by `n` single-thread blocks around a plain increment, with device
/// fences on both sides, and the host checking the count after the kernel.
fn lock(n: usize) -> String {
    format!(
        "__device__ int lock = 0;
__global__ void increment(int* counter) {{
    while (atomicCAS(&lock, 0, 1) != 0) {{ }}
    __threadfence();
    *counter = *counter + 1;
    __threadfence();
    atomicExch(&lock, 0);
}}
int main() {{
    int* counter;
    cudaMallocManaged(&counter, sizeof(int));
    *counter = 0;
    increment<<<{n}, 1>>>(counter);
    cudaDeviceSynchronize();
    if (*counter != {n}) return 1;
    return 0;
}}
"
    )
}

fn candidates(src: &str, progress: Progress, resident_blocks: Option<u32>) -> usize {
    let (program, _) = scopecheck_cuda::parse_cuda(src).expect("a valid .cu program");
    let scheduler = Scheduler {
        progress,
        resident_blocks,
        ..Scheduler::default()
    };
    scheduler.starvation_candidates(&program).len()
}

/// Under the default OBE with every block resident, no block can be starved by the scheduler,
/// and no launch predecessor (host code) can be either: the empty set is the only candidate
/// (before, all 16 subsets of the 3 blocks and the host code after them were). Under
/// `unfair` each of the 3 blocks may be starved: the 7 non-empty sets of blocks, each with or
/// without the host code after the kernel (starved with them, as it starts after them), and
/// the empty set: 15; the host code after the kernel alone, with every block running, is no
/// longer one.
#[test]
fn launch_order_alone_starves_no_one() {
    let src = lock(3);
    assert_eq!(candidates(&src, Progress::Obe, None), 1);
    assert_eq!(candidates(&src, Progress::Unfair, None), 15);
}

/// The lock with 5 blocks: Ok (the count is 5 whatever the order of the critical sections,
/// the fences around the relaxed CAS and exchange order them), 5! = 120 executions (the order
/// in which the blocks take the lock; each failing CAS iteration is not explored), and it
/// terminates under OBE (a failing CAS reads a holder's 1 that the holder's release follows).
#[test]
fn a_cu_lock_is_checked_with_every_order_of_its_blocks() {
    let dir = std::env::temp_dir().join(format!("scopecheck-launch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("lock5.cu");
    std::fs::write(&file, lock(5)).expect("write the test");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .arg(&file)
        .output()
        .expect("run scopecheck");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or("")).unwrap();
    assert_eq!(v["result"], "Ok", "{v}");
    assert_eq!(v["executions"], 120, "{v}");
    assert_eq!(v["terminates"], true, "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["racy"], false, "{v}");
}

/// The same lock with `cuda::atomic_ref` acquire/release and no fences: the 5 blocks run the
/// same code, each alone in its cluster, all launched after the same host code and all before
/// the host code after the synchronization, so they are one class of interchangeable threads.
/// With the symmetry reduction (one order per orbit, each counted by its orbit's size) and
/// without it the check reports the same: Ok, 5! = 120 executions, terminates.
#[test]
fn a_cu_launchs_identical_blocks_are_one_class() {
    let src = lock(5)
        .replace(
            "__device__ int lock = 0;",
            "#include <cuda/atomic>\n__device__ int lock = 0;",
        )
        .replace(
            "    while (atomicCAS(&lock, 0, 1) != 0) { }\n    __threadfence();\n",
            "    cuda::atomic_ref<int, cuda::thread_scope_device> l(lock);\n    while (true) { int e = 0; if (l.compare_exchange_strong(e, 1, cuda::memory_order_acquire)) break; }\n",
        )
        .replace(
            "    __threadfence();\n    atomicExch(&lock, 0);\n",
            "    l.store(0, cuda::memory_order_release);\n",
        );
    assert!(src.contains("atomic_ref") && !src.contains("__threadfence"));
    let dir = std::env::temp_dir().join(format!("scopecheck-class-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("rlock5.cu");
    std::fs::write(&file, src).expect("write the test");
    let run = |symmetry: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(["check", "--json", "--symmetry", symmetry])
            .arg(&file)
            .output()
            .expect("run scopecheck");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        serde_json::from_str::<serde_json::Value>(text.lines().next().unwrap_or("")).unwrap()
    };
    let (on, off) = (run("on"), run("off"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(on["symmetry_classes"], serde_json::json!([5]), "{on}");
    assert_eq!(off["symmetry_classes"], serde_json::json!([]), "{off}");
    for v in [&on, &off] {
        assert_eq!(v["result"], "Ok", "{v}");
        assert_eq!(v["executions"], 120, "{v}");
        assert_eq!(v["terminates"], true, "{v}");
        assert_eq!(v["complete"], true, "{v}");
        assert_eq!(v["racy"], false, "{v}");
    }
}
