//! `scopecheck bench`: how fast tests are checked. Every test is parsed once, then checked
//! repeatedly on this one thread; the report gives each test's median time and the totals.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use crate::inputs;
use crate::options::CheckFlags;
use crate::output::{errln, outln};
use crate::pipeline::check_guarded;
use crate::render::Render;

/// Default least number of checks of each test.
pub const DEFAULT_ITERS: u32 = 5;

/// Each test is checked again until this much time has been spent on it (and at least
/// `--iters` times).
pub const MIN_TIME_PER_TEST: Duration = Duration::from_millis(200);

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    flags: CheckFlags,
    /// Check each test at least this many times (and for at least 0.2 s).
    #[arg(long, value_name = "K", default_value_t = DEFAULT_ITERS)]
    iters: u32,
    #[command(flatten)]
    input: inputs::InputFlags,
    /// Test files, or directories to search recursively for them (as `check` does).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// One test's measurements.
struct Sample {
    file: String,
    median: Duration,
    checks: u64,
    executions_per_check: u128,
}

/// The family of a benchmark file: its directory's name and the part of its name before the
/// first `+` (`ptx/CasLock+N5.litmus`: `ptx/CasLock`), so that a run over tests/bench reports
/// each family (locks, counters, message passing, SC rings, histograms) in one line.
fn family(file: &str) -> String {
    let path = std::path::Path::new(file);
    let stem = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(file)
        .split(['+', '.'])
        .next()
        .unwrap_or(file);
    match path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|d| d.to_str())
    {
        Some(dir) => format!("{dir}/{stem}"),
        None => stem.to_string(),
    }
}

/// Prints, per family in order of first appearance, its tests, the sum of their median times
/// and of their executions.
fn print_families(samples: &[Sample]) {
    let mut families: Vec<(String, usize, Duration, u128)> = Vec::new();
    for s in samples {
        let f = family(&s.file);
        match families.iter_mut().find(|x| x.0 == f) {
            Some(x) => {
                x.1 += 1;
                x.2 += s.median;
                x.3 = x.3.saturating_add(s.executions_per_check);
            }
            None => families.push((f, 1, s.median, s.executions_per_check)),
        }
    }
    outln!();
    outln!(
        "{:>6} {:>14} {:>22}  family",
        "tests",
        "sum median ms",
        "executions"
    );
    for (f, n, t, e) in families {
        outln!("{n:>6} {:>14.3} {e:>22}  {f}", ms(t));
    }
}

/// Runs `bench`; returns whether every file was parsed and checked.
pub fn run(mut args: BenchArgs) -> bool {
    args.input.apply(&mut args.flags);
    let args = &args;
    if let Err(e) = args.flags.platform() {
        errln!("error: {e}");
        std::process::exit(2);
    }
    let opts = args.flags.check_options();
    let mut all_checked = true;
    let mut parsed = Vec::new();
    let harness = args.flags.cuda_options().harness;
    for input in inputs::collect(&args.paths, harness.as_deref()) {
        let read = crate::render::guarded(&input.file, || {
            scopecheck_frontend::load(
                &input,
                &scopecheck_frontend::Options {
                    cuda: args.flags.cuda_options(),
                    max_file_size: args.flags.max_file_size,
                    ..Default::default()
                },
            )
            .and_then(|l| l.read(&input.file))
        });
        match read.map(|l| (l.source, l.program)) {
            Ok((source, program)) => parsed.push((input.file, source, program)),
            Err(f) => {
                f.eprint();
                all_checked = false;
            }
        }
    }

    let mut samples = Vec::new();
    let (mut total_checks, mut total_executions, mut total_time) = (0u64, 0u128, Duration::ZERO);
    outln!(
        "{:>12} {:>8} {:>12} {:>12} {:>8}  test",
        "median ms",
        "checks",
        "executions",
        "exec/s",
        "result"
    );
    // One thread, as the figures say: the search hands no subtrees to other threads.
    let mut measure = || {
        'tests: for (file, source, program) in &parsed {
            let mut times = Vec::new();
            let mut executions = 0;
            let mut result = "";
            let mut spent = Duration::ZERO;
            while times.len() < args.iters as usize || spent < MIN_TIME_PER_TEST {
                let start = Instant::now();
                let verdict = match check_guarded(file, source, program, &opts) {
                    Ok(v) => v,
                    Err(f) => {
                        f.eprint();
                        all_checked = false;
                        continue 'tests;
                    }
                };
                let time = start.elapsed();
                spent += time;
                times.push(time);
                executions = verdict.executions;
                result = match verdict.outcome {
                    scopecheck_model::Outcome::Ok => "Ok",
                    scopecheck_model::Outcome::No => "No",
                    scopecheck_model::Outcome::Unknown => "Unknown",
                };
            }
            times.sort();
            let sample = Sample {
                file: file.clone(),
                median: times[times.len() / 2],
                checks: times.len() as u64,
                executions_per_check: executions,
            };
            let rate = sample.executions_per_check as f64 / sample.median.as_secs_f64().max(1e-9);
            outln!(
                "{:>12.3} {:>8} {:>12} {:>12.0} {:>8}  {}",
                ms(sample.median),
                sample.checks,
                sample.executions_per_check,
                rate,
                result,
                sample.file
            );
            total_checks += sample.checks;
            total_executions +=
                u128::from(sample.checks).saturating_mul(sample.executions_per_check);
            total_time += spent;
            samples.push(sample);
        }
    };
    match rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .stack_size(scopecheck_frontend::WORKER_STACK)
        .build()
    {
        Ok(pool) => pool.install(measure),
        Err(_) => measure(),
    }

    print_families(&samples);
    let mut medians: Vec<Duration> = samples.iter().map(|s| s.median).collect();
    medians.sort();
    let secs = total_time.as_secs_f64().max(f64::MIN_POSITIVE);
    outln!();
    outln!(
        "tests {}  checks {total_checks}  time {:.3} s",
        samples.len(),
        total_time.as_secs_f64()
    );
    outln!("tests/second {:.1}", total_checks as f64 / secs);
    outln!("executions/second {:.1}", total_executions as f64 / secs);
    outln!(
        "median per-test ms {:.3}",
        percentile(&medians, 50).map_or(0.0, ms)
    );
    outln!(
        "p90 per-test ms {:.3}",
        percentile(&medians, 90).map_or(0.0, ms)
    );
    all_checked
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The nearest-rank `p`-th percentile of sorted durations.
fn percentile(sorted: &[Duration], p: usize) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_directory_and_name_before_the_plus() {
        assert_eq!(family("tests/bench/ptx/CasLock+N5.litmus"), "ptx/CasLock");
        assert_eq!(family("c/Counters+4x10.litmus"), "c/Counters");
        assert_eq!(family("Plain.litmus"), "Plain");
    }

    #[test]
    fn nearest_rank_percentiles() {
        let d: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
        assert_eq!(percentile(&d, 50), Some(Duration::from_millis(5)));
        assert_eq!(percentile(&d, 90), Some(Duration::from_millis(9)));
        assert_eq!(percentile(&d[..1], 90), Some(Duration::from_millis(1)));
        assert_eq!(percentile(&[], 50), None);
    }
}
