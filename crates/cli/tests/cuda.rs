//! `scopecheck check` on the CUDA examples (examples/cuda/*.cu, read by scopecheck-cuda), each
//! with its verdict derived by hand under the default model (scoped C11) and, where it
//! differs, the PTX model.

use std::path::Path;
use std::process::Command;

/// Runs `check --json [--model M]` on one example; the file's JSON line.
fn check(file: &str, model: Option<&str>) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/cuda")
        .join(file);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scopecheck"));
    cmd.args(["check", "--json"]);
    if let Some(m) = model {
        cmd.args(["--model", m]);
    }
    let out = cmd.arg(&path).output().expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_else(|| {
        panic!(
            "{file}: no output; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}: not JSON: {line}: {e}"))
}

/// Asserts the result (`Ok` / `No`), raciness and termination of one example.
fn expect(file: &str, model: Option<&str>, result: &str, racy: bool) {
    let v = check(file, model);
    assert_eq!(v["result"], result, "{file} ({model:?}): {v}");
    assert_eq!(v["racy"], racy, "{file} ({model:?}): races {}", v["races"]);
    assert_eq!(v["terminates"], true, "{file} ({model:?}): {}", v["hangs"]);
    assert_eq!(v["complete"], true, "{file} ({model:?})");
    // Under PTX a `.cu` file is checked as the PTX NVRTC compiles its kernels to: no fallback
    // to scopecheck's own mapping (the test command installs NVRTC).
    if model == Some("ptx") {
        let warnings = v["warnings"].to_string();
        assert!(
            !warnings.contains("own mapping"),
            "{file}: no PTX view: {warnings}"
        );
    }
}

/// The first seed: `produce` writes `payload`, fences at device scope and sets `flag` with a
/// relaxed device-scope RMW; `consume` awaits the flag with `atomicAdd(&flag, 0)`, fences, and
/// copies `payload` to managed memory. Fence-RMW ... RMW-fence at gpu scope between two blocks
/// in scope of each other: the fences synchronize, so the copy reads 42; the host reads `out`
/// after cudaDeviceSynchronize (after both kernels): the assertion always holds, no race.
#[test]
fn seed1_assertion_always_holds() {
    expect("seed1.cu", None, "Ok", false);
    assert_eq!(
        check("seed1.cu", None)["name"],
        "seed1",
        "a .cu test is named after its file"
    );
    expect("seed1.cu", Some("ptx"), "Ok", false);
}

/// Without the consumer's fence the RMW that sees the flag is relaxed and nothing acquires:
/// the read of `payload` is unordered with the write (a data race) and may read the initial 0.
#[test]
fn seed1_without_the_consumers_fence_can_fail() {
    expect("seed1-nofence.cu", None, "No", true);
    expect("seed1-nofence.cu", Some("ptx"), "No", true);
}

/// The first seed as an ordinary CUDA program (`int main()`): the buffers come from cudaMalloc
/// and are cleared by cudaMemset, which the host does before the launches (plain host stores,
/// happening before both kernels through the launch order). `produce` stores `data[0] = 42`,
/// fences at gpu scope and sets the flag with a relaxed gpu-scope RMW; `consume` awaits the
/// flag with an RMW, fences at gpu scope and copies `data[0]` to `out`. Fence-RMW ... RMW-fence
/// at gpu scope between two blocks: the producer's fence is sequenced before its RMW, the RMW
/// the consumer's RMW reads from is sequenced before its fence, so the fences synchronize and
/// the store of 42 happens before the consumer's read, which reads 42 (the memset's 0 is
/// earlier in happens-before, hidden by coherence). The host code after cudaDeviceSynchronize
/// starts after both kernels: the cudaMemcpy DeviceToHost is a plain host load of `out`
/// ordered after the consumer's store, so `h == 42`, `if (h != 42) return 1;` never fails, and
/// no two conflicting plain accesses are unordered: Ok, not racy (PTX: the same fences are
/// morally strong and release/acquire patterns at gpu scope).
#[test]
fn memcpy_flag_main_program_always_returns_0() {
    expect("memcpy-flag.cu", None, "Ok", false);
    expect("memcpy-flag.cu", Some("ptx"), "Ok", false);
}

/// Without the consumer's fence the RMW that reads the flag is relaxed and nothing after it
/// acquires: the consumer's plain read of `data[0]` is not ordered after the producer's plain
/// store (a data race) and may read the 0 that cudaMemset stored, which the host copies back:
/// `h == 0` and `return 1` is reached in some execution: No, racy (in PTX too).
#[test]
fn memcpy_flag_without_the_consumers_fence_can_return_1() {
    expect("memcpy-flag-nofence.cu", None, "No", true);
    expect("memcpy-flag-nofence.cu", Some("ptx"), "No", true);
}

/// Two blocks publish partial sums (1 and 2), fence, take a ticket; the ticket RMWs are
/// totally ordered, so exactly one block sees 1 and, after its fence, reads both partial sums
/// (the other block's fence-RMW releases to this RMW-fence): out == 3 always. NVRTC's code
/// keeps that shape (`membar.gl` is `fence.sc.gpu`, the ticket a relaxed gpu-scope `atom`):
/// under PTX the fences synchronize through the morally strong RMWs, the same verdict.
#[test]
fn reduction_with_ticket() {
    expect("reduction.cu", None, "Ok", false);
    expect("reduction.cu", Some("ptx"), "Ok", false);
}

/// Without the last block's fence its reads of the other partial sum are not ordered after
/// the ticket: a race, and the sum can miss a partial.
#[test]
fn reduction_without_acquire_can_miss_a_partial() {
    expect("reduction-noacquire.cu", None, "No", true);
    expect("reduction-noacquire.cu", Some("ptx"), "No", true);
}

/// The CAS lock with a fence after acquiring and before releasing: the critical sections are
/// ordered (fence-RMW release, RMW-fence acquire at gpu scope), the counter reaches 2. In
/// NVRTC's PTX (`atom.global.cas`/`exch` relaxed at gpu scope, `membar.gl`) the same
/// fence-RMW ... RMW-fence pairs order the critical sections under PTX.
#[test]
fn spinlock_with_fences() {
    expect("spinlock.cu", None, "Ok", false);
    expect("spinlock.cu", Some("ptx"), "Ok", false);
}

/// Without the fences the relaxed lock RMWs order nothing: the counter accesses race and an
/// increment can be lost (counter == 1).
#[test]
fn spinlock_without_fences_loses_updates() {
    expect("spinlock-nofence.cu", None, "No", true);
    expect("spinlock-nofence.cu", Some("ptx"), "No", true);
}

/// Release store of a system-scope flag in pinned mapped memory, acquire loads by the host
/// while the kernel runs: the host reads the message 7. NVRTC emits `st.release.sys` for the
/// flag: under PTX the host's acquire load that reads it synchronizes, the same verdict.
#[test]
fn host_device_mailbox() {
    expect("mailbox.cu", None, "Ok", false);
    expect("mailbox.cu", Some("ptx"), "Ok", false);
}

/// The same with a relaxed flag store: nothing orders the message before the flag.
#[test]
fn host_device_mailbox_relaxed_flag_races() {
    expect("mailbox-relaxed.cu", None, "No", true);
    expect("mailbox-relaxed.cu", Some("ptx"), "No", true);
}

/// Block-scope atomic_ref increments from two blocks are not in each other's scope: scoped C11
/// reports the heterogeneous race (the behaviour is undefined) although its RMWs never lose
/// the update in the states it lists; PTX (not morally strong, so atomicity does not apply)
/// shows the lost update, counter == 1.
#[test]
fn block_scope_counter_loses_updates() {
    expect("block-counter.cu", None, "Ok", true);
    expect("block-counter.cu", Some("ptx"), "No", true);
}

/// At device scope both increments are atomic together: always 2.
#[test]
fn device_scope_counter() {
    expect("device-counter.cu", None, "Ok", false);
    expect("device-counter.cu", Some("ptx"), "Ok", false);
}

/// Nine threads that each write their own element share nothing: under the default bounds
/// (1,024 threads, 8 that share a written location) they are checked; `--max-threads 8`
/// refuses them and says how to raise it. Nine threads that all add to one word share it:
/// refused under the default `--max-shared-threads 8`, naming the flag.
#[test]
fn max_threads_raises_the_front_ends_limit() {
    let dir = std::env::temp_dir().join(format!("scopecheck-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("wide.cu");
    std::fs::write(
        &file,
        "__global__ void k(int *x) { x[threadIdx.x] = 1; }\n\
         void scopecheck_main() {\n  int *x;\n  cudaMallocManaged(&x, 9 * sizeof(int));\n  \
         k<<<1, 9>>>(x);\n  cudaDeviceSynchronize();\n  assert(x[8] == 1);\n}\n",
    )
    .expect("write wide.cu");
    let run = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scopecheck"));
        cmd.args(["check", "--json"]).args(extra).arg(&file);
        let out = cmd.output().expect("run scopecheck");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let refused = run(&["--max-threads", "8"]);
    assert!(refused.contains("--max-threads"), "{refused}");
    let line = run(&[]);
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("JSON");
    assert_eq!(v["name"], "wide");
    assert_eq!(v["result"], "Ok", "{v}");
    // Every thread adds 1 to x[0] with atomicAdd and reads the result (so the adds do not
    // commute): nine threads share x[0].
    std::fs::write(
        &file,
        "__global__ void k(int *x, int *y) { y[threadIdx.x] = atomicAdd(x, 1); }\n\
         void scopecheck_main() {\n  int *x, *y;\n  cudaMallocManaged(&x, sizeof(int));\n  \
         cudaMallocManaged(&y, 9 * sizeof(int));\n  *x = 0;\n  \
         k<<<1, 9>>>(x, y);\n  cudaDeviceSynchronize();\n  assert(*x == 9);\n}\n",
    )
    .expect("write wide.cu");
    let refused = run(&[]);
    assert!(refused.contains("--max-shared-threads"), "{refused}");
    assert!(refused.contains("9 device threads"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Both take a ticket with relaxed RMWs (totally ordered on `next_ticket`); the holder of
/// ticket 1 spins until its acquire load reads 1, which only the other thread's release
/// increment writes, after its critical section: that increment synchronizes with the load, so
/// the second increment reads the first (counter == 2) and no access races. Same under PTX
/// (release/acquire at gpu scope, both threads in it).
#[test]
fn ticket_lock() {
    expect("ticketlock.cu", None, "Ok", false);
    expect("ticketlock.cu", Some("ptx"), "Ok", false);
}

/// With a relaxed turn check the release increment is read by nothing with acquire
/// semantics: the counter's read-modify-write pairs race (3 races) and both can read 0.
#[test]
fn ticket_lock_with_a_relaxed_turn_check_loses_updates() {
    expect("ticketlock-relaxed.cu", None, "No", true);
    expect("ticketlock-relaxed.cu", Some("ptx"), "No", true);
}

/// The consumer's acquire of head i+1 reads the producer's release store made after it wrote
/// slot i: the slot read sees the item. The producer's third push waits (acquire) for tail 1,
/// released by the consumer after it read slot 0, so overwriting slot 0 with 30 does not race
/// with that read. out == {10, 20, 30}.
#[test]
fn ring_queue() {
    expect("ringqueue.cu", None, "Ok", false);
    expect("ringqueue.cu", Some("ptx"), "Ok", false);
}

/// A relaxed head load orders nothing: the slot reads race with the slot writes (2 races)
/// and can read 0, or 10 from slot 0 for the third item.
#[test]
fn ring_queue_with_a_relaxed_head_races() {
    expect("ringqueue-relaxed.cu", None, "No", true);
    expect("ringqueue-relaxed.cu", Some("ptx"), "No", true);
}

/// The volatile-spin grid barrier: under PTX the spin's volatile load (relaxed, sys) and the
/// atomicAdd (relaxed, gpu) are morally strong, so fence.sc; atomicAdd ... load; fence.sc
/// synchronizes the two blocks' thread 0s, and the __syncthreads barriers on both sides carry
/// the other threads' writes and reads: always the exchanged values, no race. Scoped C11 agrees
/// on the values but a volatile load is not an atomic in C++: the spin races with the other
/// block's atomicAdd, so nothing synchronizes and the value reads race too (6 races): the
/// language promises nothing; use an acquire load (cuda::atomic_ref).
#[test]
fn grid_barrier_with_a_volatile_spin() {
    expect("gridbarrier.cu", None, "Ok", true);
    expect("gridbarrier.cu", Some("ptx"), "Ok", false);
}

/// Without the fence after the spin nothing orders the other block's writes before the
/// reads after the second __syncthreads: a read can see 0, under both models.
#[test]
fn grid_barrier_without_the_fence_after_the_spin() {
    expect("gridbarrier-nofence.cu", None, "No", true);
    expect("gridbarrier-nofence.cu", Some("ptx"), "No", true);
}

/// A plain store of the flag and a plain load by the host while the kernel runs: both the
/// flag and the result race, and the host can see the flag set and read the result 0.
#[test]
fn flag_polled_by_the_host_with_a_plain_load_races() {
    expect("hostpoll.cu", None, "No", true);
    expect("hostpoll.cu", Some("ptx"), "No", true);
}

/// The same through cuda::atomic_ref at system scope, release by the kernel, acquire by the
/// host: the host's acquire reads the release, so it reads the result 42.
#[test]
fn flag_polled_by_the_host_through_a_system_scope_atomic_ref() {
    expect("hostpoll-atomic.cu", None, "Ok", false);
    expect("hostpoll-atomic.cu", Some("ptx"), "Ok", false);
}

/// Tile 1's acquire of status[0] == 2 reads tile 0's release store made after writing
/// prefix[0] = 5: tile 1 reads 5 and writes out[1] = 12.
#[test]
fn look_back_scan_with_two_tiles() {
    expect("scan.cu", None, "Ok", false);
    expect("scan.cu", Some("ptx"), "Ok", false);
}

/// A relaxed status store by tile 0: tile 1 can see status 2 and still read prefix[0] == 0
/// (a race), out[1] == 7.
#[test]
fn look_back_scan_with_a_relaxed_status_store() {
    expect("scan-relaxed.cu", None, "No", true);
    expect("scan-relaxed.cu", Some("ptx"), "No", true);
}

/// The second seed: thread 0 writes the payload and release-stores the system-scope flag
/// (managed memory); the host acquire-spins on the flag and reads the payload while the
/// kernel runs: 42, no race.
#[test]
fn seed2_release_acquire_across_the_bus() {
    expect("seed2.cu", None, "Ok", false);
    expect("seed2.cu", Some("ptx"), "Ok", false);
}

/// With a relaxed flag store the host's acquire pairs with nothing: the payload read races
/// and can read 0.
#[test]
fn seed2_without_the_release_can_fail() {
    expect("seed2-relaxed.cu", None, "No", true);
    expect("seed2-relaxed.cu", Some("ptx"), "No", true);
}

/// A mailbox struct in managed memory (`box.payload`, `box.flag`: one location per field):
/// payload, device-scope fence, atomic flag; the consumer awaits `&box->flag`, fences and
/// copies the payload. Fence-RMW ... RMW-fence at gpu scope, as in the first seed: always 42.
#[test]
fn struct_mailbox() {
    expect("struct-mailbox.cu", None, "Ok", false);
    expect("struct-mailbox.cu", Some("ptx"), "Ok", false);
}

/// Without the consumer's fence the payload read races with the write and may read 0.
#[test]
fn struct_mailbox_without_the_consumers_fence_can_fail() {
    expect("struct-mailbox-nofence.cu", None, "No", true);
    expect("struct-mailbox-nofence.cu", Some("ptx"), "No", true);
}

/// `check --json --platform P` on one example: result and raciness.
fn expect_on(file: &str, platform: &str, result: &str, racy: bool) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/cuda")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--platform", platform])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{file}: not JSON: {text}: {e}"));
    assert_eq!(v["result"], result, "{file} on {platform}: {v}");
    assert_eq!(v["racy"], racy, "{file} on {platform}: {}", v["races"]);
    assert_eq!(v["complete"], true, "{file} on {platform}");
}

/// A host thread's `std::atomic<int>::fetch_add` and a kernel's `atomicAdd_system` on one
/// managed counter: both system-scope RMWs, atomic together with concurrentManagedAccess
/// (ideal and h200-pcie): the count is 2 and the host's compare_exchange_strong(2 -> 0)
/// succeeds.
#[test]
fn host_and_device_increment_a_managed_std_atomic() {
    expect("host-device-counter.cu", None, "Ok", false);
    expect_on("host-device-counter.cu", "h200-pcie", "Ok", false);
}

/// The same counter in pinned mapped host memory: without hostNativeAtomicSupported
/// (h200-pcie) the host's and the device's RMWs are not atomic with each other, and one
/// increment can be lost (count 1, the CAS fails).
#[test]
fn host_and_device_increments_of_pinned_memory_are_lost_on_pcie() {
    expect("host-device-counter-pinned.cu", None, "Ok", false);
    expect_on("host-device-counter-pinned.cu", "h200-pcie", "No", false);
}

/// The first seed with the host initialising the (managed) flag before the launches. The host
/// write finishes before either kernel starts (launch order), so it never races with the
/// consumer's `atomicAdd(&flag, 0)` await, which is still explored by its exiting iteration:
/// complete, Ok, no race, terminates.
#[test]
fn seed1_with_a_host_initialised_flag_is_still_an_await_loop() {
    expect("seed1-hostinit.cu", None, "Ok", false);
    assert_eq!(check("seed1-hostinit.cu", None)["reduced_loops"], 1);
}

/// The revisiting search against the hole search on every CUDA and OpenCL example, with
/// symmetry off so that the revisiting search runs: the same JSON report apart from the time,
/// the witness the search happened to meet first, and the rejected-candidate counts (each
/// search rejects different partial graphs).
#[test]
fn revisiting_search_matches_the_hole_search_on_the_cuda_and_opencl_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = ["cuda", "opencl"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("an examples folder"))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    let report = |path: &Path, holes: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scopecheck"));
        cmd.args(["check", "--json", "--symmetry", "off"]);
        if holes {
            cmd.args(["--engine", "holes"]);
        }
        let out = cmd.arg(path).output().expect("run scopecheck");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let mut v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or("null"))
            .unwrap_or_else(|e| panic!("{}: not JSON: {text}: {e}", path.display()));
        if let Some(o) = v.as_object_mut() {
            for k in ["time_ms", "witness", "diagnostics", "rejected"] {
                o.remove(k);
            }
        }
        v
    };
    assert!(files.len() > 20, "{files:?}");
    for f in &files {
        assert_eq!(report(f, false), report(f, true), "{}", f.display());
    }
}

/// Kernels templated on the buffer size and a device helper template: beyond the
/// language-level front-end, so the file is checked as NVRTC compiles it (the PTX view, under
/// PTX only), said in a warning. `fill` stores 1..4 (weak), `membar.gl` (fence.sc.gpu), then an
/// exchange of the flag; `sum` spins on `atom.add 0` of the flag, `membar.gl`, then loads the
/// four elements. The fences with the RMW chain on the flag (exchange, then the RMW that reads
/// it) order the stores before the loads in causality order, so every load reads its element:
/// `out` is 10 in every execution, and no load races with a store.
#[test]
fn template_kernels_are_checked_as_nvrtc_compiles_them() {
    let v = check("template-flag.cu", None);
    assert_eq!(v["model"], "ptx", "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("checked as the PTX NVRTC compiles"),
        "{}",
        v["warnings"]
    );
    expect("template-flag.cu", None, "Ok", false);
}

/// Without the fence after the await nothing orders `sum`'s loads after the RMW that saw the
/// flag: each load may read the element or the initial 0 (the harness starts cudaMalloc memory
/// at 0), so `out` may be any sum of a subset of 1..4, and the loads race with `fill`'s stores.
#[test]
fn template_kernels_without_the_fence_can_fail() {
    expect("template-flag-nofence.cu", None, "No", true);
}

/// A grid barrier written as a struct with a `__device__` method: beyond the language-level
/// front-end, checked in the PTX view. The block whose `fetch_add(acq_rel)` returns
/// `blocks - 1` arrived last: its RMW reads the other block's, which released its data store,
/// and its release store of the new generation is what the other block's acquire spin reads.
/// So each block's read of its neighbour's element comes after that element's store in
/// causality order: out = {2, 1} always, no race, and both spins exit.
#[test]
fn a_class_based_grid_barrier_is_checked_as_nvrtc_compiles_it() {
    expect("class-gridbarrier.cu", None, "Ok", false);
    assert_eq!(check("class-gridbarrier.cu", None)["model"], "ptx");
}

/// Open-addressing insert with `atomicCAS` on `table[hash(k) % N]` and linear probing; the
/// harness fills the table with a loop over `N` = 4 (unrolled when lowered: its bounds are
/// constants) and counts the keys found with another. Both keys hash to slot 3
/// ((7 * 2654435761) mod 2^32 = 1401181143 and (11 * 2654435761) mod 2^32 = 3428989595, both
/// 3 mod 4): the first CAS there claims it, the other fails, reads the winner's key and takes
/// slot 0. Two final tables (which key won), both keys found: Ok in both views, no race (every
/// table access of the kernels is a device-scope atomic; the host reads after the sync).
#[test]
fn hash_table_insert_with_probing() {
    expect("hash-insert.cu", None, "Ok", false);
    expect("hash-insert.cu", Some("ptx"), "Ok", false);
    assert_eq!(
        check("hash-insert.cu", None)["states"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

/// A grid-stride loop over 8 elements with 2 blocks of 2 threads: thread g (0..3) handles g
/// and g + 4, so every output is written once, by the thread that read its input: out[i] =
/// 2 * in[i] for all i, no race, in both views (the kernel's loop runs twice per thread, the
/// harness's loops are unrolled when lowered).
#[test]
fn grid_stride_loop() {
    expect("grid-stride.cu", None, "Ok", false);
    expect("grid-stride.cu", Some("ptx"), "Ok", false);
}

/// With the stride of one block (2) instead of the grid (4), block 0's threads cover 0..7 and
/// block 1's 2..7: elements 2..7 are written by a thread of each block. Both write the same
/// value, so every check passes, but each pair of plain writes races: 6 races. The language
/// view lowers the kernel loop once per index (constant bounds); in the PTX view the compiled
/// loop runs 4 times in block 0, past the default `--unroll 2`, so the check says Unknown
/// there unless given `--unroll 4` or more, and then agrees.
#[test]
fn grid_stride_with_the_block_stride_races() {
    expect("grid-stride-overlap.cu", None, "Ok", true);
    assert_eq!(
        check("grid-stride-overlap.cu", None)["races"]
            .as_array()
            .map(Vec::len),
        Some(6)
    );
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/grid-stride-overlap.cu");
    let run = |unroll: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(["check", "--json", "--model", "ptx", "--unroll", unroll])
            .arg(&path)
            .output()
            .expect("run scopecheck");
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        serde_json::from_str::<serde_json::Value>(&line).expect("JSON")
    };
    let cut = run("2");
    assert_eq!(
        (&cut["result"], &cut["complete"]),
        (&"Unknown".into(), &false.into()),
        "{cut}"
    );
    let full = run("4");
    assert_eq!(
        (&full["result"], &full["racy"]),
        (&"Ok".into(), &true.into()),
        "{full}"
    );
}

/// `check --json` with extra options on one file; its JSON line.
fn check_path(path: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .args(args)
        .arg(path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_default().to_string();
    serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{}: not JSON: {line}: {e}", path.display()))
}

/// `check --json` with extra options on one example.
fn check_with(file: &str, args: &[&str]) -> serde_json::Value {
    check_path(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/cuda")
            .join(file),
        args,
    )
}

/// `check --json` with extra options on a fixture of this folder.
fn check_fixture(file: &str, args: &[&str]) -> serde_json::Value {
    check_path(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(file),
        args,
    )
}

/// Host code as projects write it (a CUDA_CHECK macro around every call, #define sizes, host
/// loops building the input and checking each output element): block 0 writes the buffer,
/// fences at device scope and publishes a flag with atomicExch; block 1 awaits it, fences and
/// copies. Fence-RMW ... RMW-fence synchronizes (both views), so every element arrives. The
/// broken twin drops the producer's fence: the copy may read the old buffer, racing.
#[test]
fn a_checked_pipeline_with_a_cuda_check_macro() {
    for m in [None, Some("ptx")] {
        expect("hh-checked-pipeline.cu", m, "Ok", false);
        expect("hh-checked-pipeline-broken.cu", m, "No", true);
    }
}

/// Kernel B on stream s2 after cudaStreamWaitEvent(s2, ev) on the event recorded after kernel
/// A on s1: A happens before B. Without the wait the two streams are unordered and B's plain
/// read races with A's write.
#[test]
fn streams_ordered_by_an_event() {
    for m in [None, Some("ptx")] {
        expect("hh-streams-events.cu", m, "Ok", false);
        expect("hh-streams-events-broken.cu", m, "No", true);
    }
}

/// Mapped pinned memory polled by the host while the kernel runs: __threadfence_system and a
/// system-scope exchange publish the result to the host's system-scope acquire load. With
/// __threadfence (device scope) the host, outside device scope, is not synchronized: the
/// result may be stale and the accesses race.
#[test]
fn the_host_polls_mapped_memory_during_the_kernel() {
    for m in [None, Some("ptx")] {
        expect("hh-mapped-poll.cu", m, "Ok", false);
        expect("hh-mapped-poll-broken.cu", m, "No", true);
        // The same on ordinary host arrays page-locked and mapped with cudaHostRegister.
        expect("hh-registered-poll.cu", m, "Ok", false);
        expect("hh-registered-poll-broken.cu", m, "No", true);
    }
    // Registered memory is pinned and mapped whatever the platform's pageableMemoryAccess:
    // h200-pcie has none, and the device reaches h_in through the mapping, so the verdicts are
    // those of the ideal platform (the host polls `done` with a system-scope acquire load and
    // the device raised it with atomicExch_system after a system fence: no host-native atomic
    // is involved). Left pageable, the device's accesses were refused as needing
    // pageableMemoryAccess.
    expect_on("hh-registered-poll.cu", "h200-pcie", "Ok", false);
    expect_on("hh-registered-poll-broken.cu", "h200-pcie", "No", true);
}

/// cudaHostRegister takes whole host arrays only, with the flags that only pin and map.
#[test]
fn host_register_takes_whole_host_arrays() {
    let dir = std::env::temp_dir().join(format!("scopecheck-hr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("part.cu");
    std::fs::write(
        &f,
        "__global__ void k(int *p) { p[0] = 1; }\nint main() {\n    int h[2] = {0, 0};\n    \
         cudaHostRegister(h, sizeof(int), cudaHostRegisterMapped);\n    return 0;\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", f.to_str().unwrap()])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("registering part of `h`") && text.contains("part.cu:4"),
        "{text}"
    );
}

/// A union packet (data and flag in one 64-bit word) sent and read with single 64-bit
/// atomics is always whole; sent as two 32-bit fields without fences it races. The
/// language-level front-end does not read unions: the PTX view answers (the default for such a
/// file, said in a warning), the union-typed `__device__` global left to NVRTC's PTX.
#[test]
fn a_union_packet_is_checked_as_nvrtc_compiles_it() {
    expect("union-packet.cu", Some("ptx"), "Ok", false);
    expect("union-packet-broken.cu", Some("ptx"), "No", true);
    let v = check("union-packet.cu", None);
    assert_eq!(v["result"], "Ok", "{v}");
    assert!(v["warnings"].to_string().contains("union"), "{v}");
}

/// Cooperative groups' tiles: tiles of 4 threads hand a shared value from rank 0 to rank 1
/// across tile.sync() (a warp barrier over the tile's lanes); without it the shared accesses
/// race. A tile reduction with tile.shfl_down sums each tile's inputs, in both views (the PTX
/// view's shuffle loop needs the precise completeness gate: a lane waiting for its input
/// before a shuffle others wait at, whose partners write only the tile's sum).
#[test]
fn cooperative_groups_tiles() {
    for m in [None, Some("ptx")] {
        expect("cg-tile-handoff.cu", m, "Ok", false);
        expect("cg-tile-handoff-broken.cu", m, "No", true);
        expect("cg-tile-reduce.cu", m, "Ok", false);
    }
}

/// A shared-memory histogram, 2 blocks of 4 threads: bins zeroed, __syncthreads(), an
/// atomicAdd per input on its bin, __syncthreads(), each block's bins added to the global
/// histogram. Ok in both views with the same one final state and 96 executions (the orders of
/// each block's increments on its bins and of the two merges; no disagreement). The PTX view
/// was Unknown before the precise gate: a thread waiting at its bin's atomicAdd for a later
/// increment stopped before the barrier its block waits at, and the candidate enumerator it
/// fell back to gave up at 64 values of `out[0]`.
#[test]
fn a_shared_memory_histogram_in_both_views() {
    let v = check_fixture("shared-histogram.cu", &["--model", "both"]);
    let verdicts = v["verdicts"].as_array().expect("two verdicts");
    for m in verdicts {
        assert_eq!(m["result"], "Ok", "{m}");
        assert_eq!(m["complete"], true, "{m}");
        assert_eq!(m["executions"], 96, "{m}");
    }
    assert_eq!(verdicts[0]["states"], verdicts[1]["states"], "{v}");
    assert_eq!(v["disagreements"].as_array().map(Vec::len), Some(0), "{v}");
}

/// Kernel arguments in a struct passed by value (pointer fields set with cudaMalloc(&p.f),
/// a count set with p.n = N), handed on by value to device helpers: the producer's fence and
/// flag and the consumer's fence make the copy right; without the consumer's fence the
/// payload loads race. The PTX view reads the struct parameter at the fields' C offsets.
#[test]
fn kernel_arguments_in_a_struct_passed_by_value() {
    for m in [None, Some("ptx")] {
        expect("params-struct.cu", m, "Ok", false);
        expect("params-struct-broken.cu", m, "No", true);
    }
}

/// A consumer std::thread spins on a system-scope flag the kernel raises with a release store
/// (the second seed's protocol), reads the payload into a host local it was given the address
/// of; main joins it and checks. A relaxed flag store leaves the payload unordered: a race,
/// and the stale 0 may be seen.
#[test]
fn a_host_thread_consumes_what_the_kernel_publishes() {
    for m in [None, Some("ptx")] {
        expect("hh-thread-consumer.cu", m, "Ok", false);
        expect("hh-thread-consumer-broken.cu", m, "No", true);
    }
}

/// cudaMemcpyToSymbol input, a counter cleared with cudaMemset, atomicAdd tickets: the block
/// that draws the last ticket fences and sums both partials (each block fenced after writing
/// its own). With a plain `*arrived += 1` both blocks may draw the same ticket: the counter's
/// accesses race and the sum may never be made.
#[test]
fn a_last_block_reduction_through_symbols() {
    for m in [None, Some("ptx")] {
        expect("hh-symbol-lastblock.cu", m, "Ok", false);
        expect("hh-symbol-lastblock-broken.cu", m, "No", true);
    }
}

/// An NCCL-style LL packet: data and flag in one 64-bit relaxed device-scope store, polled
/// with 64-bit loads: the load that sees the new flag sees the new data (single-copy atomic).
/// Written as two 32-bit relaxed stores with no fence, the consumer may see the flag with the
/// old data; every access is atomic, so there is no race, only the wrong value.
#[test]
fn an_ll_packet_in_one_64_bit_word() {
    for m in [None, Some("ptx")] {
        expect("lx-ll-packet.cu", m, "Ok", false);
        expect("lx-ll-packet-broken.cu", m, "No", false);
    }
}

/// A lock-free 64-bit maximum with an atomicCAS retry loop on unsigned long long (values past
/// 2^32): the CAS chain keeps the larger value. A plain read and write lose one update and race.
#[test]
fn a_64_bit_cas_maximum() {
    for m in [None, Some("ptx")] {
        expect("lx-cas64-max.cu", m, "Ok", false);
        expect("lx-cas64-max-broken.cu", m, "No", true);
    }
}

/// Cooperative groups: partial sums in shared memory at thread_rank(), block.sync(), thread 0
/// sums. The barrier orders the writes before the sum; without it they race.
#[test]
fn a_cooperative_groups_block_reduction() {
    for m in [None, Some("ptx")] {
        expect("lx-cg-block-reduce.cu", m, "Ok", false);
        expect("lx-cg-block-reduce-broken.cu", m, "No", true);
    }
}

/// A spin lock with an exponential __nanosleep backoff: the CAS, the fences and the exchange
/// order the critical sections (Ok); without the fences the counter's plain accesses race. In
/// the language-level view `if (ns < 256)` branches on the delay, so the retry loop is an
/// await loop only once the delay saturates, after 5 doublings: complete from --unroll 5. In
/// the PTX view NVRTC's branch-free update leaves the delay dead: complete by default.
#[test]
fn a_spin_lock_with_nanosleep_backoff() {
    for (file, result, racy) in [
        ("lx-backoff-lock.cu", "Ok", false),
        ("lx-backoff-lock-broken.cu", "No", true),
    ] {
        let v = check_with(file, &["--unroll", "5"]);
        assert_eq!(
            (
                v["result"].as_str(),
                v["racy"].as_bool(),
                v["complete"].as_bool()
            ),
            (Some(result), Some(racy), Some(true)),
            "{file}: {v}"
        );
        expect(file, Some("ptx"), result, racy);
    }
    // At the default --unroll the language-level view says why it cannot answer.
    let v = check_with("lx-backoff-lock.cu", &[]);
    assert_eq!(v["result"], "Unknown", "{v}");
}

/// `__activemask()` (and NVRTC's `activemask.b32`): which lanes run it converged is the
/// explorer's choice (expectations derived in each file). The aggregated append is correct
/// whether or not the lanes converge, so the language view is Ok over 3 executions (converged:
/// one atomicAdd of 2; apart: two atomicAdds of 1 in either order). So is the PTX view: NVRTC's
/// code stores through `dst` plus an offset computed from the shuffled base, which the
/// completeness gate resolves to `dst` by the pointer's provenance (docs/explore.md, "Values
/// and addresses"), so the leader's atom.add waits for nothing that store may write; the same
/// 3 convergence choices give 3 executions (it was Unknown before the rule). A leader elected
/// by `__activemask()` counts a warp twice when its lanes run apart: No in both views, 2 of 3
/// executions failing.
#[test]
fn activemask_convergence_is_the_schedulers_choice() {
    for m in [None, Some("ptx")] {
        let v = check("activemask-aggregated.cu", m);
        expect("activemask-aggregated.cu", m, "Ok", false);
        assert_eq!(v["executions"], 3, "{m:?}: {v}");
    }
    // Each execution of __activemask() partitions the lanes (derived in the fixture): 5
    // partitions of 3 lanes, twice, in both views.
    for m in ["src11", "ptx"] {
        let v = check_fixture("activemask-partitions.cu", &["--model", m]);
        assert_eq!(v["result"], "Ok", "{m}: {v}");
        assert_eq!(v["executions"], 25, "{m}: {v}");
        assert_eq!(v["states"].as_array().map(Vec::len), Some(25), "{m}: {v}");
    }
    for m in [None, Some("ptx")] {
        expect("activemask-leader-broken.cu", m, "No", false);
        let v = check("activemask-leader-broken.cu", m);
        assert_eq!(
            (&v["positive"], &v["negative"]),
            (&1.into(), &2.into()),
            "{m:?}: {v}"
        );
    }
}

/// Warp collectives in both views (the expectations are derived in each file): a butterfly
/// shuffle reduction, __syncwarp ordering a shared-memory handoff, and a shuffle that does
/// not: shuffles move registers and order no memory, so that handoff races.
#[test]
fn warp_shuffles_votes_and_syncwarp() {
    for m in [None, Some("ptx")] {
        expect("lx-warp-reduce.cu", m, "Ok", false);
        expect("lx-syncwarp-handoff.cu", m, "Ok", false);
        expect("lx-syncwarp-handoff-shfl.cu", m, "No", true);
    }
    // NVRTC's code stores through `dst` plus an offset computed from the shuffled base: by the
    // pointer's provenance that store writes only `dst` (anywhere else it faults), so the
    // completeness gate sees that the leader's atomicAdd on `count` cannot wait for it, and the
    // hole search decides: one execution (lane 1 keeps nothing; lanes 0 and 2 take slots 0
    // and 1 of one atomicAdd of 2), count 2, dst = {5, 20}: Ok in both views. It was an
    // Unknown before the provenance rule.
    for m in [None, Some("ptx")] {
        expect("lx-warp-aggregated.cu", m, "Ok", false);
    }
}

/// An Unknown because the candidate enumerator cannot take over at a warp collective.
fn unknown_at_a_warp_collective(v: &serde_json::Value) {
    assert_eq!(v["result"], "Unknown", "{v}");
    assert!(
        v["incomplete_reason"]
            .as_str()
            .is_some_and(|r| r.contains("warp collective")),
        "{v}"
    );
}

/// A shuffle from a lane that does not take part (never launched, here) gives an undefined
/// value: a fault at its line in both views. A lane waiting at __syncwarp for a lane that
/// spins on what the first sets after it: a hang (the language view finds it; the PTX view's
/// hole search cannot vouch for that dead end and has no fallback for warp collectives, so it
/// says Unknown and why).
#[test]
fn undefined_shuffles_fault_and_a_warp_barrier_can_hang() {
    for m in ["src11", "ptx"] {
        let v = check_fixture("shfl-missing-lane.cu", &["--model", m]);
        let e = v["error"].as_str().unwrap_or_default();
        assert!(
            e.contains("line 7") && e.contains("lane 2 shuffles from lane 4"),
            "{m}: {v}"
        );
    }
    let v = check_fixture("syncwarp-hang.cu", &[]);
    assert_eq!(v["terminates"], false, "{v}");
    let hang = v["hangs"][0].to_string();
    assert!(
        hang.contains("__syncwarp") && hang.contains("atomicAdd(flag, 0)"),
        "{hang}"
    );
    unknown_at_a_warp_collective(&check_fixture("syncwarp-hang.cu", &["--model", "ptx"]));
}

/// `extern __shared__ int partial[]` sized by the launch's third argument (two ints): the
/// barrier orders both stores before thread 0's sum (Ok); without it the store and the load of
/// partial[1] race and the sum may miss it.
#[test]
fn a_reduction_in_dynamic_shared_memory() {
    for m in [None, Some("ptx")] {
        expect("lx-dyn-smem-reduce.cu", m, "Ok", false);
        expect("lx-dyn-smem-reduce-broken.cu", m, "No", true);
    }
}

/// A decoupled look-back scan over 3 one-thread blocks: each publishes its aggregate, then its
/// inclusive prefix, each behind __threadfence and an atomicExch on its flag; a successor
/// polls its predecessor's flag with relaxed loads and fences after. Fence-RMW ... read-fence
/// synchronizes, so every prefix is right (Ok). Without the fence before the prefix flag the
/// successor may read a stale prefix: the plain accesses race.
#[test]
fn a_decoupled_look_back_scan() {
    for m in [None, Some("ptx")] {
        expect("sp-lookback-scan.cu", m, "Ok", false);
        expect("sp-lookback-scan-nofence.cu", m, "No", true);
    }
}

/// threadFenceReduction: block sums in shared memory, each block's partial published behind
/// __threadfence and an atomicInc ticket; the last block sums the partials. With
/// __threadfence_block (CTA scope) the other block's partial is not ordered before the sum.
#[test]
fn a_last_block_reduction_with_a_ticket() {
    for m in [None, Some("ptx")] {
        expect("sp-lastblock-reduce.cu", m, "Ok", false);
        expect("sp-lastblock-reduce-blockfence.cu", m, "No", true);
    }
}

/// Cooperative groups' own grid barrier written out (one word whose top bit flips, the master
/// adding 0x80000000 - (n - 1)), used twice: the fences around the arrival order each phase's
/// writes before the next phase's reads. Without the fence before the arrival they race.
#[test]
fn a_grid_barrier_used_twice() {
    for m in [None, Some("ptx")] {
        expect("sp-cg-gridsync-twice.cu", m, "Ok", false);
        expect("sp-cg-gridsync-twice-norelease.cu", m, "No", true);
    }
}

/// A work queue: blocks claim items with atomicAdd on a head index, each item processed once
/// (Ok); claimed with a plain read and write, two blocks may take one item (No, racy). Both
/// views agree. The PTX view was Unknown until the pointer provenance rule (docs/explore.md,
/// "Values and addresses"): `results[item]` with `item` loaded from `items` could, as far as
/// the static facts knew, write any location, `items` included, so every load of `items`
/// could wait for a write and the gate failed; by provenance that store writes only
/// `results`, `items` is written by no kernel thread, and the hole search decides.
#[test]
fn a_work_queue_claimed_with_atomic_add() {
    for m in [None, Some("ptx")] {
        expect("sp-workqueue.cu", m, "Ok", false);
        let v = check("sp-workqueue-plainclaim.cu", m);
        assert_eq!(
            (&v["result"], &v["racy"]),
            (&"No".into(), &true.into()),
            "{m:?}: {v}"
        );
    }
}

/// A pointer moved out of its allocation by an index read from memory (1 << 30 ints past `a`,
/// which in scopecheck's layout is `b`): C and CUDA leave that undefined, and both views
/// report a fault at the access's line (the language view as an index out of `a`'s bounds,
/// the PTX view as an address outside the allocation the pointer was computed from), never a
/// write to `b`.
#[test]
fn a_pointer_that_leaves_its_allocation_faults_at_its_line() {
    for m in ["src11", "ptx"] {
        let v = check_fixture("pointer-leaves-allocation.cu", &["--model", m]);
        let e = v["error"].as_str().unwrap_or_default();
        assert!(
            e.contains("line 10") && e.contains("out of bounds of `a`"),
            "{m}: {v}"
        );
        assert_eq!(v["line"].as_u64(), Some(10), "{m}: {v}");
    }
}

/// Asked for scoped C11 alone, a file only the PTX view can read is an error, not a PTX
/// verdict under another name.
#[test]
fn model_src11_does_not_fall_back_to_the_ptx_view() {
    let v = check_with("template-flag.cu", &["--model", "src11"]);
    let e = v["error"].as_str().unwrap_or_default();
    assert!(e.contains("template"), "{v}");
    assert!(v.get("result").is_none(), "{v}");
}

/// The `flag-on-shared-line` lint: a consumer polls `buf[0]` while the producer writes its
/// payload. At `buf[1]` the payload shares the flag's 128-byte line (the allocation starts on a
/// line, ints 4 bytes each: bytes 0 and 4); at `buf[32]` (byte 128) it is on the next line, and
/// the lint must stay quiet. `struct-mailbox.cu` has the same shape with two struct fields.
#[test]
fn a_flag_polled_on_its_payloads_line_is_linted_and_a_padded_one_is_not() {
    let dir = std::env::temp_dir().join(format!("scopecheck-pad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let source = |payload: u32| {
        format!(
            "__global__ void produce(int *buf) {{\n  buf[{payload}] = 42;\n  __threadfence();\n  \
             atomicExch(&buf[0], 1);\n}}\n\
             __global__ void consume(int *buf, int *out) {{\n  \
             while (atomicAdd(&buf[0], 0) == 0) {{ }}\n  __threadfence();\n  \
             *out = buf[{payload}];\n}}\n\
             void scopecheck_main() {{\n  int *buf;\n  int *out;\n  \
             cudaMalloc(&buf, 64 * sizeof(int));\n  cudaMalloc(&out, sizeof(int));\n  \
             cudaStream_t a, b;\n  cudaStreamCreate(&a);\n  cudaStreamCreate(&b);\n  \
             consume<<<1, 1, 0, a>>>(buf, out);\n  produce<<<1, 1, 0, b>>>(buf);\n  \
             cudaDeviceSynchronize();\n  int r;\n  \
             cudaMemcpy(&r, out, sizeof(int), cudaMemcpyDeviceToHost);\n  assert(r == 42);\n}}\n"
        )
    };
    let lints = |file: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(["check", "--json"])
            .arg(file)
            .output()
            .expect("run scopecheck");
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        let v: serde_json::Value = serde_json::from_str(line.trim()).expect("JSON");
        assert_eq!(v["result"], "Ok", "{v}");
        v["lints"]
            .as_array()
            .expect("lints")
            .iter()
            .filter(|l| l["rule"] == "flag-on-shared-line")
            .cloned()
            .collect::<Vec<_>>()
    };
    let shared = dir.join("shared.cu");
    std::fs::write(&shared, source(1)).expect("write");
    let found = lints(&shared);
    assert_eq!(found.len(), 1, "{found:?}");
    // At the poll (line 7), naming the flag and the payload's write (line 2).
    assert_eq!(found[0]["line"], 7, "{found:?}");
    let message = found[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`buf[0]` is polled")
            && message.contains("`buf[1]`")
            && message.contains("line 2")
            && message.contains("padding-experiment"),
        "{message}"
    );
    let padded = dir.join("padded.cu");
    std::fs::write(&padded, source(32)).expect("write");
    assert_eq!(lints(&padded), Vec::<serde_json::Value>::new());
    let mailbox =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda/struct-mailbox.cu");
    assert_eq!(lints(&mailbox).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
