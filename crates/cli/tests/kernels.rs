//! Kernel-only files (no `main()`): every kernel checked on its own at a launch of its own
//! (tests/kernels/*.cu, *.cl; docs/kernels.md). Each file's comment derives its verdict; these
//! tests check it in both views (scoped C11 and the PTX view NVRTC's code gives), and the
//! options that choose the kernel, the launch, the buffers and the scalars.

use std::path::Path;
use std::process::Command;

/// `check --json --model both ARGS FILE`: one JSON value per line of output.
fn check(file: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", "both"])
        .args(args)
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: not JSON: {l}: {e}")))
        .collect()
}

/// Asserts that both views give a complete verdict with `racy` races and no hang.
fn expect_both(v: &serde_json::Value, racy: bool) {
    let verdicts = v["verdicts"]
        .as_array()
        .unwrap_or_else(|| panic!("no verdicts: {v}"));
    assert_eq!(verdicts.len(), 2, "{v}");
    for m in verdicts {
        assert_eq!(m["complete"], true, "{}: {m}", m["model"]);
        assert_eq!(m["racy"], racy, "{}: {}", m["model"], m["races"]);
        assert_eq!(m["terminates"], true, "{}: {}", m["model"], m["hangs"]);
    }
    // The PTX verdict is about NVRTC's code, not scopecheck's own mapping.
    assert!(
        !v["warnings"].to_string().contains("own mapping"),
        "{}",
        v["warnings"]
    );
}

fn one(file: &str, args: &[&str]) -> serde_json::Value {
    let mut lines = check(file, args);
    assert_eq!(lines.len(), 1, "{file}: {lines:?}");
    lines.remove(0)
}

#[test]
fn shared_tile_with_a_barrier_is_race_free_and_without_one_racy() {
    let v = one("shared-tile.cu", &[]);
    assert_eq!(v["name"], "shared-tile:rotate");
    expect_both(&v, false);
    // The default launch, said in the JSON: 2 blocks of 2, buffers of one element a thread.
    assert_eq!(v["kernel"]["launch_from"], "default");
    assert_eq!(v["kernel"]["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 1, 1]));
    assert_eq!(v["kernel"]["buffer_elements"], 4);
    assert_eq!(v["kernel"]["init"], "zero");
    expect_both(&one("shared-tile-nobarrier.cu", &[]), true);
}

#[test]
fn atomic_counter_is_race_free_and_plain_one_racy_at_the_commented_launch() {
    let v = one("counter-atomic.cu", &[]);
    expect_both(&v, false);
    assert_eq!(v["kernel"]["launch_from"], "file-comment");
    assert_eq!(v["kernel"]["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 1, 1]));
    expect_both(&one("counter-plain.cu", &[]), true);
}

#[test]
fn extern_c_grid_stride_loops() {
    // 2 blocks of 2 threads, 8 elements: two rounds of the loop (four in the overlapping
    // twin, whose stride is 2: --unroll 4 lets the PTX view's loop go round).
    let args = ["--buffer", "8", "--arg", "n=8", "--unroll", "4"];
    let v = one("extern-c-gridstride.cu", &args);
    expect_both(&v, false);
    assert_eq!(v["kernel"]["args"]["n"], "8");
    assert_eq!(v["kernel"]["buffer_elements"], 8);
    expect_both(&one("extern-c-gridstride-overlap.cu", &args), true);
}

#[test]
fn opencl_local_memory_with_and_without_the_barrier() {
    let v = one("local-reverse.cl", &[]);
    assert_eq!(v["kernel"]["launch_from"], "file-comment");
    assert_eq!(v["kernel"]["block"], serde_json::json!([4, 1, 1]));
    for m in v["verdicts"].as_array().unwrap() {
        assert_eq!(
            (m["complete"].clone(), m["racy"].clone()),
            (true.into(), false.into()),
            "{m}"
        );
    }
    let v = one("local-reverse-nobarrier.cl", &[]);
    for m in v["verdicts"].as_array().unwrap() {
        assert_eq!(
            (m["complete"].clone(), m["racy"].clone()),
            (true.into(), true.into()),
            "{m}"
        );
    }
    // --local-size / --num-groups override the comment.
    let v = one(
        "local-reverse.cl",
        &["--local-size", "2", "--num-groups", "1"],
    );
    assert_eq!(v["kernel"]["launch_from"], "command-line");
    assert_eq!(v["kernel"]["grid"], serde_json::json!([1, 1, 1]));
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 1, 1]));
}

#[test]
fn every_kernel_is_reported_and_a_template_without_arguments_is_refused_by_name() {
    let lines = check("two-kernels.cu", &[]);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["name"], "two-kernels:fill");
    expect_both(&lines[0], false);
    assert_eq!(lines[1]["name"], "two-kernels:gather");
    expect_both(&lines[1], false);
    let e = lines[2]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("`pick`") && e.contains("--kernel 'pick<64>'"),
        "{e}"
    );
    // --kernel picks one, and instantiates the template.
    let lines = check("two-kernels.cu", &["--kernel", "pick<3>"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["name"], "two-kernels:pick<3>");
    // pick<3>: thread t of every block writes a[t], so both blocks write a[0]: a race
    // between blocks (PTX view only: a template).
    assert_eq!(lines[0]["racy"], true, "{}", lines[0]);
    assert_eq!(lines[0]["complete"], true);
    let lines = check("two-kernels.cu", &["--kernel", "nope"]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("no kernel `nope`") && e.contains("fill, gather, pick"),
        "{e}"
    );
}

#[test]
fn template_kernel_with_restrict_and_align_in_the_ptx_view() {
    let v = one("template-scale.cu", &["--kernel", "scale<int,2>"]);
    assert_eq!(v["name"], "template-scale:scale<int,2>");
    assert_eq!(v["model"], "ptx", "templates: the PTX view alone: {v}");
    assert_eq!(v["complete"], true);
    assert_eq!(v["racy"], false, "{}", v["races"]);
}

#[test]
fn buffer_contents_follow_init() {
    // Zero-filled (default) and `index`: at most one thread writes flag[0]; `1`: all do.
    expect_both(&one("init-depends.cu", &[]), false);
    let v = one("init-depends.cu", &["--init", "index"]);
    assert_eq!(v["kernel"]["init"], "index");
    expect_both(&v, false);
    expect_both(&one("init-depends.cu", &["--init", "1"]), true);
}

#[test]
fn an_access_past_the_buffer_is_out_of_bounds_at_its_line() {
    let v = one("out-of-bounds.cu", &[]);
    let e = v["error"].as_str().unwrap_or_default();
    assert!(e.contains("out of bounds of `a`"), "{v}");
    assert_eq!(v["line"], 5);
    // A buffer one element longer holds every write.
    expect_both(&one("out-of-bounds.cu", &["--buffer", "5"]), false);
}

#[test]
fn a_launch_beyond_max_threads_is_shrunk_and_said_so() {
    let v = one(
        "counter-plain.cu",
        &["--grid", "4", "--block", "64", "--max-threads", "4"],
    );
    let k = &v["kernel"];
    assert_eq!(k["reduced"], true, "{k}");
    assert_eq!(k["asked_grid"], serde_json::json!([4, 1, 1]));
    assert_eq!(k["asked_block"], serde_json::json!([64, 1, 1]));
    // Blocks first down to two, then threads per block: 2 x 2 = 4 (--max-threads 4).
    assert_eq!(k["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(k["block"], serde_json::json!([2, 1, 1]));
    assert!(
        v["warnings"].to_string().contains("SMALLER launch"),
        "{}",
        v["warnings"]
    );
    expect_both(&v, true);
    // dim3 forms.
    let v = one("counter-atomic.cu", &["--grid", "1,2", "--block", "1,2"]);
    assert_eq!(v["kernel"]["grid"], serde_json::json!([1, 2, 1]));
    assert_eq!(v["kernel"]["block"], serde_json::json!([1, 2, 1]));
    expect_both(&v, false);
}

#[test]
fn bad_kernel_options_are_usage_errors() {
    for bad in [
        ["--grid", "0"],
        ["--block", "a"],
        ["--arg", "n"],
        ["--init", "ones"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(["check"])
            .args(bad)
            .arg("x.cu")
            .output()
            .expect("run scopecheck");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    // An --arg no kernel has.
    let lines = check("counter-atomic.cu", &["--arg", "m=3"]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("no kernel of this file has a scalar parameter `m`"),
        "{e}"
    );
}

/// tests/kernels/include, as an argument.
fn include_dir() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels/include")
        .display()
        .to_string()
}

#[test]
fn headers_on_the_include_path_and_macros_reach_both_views() {
    let inc = include_dir();
    // Without -I the user's header is an error at its #include, naming the flag.
    let v = one("with-header.cu", &[]);
    let e = v["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("`#include \"counting.cuh\"`: header not found") && e.contains("-I DIR"),
        "{v}"
    );
    assert_eq!(v["line"], 2);
    // With it, the file's own #error asks for ITEMS.
    let v = one("with-header.cu", &["-I", &inc]);
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("give ITEMS"),
        "{v}"
    );
    assert_eq!(v["line"], 13);
    // With -DITEMS=4: the header's atomic helper, no race; -DPLAIN_COUNT: its plain +=, racy.
    expect_both(&one("with-header.cu", &["-I", &inc, "-DITEMS=4"]), false);
    expect_both(
        &one(
            "with-header.cu",
            &[&format!("-I{inc}"), "-D", "ITEMS=4", "-DPLAIN_COUNT"],
        ),
        true,
    );
    // nvcc's Linux macros are predefined alike in both views; -U removes one.
    let v = one("with-header.cu", &["-I", &inc, "-DITEMS=4", "-U__linux__"]);
    assert!(
        v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("nvcc on Linux"),
        "{v}"
    );
}

#[test]
fn arch_std_and_pre_include_choose_the_same_branch_in_both_views() {
    expect_both(&one("arch-branch.cu", &[]), false);
    expect_both(&one("arch-branch.cu", &["--arch", "sm_80"]), true);
    expect_both(&one("arch-branch.cu", &["-arch=sm_80"]), true);
    expect_both(&one("arch-branch.cu", &["-std=c++14"]), true);
    let pre = format!("{}/pre.h", include_dir());
    expect_both(&one("arch-branch.cu", &["-include", &pre]), false);
    expect_both(
        &one("arch-branch.cu", &["--include", &pre, "--std", "c++20"]),
        false,
    );
    // Bad values are usage errors.
    for bad in [["--arch", "sm_60"], ["--std", "c++98"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
            .args(["check"])
            .args(bad)
            .arg("x.cu")
            .output()
            .expect("run scopecheck");
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// The error line of a file that faults (out of bounds, an undefined shuffle): its message and
/// line.
fn fault(file: &str, args: &[&str]) -> (String, u64) {
    let v = one(file, args);
    let e = v["error"].as_str().unwrap_or_default().to_string();
    assert!(!e.is_empty(), "{file}: no error: {v}");
    (e, v["line"].as_u64().unwrap_or(0))
}

#[test]
fn warp_shuffles_inside_the_mask_and_outside_it() {
    expect_both(&one("warp-shfl-sum.cu", &[]), false);
    let (e, line) = fault("warp-shfl-oob.cu", &[]);
    assert!(
        e.contains("shuffles from lane 4") && e.contains("undefined"),
        "{e}"
    );
    assert_eq!(line, 8);
}

#[test]
fn inline_ptx_fences_order_a_handoff_and_their_absence_races() {
    // The language-level front-end does not read `asm`: the PTX view alone, NVRTC's PTX with
    // the asm fences in it.
    let v = one("inline-ptx-fence.cu", &[]);
    assert_eq!(v["model"], "ptx", "{v}");
    assert_eq!(
        (v["complete"].clone(), v["racy"].clone()),
        (true.into(), false.into()),
        "{v}"
    );
    expect_both(&one("inline-ptx-nofence.cu", &[]), true);
}

#[test]
fn last_block_reduction_with_and_without_fences() {
    expect_both(&one("last-block.cu", &[]), false);
    expect_both(&one("last-block-nofence.cu", &[]), true);
}

#[test]
fn cooperative_groups_block_sync_with_and_without() {
    expect_both(&one("cg-block-sync.cu", &[]), false);
    expect_both(&one("cg-block-nosync.cu", &[]), true);
}

#[test]
fn a_barrier_only_one_thread_reaches_is_barrier_divergence_in_both_views() {
    let v = one("divergent-barrier.cu", &[]);
    for m in v["verdicts"].as_array().unwrap() {
        assert_eq!(m["complete"], true, "{m}");
        assert_eq!(m["terminates"], false, "{m}");
        let reason = m["hangs"][0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("barrier divergence"), "{reason}");
        assert_eq!(m["hangs"][0]["line"], 7);
    }
}

#[test]
fn scalar_arguments_steer_the_bound_check() {
    // Default: shift is 4 like n, thread 0 writes a[4].
    let (e, line) = fault("scalar-bound.cu", &[]);
    assert!(e.contains("out of bounds of `a`"), "{e}");
    assert_eq!(line, 11);
    expect_both(&one("scalar-bound.cu", &["--arg", "shift=0"]), false);
    let v = one("scalar-bound.cu", &["--arg", "n=2", "--arg", "shift=1"]);
    assert_eq!(v["kernel"]["args"]["n"], "2");
    assert_eq!(v["kernel"]["args"]["shift"], "1");
    expect_both(&v, false);
    let (e, line) = fault("scalar-bound.cu", &["--arg", "n=3", "--arg", "shift=-1"]);
    assert!(e.contains("no location"), "{e}");
    assert_eq!(line, 11);
}

#[test]
fn a_kernel_the_optimizer_empties_is_said_so_in_the_ptx_view() {
    let v = one("dead-shared.cu", &[]);
    let verdicts = v["verdicts"].as_array().unwrap();
    // The source races (two plain stores to one shared word) ...
    assert_eq!(verdicts[0]["model"], "src11");
    assert_eq!(verdicts[0]["racy"], true, "{}", verdicts[0]);
    // ... NVRTC's code has no access left: no race there, and a warning at the kernel says why.
    assert_eq!(verdicts[1]["model"], "ptx");
    assert_eq!(verdicts[1]["racy"], false);
    let w = v["warnings"].to_string();
    assert!(
        w.contains("accesses no memory") && w.contains("optimizer removed"),
        "{w}"
    );
    assert_eq!(v["warnings"][0]["line"], 6);
}
