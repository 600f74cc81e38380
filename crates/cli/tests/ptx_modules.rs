//! `.ptx` modules as input, with the `.cu` harness that launches their kernels (`--harness`):
//! tests/ptx-modules/, PTX written by hand in the style nvcc emits.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ptx-modules");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .current_dir(&root)
        .args(args)
        .output()
        .expect("run scopecheck");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(file: &str) -> serde_json::Value {
    let (_, out, err) = run(&["check", "--json", "--harness", "mp-harness.cu", file]);
    serde_json::from_str(out.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{file}: {e}: {out} {err}"))
}

/// `produce` stores 42, then the flag with `st.release.gpu`; `consume` spins on
/// `ld.acquire.gpu` of the flag and then loads the payload. The acquire load that reads the
/// release store synchronizes with it (PTX ISA, release and acquire patterns), so the payload
/// load comes after the payload store in causality order and reads 42: the harness's check
/// always holds, and the weak accesses to the payload do not race.
#[test]
fn message_passing_with_release_and_acquire() {
    let v = json("mp.ptx");
    assert_eq!(v["model"], "ptx", "{v}");
    assert_eq!(
        (&v["result"], &v["racy"]),
        (&"Ok".into(), &false.into()),
        "{v}"
    );
    assert_eq!(v["terminates"], true);
}

/// With the flag stored relaxed nothing releases the payload store: the consumer may see the
/// flag and still read the payload's initial 0, and the payload accesses race.
#[test]
fn message_passing_with_a_relaxed_flag_can_fail() {
    let v = json("mp-relaxed.ptx");
    assert_eq!(
        (&v["result"], &v["racy"]),
        (&"No".into(), &true.into()),
        "{v}"
    );
}

/// A `.ptx` file without `--harness` is an error that says what to add.
#[test]
fn a_ptx_file_needs_a_harness() {
    let (code, _, err) = run(&["check", "mp.ptx"]);
    assert_ne!(code, 0);
    assert!(err.contains("--harness"), "{err}");
}
