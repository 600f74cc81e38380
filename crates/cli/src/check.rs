//! `scopecheck check`: read, parse, check and report each file; files are checked in parallel
//! and reported in input order as soon as every earlier file has been.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use rayon::prelude::*;
use scopecheck_cuda::CudaOptions;
use scopecheck_ir::{Diagnostic, Program};
use scopecheck_litmus::OptionWord;
use scopecheck_model::suggest::{self, CostTable, Suggestion};
use scopecheck_model::{CheckOptions, ModelKind, Verdict};

use crate::file_report::{self, Mode};
use crate::inputs::{self, Input};
use crate::options::{CheckFlags, FileOptions};
use crate::output::errln;
use crate::render::Failure;
use crate::{ci, costs};

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    flags: CheckFlags,
    /// Print one JSON object per file (NDJSON, see docs/json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write one SARIF 2.1.0 log of the whole run to FILE, for code scanning
    /// (docs/sarif.md); `-` writes it to standard output in place of the text reports (not
    /// with --json).
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
    /// For a test that is not right (its requirement fails, it races under a language model,
    /// or it may hang), search for the cheapest strengthening that makes it right.
    #[arg(long)]
    suggest: bool,
    /// The cost table suggestions are priced with (`scopecheck cost --toml`; default: the one
    /// measured on an H200).
    #[arg(long, value_name = "FILE.toml", requires = "suggest")]
    cost_file: Option<PathBuf>,
    /// Write pictures of the executions behind each verdict into DIR (created if needed), as
    /// Graphviz DOT and as SVG: NAME.MODEL.witness.dot/.svg (the execution that shows the
    /// answer, or the first one), and for a wrong program NAME.MODEL.counterexample.dot/.svg
    /// (the race, or the execution breaking the requirement). NAME is the file's stem.
    #[arg(long, value_name = "DIR")]
    graph: Option<PathBuf>,
    #[command(flatten)]
    ci: crate::ci::CiFlags,
    #[command(flatten)]
    input: inputs::InputFlags,
    /// Test files (.litmus, .cu, .cl, .ptx), or directories to search recursively for *.litmus,
    /// *.cu and *.cl files (and *.ptx files, with --harness).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// A file checked: the test, its verdict under each model asked for, where they disagree, and
/// how long checking took.
pub struct Checked {
    pub program: Program,
    /// A `.cu` file's PTX view (its kernels as NVRTC compiled them), which the PTX verdict
    /// checked; `None` when there is none.
    pub ptx_view: Option<Program>,
    /// The file's text, for diagnostics with code snippets.
    pub source: String,
    /// What the front-end changed or doubts (e.g. a device scope narrowed on shared memory).
    pub warnings: Vec<Diagnostic>,
    pub verdicts: Vec<Verdict>,
    pub disagreements: Vec<String>,
    /// With `--suggest`: the cheapest ways found to make the test right (first model).
    pub suggestions: Vec<Suggestion>,
    /// Why the search for suggestions stopped before trying every candidate, if it did.
    pub suggestions_incomplete: Option<String>,
    /// What the file's `(* options: ... *)` comments set (empty when it has none).
    pub file_options: FileOptions,
    /// The options and models the file was checked with, its own options merged in.
    pub options: CheckOptions,
    /// For a kernel-only file: the kernel checked and its launch.
    pub kernel: Option<scopecheck_cuda::KernelChoice>,
    pub models: Vec<Option<ModelKind>>,
    pub time: Duration,
}

/// What a file's own options are merged with: the command line's flags and which of them it
/// gave explicitly.
pub struct CommandLine<'a> {
    pub flags: &'a CheckFlags,
    pub given: &'a [String],
}

impl Checked {
    /// The program verdict `v` is about: the PTX view for a `.cu` file's PTX verdict when
    /// there is one (its thread code is NVRTC's), the program as read otherwise.
    pub fn program_of(&self, v: &Verdict) -> &Program {
        match &self.ptx_view {
            Some(view) if v.model == "ptx" => view,
            _ => &self.program,
        }
    }
}

/// The stack of every thread that checks files: a stopgap while some recursion depth in the
/// explorer, the judge, the parsers and the lowerings still follows the input (issue 31); a
/// stack overflow aborts the process and loses every other file's result, which a panic does
/// not. Only the pages used are committed.
pub const WORKER_STACK: usize = 256 << 20;

/// Runs `check`; returns the exit status (`crate::ci`). `given`: the ids of the options the
/// command line gave explicitly, which a file's own options do not override.
pub fn run(args: &CheckArgs, given: &[String]) -> u8 {
    args.input.apply();
    let harness = args.flags.cuda_options().harness;
    let inputs = args.ci.shard(inputs::expand_kernels(
        inputs::collect(&args.paths, harness.as_deref()),
        &args.flags.cuda_options(),
        args.flags.check_options().timeout,
    ));
    if let Err(e) = args.flags.platform() {
        errln!("error: {e}");
        return ci::EXIT_USAGE;
    }
    let mut opts = args.flags.check_options();
    opts.progress = crate::progress::counters();
    if let Some(dir) = &args.graph {
        if let Err(e) = file_report::prepare_graph_dir(dir) {
            errln!("error: {e}");
            return ci::EXIT_USAGE;
        }
        opts.graphs = true;
    }
    // `--host native`: files with a `main()` run natively first, each reported in turn; the
    // others are checked as before.
    let mut native_gate = args.ci.gate();
    let mut native_ok = true;
    let (native, inputs): (Vec<Input>, Vec<Input>) = inputs
        .into_iter()
        .partition(|i| crate::native::takes(i, &args.flags));
    for input in &native {
        native_ok &= crate::native::check(input, &args.flags, args.json, &mut native_gate);
    }
    if inputs.is_empty() && !native.is_empty() {
        return native_gate.status(native_ok);
    }
    let graph_names = file_report::graph_names(&inputs);
    let cuda = args.flags.cuda_options();
    let models = args.flags.models();
    let costs = match args.suggest.then(|| costs::load(args.cost_file.as_deref())) {
        Some(Err(e)) => {
            errln!("error: {e}");
            return ci::EXIT_USAGE;
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    // Opened before checking: a path that cannot be written is bad usage, found at once.
    let mut sarif = match args.sarif.as_deref() {
        Some(path) => match crate::sarif::SarifOutput::open(path, args.json) {
            Ok(s) => Some(s),
            Err(e) => {
                errln!("error: {e}");
                return ci::EXIT_USAGE;
            }
        },
        None => None,
    };
    let mode = if sarif.as_ref().is_some_and(|s| s.on_stdout()) {
        Mode::Quiet
    } else if args.json {
        Mode::Json
    } else {
        Mode::Text
    };
    let cli = CommandLine {
        flags: &args.flags,
        given,
    };
    let want_sarif = sarif.is_some();
    let (tx, rx) = mpsc::channel();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        if let Some(c) = &opts.progress {
            let done = &done;
            s.spawn(move || crate::progress::show(c, done));
        }
        let (inputs, opts, models, cuda, costs) = (&inputs, &opts, &models, &cuda, &costs);
        let graph_names = &graph_names;
        let cli = &cli;
        let ci = &args.ci;
        s.spawn(move || {
            ci.with_jobs(|| {
                inputs
                    .par_iter()
                    .enumerate()
                    .for_each_with(tx, |tx, (i, input)| {
                        let graphs = args
                            .graph
                            .as_deref()
                            .map(|dir| (dir, graph_names[i].as_str()));
                        let check = || check_file(input, opts, models, cuda, costs.as_ref(), cli);
                        let done = file_report::make(input, check, mode, graphs, want_sarif);
                        // The receiver lives until every result is in.
                        let _ = tx.send((i, done));
                    })
            });
        });
        // Results arrive in any order; print each once all before it are printed.
        let mut pending = BTreeMap::new();
        let mut next = 0;
        let mut all_checked = true;
        let mut gate = args.ci.gate();
        for (i, done) in rx {
            pending.insert(i, done);
            while let Some(done) = pending.remove(&next) {
                let file_report::Done {
                    report,
                    sarif: results,
                    verdicts,
                } = done;
                crate::output::write_err(format_args!("{}", report.stderr));
                crate::output::write_out(format_args!("{}", report.stdout));
                all_checked &= report.ok;
                if let Some(s) = &mut sarif {
                    s.push_all(results);
                }
                gate.note(&inputs[next].file, &verdicts);
                next += 1;
            }
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        // The JSON lines carry every finding; stderr stays for what stops a file.
        if !args.json {
            for line in gate.summary() {
                errln!("{line}");
            }
        }
        // A log that could not be written fails the run as an unchecked file would.
        let written = match sarif {
            Some(s) => s.finish().map_err(|e| errln!("error: {e}")).is_ok(),
            None => true,
        };
        gate.absorb(native_gate);
        gate.status(all_checked && written && native_ok)
    })
}

/// Reads, parses and checks one file under each of `models`, or under those its own
/// `(* options: ... *)` comments set (merged with the command line `cli`).
pub fn check_file(
    input: &Input,
    opts: &CheckOptions,
    models: &[Option<ModelKind>],
    cuda: &CudaOptions,
    costs: Option<&CostTable>,
    cli: &CommandLine,
) -> Result<Checked, Box<Failure>> {
    file_report::inject_fault(&input.file, "check");
    // `--timeout` bounds the whole file from here: reading, every model's check, the
    // suggestions (and `tune`, which reuses these options) share one deadline.
    let begun = Instant::now();
    let is_cu = input
        .path
        .extension()
        .is_some_and(|e| e == inputs::CUDA_EXTENSION);
    if let Some(problem) = &input.problem {
        return Err(Failure::io(&input.file, problem.clone()));
    }
    // This file's kernel (a kernel-only file) and folder (`#include "..."`).
    let cuda = &inputs::file_options(cuda, input);
    // What reading the file for its kernels took counts against its --timeout.
    let load_by = opts
        .deadline
        .or(opts.timeout.map(|t| begun + t.saturating_sub(input.spent)));
    let (source, mut program, mut warnings, ptx_only, option_words) = load_within(
        input,
        cuda,
        is_cu && models != [Some(ModelKind::Src11)],
        load_by,
    )?;
    if let Some(k) = &input.kernel {
        // One report per kernel: the test is named after the file and the kernel.
        program.name = format!("{}:{}", program.name, k.name);
    }
    // The file's own options, over the defaults and under the command line.
    let (file_opts, file_models, file_options) = if option_words.is_empty() {
        (None, None, FileOptions::default())
    } else {
        let (flags, report) = cli
            .flags
            .with_file_options(cli.given, &option_words)
            .map_err(|e| Failure::parse(&input.file, source.clone(), e))?;
        let mut o = flags.check_options();
        o.progress = opts.progress.clone();
        o.graphs = opts.graphs;
        (Some(o), Some(flags.models()), report)
    };
    let opts = file_opts.as_ref().unwrap_or(opts);
    let opts = &CheckOptions {
        deadline: opts
            .deadline
            .or(opts.timeout.map(|t| begun + t.saturating_sub(input.spent))),
        ..opts.clone()
    };
    let models = file_models.as_deref().unwrap_or(models);
    let ptx_models = [Some(ModelKind::Ptx)];
    let models: &[Option<ModelKind>] = if ptx_only { &ptx_models } else { models };
    let start = Instant::now();
    let ptx_view = if is_cu && !ptx_only && models.contains(&Some(ModelKind::Ptx)) {
        nvrtc_view(input, &source, &program, cuda, &mut warnings)
    } else {
        None
    };
    let mut verdicts = Vec::with_capacity(models.len());
    for m in models {
        let opts = CheckOptions {
            model: *m,
            ..opts.clone()
        };
        let checked = match (&ptx_view, m) {
            (Some(view), Some(ModelKind::Ptx)) => view,
            _ => &program,
        };
        verdicts.push(check_guarded(&input.file, &source, checked, &opts)?);
    }
    let disagreements = match verdicts.as_slice() {
        [language, hardware] => scopecheck_model::compare::compare(&program, language, hardware),
        _ => vec![],
    };
    let suggested = match costs {
        Some(table) if !verdicts.iter().all(suggest::is_right) => {
            let opts = CheckOptions {
                model: models[0],
                ..opts.clone()
            };
            suggest::suggest(&program, &opts, table)
        }
        _ => suggest::Suggested::default(),
    };
    Ok(Checked {
        program,
        ptx_view,
        source,
        warnings,
        verdicts,
        disagreements,
        suggestions: suggested.suggestions,
        suggestions_incomplete: suggested.incomplete,
        file_options,
        options: opts.clone(),
        kernel: input.kernel.clone(),
        models: models.to_vec(),
        time: start.elapsed(),
    })
}

/// A `.cu` file the language-level front-end cannot read, as its PTX view alone. When that
/// cannot be built either, the caller reports the front-end's error, with why the PTX view
/// failed when it got that far (`Some`).
fn ptx_only(
    input: &Input,
    cuda: &CudaOptions,
) -> Result<(String, Program, Vec<Diagnostic>), Option<String>> {
    let source = inputs::read_source(&input.file, &input.path).map_err(|_| None)?;
    let Err(why) = scopecheck_cuda::parse_cuda_with(&source, cuda) else {
        return Err(None);
    };
    let nvrtc = NVRTC
        .get_or_init(scopecheck_nvrtc::Nvrtc::find)
        .as_ref()
        .map_err(|e| Some(e.to_string()))?;
    let name = input
        .path
        .file_name()
        .ok_or(None)?
        .to_string_lossy()
        .into_owned();
    let view = scopecheck_cuda::ptx_view(&source, &name, cuda, nvrtc, &cuda.compile.nvrtc_arch())
        .map_err(|e| Some(e.to_string()))?;
    let mut warnings = vec![Diagnostic::warning(format!(
        "the language-level front-end cannot read this file ({}); it is checked as the PTX NVRTC compiles its kernels to, under the PTX model only",
        why.message
    ))
    .at(why.span)];
    warnings.extend(view.warnings.into_iter().map(Diagnostic::from));
    let mut program = view.program;
    if let Some(stem) = input.path.file_stem() {
        program.name = stem.to_string_lossy().into_owned();
    }
    Ok((source, program, warnings))
}

/// A `.ptx` module with the harness `--harness` names (`scopecheck_cuda::ptx_file_view`).
fn read_ptx(
    input: &Input,
    source: String,
    cuda: &CudaOptions,
) -> Result<(String, Program, Vec<Diagnostic>), Box<Failure>> {
    let Some(harness) = &cuda.harness else {
        return Err(Failure::io(
            &input.file,
            "a .ptx file needs --harness FILE.cu: the .cu file whose main() launches its kernels (declared there: `__global__ void k(int *p);`) and checks the results".into(),
        ));
    };
    let harness_file = harness.display().to_string();
    let harness_source = inputs::read_source(&harness_file, harness).map_err(|mut f| {
        f.diagnostic.message = format!("{} (the --harness file)", f.message());
        f
    })?;
    match scopecheck_cuda::ptx_file_view(&source, &harness_source, cuda) {
        Ok(view) => {
            let mut program = view.program;
            if let Some(stem) = input.path.file_stem() {
                program.name = stem.to_string_lossy().into_owned();
            }
            let warnings = view
                .warnings
                .into_iter()
                .map(|w| {
                    let mut d = Diagnostic::from(w);
                    d.message = format!("{harness_file}: {}", d.message);
                    d
                })
                .collect();
            Ok((source, program, warnings))
        }
        Err(scopecheck_cuda::PtxViewError::Harness(e)) => {
            Err(Failure::parse(&harness_file, harness_source, e))
        }
        Err(e @ scopecheck_cuda::PtxViewError::Ptx { .. }) => {
            Err(Failure::parse(&input.file, source, e))
        }
        Err(e) => Err(Failure::io(&input.file, e.to_string())),
    }
}

/// NVRTC, loaded once per process.
static NVRTC: std::sync::OnceLock<Result<scopecheck_nvrtc::Nvrtc, scopecheck_nvrtc::NvrtcError>> =
    std::sync::OnceLock::new();

/// The PTX view of a `.cu` file: its kernels compiled by NVRTC, lowered from that PTX. When it
/// cannot be built (no NVRTC, PTX beyond the PTX front-end), a warning says why and that the
/// PTX verdict is then scopecheck's own mapping of the C++ operations to PTX.
fn nvrtc_view(
    input: &Input,
    source: &str,
    program: &Program,
    cuda: &CudaOptions,
    warnings: &mut Vec<Diagnostic>,
) -> Option<Program> {
    let fallback = "the PTX verdict below is scopecheck's own mapping of the C++ operations to PTX, not NVRTC's code";
    let nvrtc = match NVRTC.get_or_init(scopecheck_nvrtc::Nvrtc::find) {
        Ok(n) => n,
        Err(e) => {
            warnings.push(
                Diagnostic::warning(format!("{e}; {fallback}")).at(scopecheck_ir::Span::default()),
            );
            return None;
        }
    };
    let name = input
        .path
        .file_name()
        .map_or_else(|| input.file.clone(), |n| n.to_string_lossy().into_owned());
    match scopecheck_cuda::ptx_view(source, &name, cuda, nvrtc, &cuda.compile.nvrtc_arch()) {
        Ok(view) => {
            for w in view.warnings {
                let w = Diagnostic::from(w);
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            let mut p = view.program;
            p.name = program.name.clone();
            Some(p)
        }
        Err(e) => {
            let span = match &e {
                scopecheck_cuda::PtxViewError::Harness(h) => h.span,
                scopecheck_cuda::PtxViewError::Ptx { line: Some(l), .. } => scopecheck_ir::Span {
                    line: *l,
                    column: 1,
                    ..Default::default()
                },
                _ => scopecheck_ir::Span::default(),
            };
            warnings.push(
                Diagnostic::warning(format!("no PTX view from NVRTC: {e}; {fallback}")).at(span),
            );
            None
        }
    }
}

/// Reads and parses one file, with the front-end's warnings.
pub fn read_parse_warn(
    input: &Input,
    cuda: &CudaOptions,
) -> Result<(String, Program, Vec<Diagnostic>), Box<Failure>> {
    read_parse_full(input, cuda).map(|(s, p, w, _)| (s, p, w))
}

/// A file's text, program and warnings, with the words of a litmus test's option comments.
type Parsed = (String, Program, Vec<Diagnostic>, Vec<OptionWord>);

/// Reads and parses one file, with the front-end's warnings and, for a litmus test, the words
/// of its `(* options: ... *)` comments.
/// What loading a file gives: its text, the program, the front-end's warnings, whether the
/// program is the file's PTX view (NVRTC's code: the front-end refused the file), and the
/// file's own options.
type Loaded = (String, Program, Vec<Diagnostic>, bool, Vec<OptionWord>);

/// Reads, preprocesses, parses and lowers `input`: through the language-level front-end, or,
/// for a `.cu` file it refuses (templates, classes, ...) when `ptx_fallback`, as NVRTC
/// compiles it, when its harness can be read. With a `deadline` this runs on a thread of its
/// own that the file's check stops waiting for at the deadline: the file then ends in an
/// error line that says so. No front-end step asks the clock (NVRTC's compile cannot be
/// interrupted at all), so the thread is left to finish on its own and its result dropped;
/// the front-ends' size limits (docs/limits.md) bound what it can still take.
fn load_within(
    input: &Input,
    cuda: &CudaOptions,
    ptx_fallback: bool,
    deadline: Option<Instant>,
) -> Result<Loaded, Box<Failure>> {
    let Some(deadline) = deadline else {
        return load(input, cuda, ptx_fallback);
    };
    let owned = Input {
        file: input.file.clone(),
        path: input.path.clone(),
        problem: input.problem.clone(),
        kernel: input.kernel.clone(),
        spent: input.spent,
    };
    let cuda_owned = cuda.clone();
    let file = input.file.clone();
    let loaded = within(Some(deadline), move || {
        catch_unwind(AssertUnwindSafe(|| load(&owned, &cuda_owned, ptx_fallback))).unwrap_or_else(
            |payload| {
                Err(Failure::internal(
                    &owned.file,
                    None,
                    &crate::render::panic_message(&*payload),
                ))
            },
        )
    });
    loaded.unwrap_or_else(|| Err(Failure::io(&file, inputs::LOADING_TIMED_OUT.into())))
}

/// Runs `work` on a thread of its own (the workers' stack) and waits for it until `deadline`:
/// `None` when the deadline passed first (the thread is left to finish on its own and its
/// result dropped: the front-ends ask no clock). Without a deadline, or when no thread can be
/// made, `work` runs here. A panic in `work` is the caller's to catch.
pub fn within<T: Send + 'static>(
    deadline: Option<Instant>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let Some(deadline) = deadline else {
        return Some(work());
    };
    let (tx, rx) = mpsc::channel();
    // The work moves into the thread only if the thread is made.
    let work = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
    let mine = std::sync::Arc::clone(&work);
    let spawned = std::thread::Builder::new()
        .name("load".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let w = mine.lock().ok().and_then(|mut w| w.take());
            if let Some(w) = w {
                // The caller may have stopped waiting: nobody to tell.
                let _ = tx.send(w());
            }
        });
    if spawned.is_err() {
        let w = work.lock().ok().and_then(|mut w| w.take());
        return w.map(|w| w());
    }
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .ok()
}

/// [`load_within`]'s work, on the thread it runs on.
fn load(input: &Input, cuda: &CudaOptions, ptx_fallback: bool) -> Result<Loaded, Box<Failure>> {
    match read_parse_full(input, cuda) {
        Ok((s, p, w, o)) => Ok((s, p, w, false, o)),
        // Kernels beyond the language-level front-end (templates, classes, ...): the file is
        // checked as NVRTC compiles it, when its harness can be read.
        // Asked for scoped C11 alone, a PTX verdict would answer another question.
        Err(mut f) if ptx_fallback => match ptx_only(input, cuda) {
            Ok((s, p, w)) => Ok((s, p, w, true, Vec::new())),
            Err(why) => {
                // The PTX view's reason, unless it is the same failure (a preprocessor error).
                if let Some(why) = why.filter(|w| !w.contains(f.message())) {
                    f.diagnostic.message =
                        format!("{}; and no PTX view could be made: {why}", f.message());
                }
                Err(f)
            }
        },
        Err(f) => Err(f),
    }
}

fn read_parse_full(input: &Input, cuda: &CudaOptions) -> Result<Parsed, Box<Failure>> {
    let none = |(s, p, w): (String, Program, Vec<Diagnostic>)| (s, p, w, Vec::new());
    if let Some(problem) = &input.problem {
        return Err(Failure::io(&input.file, problem.clone()));
    }
    let source = inputs::read_source(&input.file, &input.path)?;
    let ext = input.path.extension();
    if ext.is_some_and(|e| e == inputs::PTX_EXTENSION) {
        return read_ptx(input, source, cuda).map(none);
    }
    if ext.is_some_and(|e| e == inputs::CUDA_EXTENSION || e == inputs::OPENCL_EXTENSION) {
        let parsed = if ext.is_some_and(|e| e == inputs::OPENCL_EXTENSION) {
            scopecheck_cuda::parse_opencl_with(&source, cuda)
        } else {
            scopecheck_cuda::parse_cuda_with(&source, cuda)
        };
        return match parsed {
            Ok((mut program, warnings)) => {
                // A `.cu` file's test is named after the file, as `seed1` for seed1.cu.
                if let Some(stem) = input.path.file_stem() {
                    program.name = stem.to_string_lossy().into_owned();
                }
                let warnings = warnings.into_iter().map(Diagnostic::from).collect();
                Ok((source, program, warnings, Vec::new()))
            }
            Err(e) => Err(Failure::parse(&input.file, source, e)),
        };
    }
    match scopecheck_litmus::parse_test(&source) {
        Ok(t) => {
            let warnings = t.warnings.into_iter().map(Diagnostic::from).collect();
            Ok((source, t.program, warnings, t.options))
        }
        Err(e) => Err(Failure::parse(&input.file, source, e)),
    }
}

/// Checks a parsed program; a panic inside the checker becomes an internal-error failure for
/// this file instead of ending the whole run.
pub fn check_guarded(
    file: &str,
    source: &str,
    program: &Program,
    opts: &CheckOptions,
) -> Result<Verdict, Box<Failure>> {
    match catch_unwind(AssertUnwindSafe(|| scopecheck_model::check(program, opts))) {
        Ok(Ok(verdict)) => Ok(verdict),
        Ok(Err(e)) => Err(Failure::check(file, source.to_string(), program, &e)),
        Err(payload) => Err(Failure::internal(
            file,
            Some(source.to_string()),
            &crate::render::panic_message(&*payload),
        )),
    }
}
