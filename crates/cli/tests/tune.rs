//! `scopecheck tune` on the over-specified copies of the correct examples (examples/tune): each
//! must find the weakening back to the example as written, and the maximal sets asserted here
//! exactly. Every copy differs from its example in one over-specification (a wider scope or a
//! stronger order); the comment beside each says why the sets are what they are, from the
//! model's definition.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs `scopecheck tune --json` on one file: the JSON object and the exit status.
fn tune(file: &str) -> (serde_json::Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["tune", "--json"])
        .arg(root().join(file))
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{file}: not JSON: {text}: {e}"));
    (v, out.status.code().unwrap_or(-1))
}

/// Each set as its edits, `LINE: WAS -> BECOMES` (`removed` for a fence removed), or
/// `LINE: TEXT [WORDS]` for a change without a faithful spelling.
fn sets(v: &serde_json::Value) -> Vec<Vec<String>> {
    let Some(sets) = v["sets"].as_array() else {
        return vec![];
    };
    sets.iter()
        .map(|s| {
            let mut out = Vec::new();
            for c in s["changes"].as_array().expect("changes") {
                let edits = c["edits"].as_array().expect("edits");
                if edits.is_empty() {
                    out.push(format!(
                        "{}: {} [{}]",
                        c["line"],
                        c["text"].as_str().unwrap_or(""),
                        c["words"].as_str().unwrap_or("")
                    ));
                }
                for e in edits {
                    out.push(format!(
                        "{}: {} -> {}",
                        e["line"],
                        e["was"].as_str().unwrap_or(""),
                        e["becomes"].as_str().unwrap_or("removed")
                    ));
                }
            }
            out
        })
        .collect()
}

/// Checks that `file` (under examples/tune) tunes to exactly `expected`, with exit status 0,
/// and that `back`, the text one edit restores, is the text of the example it was copied from.
fn expect(file: &str, original: &str, back: &str, expected: &[&[&str]]) {
    let (v, rc) = tune(&format!("examples/tune/{file}"));
    assert_eq!(rc, 0, "{file}: {v}");
    assert_eq!(v["status"], "tuned", "{file}: {v}");
    assert_eq!(v["incomplete"], serde_json::Value::Null, "{file}");
    let got = sets(&v);
    assert_eq!(got, expected, "{file}");
    let source = std::fs::read_to_string(root().join("examples").join(original)).expect("read");
    assert!(
        source.contains(back),
        "{file}: `{back}` is not in examples/{original}"
    );
    assert!(
        got.iter()
            .flatten()
            .any(|e| e.ends_with(&format!("-> {back}"))),
        "{file}: no edit back to `{back}`: {got:?}"
    );
}

/// The seeds' device-wide counter, incremented with seq_cst where relaxed is enough: no other
/// memory is ordered by the increment, so relaxed keeps the count at 2 (atomicity alone keeps
/// every increment). Device scope stays: the two increments come from two blocks, and block
/// scope would not make them atomic together.
#[test]
fn the_device_counter_goes_back_to_relaxed() {
    expect(
        "device-counter-seqcst.cu",
        "cuda/device-counter.cu",
        "c.fetch_add(1, cuda::memory_order_relaxed)",
        &[&["5: c.fetch_add(1, cuda::memory_order_seq_cst) -> c.fetch_add(1, cuda::memory_order_relaxed)"]],
    );
    let (v, _) = tune("examples/tune/device-counter-seqcst.cu");
    // seq_cst -> acq_rel -> acquire (acq_rel -> release kept for later) -> relaxed, each kept:
    // 660.6 + 405.9 - 7.1 (the seq_cst fence) - 274.5 on the H200 table.
    assert_eq!(
        v["sets"][0]["saved_cycles"].as_f64().map(|c| c.round()),
        Some(785.0)
    );
}

/// The unchanged device counter: its relaxed device-scope increment is already the weakest
/// (block scope breaks the count across two blocks), so there is nothing to weaken.
#[test]
fn the_device_counter_as_written_is_the_weakest() {
    let (v, rc) = tune("examples/cuda/device-counter.cu");
    assert_eq!(rc, 0);
    assert_eq!(v["status"], "nothing");
    assert_eq!(v["weakest"][0]["line"], 4);
    assert_eq!(v["weakest"][0]["breaking"][0], "scope device -> block");
}

/// A wrong program is not tuned: exit 3 and a pointer to `check --suggest`.
#[test]
fn a_wrong_program_points_to_suggest() {
    let (v, rc) = tune("examples/cuda/seed1-nofence.cu");
    assert_eq!(rc, 3);
    assert_eq!(v["status"], "not_right");
    // Without the producer's fence the consumer may read the payload before it is written.
    assert_eq!(
        v["reasons"],
        serde_json::json!(["under src11: its requirement fails, it races"])
    );
    assert!(v["hint"]
        .as_str()
        .unwrap_or("")
        .starts_with("scopecheck check --suggest"));
}

/// A search cut by --max-checks says so and exits 4.
#[test]
fn a_cut_search_is_incomplete() {
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["tune", "--max-checks", "1"])
        .arg(root().join("examples/tune/mp-device-seqcst.cl"))
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("Incomplete: stopped after 1 re-checks (--max-checks)"),
        "{text}"
    );
}

#[test]
fn bad_usage_and_bad_files() {
    // No path: usage (2). A missing file: input error (1).
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(args)
            .output()
            .expect("run")
            .status
            .code()
    };
    assert_eq!(run(&["tune"]), Some(2));
    assert_eq!(run(&["tune", "--max-checks", "0", "x.litmus"]), Some(2));
    assert_eq!(run(&["tune", "/nonexistent/x.litmus"]), Some(1));
}

// --- C litmus ---

/// A host-device flag store at seq_cst: release at system scope is what the host's acquire
/// needs; seq_cst adds nothing there. Relaxed loses the payload; device scope excludes the host.
#[test]
fn c_host_device_flag_goes_back_to_release() {
    expect(
        "MP+host-device.sys+sc.litmus",
        "c/MP+host-device.sys.litmus",
        "flag->store(1, cuda::std::memory_order_release)",
        &[&["9: flag->store(1, cuda::std::memory_order_seq_cst) -> flag->store(1, cuda::std::memory_order_release)"]],
    );
}

/// SB at device scope with both work-items in one work-group: work-group scope includes both.
/// OpenCL's inclusive scopes must be equal, so no single access narrows alone; the four narrow
/// together (joint step). seq_cst stays: SB needs it.
#[test]
fn c_sb_goes_back_to_work_group_scope() {
    let wg = |l: u32, t: &str| {
        format!(
            "{l}: {t}memory_scope_device) -> {}memory_scope_work_group)",
            t.replace("device", "work_group")
        )
    };
    let lines = [
        wg(7, "atomic_store_explicit(x, 1, memory_order_seq_cst, "),
        wg(8, "atomic_load_explicit(y, memory_order_seq_cst, "),
        wg(12, "atomic_store_explicit(y, 1, memory_order_seq_cst, "),
        wg(13, "atomic_load_explicit(x, memory_order_seq_cst, "),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    expect(
        "SB+sc.dev.litmus",
        "c/SB+sc.wg.litmus",
        "atomic_store_explicit(x, 1, memory_order_seq_cst, memory_scope_work_group)",
        &[&lines],
    );
}

/// Local memory between two work-items of one group: the work_group_barrier orders the write
/// before the read, so the writer's release fence can go (as in the original's own tuning) and
/// the reader's acquire load can go relaxed.
#[test]
fn c_local_barrier_drops_the_fence_and_the_acquire() {
    expect(
        "local+barrier+fence+acq.litmus",
        "c/local+barrier+fence.litmus",
        "atomic_load_explicit(f, memory_order_relaxed, memory_scope_work_group)",
        &[&[
            "10: atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_release, memory_scope_device) -> removed",
            "17: atomic_load_explicit(f, memory_order_acquire, memory_scope_work_group) -> atomic_load_explicit(f, memory_order_relaxed, memory_scope_work_group)",
        ]],
    );
}

/// The spin lock with a system-scope unlock: both blocks are on one GPU, so device scope is
/// enough; the unlock's old value is unused, so it is a store, relaxed after the release fence
/// (fence-release then relaxed store synchronizes with the acquire fence after the CAS). The
/// __threadfence()s weaken to acquire (after the lock) and release (before the unlock).
#[test]
fn c_spinlock_unlock_goes_back_to_device_scope() {
    let acq = "__threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)";
    let rel = "__threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)";
    let st = "atomicExch_system(lock, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*lock).store(0, cuda::memory_order_relaxed)";
    let l = |n: u32, s: &str| format!("{n}: {s}");
    let lines = [
        l(9, acq),
        l(12, rel),
        l(13, st),
        l(18, acq),
        l(21, rel),
        l(22, st),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (v, rc) = tune("examples/tune/spinlock+atomicCAS+system.litmus");
    assert_eq!(rc, 0);
    assert_eq!(sets(&v), [lines]);
    // The lock's CAS is already the weakest: work-group scope would not exclude the other
    // block.
    assert_eq!(v["weakest"][0]["breaking"][0], "scope device -> work_group");
}

// --- PTX ---

/// An exists test (a question): the stale read is allowed with the .cta fences and stays
/// allowed whatever is weakened, so the answer is kept while the fences go and the flag
/// accesses narrow from .sys to .cta (no cluster holds two CTAs: .gpu steps to .cta).
#[test]
fn ptx_flag_accesses_go_back_from_sys() {
    let (v, rc) = tune("examples/tune/MP+fence.sc.cta+flag.sys.litmus");
    assert_eq!(rc, 0);
    let expected = [
        "15: fence.sc.cta -> removed",
        "16: st.relaxed.sys flag, 1 -> st.relaxed.cta flag, 1",
        "14: ld.relaxed.sys r0, flag -> ld.relaxed.cta r0, flag",
        "15: fence.sc.cta -> removed",
    ];
    assert_eq!(sets(&v), [expected]);
    // The example as written (.gpu flags) tunes to the same program: the over-specification
    // is undone and the same weakenings follow.
    let (w, _) = tune("examples/ptx/MP+fence.sc.cta.litmus");
    let becomes = |v: &serde_json::Value| -> Vec<String> {
        sets(v)[0]
            .iter()
            .map(|e| e.split(" -> ").nth(1).unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(becomes(&v), becomes(&w));
}

// --- OpenCL ---

/// seq_cst flag accesses between two work-groups: release/acquire at device scope already
/// synchronize; neither narrows (two work-groups) nor goes relaxed (the data would be stale).
#[test]
fn opencl_message_passing_goes_back_to_release_acquire() {
    expect(
        "mp-device-seqcst.cl",
        "opencl/mp-device.cl",
        "atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device)",
        &[&[
            "9: atomic_store_explicit(flag, 1, memory_order_seq_cst, memory_scope_device) -> atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device)",
            "11: atomic_load_explicit(flag, memory_order_seq_cst, memory_scope_device) -> atomic_load_explicit(flag, memory_order_acquire, memory_scope_device)",
        ]],
    );
}

/// A fence before the work-group barrier: the barrier orders the local stores before the
/// reads by itself, so the fence goes.
#[test]
fn opencl_fence_before_a_barrier_goes() {
    let (v, rc) = tune("examples/tune/local-reduction-fence.cl");
    assert_eq!(rc, 0);
    assert_eq!(
        sets(&v),
        [["11: atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_seq_cst, memory_scope_work_group) -> removed"]]
    );
}

// --- CUDA ---

/// The over-specified CUDA examples (file, maximal sets), each with why beside it. The PTX model
/// is not asked (the default for a .cu file is scoped C11).
const CUDA: &[(&str, &[&[&str]])] = &[
    // Two blocks of one GPU claim slots: device scope makes their CASes atomic together, block scope would not; system scope adds nothing without the host.
    (
        "hash-insert-system.cu",
        &[&[
            "14: atomicCAS_system(&table[slot], EMPTY, k) -> atomicCAS(&table[slot], EMPTY, k)",
        ]],
    ),
    // The host reads only after synchronizing with the kernels, so the device-side fences need no system scope: back to __threadfence(), then as the original tunes: the fences keep only their release (before the flag) and acquire (after the poll) halves, the flag exchange is a relaxed store after the release fence, the poll's add of 0 a relaxed load before the acquire fence.
    (
        "hh-checked-pipeline-system.cu",
        &[&[
            "46: __threadfence_system() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "47: atomicExch(flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*flag).store(1, cuda::memory_order_relaxed)",
            "50: atomicAdd(flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*flag).load(cuda::memory_order_relaxed)",
            "51: __threadfence_system() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The ticket is taken by the blocks of one GPU: device scope is enough, block scope is not (the last block must see every other block's increment). The fences keep the halves they use, as in the original's tuning.
    (
        "hh-symbol-lastblock-system.cu",
        &[&[
            "40: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "41: atomicAdd_system(arrived, 1u) -> atomicAdd(arrived, 1u)",
            "43: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The host polls with an acquire load: a release store at system scope synchronizes with it; seq_cst adds nothing, relaxed would lose the data, device scope would exclude the host.
    (
        "hostpoll-atomic-seqcst.cu",
        &[&[
            "7: f.store(1, cuda::memory_order_seq_cst) -> f.store(1, cuda::memory_order_release)",
        ]],
    ),
    // Two blocks race on one 64-bit maximum: device-scope CAS keeps it atomic; the first read (an add of 0) is only a read, a relaxed load is enough since the CAS loop re-reads what it needs.
    (
        "lx-cas64-max-system.cu",
        &[&[
            "16: atomicAdd(addr, 0ULL) -> cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*addr).load(cuda::memory_order_relaxed)",
            "19: atomicCAS_system(addr, assumed, val) -> atomicCAS(addr, assumed, val)",
        ]],
    ),
    // Two kernels of one GPU exchange the packet: device scope includes both, block scope does not; the scope is the atomic_ref's, so each declaration narrows.
    (
        "lx-ll-packet-system.cu",
        &[&[
            "26: cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*line); -> cuda::atomic_ref<uint64_t, cuda::thread_scope_device> ref(*line);",
            "21: cuda::atomic_ref<uint64_t, cuda::thread_scope_system> ref(*line); -> cuda::atomic_ref<uint64_t, cuda::thread_scope_device> ref(*line);",
        ]],
    ),
    // Every thread of the launch is in block 0: block scope includes all of them (as in the original's tuning), so the system scope narrows twice.
    (
        "lx-warp-aggregated-system.cu",
        &[&[
            "23: atomicAdd_system(ctr, __popc(mask)) -> atomicAdd_block(ctr, __popc(mask))",
        ]],
    ),
    // The host's acquire load reads the flag: release at system scope synchronizes with it; seq_cst adds nothing.
    (
        "mailbox-seqcst.cu",
        &[&[
            "7: flag->store(1, cuda::memory_order_seq_cst) -> flag->store(1, cuda::memory_order_release)",
        ]],
    ),
    // Producer and consumer blocks are on one GPU: device scope; then the original's tuning: fences halved, exchange a relaxed store, add of 0 a relaxed load.
    (
        "memcpy-flag-system.cu",
        &[&[
            "15: atomicAdd(flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*flag).load(cuda::memory_order_relaxed)",
            "16: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
            "10: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "11: atomicExch_system(flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*flag).store(1, cuda::memory_order_relaxed)",
        ]],
    ),
    // The ticket is taken by two blocks of one GPU: device scope, as written in the original; the fences keep the halves they use.
    (
        "reduction-system.cu",
        &[&[
            "10: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "11: atomicAdd_system(&ticket, 1) -> atomicAdd(&ticket, 1)",
            "13: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // Producer and consumer synchronize pairwise through release stores and acquire loads of the indices; seq_cst adds nothing. The release stores are already the weakest.
    (
        "ringqueue-seqcst.cu",
        &[&[
            "17: head.load(cuda::memory_order_seq_cst) -> head.load(cuda::memory_order_acquire)",
            "11: tail.load(cuda::memory_order_seq_cst) -> tail.load(cuda::memory_order_acquire)",
        ]],
    ),
    // Two blocks of one GPU: device scope is enough for the status flags, but the flags are one array declared once, and the last tile's status store (read by no one in this two-tile test) may go relaxed at block scope while the others stay device scope: no one declaration serves all three, so the scope is said in words.
    (
        "scan-system.cu",
        &[&[
            "14: status[0].store(2, cuda::memory_order_release) [scope system -> device (other accesses share the declaration at line 7: give this one an atomic_ref of its own at the narrower scope)]",
            "17: status[tile - 1].load(cuda::memory_order_acquire) [scope system -> device (other accesses share the declaration at line 7: give this one an atomic_ref of its own at the narrower scope)]",
            "20: status[tile].store(2, cuda::memory_order_release) -> status[tile].store(2, cuda::memory_order_relaxed)",
        ]],
    ),
    // The consumer's poll needs no system scope (both blocks are on one GPU): back to atomicAdd's device scope, then the original's tuning (the add of 0 is a read: a relaxed load; fences halved; the exchange a relaxed store).
    (
        "seed1-hostinit-system.cu",
        &[&[
            "12: atomicAdd_system(&flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(flag).load(cuda::memory_order_relaxed)",
            "13: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
            "7: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "8: atomicExch(&flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(flag).store(1, cuda::memory_order_relaxed)",
        ]],
    ),
    // As seed1-hostinit: device scope for the poll, then the original's tuning.
    (
        "seed1-system.cu",
        &[&[
            "12: atomicAdd_system(&flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(flag).load(cuda::memory_order_relaxed)",
            "13: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
            "7: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "8: atomicExch(&flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(flag).store(1, cuda::memory_order_relaxed)",
        ]],
    ),
    // The host's acquire load reads the flag: a release store at system scope synchronizes with it.
    (
        "seed2-seqcst.cu",
        &[&[
            "12: flag->store(1, cuda::std::memory_order_seq_cst) -> flag->store(1, cuda::std::memory_order_release)",
        ]],
    ),
    // The grid barrier's counter is read by the blocks of one GPU: device scope; the fences keep their halves as in the original's tuning; the arrival atomicAdd stays device scope.
    (
        "sp-cg-gridsync-twice-system.cu",
        &[&[
            "50: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "52: cuda::atomic_ref<unsigned int, cuda::thread_scope_system> bar(*arrived); -> cuda::atomic_ref<unsigned int, cuda::thread_scope_device> bar(*arrived);",
            "56: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The retirement count is taken by the blocks of one GPU: device scope; the fences keep their halves.
    (
        "sp-lastblock-reduce-system.cu",
        &[&[
            "44: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "45: atomicInc_system(&retirement_count, gridDim.x - 1) -> atomicInc(&retirement_count, gridDim.x - 1)",
            "48: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The predecessor's flag is read by blocks of one GPU: device scope on its atomic_ref; the rest as the original tunes (fences halved, flag exchanges relaxed stores after the release fences).
    (
        "sp-lookback-scan-system.cu",
        &[&[
            "62: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "63: atomicExch(&tile_flag[tile], FLAG_PREFIX) -> cuda::atomic_ref<int, cuda::thread_scope_device>(tile_flag[tile]).store(FLAG_PREFIX, cuda::memory_order_relaxed)",
            "42: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "43: atomicExch(&tile_flag[tile], FLAG_AGGREGATE) -> cuda::atomic_ref<int, cuda::thread_scope_device>(tile_flag[tile]).store(FLAG_AGGREGATE, cuda::memory_order_relaxed)",
            "47: cuda::atomic_ref<int, cuda::thread_scope_system> pred_flag{tile_flag[pred]}; -> cuda::atomic_ref<int, cuda::thread_scope_device> pred_flag{tile_flag[pred]};",
            "52: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The queue head is claimed by two blocks of one GPU: device scope, block scope would hand one slot to both.
    (
        "sp-workqueue-system.cu",
        &[&[
            "30: atomicAdd_system(head, 1) -> atomicAdd(head, 1)",
        ]],
    ),
    // The lock is taken by two blocks of one GPU: device scope; then the original's tuning (acquire fence after the lock, release fence before the unlock, the unlock a relaxed store).
    (
        "spinlock-system.cu",
        &[&[
            "7: atomicCAS_system(&lock, 0, 1) -> atomicCAS(&lock, 0, 1)",
            "8: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
            "10: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "11: atomicExch(&lock, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(lock).store(0, cuda::memory_order_relaxed)",
        ]],
    ),
    // Producer and consumer on one GPU: device scope for the flag exchange, which, its old value unused, is a relaxed store after the release fence; the consumer as in the original's tuning.
    (
        "struct-mailbox-system.cu",
        &[&[
            "18: atomicAdd(&box->flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(box->flag).load(cuda::memory_order_relaxed)",
            "19: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
            "13: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "14: atomicExch_system(&box->flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(box->flag).store(1, cuda::memory_order_relaxed)",
        ]],
    ),
    // The ticket fetch_add orders nothing (now_serving's release/acquire does): relaxed, as written in the original.
    (
        "ticketlock-seqcst.cu",
        &[&[
            "9: next_ticket.fetch_add(1, cuda::memory_order_seq_cst) -> next_ticket.fetch_add(1, cuda::memory_order_relaxed)",
        ]],
    ),
    // Each thread writes its own elements and the host reads after cudaDeviceSynchronize: the fence orders nothing anyone observes.
    (
        "grid-stride-fence.cu",
        &[&[
            "13: __threadfence() -> removed",
        ]],
    ),
    // The second fence follows the flag and precedes nothing: it goes; the rest as the example's own tuning (release half of the first fence, the flag a relaxed store after it, at system scope for the host).
    (
        "hh-mapped-poll-fence.cu",
        &[&[
            "29: __threadfence_system() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system)",
            "30: atomicExch_system(done, 1) -> cuda::atomic_ref<int, cuda::thread_scope_system>(*done).store(1, cuda::memory_order_relaxed)",
            "31: __threadfence_system() -> removed",
        ]],
    ),
    // The consumer kernel runs after the producer's event: the launch order makes the data visible without the fence.
    (
        "hh-streams-events-fence.cu",
        &[&[
            "23: __threadfence() -> removed",
        ]],
    ),
    // The fence precedes the kernel's only access: it orders nothing. The increment keeps system scope: the host increments the same counter concurrently.
    (
        "host-device-counter-fence.cu",
        &[&[
            "8: __threadfence_system() -> removed",
        ]],
    ),
    // As host-device-counter-fence, in pinned memory.
    (
        "host-device-counter-pinned-fence.cu",
        &[&[
            "8: __threadfence_system() -> removed",
        ]],
    ),
    // block.sync() orders the shared stores before the reads by itself.
    (
        "lx-cg-block-reduce-fence.cu",
        &[&[
            "21: __threadfence_block() -> removed",
        ]],
    ),
    // __syncthreads() orders the shared stores before the reads by itself.
    (
        "lx-dyn-smem-reduce-fence.cu",
        &[&[
            "14: __threadfence_block() -> removed",
        ]],
    ),
    // __syncwarp orders memory among the lanes it names (the PTX ISA's bar.warp.sync): the fence adds nothing.
    (
        "lx-syncwarp-handoff-fence.cu",
        &[&[
            "14: __threadfence_block() -> removed",
        ]],
    ),
    // The shuffles exchange registers; the fence orders no memory access anyone reads.
    (
        "lx-warp-reduce-fence.cu",
        &[&[
            "17: __threadfence_block() -> removed",
        ]],
    ),
    // Two blocks of one GPU: the producer's fence needs device scope, not system; then as the original tunes (the seed1 pattern: release and acquire halves, a relaxed flag store after the release fence, the poll's add of 0 a relaxed load).
    (
        "params-struct-system.cu",
        &[&[
            "19: __threadfence_system() -> cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device)",
            "20: atomicExch(p.flag, 1) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*(p.flag)).store(1, cuda::memory_order_relaxed)",
            "24: atomicAdd(p.flag, 0) -> cuda::atomic_ref<int, cuda::thread_scope_device>(*(p.flag)).load(cuda::memory_order_relaxed)",
            "26: __threadfence() -> cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device)",
        ]],
    ),
    // The host consumer's acquire load pairs with a release store: seq_cst adds nothing (the consumer, a host thread, is left alone; the scope must stay system to include it).
    (
        "hh-thread-consumer-seqcst.cu",
        &[&["12: f.store(1, cuda::memory_order_seq_cst) -> f.store(1, cuda::memory_order_release)"]],
    ),
    // tile.sync() already orders the shared write before the read within the tile: the block fence goes.
    (
        "cg-tile-handoff-fence.cu",
        &[&["17: __threadfence_block() -> removed"]],
    ),
];

/// Each CUDA copy tunes to exactly its sets, and every edit either restores the example as
/// written or makes what tuning the example itself makes.
#[test]
fn cuda_copies_tune_back_to_their_examples() {
    for (file, expected) in CUDA {
        let (v, rc) = tune(&format!("examples/tune/{file}"));
        assert_eq!(rc, 0, "{file}: {v}");
        let got = sets(&v);
        assert_eq!(&got, expected, "{file}");
        let original = file.rsplit_once('-').map(|(n, _)| n).unwrap_or(file);
        let source = std::fs::read_to_string(root().join(format!("examples/cuda/{original}.cu")))
            .expect("read the example");
        let (w, _) = tune(&format!("examples/cuda/{original}.cu"));
        let own: Vec<String> = sets(&w).into_iter().flatten().collect();
        for e in got.iter().flatten() {
            // A fence the copy added goes; a change said in words restores nothing verbatim.
            let Some((_, becomes)) = e.split_once(" -> ").filter(|_| !e.ends_with(']')) else {
                continue;
            };
            if becomes == "removed" {
                continue;
            }
            assert!(
                source.contains(becomes) || own.iter().any(|o| o.ends_with(&format!("-> {becomes}"))),
                "{file}: `{becomes}` neither restores examples/cuda/{original}.cu nor is its own tuning"
            );
        }
    }
}

// --- CUDA files read as their PTX view (NVRTC; fails without it, as tests/nvrtc_view.rs) ---

/// template-flag with a system-scope flag exchange, tuned as NVRTC's PTX. Two maximal sets,
/// because the fences and the flag accesses interfere: with the two `membar.gl` (fence.sc.gpu)
/// kept, the first in Fence-SC order synchronizes with the second whatever the flag accesses
/// are, so the flag accesses narrow to .cta; with the fences made acq_rel, they synchronize
/// only through morally strong flag accesses, which must then stay .gpu. Either way the
/// exchange (old value unused) is a store and the add of 0 a load.
#[test]
fn ptx_view_of_template_flag_has_two_maximal_sets() {
    let (v, rc) = tune("examples/tune/template-flag-system.cu");
    assert_eq!(rc, 0, "{v}");
    assert_eq!(
        sets(&v),
        [
            vec![
                "25: atom.global.add.u32 %r1, [%rd3], 0 -> ld.relaxed.cta.global.u32 %r1, [%rd3]",
                "20: atom.global.sys.exch.b32 %r5, [%rd4], 1 -> st.relaxed.cta.global.b32 [%rd4], 1",
            ],
            vec![
                "25: atom.global.add.u32 %r1, [%rd3], 0 -> ld.relaxed.gpu.global.u32 %r1, [%rd3]",
                "26: membar.gl -> fence.acq_rel.gpu",
                "19: membar.gl -> fence.acq_rel.gpu",
                "20: atom.global.sys.exch.b32 %r5, [%rd4], 1 -> st.relaxed.gpu.global.b32 [%rd4], 1",
            ],
        ]
    );
}

/// class-gridbarrier with a system-scope arrival counter, tuned as NVRTC's PTX: the blocks are
/// on one GPU, so the arrival RMW goes back to .gpu; the generation's release store and
/// acquire load are needed as written. The counter's reset and the first generation load are
/// relaxed: their scope only decides whether they are morally strong with the other block's
/// accesses, PTX gives that race a meaning, and the barrier's ordering rests on the acq_rel RMW
/// and the generation's release/acquire pair, so .cta keeps the requirement.
#[test]
fn ptx_view_of_class_gridbarrier_goes_back_to_gpu() {
    let (v, rc) = tune("examples/tune/class-gridbarrier-system.cu");
    assert_eq!(rc, 0, "{v}");
    assert_eq!(
        sets(&v),
        [[
            "13: ld.relaxed.gpu.b32 %r4, [%rd6] -> ld.relaxed.cta.b32 %r4, [%rd6]",
            "14: atom.add.acq_rel.sys.u32 %r5, [%rd4], %r6 -> atom.acq_rel.gpu.add.u32 %r5, [%rd4], %r6",
            "15: st.relaxed.sys.b32 [%rd4], %r10 -> st.relaxed.cta.b32 [%rd4], %r10",
        ]]
    );
}

/// The README's Tune section shows the real text output on the device counter.
#[test]
fn the_readme_shows_the_real_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let cmd = "$ scopecheck tune examples/tune/device-counter-seqcst.cu examples/cuda/device-counter.cu\n";
    let start = readme
        .find(cmd)
        .expect("the README runs tune on the counter")
        + cmd.len();
    let shown = &readme[start..start + readme[start..].find("```").expect("block end")];
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .current_dir(root())
        .args([
            "tune",
            "examples/tune/device-counter-seqcst.cu",
            "examples/cuda/device-counter.cu",
        ])
        .output()
        .expect("run");
    // The README's block ends where the output's last blank line is.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        shown.trim_end()
    );
}

/// With --model both a weakening must keep both verdicts: for the seq_cst message passing in
/// OpenCL, release/acquire keep it under scoped C11 and, through the PTX mapping
/// (st.release/ld.acquire at .gpu), under PTX.
#[test]
fn both_models_must_keep_the_verdict() {
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["tune", "--json", "--model", "both"])
        .arg(root().join("examples/tune/mp-device-seqcst.cl"))
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or(""),
    )
    .expect("JSON");
    assert_eq!(v["models"], serde_json::json!(["src11", "ptx"]));
    assert_eq!(
        sets(&v),
        [[
            "9: atomic_store_explicit(flag, 1, memory_order_seq_cst, memory_scope_device) -> atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device)",
            "11: atomic_load_explicit(flag, memory_order_seq_cst, memory_scope_device) -> atomic_load_explicit(flag, memory_order_acquire, memory_scope_device)",
        ]]
    );
}

/// The issue's example: an atomic_ref at device scope whose every user is in one block (one
/// block of two threads): block scope includes both, so the increments stay atomic together;
/// the change is at the declaration. Relaxed atomics cost the same at both scopes on the H200
/// (274.5 and 274.4 cycles), so it saves nothing there.
#[test]
fn an_atomic_ref_used_in_one_block_narrows_at_its_declaration() {
    let (v, rc) = tune("examples/tune/one-block-counter.cu");
    assert_eq!(rc, 0);
    assert_eq!(
        sets(&v),
        [["4: cuda::atomic_ref<int, cuda::thread_scope_device> c(*counter); -> cuda::atomic_ref<int, cuda::thread_scope_block> c(*counter);"]]
    );
    assert_eq!(
        v["sets"][0]["saved_cycles"].as_f64().map(f64::round),
        Some(0.0)
    );
}

/// Issue 33, deliverable 7: atomics on `__shared__` memory written at device and system scope
/// (crates/cli/tests/shared-scope-narrowed.cu). The front-end treats both at block scope,
/// since shared memory is only reachable within its block, so the IR holds nothing to narrow;
/// tune proposes the block-scope spelling of each, with that reason: the `atomic_ref`'s
/// declaration (line 11) and the builtin's suffix (line 13). The warning is said once per
/// statement (two lines), not once per thread of the launch (four threads, eight lines before).
#[test]
fn shared_atomics_are_proposed_at_block_scope() {
    let file = "crates/cli/tests/shared-scope-narrowed.cu";
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["tune", "--json"])
        .arg(root().join(file))
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("not JSON: {text}: {e}"));
    let narrowest = v["narrowest"].as_array().expect("narrowest");
    let edits: Vec<String> = narrowest
        .iter()
        .flat_map(|n| {
            assert!(n["reason"].as_str().unwrap().contains("__shared__"), "{n}");
            n["edits"].as_array().unwrap().iter().map(|e| {
                format!(
                    "{}: {} -> {}",
                    e["line"],
                    e["was"].as_str().unwrap(),
                    e["becomes"].as_str().unwrap()
                )
            })
        })
        .collect();
    assert_eq!(
        edits,
        [
            "11: cuda::atomic_ref<int, cuda::thread_scope_device> h(hits); -> cuda::atomic_ref<int, cuda::thread_scope_block> h(hits);",
            "13: atomicAdd_system(&hits, 1) -> atomicAdd_block(&hits, 1)",
        ],
        "{v}"
    );
    let text = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .arg("tune")
        .arg(root().join(file))
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&text.stdout);
    let warnings = text
        .lines()
        .filter(|l| l.contains("treated as cta"))
        .count();
    assert_eq!(warnings, 2, "{text}");
    assert_eq!(text.matches("Narrowest line").count(), 2, "{text}");
}
