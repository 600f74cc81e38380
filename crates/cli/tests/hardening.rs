//! `scopecheck check` against hostile inputs (symlink cycles, files with several names, FIFOs,
//! devices, huge files, bytes that are not UTF-8, bad numbers) and as a CI gate (`--fail-on`,
//! `--shard`, `--jobs`). Every run has a deadline: a hang is a failure, not a stuck test suite.

use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

mod bounded_run;
use bounded_run::{run_within, Run};

fn run(args: &[&str]) -> Run {
    run_within(Duration::from_secs(60), args)
}

/// The `file` of each NDJSON line.
fn files(r: &Run) -> Vec<String> {
    r.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}"));
            v["file"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hardening")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// Text no litmus parser accepts: each file gives one error line naming it, quickly.
const GARBAGE: &str = "this is not a litmus test\n";

/// Makes a FIFO, or says why not (the test is then skipped).
fn mkfifo(path: &Path) -> Result<(), String> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo reads nothing else.
    match unsafe { libc::mkfifo(c.as_ptr(), 0o600) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error().to_string()),
    }
}

#[test]
fn symlink_cycles_end_and_each_file_is_reported_once() {
    let dir = scratch("cycle");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("a.litmus"), GARBAGE).unwrap();
    std::fs::write(dir.join("sub/b.litmus"), GARBAGE).unwrap();
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, dir.join(at)).unwrap();
    link("..", "sub/up"); // back to the top: a cycle
    link(".", "sub/here"); // a cycle of one
    link("../a.litmus", "sub/alias.litmus"); // a second name of a.litmus
    link("sub", "same-sub"); // a second name of sub
    let r = run_within(Duration::from_secs(20), &["check", "--json", s(&dir)]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let d = dir.display();
    assert_eq!(
        files(&r),
        [format!("{d}/a.litmus"), format!("{d}/same-sub/b.litmus")],
        "sorted, depth first: same-sub comes before sub"
    );
}

#[test]
fn a_file_named_twice_is_checked_once() {
    let dir = scratch("twice");
    let a = dir.join("a.litmus");
    std::fs::write(&a, GARBAGE).unwrap();
    std::os::unix::fs::symlink(&a, dir.join("link.litmus")).unwrap();
    std::fs::hard_link(&a, dir.join("hard.litmus")).unwrap();
    let dotted = format!("{}/./a.litmus", dir.display());
    let r = run(&[
        "check",
        "--json",
        s(&a),
        &dotted,
        s(&dir.join("link.litmus")),
        s(&dir),
        s(&dir),
    ]);
    assert_eq!(files(&r), [a.display().to_string()], "{}", r.stdout);
}

#[test]
fn a_fifo_in_a_directory_is_skipped_with_a_warning_and_named_is_an_error() {
    let dir = scratch("fifo");
    std::fs::write(dir.join("a.litmus"), GARBAGE).unwrap();
    let fifo = dir.join("pipe.litmus");
    if let Err(e) = mkfifo(&fifo) {
        eprintln!("skipped: cannot make a FIFO here: {e}");
        return;
    }
    let r = run_within(Duration::from_secs(20), &["check", "--json", s(&dir)]);
    assert_eq!(files(&r), [format!("{}/a.litmus", dir.display())]);
    assert!(
        r.stderr.contains("warning: skipping") && r.stderr.contains("pipe.litmus: a FIFO"),
        "{}",
        r.stderr
    );
    let r = run_within(Duration::from_secs(20), &["check", s(&fifo)]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("pipe.litmus") && r.stderr.contains("FIFO"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_device_named_directly_is_an_error_at_once() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let start = Instant::now();
    let r = run_within(Duration::from_secs(20), &["check", "--json", "/dev/zero"]);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(r.code, Some(1));
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["file"], "/dev/zero");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("a character device, and only regular files are read"),
        "{v}"
    );
}

#[test]
fn files_over_the_size_limit_are_errors() {
    let dir = scratch("size");
    let small = dir.join("small.litmus");
    std::fs::write(&small, vec![b' '; 2000]).unwrap();
    let r = run(&["check", "--json", "--max-file-size", "1K", s(&small)]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout
            .contains("2000 bytes, more than the limit of 1 KiB (--max-file-size"),
        "{}",
        r.stdout
    );
    // The default limit is 16 MiB (a sparse file: no disk is used).
    let big = dir.join("big.litmus");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    let r = run(&["check", "--json", s(&big)]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("the limit of 16 MiB"), "{}", r.stdout);
    // Raised, the file is read (and is no test).
    let r = run(&["check", "--json", "--max-file-size", "32M", s(&big)]);
    assert!(!r.stdout.contains("limit"), "{}", r.stdout);
    for bad in ["0", "12T", "lots"] {
        assert_eq!(
            run(&["check", "--max-file-size", bad, s(&small)]).code,
            Some(2)
        );
    }
}

#[test]
fn bytes_that_are_not_utf8_are_located() {
    let dir = scratch("utf8");
    let f = dir.join("latin1.litmus");
    std::fs::write(&f, b"PTX x\n// caf\xe9\n").unwrap();
    let r = run(&["check", "--json", s(&f)]);
    assert_eq!(r.code, Some(1));
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        v["error"],
        "not UTF-8 text: invalid byte 0xE9 at byte offset 12 (line 2, column 7)"
    );
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(2), Some(7))
    );
    let r = run(&["check", s(&f)]);
    assert!(
        r.stderr.contains("byte offset 12") && r.stderr.contains("latin1.litmus:2:7"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_numbers_are_usage_errors() {
    let file = repo("tests/litmus/ptx/Atom+add.gpus.litmus");
    for args in [
        ["--resident-blocks", "0"],
        ["--max-executions", "0"],
        ["--timeout", "0s"],
        ["--max-threads", "0"],
        ["--jobs", "0"],
        ["--shard", "0/2"],
        ["--shard", "3/2"],
        ["--shard", "1/0"],
        ["--shard", "1"],
        ["--fail-on", "everything"],
        ["--fail-on", "none,races"],
    ] {
        let r = run(&["check", args[0], args[1], &file]);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(args[0]), "{args:?}: {}", r.stderr);
    }
    // No backward branch taken is a bound, not a mistake.
    assert_eq!(run(&["check", "--unroll", "0", &file]).code, Some(0));
}

#[test]
fn fail_on_maps_findings_to_status_3() {
    let passing = repo("tests/litmus/ptx/Atom+add.gpus.litmus");
    let failing = repo("tests/litmus/ptx/S+relaxed.gpus.litmus");
    let hanging = repo("tests/litmus/ptx/Await+never-written.litmus");
    let racy = repo("examples/ptx/MP+fence.sc.cta.litmus");
    let code = |args: &[&str]| {
        let mut all = vec!["check", "--json"];
        all.extend_from_slice(args);
        let r = run(&all);
        assert!(
            r.stderr.is_empty(),
            "JSON mode keeps stderr quiet: {}",
            r.stderr
        );
        r.code
    };
    // Without the flag, verdicts are results, not errors.
    assert_eq!(code(&[&failing, &hanging, &racy]), Some(0));
    assert_eq!(code(&["--fail-on", "all", &passing]), Some(0));
    assert_eq!(code(&["--fail-on", "failures", &failing]), Some(3));
    assert_eq!(code(&["--fail-on", "races,hangs", &failing]), Some(0));
    assert_eq!(code(&["--fail-on", "hangs", &hanging]), Some(3));
    assert_eq!(code(&["--fail-on", "failures", &hanging]), Some(0));
    assert_eq!(code(&["--fail-on", "races", &racy]), Some(3));
    assert_eq!(code(&["--fail-on", "lints", &racy]), Some(3));
    assert_eq!(code(&["--fail-on", "none", &failing, &racy]), Some(0));
    // An input error wins over findings.
    assert_eq!(
        code(&["--fail-on", "all", &failing, "no/such/file.litmus"]),
        Some(1)
    );
    // Unknown is inconclusive: 4, unless a finding was made too (the cut leaves the racy
    // example Unknown as well, but its lints are found all the same). The two adds are
    // explored in both orders (`--commute off`: in one, the search would finish at the
    // first leaf, which stands for both).
    let unknown = repo("tests/litmus/ptx/Atom+add.gpus.litmus");
    let cut = |fail_on: &str, files: &[&str]| {
        let mut args = vec![
            "--max-executions",
            "1",
            "--commute",
            "off",
            "--fail-on",
            fail_on,
        ];
        args.extend_from_slice(files);
        code(&args)
    };
    let r = run(&[
        "check",
        "--json",
        "--max-executions",
        "1",
        "--commute",
        "off",
        &unknown,
    ]);
    assert!(r.stdout.contains("\"result\":\"Unknown\""), "{}", r.stdout);
    assert_eq!(cut("unknown", &[&unknown]), Some(4));
    assert_eq!(cut("failures", &[&unknown]), Some(0));
    assert_eq!(cut("unknown,lints", &[&unknown, &racy]), Some(3));
    // Text mode says which files fail the run, on stderr.
    let r = run(&[
        "check",
        "--fail-on",
        "failures,races,hangs",
        &failing,
        &racy,
    ]);
    assert_eq!(r.code, Some(3));
    assert!(
        r.stderr.contains(&format!("finding: {failing}: failures"))
            && r.stderr.contains(&format!("finding: {racy}: races")),
        "{}",
        r.stderr
    );
}

#[test]
fn shards_partition_the_files() {
    let dir = scratch("shards");
    for i in 0..11 {
        std::fs::write(dir.join(format!("t{i:02}.litmus")), GARBAGE).unwrap();
    }
    let all = files(&run(&["check", "--json", s(&dir)]));
    assert_eq!(all.len(), 11);
    let mut union = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let mine = files(&run(&["check", "--json", "--shard", &shard, s(&dir)]));
        let expected: Vec<String> = all.iter().skip(i - 1).step_by(3).cloned().collect();
        assert_eq!(mine, expected, "shard {shard}");
        union.extend(mine);
    }
    union.sort();
    assert_eq!(union, all, "disjoint, and together every file");
    // More shards than files: the extra ones check nothing, successfully.
    let r = run(&["check", "--json", "--shard", "12/12", s(&dir)]);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), ""));
}

#[test]
fn jobs_do_not_change_the_output() {
    let dir = repo("tests/litmus/ptx");
    // Times differ from run to run; everything else must not.
    let without_times = |r: Run| -> Vec<serde_json::Value> {
        r.stdout
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                if let Some(m) = v.as_object_mut() {
                    m.remove("time_ms");
                }
                v
            })
            .collect()
    };
    let one = without_times(run(&["check", "--json", "--jobs", "1", &dir]));
    let four = without_times(run(&["check", "--json", "--jobs", "4", &dir]));
    assert!(one.len() > 100);
    assert!(one == four, "--jobs 4 differs from --jobs 1");
    let text = |jobs: &str| {
        let r = run(&["check", "--jobs", jobs, &dir]);
        r.stdout
            .lines()
            .filter(|l| !l.starts_with("Time "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(text("1") == text("3"), "text mode differs");
}

/// A directory's `.ptx` files are tests when `--harness` names the harness that launches their
/// kernels (which is then no test itself); without one they are skipped with a warning.
#[test]
fn a_directory_search_takes_ptx_files_with_a_harness() {
    let dir = repo("tests/ptx-modules");
    let harness = repo("tests/ptx-modules/mp-harness.cu");
    let r = run(&["check", "--json", "--harness", &harness, &dir]);
    assert_eq!(
        files(&r),
        [format!("{dir}/mp-relaxed.ptx"), format!("{dir}/mp.ptx")],
        "{}",
        r.stderr
    );
    let r = run(&["check", "--json", &dir]);
    assert!(
        r.stderr
            .contains("mp.ptx: a .ptx file is checked only with --harness"),
        "{}",
        r.stderr
    );
    // The harness alone is no test of its own kernels' code: an error, said once.
    assert_eq!(files(&r), [format!("{dir}/mp-harness.cu")], "{}", r.stdout);
}
