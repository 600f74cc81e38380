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

/// Two blocks publish partial sums (1 and 2), fence, take a ticket; the ticket RMWs are
/// totally ordered, so exactly one block sees 1 and, after its fence, reads both partial sums
/// (the other block's fence-RMW releases to this RMW-fence): out == 3 always.
#[test]
fn reduction_with_ticket() {
    expect("reduction.cu", None, "Ok", false);
}

/// Without the last block's fence its reads of the other partial sum are not ordered after
/// the ticket: a race, and the sum can miss a partial.
#[test]
fn reduction_without_acquire_can_miss_a_partial() {
    expect("reduction-noacquire.cu", None, "No", true);
}

/// The CAS lock with a fence after acquiring and before releasing: the critical sections are
/// ordered (fence-RMW release, RMW-fence acquire at gpu scope), the counter reaches 2.
#[test]
fn spinlock_with_fences() {
    expect("spinlock.cu", None, "Ok", false);
}

/// Without the fences the relaxed lock RMWs order nothing: the counter accesses race and an
/// increment can be lost (counter == 1).
#[test]
fn spinlock_without_fences_loses_updates() {
    expect("spinlock-nofence.cu", None, "No", true);
}

/// Release store of a system-scope flag in pinned mapped memory, acquire loads by the host
/// while the kernel runs: the host reads the message 7.
#[test]
fn host_device_mailbox() {
    expect("mailbox.cu", None, "Ok", false);
}

/// The same with a relaxed flag store: nothing orders the message before the flag.
#[test]
fn host_device_mailbox_relaxed_flag_races() {
    expect("mailbox-relaxed.cu", None, "No", true);
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

/// Nine threads are over the default limit of 8: `check` refuses and says how to raise it;
/// `--max-threads 9` lets the front-end make them.
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
    let refused = run(&[]);
    assert!(refused.contains("--max-threads"), "{refused}");
    let line = run(&["--max-threads", "9"]);
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("JSON");
    assert_eq!(v["name"], "wide");
    assert_eq!(v["result"], "Ok", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
