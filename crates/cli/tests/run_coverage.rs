//! `run` runs what `check` checks (issue 36, deliverable 1): a `.cu` file the language-level
//! front-end refuses is read through its PTX view, as `check` reads it, and what the runner
//! cannot run says why, with a GPU or without one. These tests need no GPU: `--emit-ptx`
//! generates the kernels only, and a refusal of the generator comes before the driver is
//! asked for.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

#[test]
fn a_file_only_the_ptx_view_reads_is_generated_from_that_view() {
    // template-flag.cu declares its kernels as templates and union-packet.cu sends a union;
    // the language-level front-end refuses both (`check` says so and reads the PTX view
    // instead). `run` loads the same view and generates from it: its registers hold the
    // kernel parameters' pointer values (2^32 and up, so 64-bit registers), and union-packet's
    // packet is a 64-bit location exchanged whole with `atom.global.exch.b64`.
    for (file, wants) in [
        (
            "examples/cuda/template-flag.cu",
            &["mov.b64", ".entry scopecheck_test"][..],
        ),
        (
            "examples/cuda/union-packet.cu",
            &[
                "atom.relaxed.gpu.global.exch.b64",
                "add.s64 \t%a1, %a1, %iline;",
            ][..],
        ),
    ] {
        let out = scopecheck(&["run", "--emit-ptx", &repo(file)]);
        let err = String::from_utf8_lossy(&out.stderr);
        let ptx = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{file}: {err}");
        for want in wants {
            assert!(ptx.contains(want), "{file}: missing {want} in\n{ptx}");
        }
    }
}

#[test]
fn a_refusal_of_the_generator_is_the_reason_given_with_or_without_a_gpu() {
    // Bar+count-exceeds-cta: bar.sync 1, 4 in a CTA of two threads, whose rounds can never
    // fill; the generator refuses it before any driver is opened. Without a driver the line
    // used to say only "no CUDA driver", hiding why a GPU would refuse it.
    let file = repo("tests/litmus/ptx/Bar+count-exceeds-cta.litmus");
    let out = scopecheck(&["run", "--json", "--time", "20ms", &file]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 1, "{out:?}");
    let why = lines[0]["error"].as_str().expect("an error line");
    assert!(why.contains("fill whole rounds"), "{why}");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}
