//! One file through the pipeline: loaded (`scopecheck_frontend::load`), its own options
//! merged with the command line's, checked under each model, compared and, when asked,
//! given suggestions. `check` and `tune` run it per file; `run` and `bench` use its guarded
//! check.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use scopecheck_cuda::CudaOptions;
use scopecheck_frontend::{Input, Kind, Loaded};
use scopecheck_ir::{Diagnostic, Program};
use scopecheck_model::suggest::{self, CostTable, Suggestion};
use scopecheck_model::{CheckOptions, ModelKind, Verdict};

use crate::options::{CheckFlags, FileOptions};
use scopecheck_ir::Failure;

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
    /// Under `--host native`: the file's host program is read by the interpreted harness
    /// instead, and why.
    pub harness: Option<scopecheck_frontend::Harness>,
    /// Which compilation the PTX verdict is about (NVRTC's version, target, options), when
    /// there is a PTX view.
    pub compilation: Option<scopecheck_cuda::Compilation>,
    /// What the race check of the unoptimized compile added to the PTX verdict, when the
    /// optimizer removed accesses and no language view checked the source.
    pub source_races: Option<crate::unoptimized::SourceRaces>,
    pub models: Vec<Option<ModelKind>>,
    pub time: Duration,
}

/// What a file's own options are merged with: the command line's flags and which of them it
/// gave explicitly.
pub struct CommandLine<'a> {
    pub flags: &'a CheckFlags,
    pub given: &'a [String],
    /// Files whose native run was stopped, read by the interpreted harness instead (by
    /// name as reports give it), and why (`crate::native`).
    pub fallbacks: &'a std::collections::HashMap<String, scopecheck_frontend::Harness>,
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
    inject_fault(&input.file, "check");
    // `--timeout` bounds the whole file from here: reading, every model's check, the
    // suggestions (and `tune`, which reuses these options) share one deadline.
    let begun = Instant::now();
    // What reading the file for its kernels took counts against its --timeout.
    let load_by = opts
        .deadline
        .or(opts.timeout.map(|t| begun + t.saturating_sub(input.spent)));
    let is_cu = Kind::of(&input.path) == Kind::Cuda;
    let fallback = cli.fallbacks.get(&input.file);
    let load_options = scopecheck_frontend::Options {
        cuda: cuda.clone(),
        // Asked for scoped C11 alone, a PTX verdict would answer another question.
        ptx_fallback: models != [Some(ModelKind::Src11)],
        // A `.cu` file has no options of its own: the command line's models are its models.
        ptx_view: is_cu && models.contains(&Some(ModelKind::Ptx)),
        // Without a language view in this run, the source's races are looked for in the
        // unoptimized compile where the optimizer removed accesses.
        unoptimized: !models.contains(&Some(ModelKind::Src11)),
        deadline: load_by,
        max_file_size: cli.flags.max_file_size,
        host: if fallback.is_some() {
            scopecheck_frontend::HostMode::Interpreted
        } else {
            cli.flags.host.mode()
        },
    };
    // A host program to run natively is `check`'s, which takes it before this pipeline
    // (crate::native); here it can only be another command's. Loaded again at a smaller
    // launch while the bound on shared threads says so.
    let mut input = input.clone();
    let loaded = loop {
        let loaded =
            scopecheck_frontend::load(&input, &load_options).and_then(|l| l.read(&input.file))?;
        match crate::work_bound::bound(&input, &loaded, cuda) {
            crate::work_bound::Bound::Fits => break loaded,
            crate::work_bound::Bound::Shrink(smaller) => input.kernel = Some(smaller),
            crate::work_bound::Bound::Refuse(why) => {
                return Err(Failure::new(&input.file, why, Some(loaded.source)))
            }
        }
    };
    let input = &input;
    let Loaded {
        source,
        mut program,
        mut ptx_view,
        mut warnings,
        ptx_only,
        compiler,
        option_words,
        harness,
    } = loaded;
    let harness = harness.or_else(|| fallback.cloned());
    // The file's own options, over the defaults and under the command line.
    let (file_opts, file_models, file_options) = if option_words.is_empty() {
        (None, None, FileOptions::default())
    } else {
        let (flags, report) = cli
            .flags
            .with_file_options(cli.given, &option_words)
            .map_err(|e| Failure::in_source(&input.file, source.clone(), e))?;
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
    let (compilation, unoptimized) = match compiler {
        Some(c) => (Some(c.compilation), c.unoptimized),
        None => (None, None),
    };
    let source_races = match (unoptimized, verdicts.iter().position(|v| v.model == "ptx")) {
        (Some(u), Some(k)) => {
            let target = ptx_view.as_mut().unwrap_or(&mut program);
            let opts = CheckOptions {
                model: Some(ModelKind::Ptx),
                ..opts.clone()
            };
            crate::unoptimized::source_races(target, &mut verdicts[k], u, &opts, &mut warnings)
        }
        _ => None,
    };
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
        harness,
        compilation,
        source_races,
        models: models.to_vec(),
        time: start.elapsed(),
    })
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
        Ok(Err(e)) => Err(crate::render::check_failure(
            file,
            source.to_string(),
            program,
            &e,
        )),
        Err(payload) => Err(Failure::internal(
            file,
            Some(source.to_string()),
            &scopecheck_frontend::deadline::panic_message(&*payload),
        )),
    }
}

/// For tests only: `SCOPECHECK_INJECT_FAULT=PART` makes scopecheck panic while checking each
/// file whose name contains PART ([`check_file`], which `tune` shares; `PART@report`:
/// after checking it, while making its report),
/// so that tests can show that a fault costs only that file. Unset, it costs one lookup.
pub fn inject_fault(file: &str, stage: &str) {
    static FAULT: OnceLock<Option<(String, String)>> = OnceLock::new();
    let fault = FAULT.get_or_init(|| {
        let v = std::env::var("SCOPECHECK_INJECT_FAULT").ok()?;
        let (part, at) = v.split_once('@').unwrap_or((&v, "check"));
        Some((part.to_string(), at.to_string()))
    });
    if let Some((part, at)) = fault {
        if !part.is_empty() && at == stage && file.contains(part.as_str()) {
            panic!("fault injected by SCOPECHECK_INJECT_FAULT into {file} ({stage})");
        }
    }
}
