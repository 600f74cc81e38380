//! `scopecheck run`: runs each litmus test on the GPU under stress and compares every observed
//! final state with the states the model allows.
//!
//! A state the model forbids is reported loudly as a model/hardware disagreement, with the
//! hardware threads that ran the instance; the states satisfying the test's condition (the weak
//! outcome a test is usually written to catch) are reported with their count and rate.

use crate::render::Render;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use clap::Args;
use scopecheck_gpu::compare::{compare, state_text, Comparison, StateTable};
use scopecheck_gpu::driver::Device;
use scopecheck_gpu::host::DEFAULT_HOST_WORKERS;
use scopecheck_gpu::layout::{
    DEFAULT_BLOCK_THREADS, DEFAULT_LOOP_CAP, DEFAULT_PER_LINE, DEFAULT_STRESS_WARPS,
};
use scopecheck_gpu::runner::{
    self, RunOptions, RunResult, Stop, DEFAULT_BATCH, DEFAULT_PRE_ITERS, DEFAULT_STRESS_ITERS,
};
use scopecheck_gpu::{generate, GenOptions, RunError};
use scopecheck_ir::{Placement, Program};
use scopecheck_model::{Platform, Verdict};
use serde_json::{json, Value};

use crate::inputs;
use crate::options::{duration as parse_duration, CheckFlags, OnOff};
use crate::output::{errln, out, outln};
use crate::pipeline::check_guarded;
use crate::supervise::{self, Mode, Note};
use scopecheck_frontend::{Input, Loaded};

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    check: CheckFlags,
    /// How long to run each test (e.g. 10s, 500ms, 2m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    time: Duration,
    /// Stop each test after this many instances (whichever of this and --time comes first).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    instances: Option<u64>,
    /// Spare warps stressing scratch memory, and pre-stress by the test threads.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    stress: OnOff,
    /// Print one JSON object per file (the `check` fields plus what the GPU observed).
    #[arg(long)]
    json: bool,
    /// Print the generated PTX of each test instead of running it (needs no GPU).
    #[arg(long)]
    emit_ptx: bool,
    /// The GPU to run on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
    /// Blocks per launch (default: as many as the GPU holds at once).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    blocks: Option<u32>,
    /// Threads per block for tests without barriers (a power of two).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BLOCK_THREADS)]
    block_threads: u32,
    /// Warps of each block that stress memory instead of running roles.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STRESS_WARPS)]
    stress_warps: u32,
    /// Rounds of scratch traffic of each stress thread per launch.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STRESS_ITERS)]
    stress_iters: u32,
    /// Rounds of scratch traffic of each test thread before it starts its role.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PRE_ITERS)]
    pre_iters: u32,
    /// Instances whose copies of a location share one 128-byte line (power of two, 1 to 32).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PER_LINE)]
    per_line: u32,
    /// How often one backward branch may be taken on the GPU before the instance is cut.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LOOP_CAP)]
    loop_cap: u32,
    /// Time budget of one launch; a launch that exceeds it stops the run.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    launch_budget: Duration,
    /// Launches queued between checks of the stop flag and the anomaly records.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH)]
    batch: u32,
    /// CPU threads per `@host` thread of the test; each takes its share of every launch's
    /// instances.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_HOST_WORKERS,
          value_parser = clap::value_parser!(u32).range(1..))]
    host_workers: u32,
    /// Run the test's mutants instead of the test: every single weakening (a fence dropped, an
    /// order weakened, a scope narrowed, an RMW split) that the model says can end in a state
    /// the test forbids, each for --time; report which ones the hardware killed (showed such a
    /// state) and the mutation score, killed / killable.
    #[arg(long)]
    mutants: bool,
    /// With --mutants: share each mutant's --time between rounds over several stress and
    /// line-sharing configurations (short rounds first), stopping at the first kill.
    #[arg(long, requires = "mutants")]
    portfolio: bool,
    /// Seed of the thread randomisation.
    #[arg(long, value_name = "N", default_value_t = RunOptions::default().seed)]
    seed: u64,
    #[command(flatten)]
    input: inputs::InputFlags,
    /// Test files, or directories to search recursively for them (as `check` does).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// Set by Ctrl-C; the runner finishes the batch in flight and reports what it has.
fn stop_flag() -> &'static AtomicBool {
    static STOP: OnceLock<AtomicBool> = OnceLock::new();
    STOP.get_or_init(|| {
        // A second handler cannot be installed; then Ctrl-C keeps its default (ends the process).
        let _ = ctrlc::set_handler(|| {
            if let Some(s) = STOP.get() {
                s.store(true, Ordering::Relaxed);
            }
        });
        AtomicBool::new(false)
    })
}

impl RunArgs {
    fn gen_options(&self) -> GenOptions {
        GenOptions {
            block_threads: self.block_threads,
            stress_warps: if self.stress == OnOff::On {
                self.stress_warps
            } else {
                0
            },
            per_line: self.per_line,
            loop_cap: self.loop_cap,
        }
    }

    fn run_options(&self) -> RunOptions {
        let on = self.stress == OnOff::On;
        RunOptions {
            time: self.time,
            max_instances: self.instances,
            blocks: self.blocks,
            stress_iters: if on { self.stress_iters } else { 0 },
            pre_iters: if on { self.pre_iters } else { 0 },
            launch_budget: self.launch_budget,
            batch: self.batch,
            seed: self.seed,
            host_workers: self.host_workers,
            ..RunOptions::default()
        }
    }
}

/// Runs `run`; returns whether every file ran and no forbidden state was observed.
pub fn run(mut args: RunArgs) -> bool {
    args.input.apply(&mut args.check);
    let args = &args;
    let harness = args.check.cuda_options().harness;
    let inputs = inputs::collect(&args.paths, harness.as_deref());
    let gen = args.gen_options();
    if args.emit_ptx {
        let mut ok = true;
        for input in &inputs {
            match crate::render::guarded(&input.file, || load(args, input))
                .map(|l| generate(&l.program, &gen))
            {
                Ok(Ok(k)) => out!("{}", k.ptx),
                Ok(Err(e)) => {
                    errln!("{}: {e}", input.file);
                    ok = false;
                }
                Err(f) => {
                    f.eprint();
                    ok = false;
                }
            }
        }
        return ok;
    }
    let stop = stop_flag();
    match supervise::mode() {
        Mode::Child(from) => run_files(args, &inputs, from),
        // Without a driver there is nothing a child could survive; the in-process path says
        // why for every file.
        Mode::Supervisor if scopecheck_gpu::driver::probe().is_ok() => {
            let deadline = supervise::gpu_deadline(args.time, args.launch_budget, args.batch);
            let report = |l: &supervise::Lost| report_lost(args.json, l);
            let s = supervise::supervise(&inputs, deadline, stop, &report, &supervise::spawn_self);
            print_score(args, &inputs, s.killable, s.killed);
            s.all_good
        }
        _ => run_files(args, &inputs, 0),
    }
}

/// Runs `inputs[from..]` in this process; in a child, ends the process after a hang or a driver
/// error, for the supervisor to go on in a fresh one.
fn run_files(args: &RunArgs, inputs: &[Input], from: usize) -> bool {
    let gen = args.gen_options();
    let child = matches!(supervise::mode(), Mode::Child(_));
    let device = match Device::open(args.device) {
        Ok(d) => d,
        Err(e) => {
            refuse_all(
                args,
                &inputs[from..],
                &format!("cannot run on the GPU: {e}"),
            );
            return false;
        }
    };
    let stop = stop_flag();
    let mut opts = args.check.check_options();
    // The model assumes the running GPU's platform unless one is asked for: what the hardware
    // may do for lack of a capability is then what the model allows, not a disagreement.
    let platform = if args.check.platform_given() {
        match args.check.platform() {
            Ok(p) => PlatformView::new(&p, "option"),
            Err(e) => {
                refuse_all(args, &inputs[from..], &e);
                return false;
            }
        }
    } else {
        match scopecheck_gpu::caps::platform_from_device(&device) {
            Ok(p) => {
                opts.platform = p;
                PlatformView::new(&opts.platform, "device")
            }
            Err(e) => {
                refuse_all(args, &inputs[from..], &e.to_string());
                return false;
            }
        }
    };
    let run_opts = args.run_options();
    let mut all_good = true;
    let (mut killable, mut killed) = (0u32, 0u32);
    for (index, input) in inputs.iter().enumerate().skip(from) {
        if stop.load(Ordering::Relaxed) {
            report_failure(args.json, &input.file, "not run: interrupted (Ctrl-C)");
            all_good = false;
            continue;
        }
        supervise::note(Note::File(index));
        let (good, end) = run_file(args, input, &device, &gen, &opts, &run_opts, &platform);
        supervise::note(Note::Done(index, good));
        all_good &= good;
        if let Some(t) = end.tally {
            supervise::note(Note::Tally(t.0, t.1));
            killable += t.0;
            killed += t.1;
        }
        if end.hung || end.broken {
            let _ = crate::output::finish();
            if child {
                // The context is lost (a launch may still be running): a fresh process goes on.
                std::process::exit(supervise::EXIT_RESTART);
            }
            let why = if end.hung {
                format!(
                    "not run: the run was stopped after a hung launch (without {}=1, each file goes on in a fresh process)",
                    supervise::INPROCESS_ENV
                )
            } else {
                "not run: the GPU failed on an earlier test and may be in a bad state".into()
            };
            for rest in &inputs[index + 1..] {
                report_failure(args.json, &rest.file, &why);
            }
            let rest = inputs.len() - index - 1;
            if end.hung {
                // Tearing the context down would wait for the launch that hung: end the process
                // now; the driver reclaims the GPU.
                let status = if all_good && rest == 0 { 0 } else { 1 };
                std::process::exit(crate::with_output_checked(status).into());
            }
            // The GPU may be in a bad state; do not queue more work on it.
            all_good &= rest == 0;
            break;
        }
    }
    print_score(args, inputs, killable, killed);
    all_good
}

/// Gives each of `inputs` its line when none can run (`why`): its own read, parse or check
/// error if it has one, else why the runner cannot generate its kernel if it cannot, else
/// `why`, so that `run --json` prints one object per file whatever the reason, and a machine
/// without a GPU still says which files a GPU would refuse.
fn refuse_all(args: &RunArgs, inputs: &[Input], why: &str) {
    let gen = args.gen_options();
    for input in inputs {
        let message = match checked(args, input) {
            Ok((_, program, verdict)) => match StateTable::new(&program, &verdict.states)
                .and_then(|_| generate(&program, &gen))
            {
                Ok(_) => why.to_string(),
                Err(e) => e.to_string(),
            },
            Err(f) => f.message().to_string(),
        };
        report_failure(args.json, &input.file, &message);
    }
}

/// Loads one file as `check` does, without a PTX view or a deadline: a `.cu` file the
/// language-level front-end refuses (templates, unions, methods) is loaded as the PTX NVRTC
/// compiles it, as `check` reads it, unless only the language's model is asked for.
fn load(args: &RunArgs, input: &Input) -> Result<Loaded, Box<scopecheck_ir::Failure>> {
    let options = scopecheck_frontend::Options {
        cuda: args.check.cuda_options(),
        max_file_size: args.check.max_file_size,
        ptx_fallback: args.check.models() != [Some(scopecheck_model::ModelKind::Src11)],
        ..Default::default()
    };
    scopecheck_frontend::load(input, &options).and_then(|l| l.read(&input.file))
}

/// Reads, parses and checks one file: its text, program and verdict, or why not.
fn checked(
    args: &RunArgs,
    input: &Input,
) -> Result<(String, Program, Verdict), Box<scopecheck_ir::Failure>> {
    let Loaded {
        source, program, ..
    } = crate::render::guarded(&input.file, || load(args, input))?;
    let verdict = check_guarded(&input.file, &source, &program, &args.check.check_options())?;
    Ok((source, program, verdict))
}

/// How one file's run ended, beyond whether it passed.
#[derive(Default)]
struct FileEnd {
    /// A launch hung: the context must not be used again.
    hung: bool,
    /// A driver error: the GPU may be in a bad state.
    broken: bool,
    /// Killable mutants that ran, and killed.
    tally: Option<(u32, u32)>,
}

/// Checks and runs one file and prints its report; returns whether it passed.
fn run_file(
    args: &RunArgs,
    input: &Input,
    device: &Device,
    gen: &GenOptions,
    opts: &scopecheck_model::CheckOptions,
    run_opts: &RunOptions,
    platform: &PlatformView,
) -> (bool, FileEnd) {
    let stop = stop_flag();
    let mut end = FileEnd::default();
    let (source, program) = match crate::render::guarded(&input.file, || load(args, input))
        .map(|l| (l.source, l.program))
    {
        Ok(x) => x,
        Err(f) => {
            report_failure(args.json, f.file(), f.message());
            return (false, end);
        }
    };
    let verdict = match check_guarded(&input.file, &source, &program, opts) {
        Ok(v) => v,
        Err(f) => {
            report_failure(args.json, f.file(), f.message());
            return (false, end);
        }
    };
    let mut view = platform.clone();
    if !view.lacks.is_empty()
        && program
            .threads
            .iter()
            .any(|t| t.placement == scopecheck_ir::Placement::Host)
    {
        let ideal = scopecheck_model::CheckOptions {
            platform: Platform::ideal(),
            graphs: false,
            ..opts.clone()
        };
        // Without the ideal verdict the states are only not marked; the run goes on.
        view.ideal = check_guarded(&input.file, &source, &program, &ideal)
            .ok()
            .map(|v| crate::mutants::state_values(&v));
    }
    if args.mutants {
        let test = crate::mutants::Original {
            file: &input.file,
            source: &source,
            program: &program,
            verdict: &verdict,
            check: opts,
        };
        let t = crate::mutants::run_mutants(
            device,
            &test,
            &crate::mutants::configs(gen, run_opts, args.portfolio),
            stop,
            args.json,
        );
        end.tally = Some((t.killable, t.killed));
        end.hung = t.hung;
        return (!t.hung, end);
    }
    let began = std::time::Instant::now();
    supervise::note_gpu();
    let outcome = run_one(device, &program, &verdict, gen, run_opts, stop);
    let wall = began.elapsed();
    let gpu = Gpu {
        name: &device.name,
        ordinal: device.ordinal,
        platform: &view,
    };
    match outcome {
        Ok((result, cmp)) => {
            let text = if args.json {
                let mut v = json_line(&input.file, &gpu, &program, &verdict, &result, &cmp);
                if let Value::Object(m) = &mut v {
                    m.insert("setup_seconds".into(), result.setup.as_secs_f64().into());
                    m.insert("wall_seconds".into(), wall.as_secs_f64().into());
                }
                v.to_string()
            } else {
                report_text(&gpu, &program, &verdict, &result, &cmp, args.stress)
            };
            outln!("{text}");
            end.hung = matches!(result.stop, Stop::Hung { .. });
            let good = judge(&program, &verdict, &result, &cmp).0 == 0
                && (!end.hung || verdict.terminates() == Some(false));
            (good, end)
        }
        Err(e) => {
            report_failure(args.json, &input.file, &e.to_string());
            end.broken = matches!(e, RunError::Driver { .. });
            (false, end)
        }
    }
}

fn print_score(args: &RunArgs, inputs: &[Input], killable: u32, killed: u32) {
    if args.mutants && !args.json && inputs.len() > 1 && killable > 0 {
        outln!(
            "Mutation score {killed} / {killable} = {:.2} over {} tests",
            killed as f64 / killable as f64,
            inputs.len()
        );
    }
}

/// A file whose runner process could not report it (killed after its deadline, or crashed).
fn report_lost(json: bool, lost: &supervise::Lost) {
    if json {
        let mut v = scopecheck_report::json_error(lost.file, 0, 0, &lost.why);
        if let Value::Object(m) = &mut v {
            m.insert("hung".into(), lost.hung.into());
        }
        outln!("{v}");
    } else {
        errln!("error: {}: {}", lost.file, lost.why);
    }
}

fn report_failure(json: bool, file: &str, message: &str) {
    if json {
        outln!("{}", scopecheck_report::json_error(file, 0, 0, message));
    } else {
        errln!("error: {file}: {message}");
    }
}

fn run_one(
    device: &Device,
    program: &Program,
    verdict: &Verdict,
    gen: &GenOptions,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<(RunResult, Comparison), RunError> {
    let table = StateTable::new(program, &verdict.states)?;
    let kernel = generate(program, gen)?;
    let result = scopecheck_gpu::driver::guarded("running the test on the GPU", || {
        runner::run(device, program, &kernel, &table, opts, stop)
    })?;
    let cmp = compare(
        program,
        &table,
        &result.dense,
        result.other,
        &result.other_samples,
    );
    Ok((result, cmp))
}

/// Whether some thread has a backward branch: the model explores such loops a bounded number of
/// times, the GPU up to `--loop-cap` times, so states with values the model never reached may be
/// beyond the explored bound rather than forbidden.
fn loops(program: &Program) -> bool {
    program.threads.iter().any(|t| {
        t.code.iter().enumerate().any(|(i, ins)| {
            matches!(ins.kind, scopecheck_ir::InstrKind::Branch { target, .. } if target <= i)
        })
    })
}

/// Instances in states the model forbids (a disagreement), and instances in states beyond the
/// explored bound (values the bounded exploration never produced, in a test that loops or whose
/// exploration is incomplete).
fn judge(program: &Program, verdict: &Verdict, r: &RunResult, cmp: &Comparison) -> (u64, u64) {
    if !verdict.is_complete() {
        return (0, cmp.forbidden);
    }
    if loops(program) {
        let beyond = r.other.min(cmp.forbidden);
        return (cmp.forbidden - beyond, beyond);
    }
    (cmp.forbidden, 0)
}

fn rate(count: u64, r: &RunResult) -> f64 {
    count as f64 / r.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
}

/// The GPU a report names, and the platform the model assumed for it.
struct Gpu<'a> {
    name: &'a str,
    ordinal: usize,
    platform: &'a PlatformView,
}

/// The platform the model assumed, where it came from, and what the ideal platform (every
/// capability) allows, when the two may differ.
#[derive(Clone, Debug, Default)]
struct PlatformView {
    name: String,
    /// `device` (the running GPU's capabilities) or `option` (`--platform`, `--platform-file`).
    source: &'static str,
    /// The capabilities it lacks that change what the models allow.
    lacks: Vec<&'static str>,
    /// The states the ideal platform allows, when the program talks to the host on a platform
    /// lacking some capability (otherwise the verdicts are the same).
    ideal: Option<HashSet<Vec<scopecheck_ir::Value>>>,
}

impl PlatformView {
    fn new(platform: &Platform, source: &'static str) -> PlatformView {
        PlatformView {
            name: platform.name.clone(),
            source,
            // The others make a program that relies on them an error of the model instead.
            lacks: platform
                .missing()
                .into_iter()
                .filter(|c| matches!(*c, "hostNativeAtomicSupported" | "coherent host memory"))
                .collect(),
            ideal: None,
        }
    }

    /// Whether the ideal platform forbids observed state `values` (which this one allows):
    /// only the lack of a capability lets the program end there.
    fn ideal_platform_forbids(&self, values: &[scopecheck_ir::Value]) -> bool {
        self.ideal.as_ref().is_some_and(|i| !i.contains(values))
    }

    /// What a program that ends in such a state relies on.
    fn reliance(&self) -> String {
        let what: Vec<&str> = self
            .lacks
            .iter()
            .map(|c| match *c {
                "hostNativeAtomicSupported" => "host-native atomics (hostNativeAtomicSupported)",
                _ => "host memory coherent with the device",
            })
            .collect();
        format!(
            "this program relies on {}; {} has none",
            what.join(" and "),
            self.name
        )
    }
}

fn report_text(
    device: &Gpu,
    program: &Program,
    verdict: &Verdict,
    r: &RunResult,
    cmp: &Comparison,
    stress: OnOff,
) -> String {
    let obs = program.observables();
    let mut s = String::new();
    header_text(&mut s, device, program, verdict, r, stress);
    let stop = match r.stop {
        Stop::Time => "time",
        Stop::Instances => "instance count",
        Stop::Interrupted => "interrupted",
        Stop::Hung { .. } => "a hung launch",
    };
    let _ = writeln!(
        s,
        "Instances {} in {:.2} s ({:.1} M/s), {} launches, stopped by {stop}; cut by the loop cap {}",
        r.instances,
        r.elapsed.as_secs_f64(),
        r.instances_per_second() / 1e6,
        r.launches,
        r.cut
    );
    if let Some(h) = hang_text(verdict, r) {
        let _ = writeln!(s, "!!! {h}");
    }
    let _ = writeln!(s, "Observed states {}", cmp.states.len());
    for st in &cmp.states {
        let mut mark = match (st.allowed, st.satisfies) {
            (true, true) => "allowed, satisfies the condition",
            (true, false) => "allowed",
            (false, true) => "FORBIDDEN, satisfies the condition",
            (false, false) => "FORBIDDEN",
        }
        .to_string();
        if st.allowed && device.platform.ideal_platform_forbids(&st.values) {
            mark.push_str(&format!(
                " only for lack of {}",
                device.platform.lacks.join(" and ")
            ));
        }
        let _ = writeln!(
            s,
            "{:>14} {:>14.1}/s  {}  {mark}",
            st.count,
            rate(st.count, r),
            state_text(program, &obs, &st.values)
        );
    }
    if cmp.unsampled_other > 0 {
        let _ = writeln!(
            s,
            "{:>14}  instances in states outside the model's values (not sampled)",
            cmp.unsampled_other
        );
    }
    let _ = writeln!(
        s,
        "Condition {}: satisfied by {} instances ({:.1}/s)",
        scopecheck_report::condition_text(program),
        cmp.satisfying,
        rate(cmp.satisfying, r)
    );
    let relied = platform_reliance(device.platform, cmp);
    if relied > 0 {
        let _ = writeln!(
            s,
            "!!! {relied} instances ended in states the ideal platform forbids: {}",
            device.platform.reliance()
        );
    }
    agreement_text(&mut s, program, verdict, r, cmp);
    s
}

/// The report's first lines: the test and its verdict, the device and the launch shape, the
/// platform, the host threads.
fn header_text(
    s: &mut String,
    device: &Gpu,
    program: &Program,
    verdict: &Verdict,
    r: &RunResult,
    stress: OnOff,
) {
    let _ = writeln!(
        s,
        "Test {} {} (model: {}, {} states{})",
        program.name,
        scopecheck_report::test_kind(verdict.quantifier),
        scopecheck_report::outcome_text(verdict.outcome),
        verdict.states.len(),
        if verdict.is_complete() {
            ""
        } else {
            ", exploration incomplete"
        }
    );
    let _ = writeln!(
        s,
        "Device {} (GPU {}), {} blocks x {} threads, {} instances per launch, stress {}",
        device.name,
        device.ordinal,
        r.blocks,
        r.block_threads,
        r.instances_per_launch,
        if stress == OnOff::On { "on" } else { "off" }
    );
    let _ = writeln!(
        s,
        "Platform {} ({}){}",
        device.platform.name,
        if device.platform.source == "device" {
            "this GPU's capabilities; --platform overrides"
        } else {
            "as asked"
        },
        if device.platform.lacks.is_empty() {
            String::new()
        } else {
            format!(", lacking {}", device.platform.lacks.join(" and "))
        }
    );
    if r.host_workers > 0 {
        let _ = writeln!(
            s,
            "Host threads on {} CPU threads over pinned host/managed memory; {} worker launches \
             ran without seeing the kernel start",
            r.host_workers, r.unpaced
        );
    }
}

/// Whether the hardware agreed with the model, and each anomaly kept when it did not.
fn agreement_text(
    s: &mut String,
    program: &Program,
    verdict: &Verdict,
    r: &RunResult,
    cmp: &Comparison,
) {
    let obs = program.observables();
    if cmp.forbidden == 0 {
        let _ = writeln!(
            s,
            "Hardware agrees with the model: every observed state is allowed"
        );
    } else {
        let what = if verdict.is_complete() {
            "MODEL/HARDWARE DISAGREEMENT"
        } else {
            "STATES OUTSIDE THE EXPLORED SET (exploration incomplete)"
        };
        let _ = writeln!(
            s,
            "!!! {what}: {} instances ended in states the model does not allow",
            cmp.forbidden
        );
        for a in &r.anomalies {
            let threads: Vec<String> = a
                .threads
                .iter()
                .enumerate()
                .map(|(t, p)| match p {
                    Some((b, th)) => {
                        format!("{} on block {b} thread {th}", program.threads[t].name)
                    }
                    None if program.threads[t].placement == Placement::Host => {
                        format!("{} on the host", program.threads[t].name)
                    }
                    None => format!("{} not found", program.threads[t].name),
                })
                .collect();
            let _ = writeln!(
                s,
                "!!!   launch {} instance {}: {}  ({})",
                a.launch,
                a.instance,
                state_text(program, &obs, &a.values),
                threads.join(", ")
            );
        }
    }
}

/// What a hung run says: which launch, and whether the model expects the test to hang.
fn hang_text(verdict: &Verdict, r: &RunResult) -> Option<String> {
    let Stop::Hung {
        launch,
        budget,
        host,
    } = r.stop
    else {
        return None;
    };
    let who = if host {
        "its host threads did not finish"
    } else {
        "the GPU did not finish it"
    };
    let model = match verdict.terminates() {
        Some(false) => "the model says this test can hang: the hardware agrees",
        Some(true) => "the model says every execution terminates: a hang it does not explain",
        None => "the model's exploration was cut short and does not say whether it can hang",
    };
    Some(format!(
        "HUNG: launch {launch} ran past its budget of {:.1} s ({who}); its instances were cut \
         and the states below are from the {} launches before it; {model}",
        budget.as_secs_f64(),
        r.launches
    ))
}

/// Instances in states this platform allows and the ideal one forbids.
fn platform_reliance(platform: &PlatformView, cmp: &Comparison) -> u64 {
    cmp.states
        .iter()
        .filter(|s| s.allowed && platform.ideal_platform_forbids(&s.values))
        .map(|s| s.count)
        .sum()
}

fn json_line(
    file: &str,
    device: &Gpu,
    program: &Program,
    verdict: &Verdict,
    r: &RunResult,
    cmp: &Comparison,
) -> Value {
    let mut v = scopecheck_report::json(file, program, verdict, Duration::ZERO);
    let obs = program.observables();
    let named = |vals: &[i64]| -> Value {
        obs.iter()
            .zip(vals)
            .map(|(o, x)| (program.observable_name(*o), Value::from(*x)))
            .collect::<serde_json::Map<String, Value>>()
            .into()
    };
    let observed: Vec<Value> = cmp
        .states
        .iter()
        .map(|s| {
            json!({
                "values": named(&s.values),
                "count": s.count,
                "per_second": rate(s.count, r),
                "allowed": s.allowed,
                "satisfies": s.satisfies,
                "ideal_platform_forbids": s.allowed
                    && device.platform.ideal_platform_forbids(&s.values),
            })
        })
        .collect();
    let anomalies: Vec<Value> = r
        .anomalies
        .iter()
        .map(|a| {
            json!({
                "launch": a.launch,
                "instance": a.instance,
                "values": named(&a.values),
                "threads": a.threads.iter().enumerate().map(|(t, p)| json!({
                    "thread": program.threads[t].name,
                    "block": p.map(|x| x.0),
                    "hw_thread": p.map(|x| x.1),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    if let Value::Object(m) = &mut v {
        m.insert(
            "gpu".into(),
            json!({ "name": device.name, "ordinal": device.ordinal }),
        );
        m.insert("observed".into(), observed.into());
        m.insert("instances".into(), r.instances.into());
        m.insert("cut".into(), r.cut.into());
        m.insert("launches".into(), r.launches.into());
        m.insert("seconds".into(), r.elapsed.as_secs_f64().into());
        m.insert(
            "instances_per_second".into(),
            r.instances_per_second().into(),
        );
        m.insert("satisfying_observed".into(), cmp.satisfying.into());
        m.insert("forbidden_observed".into(), cmp.forbidden.into());
        let (disagree, beyond) = judge(program, verdict, r, cmp);
        m.insert("beyond_bound_observed".into(), beyond.into());
        m.insert("disagreement".into(), (disagree > 0).into());
        m.insert("anomalies".into(), anomalies.into());
        m.insert("interrupted".into(), (r.stop == Stop::Interrupted).into());
        m.insert("platform_source".into(), device.platform.source.into());
        m.insert(
            "platform_lacks".into(),
            device.platform.lacks.clone().into(),
        );
        let relied = platform_reliance(device.platform, cmp);
        m.insert("ideal_platform_forbidden_observed".into(), relied.into());
        m.insert(
            "platform_reliance".into(),
            (relied > 0).then(|| device.platform.reliance()).into(),
        );
        let hung = match r.stop {
            Stop::Hung {
                launch,
                budget,
                host,
            } => json!({
                "launch": launch,
                "budget_seconds": budget.as_secs_f64(),
                "host": host,
                "model_can_hang": verdict.terminates().map(|t| !t),
                "message": hang_text(verdict, r),
            }),
            _ => Value::Null,
        };
        m.insert("hung".into(), hung);
        m.insert("host_workers".into(), r.host_workers.into());
        m.insert("unpaced".into(), r.unpaced.into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(dense: Vec<u64>, other: u64) -> RunResult {
        RunResult {
            instances: dense.iter().sum::<u64>() + other,
            dense,
            other,
            other_samples: vec![],
            cut: 0,
            launches: 1,
            elapsed: Duration::from_secs(1),
            anomalies: vec![],
            stop: Stop::Time,
            blocks: 2,
            block_threads: 256,
            instances_per_launch: 384,
            setup: Duration::ZERO,
            host_workers: 0,
            unpaced: 0,
        }
    }

    const MP: &str = "PTX MP\n{ data=0; flag=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n \
        st.weak data, 1 | ld.acquire.gpu r0, flag ;\n st.release.gpu flag, 1 | ld.weak r1, data ;\n\
        exists (P1:r0 == 1 /\\ P1:r1 == 0)\n";

    #[test]
    fn a_forbidden_state_is_reported_loudly_and_allowed_ones_with_rates() {
        let p = scopecheck_litmus::parse(MP).unwrap();
        let v = scopecheck_model::check(&p, &scopecheck_model::CheckOptions::default()).unwrap();
        let t = StateTable::new(&p, &v.states).unwrap();
        let ideal = PlatformView::new(&Platform::ideal(), "device");
        let gpu = Gpu {
            name: "Test GPU",
            ordinal: 0,
            platform: &ideal,
        };
        let mut dense = vec![0; t.len()];
        dense[t.index(&[0, 0]).unwrap() as usize] = 300;
        let r = result(dense.clone(), 0);
        let cmp = compare(&p, &t, &r.dense, 0, &[]);
        let text = report_text(&gpu, &p, &v, &r, &cmp, OnOff::On);
        assert!(text.contains("Hardware agrees with the model"), "{text}");
        assert!(text.contains("300.0/s"), "{text}");
        dense[t.index(&[1, 0]).unwrap() as usize] = 4;
        let r = result(dense, 0);
        let cmp = compare(&p, &t, &r.dense, 0, &[]);
        let text = report_text(&gpu, &p, &v, &r, &cmp, OnOff::On);
        assert!(
            text.contains("!!! MODEL/HARDWARE DISAGREEMENT: 4 instances"),
            "{text}"
        );
        let json = json_line("mp.litmus", &gpu, &p, &v, &r, &cmp);
        assert_eq!(json["disagreement"], true);
        assert_eq!(json["forbidden_observed"], 4);
        assert_eq!(json["observed"][0]["count"], 300);
        assert_eq!(json["result"], "No");
    }

    #[test]
    fn a_lost_update_on_a_gpu_without_host_atomics_is_reliance_not_disagreement() {
        // A device atomicAdd_system and a host fetch_add on one counter in mapped host memory:
        // without host-native atomics the two RMWs are not atomic together, so c=1 (a lost
        // update) is allowed on an H200 over PCIe and forbidden on the ideal platform.
        let src = include_str!("../../../tests/litmus/c/counter+host-device.litmus");
        let p = scopecheck_litmus::parse(src).unwrap();
        let h200 = Platform::builtin("h200-pcie").unwrap();
        let opts = scopecheck_model::CheckOptions {
            platform: h200.clone(),
            ..Default::default()
        };
        let v = scopecheck_model::check(&p, &opts).unwrap();
        let ideal = scopecheck_model::check(&p, &Default::default()).unwrap();
        let mut view = PlatformView::new(&h200, "device");
        assert_eq!(view.lacks, vec!["hostNativeAtomicSupported"]);
        view.ideal = Some(crate::mutants::state_values(&ideal));
        let t = StateTable::new(&p, &v.states).unwrap();
        let mut dense = vec![0; t.len()];
        dense[t.index(&[2]).unwrap() as usize] = 90;
        dense[t.index(&[1]).unwrap() as usize] = 10;
        let r = result(dense, 0);
        let cmp = compare(&p, &t, &r.dense, 0, &[]);
        let gpu = Gpu {
            name: "Test GPU",
            ordinal: 0,
            platform: &view,
        };
        let text = report_text(&gpu, &p, &v, &r, &cmp, OnOff::On);
        assert!(text.contains("Hardware agrees with the model"), "{text}");
        assert!(
            text.contains(
                "!!! 10 instances ended in states the ideal platform forbids: this \
                 program relies on host-native atomics (hostNativeAtomicSupported); h200-pcie \
                 has none"
            ),
            "{text}"
        );
        let json = json_line("c.litmus", &gpu, &p, &v, &r, &cmp);
        assert_eq!(json["disagreement"], false);
        assert_eq!(json["ideal_platform_forbidden_observed"], 10);
        assert_eq!(json["platform_lacks"][0], "hostNativeAtomicSupported");
        // Under the ideal platform the same run is the disagreement it used to be reported as.
        let t = StateTable::new(&p, &ideal.states).unwrap();
        assert!(t.index(&[1]).is_none());
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }
}
