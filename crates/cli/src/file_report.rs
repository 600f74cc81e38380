//! One file's report, made whole before any of it is written: the text or JSON line for
//! standard output, what goes to standard error, the pictures `--graph` writes and the SARIF
//! results. It is made on the thread that checked the file, inside one guard ([`make`]): a
//! panic anywhere in reading, parsing, lowering, checking, suggesting or reporting one file
//! becomes that file's error (an error line, an `input-error` result) and the run goes on.
//! A report made whole is written whole or not at all (the writes themselves are checked,
//! `output`).

use crate::render::Render;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use scopecheck_model::Verdict;
use scopecheck_report::sarif::SarifResult;

use scopecheck_frontend::deadline::panic_message;
use scopecheck_frontend::Input;

use crate::options::FileOptions;
use crate::pipeline::{inject_fault, Checked};
use scopecheck_ir::Failure;

/// Where the reports go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Text reports on stdout, failures on stderr.
    Text,
    /// One JSON object per file on stdout, failures included.
    Json,
    /// The SARIF log takes stdout: only failures (stderr) and the pictures.
    Quiet,
}

/// One file's report, ready to be written.
#[derive(Debug, Default)]
pub struct FileReport {
    pub stdout: String,
    pub stderr: String,
    /// Whether the file was checked and its pictures (with `--graph`) all written.
    pub ok: bool,
}

/// With `--graph`: the directory and the name this file's pictures are written under.
pub type Graphs<'a> = Option<(&'a Path, &'a str)>;

/// Everything the printer needs of one file.
pub struct Done {
    pub report: FileReport,
    /// With `--sarif`: the file's results.
    pub sarif: Vec<SarifResult>,
    /// The verdicts, for `--fail-on` (none when the file was not checked).
    pub verdicts: Vec<Verdict>,
}

/// Checks one file (`check`) and makes its report, its SARIF results (when `sarif`) and what
/// `--fail-on` needs, all inside one guard: a panic anywhere in them becomes this file's
/// internal-error failure, reported as any failure is, and the files after it are still
/// checked. (A stack overflow is no panic and cannot be caught: the worker threads' stacks
/// are large, `scopecheck_frontend::WORKER_STACK`, until no recursion depends on the input.)
pub fn make(
    input: &Input,
    check: impl FnOnce() -> Result<Checked, Box<Failure>>,
    mode: Mode,
    graphs: Graphs,
    sarif: bool,
) -> Done {
    let made = catch_unwind(AssertUnwindSafe(|| {
        let result = check();
        if result.is_ok() {
            inject_fault(&input.file, "report");
        }
        let report = render(input, &result, mode, graphs);
        let sarif = if sarif {
            crate::sarif::results_of(input, &result)
        } else {
            Vec::new()
        };
        let verdicts = result.map(|c| c.verdicts).unwrap_or_default();
        Done {
            report,
            sarif,
            verdicts,
        }
    }));
    made.unwrap_or_else(|payload| {
        let f = Failure::internal(&input.file, None, &panic_message(&*payload));
        Done {
            report: failure(&f, mode),
            sarif: if sarif {
                crate::sarif::failure_results(&f)
            } else {
                Vec::new()
            },
            verdicts: Vec::new(),
        }
    })
}

/// Makes the report of one file: its verdicts or its failure, in `mode`; writes its pictures.
pub fn render(
    input: &Input,
    result: &Result<Checked, Box<Failure>>,
    mode: Mode,
    graphs: Graphs,
) -> FileReport {
    let c = match result {
        Ok(c) => c,
        Err(f) => return failure(f, mode),
    };
    let drawn = graphs.map(|(dir, name)| write_graphs(dir, name, c));
    let mut report = FileReport {
        ok: true,
        ..FileReport::default()
    };
    if let Some((_, Some(why))) = &drawn {
        report.ok = false;
        // JSON mode carries it in the file's line (`graphs_error`), so stderr stays for
        // what stops a file.
        if mode != Mode::Json {
            report.stderr = format!("error: {}: {why}\n", input.file);
        }
    }
    match mode {
        Mode::Text => report.stdout = text(input, c, drawn.as_ref()),
        Mode::Json => {
            let line = json(input, c, drawn.as_ref());
            report.stdout = format!("{line}\n");
        }
        Mode::Quiet => {}
    }
    report
}

/// The report of a file that could not be read, parsed or checked.
pub fn failure(f: &Failure, mode: Mode) -> FileReport {
    let mut report = FileReport::default();
    match mode {
        Mode::Json => report.stdout = format!("{}\n", f.json()),
        Mode::Text | Mode::Quiet => report.stderr = format!("{}\n", f.as_text()),
    }
    report
}

/// The pictures written (paths), and why the next one could not be, if one could not.
type Drawn = (Vec<String>, Option<String>);

/// The text report of a checked file.
fn text(input: &Input, c: &Checked, drawn: Option<&Drawn>) -> String {
    let mut out = String::new();
    let both = c.verdicts.len() > 1;
    if let Some(h) = &c.harness {
        let _ = writeln!(out, "Harness {}: {}", h.name, h.why);
    }
    for w in &c.warnings {
        let _ = writeln!(out, "Warning line {}: {}", w.line(), w.message);
    }
    if let Some(k) = &c.kernel {
        let opencl = input.file.ends_with(".cl");
        let _ = writeln!(out, "Kernel {}: {}", c.program.name, k.describe(opencl));
    }
    if let Some(line) = options_line(&c.program.name, &c.file_options) {
        let _ = writeln!(out, "{line}");
    }
    for v in &c.verdicts {
        if both {
            let _ = writeln!(out, "Model {}", v.model);
        }
        // A PTX verdict is about one compilation: which, before the verdict.
        if let (Some(comp), "ptx") = (&c.compilation, v.model) {
            let _ = writeln!(out, "Compilation {}", comp.describe());
            if let Some(s) = &c.source_races {
                let _ = writeln!(
                    out,
                    "Compilation {} (its races added: {}{})",
                    s.compilation.describe(),
                    s.added,
                    if s.complete { "" } else { ", incomplete" }
                );
            }
        }
        let _ = writeln!(
            out,
            "{}",
            scopecheck_report::text(c.program_of(v), v, c.time)
        );
    }
    if both {
        let _ = write!(
            out,
            "{}",
            scopecheck_report::compare_text(&c.program, &c.disagreements)
        );
        let _ = writeln!(out);
    }
    // Source programs (not litmus tests, whose herd7-shaped report says it all) get their
    // findings against their own lines.
    if input.file.ends_with(".cu") || input.file.ends_with(".cl") {
        for f in scopecheck_report::findings(c.program_of(&c.verdicts[0]), &c.verdicts[0]) {
            let _ = writeln!(
                out,
                "{}",
                crate::render::finding_text(&input.file, &c.source, &f)
            );
        }
    }
    if !c.suggestions.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            scopecheck_report::suggestions_text(&c.program, &c.suggestions)
        );
    }
    // A list the deadline cut says so, empty or not: cheaper fixes may exist.
    if let Some(why) = &c.suggestions_incomplete {
        let _ = writeln!(out, "Suggestions incomplete: {why}");
    }
    match drawn {
        // The failure is on stderr; the pictures written before it are not listed.
        Some((_, Some(_))) | None => {}
        Some((w, None)) if w.is_empty() => {
            let _ = writeln!(
                out,
                "Graphs {}: none (no execution to draw)",
                c.program.name
            );
        }
        Some((w, None)) => {
            let _ = writeln!(out, "Graphs {}: {}", c.program.name, w.join(" "));
        }
    }
    out
}

/// The JSON line of a checked file (docs/json.md): with more than one verdict (`--model both`,
/// on the command line or in the file), one line holding them all.
fn json(input: &Input, c: &Checked, drawn: Option<&Drawn>) -> serde_json::Value {
    let mut line = if c.verdicts.len() > 1 {
        scopecheck_report::json_both(
            &input.file,
            &c.program,
            &|v| c.program_of(v),
            &c.verdicts,
            &c.disagreements,
            c.time,
        )
    } else {
        scopecheck_report::json(
            &input.file,
            c.program_of(&c.verdicts[0]),
            &c.verdicts[0],
            c.time,
        )
    };
    // The PTX verdict's object says which compilation it is about.
    let ptx_verdict = match &mut line {
        serde_json::Value::Object(m) if c.verdicts.len() > 1 => m
            .get_mut("verdicts")
            .and_then(|v| v.as_array_mut())
            .and_then(|vs| vs.iter_mut().find(|v| v["model"] == "ptx")),
        v => Some(v).filter(|v| v["model"] == "ptx"),
    };
    if let (Some(serde_json::Value::Object(m)), Some(comp)) = (ptx_verdict, &c.compilation) {
        m.insert(
            "compilation".into(),
            crate::unoptimized::compilation_json(comp),
        );
        if let Some(s) = &c.source_races {
            m.insert("unoptimized".into(), crate::unoptimized::json(s));
        }
    }
    if let serde_json::Value::Object(m) = &mut line {
        let warnings: Vec<serde_json::Value> = c
            .warnings
            .iter()
            .map(|w| {
                serde_json::json!({
                    "line": w.line(),
                    "column": w.column(),
                    "message": w.message,
                })
            })
            .collect();
        m.insert("warnings".into(), warnings.into());
        if let Some(h) = &c.harness {
            m.insert("harness".into(), h.name.into());
            m.insert("harness_reason".into(), h.why.clone().into());
        }
        let findings = scopecheck_report::findings(c.program_of(&c.verdicts[0]), &c.verdicts[0]);
        m.insert(
            "diagnostics".into(),
            scopecheck_report::diagnostics_json(&input.file, &findings),
        );
        m.insert(
            "suggestions".into(),
            scopecheck_report::suggestions_json(&c.program, &c.suggestions),
        );
        if let Some(k) = &c.kernel {
            m.insert("kernel".into(), kernel_json(k));
        }
        // Only where the deadline cut the search for suggestions.
        if let Some(why) = &c.suggestions_incomplete {
            m.insert("suggestions_incomplete".into(), why.clone().into());
        }
        m.insert("file_options".into(), c.file_options.applied.clone().into());
        m.insert(
            "file_options_overridden".into(),
            c.file_options.overridden.clone().into(),
        );
        if let Some((written, error)) = drawn {
            m.insert("graphs".into(), written.clone().into());
            m.insert("graphs_error".into(), error.clone().into());
        }
    }
    line
}

/// The `kernel` object of a kernel-only file's line (docs/json.md): the kernel, the launch
/// checked, the one asked when that was larger, the buffers and the scalar arguments.
fn kernel_json(k: &scopecheck_cuda::KernelChoice) -> serde_json::Value {
    let args: serde_json::Map<String, serde_json::Value> = k
        .scalars
        .iter()
        .map(|(n, v)| (n.clone(), v.clone().into()))
        .collect();
    serde_json::json!({
        "name": k.name,
        "grid": k.grid,
        "block": k.block,
        "launch_from": match k.source {
            scopecheck_cuda::LaunchSource::CommandLine => "command-line",
            scopecheck_cuda::LaunchSource::FileComment => "file-comment",
            scopecheck_cuda::LaunchSource::Default => "default",
        },
        "reduced": k.asked.is_some(),
        "asked_grid": k.asked.map(|(g, _)| g),
        "asked_block": k.asked.map(|(_, b)| b),
        "shared_threads": k.shared,
        "buffer_elements": k.buffer,
        "init": k.init.to_string(),
        "args": args,
    })
}

/// The text report's line for a file's own options: `Options NAME --unroll 3 (from the
/// file)`, and those the command line overrode; `None` when the file set none.
fn options_line(name: &str, o: &FileOptions) -> Option<String> {
    if o.applied.is_empty() && o.overridden.is_empty() {
        return None;
    }
    let mut line = format!("Options {name}");
    if !o.applied.is_empty() {
        line.push_str(&format!(" {} (from the file)", o.applied.join(" ")));
    }
    if !o.overridden.is_empty() {
        line.push_str(&format!(
            " (the command line overrides the file's {})",
            o.overridden.join(" ")
        ));
    }
    Some(line)
}

/// The name each input's pictures are written under: its file stem, made safe for a file
/// name; a stem met before gets `-2`, `-3`, ... so that no two inputs share files.
pub fn graph_names(inputs: &[Input]) -> Vec<String> {
    let mut used = std::collections::BTreeSet::new();
    inputs
        .iter()
        .map(|input| {
            let stem = input
                .path
                .file_stem()
                .map_or_else(|| "test".into(), |s| s.to_string_lossy().into_owned());
            let base = scopecheck_report::file_name_part(&stem);
            let mut name = base.clone();
            let mut k = 2;
            while !used.insert(name.clone()) {
                name = format!("{base}-{k}");
                k += 1;
            }
            name
        })
        .collect()
}

/// Writes the pictures of each verdict of `c` into `dir` as `NAME.MODEL.ROLE.dot` and `.svg`;
/// returns the paths written and, when one could not be, why (nothing more is tried).
fn write_graphs(dir: &Path, name: &str, c: &Checked) -> Drawn {
    let mut written = Vec::new();
    for v in &c.verdicts {
        for p in scopecheck_report::pictures(c.program_of(v), v) {
            for (ext, text) in [("dot", &p.dot), ("svg", &p.svg)] {
                let path = dir.join(format!("{name}.{}.{}.{ext}", v.model, p.role));
                if let Err(e) = std::fs::write(&path, text) {
                    return (
                        written,
                        Some(format!("cannot write {}: {e}", path.display())),
                    );
                }
                written.push(path.display().to_string());
            }
        }
    }
    (written, None)
}

/// With `--graph DIR`: makes the directory and proves that files can be made in it, before
/// anything is checked, so that a directory that cannot be written is bad usage found at once
/// (as a `--sarif` file that cannot be made is), not a failure of every file after the run.
pub fn prepare_graph_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the --graph directory {}: {e}", dir.display()))?;
    let probe = dir.join(format!(".scopecheck-probe-{}", std::process::id()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe);
    match made {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot write into the --graph directory {}: {e}",
            dir.display()
        )),
    }
}
