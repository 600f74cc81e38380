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

/// `check --json --model MODEL ARGS FILE`: one JSON value per line.
fn check_model(file: &str, model: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", model])
        .args(args)
        .arg(&path)
        .output()
        .expect("run scopecheck");
    String::from_utf8_lossy(&out.stdout)
        .lines()
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
    // shift=-1: thread 0 writes a[-1], 4 bytes before `a`. The pointer was computed from `a`,
    // so the fault names `a` (pointer provenance, docs/explore.md "Values and addresses"),
    // where it said only that the address is no location's before.
    let (e, line) = fault("scalar-bound.cu", &["--arg", "n=3", "--arg", "shift=-1"]);
    assert!(e.contains("out of bounds of `a`"), "{e}");
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

/// Asserts a PTX-view-only verdict (the language-level front-end refuses the file: templates,
/// `asm`, 2-D arrays): complete, `racy` as given, terminating, about NVRTC's code.
fn expect_ptx_only(v: &serde_json::Value, racy: bool) {
    assert_eq!(v["model"], "ptx", "the PTX view alone: {v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["racy"], racy, "{}", v["races"]);
    assert_eq!(v["terminates"], true, "{}", v["hangs"]);
    assert_eq!(v["compilation"]["compiler"], "NVRTC", "{v}");
}

#[test]
fn template_tree_reduction_with_and_without_the_first_barrier() {
    // Reasoning in the files' headers: every step's barrier separates each tile store from the
    // other threads' accesses; without the first one, thread 0 reads tile[2] as thread 2
    // stores it.
    let args = ["--kernel", "block_sum<4>"];
    expect_ptx_only(&one("template-block-sum.cu", &args), false);
    let v = one("template-block-sum-nosync.cu", &args);
    expect_ptx_only(&v, true);
    assert_eq!(
        v["races"][0]["location"], "_ZZ9block_sumILi4EEvPKiPiE4tile@cta0[2]",
        "{v}"
    );
}

#[test]
fn inline_ptx_release_acquire_relaxed_and_atomic_add() {
    // st.release / ld.acquire at gpu scope order the data; relaxed ones do not; atom.add
    // never races with itself.
    expect_ptx_only(&one("asm-release-acquire.cu", &[]), false);
    let v = one("asm-relaxed-flag.cu", &[]);
    expect_ptx_only(&v, true);
    assert_eq!(v["races"][0]["location"], "data[0]", "{v}");
    expect_ptx_only(&one("asm-atomic-count.cu", &[]), false);
}

#[test]
fn two_dimensional_tile_from_the_bracketed_launch_comment() {
    // `//--blockDim=[2,2]`: a 2 x 2 block; the barrier orders the transpose, its absence races
    // (in both views: the language view reads `tile[y][x]`).
    let v = one("tile-transpose.cu", &[]);
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 2, 1]));
    assert_eq!(v["kernel"]["launch_from"], "file-comment");
    expect_both(&v, false);
    expect_both(&one("tile-transpose-nosync.cu", &[]), true);
    // --block X,Y,Z on the command line wins over the comment.
    let v = one(
        "tile-transpose.cu",
        &["--block", "2,2,1", "--grid", "1,1,1"],
    );
    assert_eq!(v["kernel"]["launch_from"], "command-line");
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 2, 1]));
    assert_eq!(v["kernel"]["grid"], serde_json::json!([1, 1, 1]));
}

/// The elements (`k` of `name[k]`, the number after the last `[`) a verdict's races are on.
fn raced_elements(verdict: &serde_json::Value) -> std::collections::BTreeSet<u32> {
    verdict["races"]
        .as_array()
        .unwrap_or_else(|| panic!("no races: {verdict}"))
        .iter()
        .map(|r| {
            let loc = r["location"].as_str().unwrap_or_default();
            let k = loc.rsplit_once('[').map_or("", |(_, k)| k);
            k.trim_end_matches(']')
                .parse()
                .unwrap_or_else(|_| panic!("not an element: {loc}"))
        })
        .collect()
}

/// Asserts both views race on exactly the elements `expected` (of the language view's
/// row-major array and of the PTX view's bytes alike: the layouts agree).
fn expect_raced(v: &serde_json::Value, expected: &[u32]) {
    expect_both(v, true);
    for m in v["verdicts"].as_array().into_iter().flatten() {
        let got: Vec<u32> = raced_elements(m).into_iter().collect();
        assert_eq!(got, expected, "{}: {}", m["model"], m["races"]);
    }
}

#[test]
fn two_dimensional_arrays_in_both_views() {
    // Reasoning in each file's header. The racy twins race on the elements a thread loads
    // and another stores, numbered row-major: tile[r][c] of the padded `float tile[4][5]` is
    // element 5r + c, and every off-diagonal element of its 4 x 4 part races (a diagonal one
    // is stored and loaded by the same thread).
    let buffers = ["--buffer", "16"];
    expect_both(&one("transpose-padded.cu", &buffers), false);
    expect_raced(
        &one("transpose-padded-nosync.cu", &buffers),
        &[1, 2, 3, 5, 7, 8, 10, 11, 13, 15, 16, 17],
    );
    // `int s[4][4]` with a halo: the four inner cells s[1][1], s[1][2], s[2][1], s[2][2] are
    // each stored by one thread and loaded by its neighbours; a halo cell is loaded only by
    // the thread that stored it.
    expect_both(&one("stencil-halo.cu", &[]), false);
    expect_raced(&one("stencil-halo-nosync.cu", &[]), &[5, 6, 9, 10]);
    // `__device__ int g[4][8]`: block 0 loads row 1's first four elements (8..11) as block 1
    // stores them, and block 1 row 0's (0..3).
    expect_both(&one("global-rows.cu", &[]), false);
    expect_raced(
        &one("global-rows-otherblock.cu", &[]),
        &[0, 1, 2, 3, 8, 9, 10, 11],
    );
    // A loop counter as the inner index: inside its row, no fault.
    expect_both(&one("row-sum.cu", &[]), false);
    // OpenCL C's `__local int t[2][2]`.
    expect_both(&one("local-transpose-2d.cl", &[]), false);
    expect_raced(&one("local-transpose-2d-nobarrier.cl", &[]), &[1, 2]);
    // `float tile[32][33]`, past the 64 elements of an allocation: a declared array may have
    // 4,096.
    expect_both(&one("tile-32x33.cu", &[]), false);
}

#[test]
fn a_host_two_dimensional_array_is_read_row_major() {
    // host-2d-array.cu's header: the asserts on h[i][j] after the round trip hold only for the
    // row-major layout (both views: the host code is the language view's in both).
    let v = one("host-2d-array.cu", &[]);
    expect_both(&v, false);
    for m in v["verdicts"].as_array().into_iter().flatten() {
        assert_eq!(m["result"], "Ok", "{}: {m}", m["model"]);
    }
}

#[test]
fn an_index_past_a_row_is_a_fault_at_its_line() {
    // row-sum-oob.cu: t[y][4] past a row of 4. The language view faults on the row bound in
    // thread (0, 0), where element 4 would still be inside the tile; the PTX view (bytes, no
    // rows) faults where the address leaves the tile, in row 1. Both at line 13.
    let lines = check_model("row-sum-oob.cu", "src11", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("row_sum.b0.t0 line 13") && e.contains("outside its array dimension"),
        "{e}"
    );
    assert_eq!(lines[0]["line"], 13);
    let lines = check_model("row-sum-oob.cu", "ptx", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(e.contains("out of bounds of"), "{e}");
    assert_eq!(lines[0]["line"], 13);
    // A constant index past a row (thread (1, y) stores t[y][2] of `int t[2][2]`) is the same
    // fault, at its line, when the thread runs it (not a refusal of the file).
    let lines = check_model("row-past-end.cu", "src11", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("shift.b0.t1 line 7") && e.contains("outside its array dimension"),
        "{e}"
    );
}

#[test]
fn unsupported_array_shapes_are_errors_at_their_column() {
    // Three dimensions, and a two-dimensional array used as a pointer (which C steps a row at
    // a time): the language view refuses them at the declaration / the use.
    let lines = check_model("array-3d.cu", "src11", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(e.contains("more than two dimensions"), "{e}");
    assert_eq!(
        (lines[0]["line"].clone(), lines[0]["column"].clone()),
        (5.into(), 20.into())
    );
    let lines = check_model("array-2d-as-pointer.cu", "src11", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("the two-dimensional array `g` used as a pointer"),
        "{e}"
    );
    assert_eq!(
        (lines[0]["line"].clone(), lines[0]["column"].clone()),
        (8.into(), 31.into())
    );
    // A parameter declared as a two-dimensional array (a pointer to rows): refused at it,
    // saying how to write it. One declared as a one-dimensional array is a pointer.
    let lines = check_model("array-param.cu", "src11", &[]);
    let e = lines[0]["error"].as_str().unwrap_or_default();
    assert!(e.contains("declare it `int *a`"), "{e}");
    assert_eq!(
        (lines[0]["line"].clone(), lines[0]["column"].clone()),
        (5.into(), 30.into())
    );
    expect_both(&one("array-param-1d.cu", &[]), false);
}

#[test]
fn warp_vote_and_syncwarp_handoff() {
    // A ballot moves predicates, not memory; __syncwarp orders lane 0's store before lane 1's
    // load, and without it they race.
    expect_both(&one("ballot-count.cu", &[]), false);
    expect_both(&one("syncwarp-handoff.cu", &[]), false);
    expect_both(&one("syncwarp-handoff-nosync.cu", &[]), true);
}

#[test]
fn float_accumulators_atomic_and_plain() {
    expect_both(&one("float-atomic-sum.cu", &[]), false);
    expect_both(&one("float-plain-sum.cu", &[]), true);
}

#[test]
fn grid_stride_histogram_atomic_and_plain_bins() {
    // Zero-filled input: every element lands in bins[0]; atomic adds do not race, plain
    // increments do.
    expect_both(&one("histogram-gridstride.cu", &[]), false);
    expect_both(&one("histogram-gridstride-plain.cu", &[]), true);
}

#[test]
fn last_block_ticket_through_atomic_ref_acq_rel_and_relaxed() {
    expect_both(&one("last-block-atomic-ref.cu", &[]), false);
    expect_both(&one("last-block-atomic-ref-relaxed.cu", &[]), true);
}

#[test]
fn dynamic_shared_memory_launch_bounds_ldg_and_cg_tiles() {
    expect_both(&one("dyn-smem-reverse.cu", &[]), false);
    expect_both(&one("cg-tile-shfl.cu", &[]), false);
}

#[test]
fn opencl_atomic_inc_and_plain_counter_from_a_global_size_comment() {
    // `//--global_size=4 --local_size=2`: 2 work-groups of 2.
    let v = one("atomic-inc-counter.cl", &[]);
    assert_eq!(v["kernel"]["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 1, 1]));
    expect_both(&v, false);
    expect_both(&one("plain-counter.cl", &[]), true);
}

#[test]
fn function_like_macros_from_the_command_line_in_both_views() {
    // The file's default INDEX: grid-wide, no race; --define 'INDEX(b,t)=(t)': both blocks
    // write a[t]; -U of the command line's macro: the default again.
    expect_both(&one("macro-index.cu", &[]), false);
    expect_both(
        &one("macro-index.cu", &["--define", "INDEX(b,t)=(t)"]),
        true,
    );
    expect_both(
        &one(
            "macro-index.cu",
            &["-D", "INDEX(b,t)=(t)", "--undefine", "INDEX"],
        ),
        false,
    );
    // The long form of -I.
    let inc = include_dir();
    expect_both(
        &one("with-header.cu", &["--include-dir", &inc, "-DITEMS=4"]),
        false,
    );
}

#[test]
fn look_back_chain_with_and_without_fences() {
    // Both views: the fences on both sides of the flag order sums[0] (no race); without them
    // the flag orders nothing and block 1's load of sums[0] races with block 0's store (the
    // files' headers). In the PTX view the await loop's address, `&flag[b - 1]`, goes through
    // the lowering's scratch register for `mul.wide`, which every `mul.wide` writes; it is
    // folded through the one write that reaches it (crates/ptx/src/fold.rs), so the loop is
    // an await explored by its exiting iteration, not cut at --unroll: complete and
    // terminating in both views.
    expect_both(&one("lookback-flags.cu", &[]), false);
    expect_both(&one("lookback-flags-nofence.cu", &[]), true);
}

/// `check --json ARGS FILE` (no `--model`): one JSON value per line.
fn check_plain(file: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json"])
        .args(args)
        .arg(&path)
        .output()
        .expect("run scopecheck");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn a_race_the_optimizer_removes_is_found_in_the_unoptimized_compile() {
    // dead-store-template.cu: a template, so the PTX view alone checks it (the default
    // model). NVRTC's optimized code keeps only the out stores (no race there); its -G
    // compile keeps both threads' stores to `tmp` at line 11, which race.
    let lines = check_plain("dead-store-template.cu", &["--kernel", "scratch<7>"]);
    let v = &lines[0];
    assert_eq!(v["model"], "ptx", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["racy"], true, "{v}");
    let race = &v["races"][0];
    assert_eq!(race["first"]["line"], 11, "{race}");
    assert_eq!(race["second"]["line"], 11, "{race}");
    assert_eq!(v["compilation"]["optimized"], true, "{v}");
    let u = &v["unoptimized"];
    assert_eq!(u["compilation"]["optimized"], false, "{u}");
    assert!(
        u["compilation"]["options"]
            .as_array()
            .is_some_and(|o| o.iter().any(|x| x == "-G")),
        "{u}"
    );
    assert_eq!(u["removed"][0]["lines"], serde_json::json!([11]), "{u}");
    assert_eq!(u["races_added"], 1, "{u}");
    assert_eq!(u["complete"], true, "{u}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("optimizer removed memory accesses"),
        "{}",
        v["warnings"]
    );
    // dead-shared.cu under --model ptx alone: no language view, so the same check; with
    // --model both the language view reports the race and the PTX verdict keeps to NVRTC's
    // optimized code (no `unoptimized` object).
    let v = &check_plain("dead-shared.cu", &["--model", "ptx"])[0];
    assert_eq!(v["racy"], true, "{v}");
    assert_eq!(v["unoptimized"]["races_added"], 1, "{v}");
    let v = one("dead-shared.cu", &[]);
    assert!(v["verdicts"][1]["unoptimized"].is_null(), "{v}");
    // A kernel whose optimized code keeps every access gets no unoptimized check.
    let v = &check_plain("counter-plain.cu", &["--model", "ptx"])[0];
    assert!(v["unoptimized"].is_null(), "{v}");
}

#[test]
fn every_ptx_verdict_names_its_compilation() {
    // JSON: the PTX verdict's `compilation`, with the user's options and not nvcc's macros.
    let inc = include_dir();
    let v = one(
        "with-header.cu",
        &["-I", &inc, "-DITEMS=4", "--arch", "sm_80"],
    );
    let c = &v["verdicts"][1]["compilation"];
    assert_eq!(v["verdicts"][1]["model"], "ptx");
    assert_eq!(c["compiler"], "NVRTC", "{c}");
    assert_eq!(c["version"], "12.9", "{c}");
    assert_eq!(c["arch"], "compute_80", "{c}");
    assert_eq!(c["optimized"], true, "{c}");
    let options: Vec<String> = c["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap_or_default().to_string())
        .collect();
    assert!(options.contains(&"-DITEMS=4".to_string()), "{options:?}");
    assert!(options.contains(&format!("-I{inc}")), "{options:?}");
    assert!(options.contains(&"--gpu-architecture=compute_80".to_string()));
    assert!(
        !options.iter().any(|o| o.starts_with("-D__linux__")),
        "{options:?}"
    );
    // The language view's verdict has none.
    assert!(v["verdicts"][0]["compilation"].is_null());
    // Text: a Compilation line before the PTX verdict.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/counter-atomic.cu");
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--model", "ptx"])
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Compilation NVRTC 12.9, --gpu-architecture=compute_90 -lineinfo -std=c++17 (optimized, NVRTC's default)"),
        "{text}"
    );
    // SARIF: each result of the PTX verdict carries it.
    let dir = std::env::temp_dir().join(format!("scopecheck-compilation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log.sarif");
    let racy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/counter-plain.cu");
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--model", "both", "--sarif"])
        .arg(&log)
        .arg(&racy)
        .output()
        .expect("run scopecheck");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).expect("the log")).expect("JSON");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let by_ptx: Vec<_> = results
        .iter()
        .filter(|r| r["properties"]["models"].to_string().contains("ptx"))
        .collect();
    assert!(!by_ptx.is_empty(), "{sarif}");
    for r in by_ptx {
        assert_eq!(r["properties"]["compilation"]["compiler"], "NVRTC", "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `check --json --model ptx ARGS FILE`: the PTX view's verdict alone.
fn ptx(file: &str, args: &[&str]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernels")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(["check", "--json", "--model", "ptx"])
        .args(args)
        .arg(&path)
        .output()
        .expect("run scopecheck");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{file}: not JSON: {text}: {e}"))
}

/// Threads that share no written location with another cost their own steps only (the
/// searches ask which locations a thread may still write from where it stands: docs/explore.md,
/// "What a thread may still write"), so warp- and block-sized launches of such kernels are
/// checked as asked, in both views, under the default bounds.
#[test]
fn warp_and_block_sized_launches_of_threads_that_share_little_are_checked_as_asked() {
    // Thread i of the grid handles elements i, i + stride, ... below 64: no element has two
    // threads, so no read has a second source and there is one execution; two warps, then one
    // block of 256 (192 of its threads find no element below n and end).
    for (grid, block) in [("2", "32"), ("1", "256")] {
        let args = [
            "--grid", grid, "--block", block, "--buffer", "64", "--arg", "n=64",
        ];
        let v = one("extern-c-gridstride.cu", &args);
        assert_eq!(v["kernel"]["reduced"], false, "{}", v["kernel"]);
        expect_both(&v, false);
        for m in v["verdicts"].as_array().expect("verdicts") {
            assert_eq!(m["executions"], 1, "{}: {m}", m["model"]);
        }
    }
    // The threads share one word, `count`, and only through atomicAdds whose results nobody
    // reads: their orders are explored once (commuting atomics), so 64 threads cost little.
    // Every element is doubled once and counted once: one final state, count[0] = 64.
    let v = one("gridstride-count.cu", &["--grid", "2", "--block", "32"]);
    assert_eq!(v["kernel"]["reduced"], false, "{}", v["kernel"]);
    expect_both(&v, false);
    for m in v["verdicts"].as_array().expect("verdicts") {
        let states = m["states"].as_array().expect("states");
        assert_eq!(states.len(), 1, "{}: {m}", m["model"]);
        assert_eq!(states[0]["values"]["count[0]"], 64, "{}", m["model"]);
    }
    // A shared-memory tile whose slots other threads read after the barrier: every thread
    // shares, but the barrier orders each store before each load, so both views still finish
    // at two warps when the bound is raised to cover them.
    let v = one(
        "shared-tile.cu",
        &["--grid", "2", "--block", "32", "--max-shared-threads", "64"],
    );
    assert_eq!(v["kernel"]["reduced"], false, "{}", v["kernel"]);
    expect_both(&v, false);
}

/// A launch whose threads share written locations past `--max-shared-threads` (default 8) is
/// checked smaller, and the report and JSON say so (the launch asked, the threads that share).
#[test]
fn a_launch_past_the_shared_thread_bound_is_shrunk_and_said_so() {
    // Every thread of a block reads the slot its neighbour writes, with no barrier between:
    // all 64 threads share. Scaled to 8 of 64: blocks stay two, threads per block halve to 4.
    // Racy at any launch of more than one thread per block.
    let v = one(
        "shared-tile-nobarrier.cu",
        &["--grid", "2", "--block", "32"],
    );
    let k = &v["kernel"];
    assert_eq!(k["reduced"], true, "{k}");
    assert_eq!(k["shared_threads"], 64, "{k}");
    assert_eq!(k["asked_block"], serde_json::json!([32, 1, 1]));
    assert_eq!(k["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(k["block"], serde_json::json!([4, 1, 1]));
    assert!(
        v["warnings"].to_string().contains("--max-shared-threads"),
        "{}",
        v["warnings"]
    );
    expect_both(&v, true);
    // The plain `+=` twin of gridstride-count.cu: every thread shares `count`; at a bound of
    // 4, 2 blocks of 2. Racy, and four final counts (1 to 4: updates lost).
    let v = one(
        "gridstride-count-plain.cu",
        &["--grid", "2", "--block", "32", "--max-shared-threads", "4"],
    );
    assert_eq!(v["kernel"]["block"], serde_json::json!([2, 1, 1]), "{v}");
    expect_both(&v, true);
    for m in v["verdicts"].as_array().expect("verdicts") {
        assert_eq!(m["states"].as_array().map(Vec::len), Some(4), "{m}");
    }
}

/// The hole search (with what threads may still write computed from where they stand, and
/// commuting atomics located through pointers) against the candidate enumerator, which
/// guesses every value and every reads-from: the same states, counts, races and completeness
/// on small launches of the kernel files.
#[test]
fn the_hole_search_matches_the_candidate_enumerator_on_small_launches() {
    let cases: [(&str, &[&str]); 10] = [
        ("extern-c-gridstride.cu", &["--buffer", "8", "--arg", "n=8"]),
        ("extern-c-gridstride-overlap.cu", &[]),
        ("gridstride-count.cu", &[]),
        ("gridstride-count-plain.cu", &[]),
        ("counter-plain.cu", &[]),
        ("counter-atomic.cu", &[]),
        ("shared-tile.cu", &[]),
        ("last-block.cu", &[]),
        ("inline-ptx-fence.cu", &[]),
        ("local-reverse.cl", &[]),
    ];
    let key = |v: &serde_json::Value| {
        (
            v["states"].clone(),
            v["executions"].clone(),
            v["positive"].clone(),
            v["negative"].clone(),
            v["racy"].clone(),
            v["races"].as_array().map(Vec::len),
            v["complete"].clone(),
        )
    };
    for (file, args) in cases {
        let holes = ptx(file, args);
        assert_eq!(holes["complete"], true, "{file}: {holes}");
        let mut with = args.to_vec();
        with.extend(["--engine", "candidates"]);
        assert_eq!(key(&holes), key(&ptx(file, &with)), "{file}");
        // Commuting atomics located through the kernel's pointers, against none.
        with.truncate(args.len());
        with.extend(["--commute", "off"]);
        assert_eq!(key(&holes), key(&ptx(file, &with)), "{file} --commute off");
    }
}
