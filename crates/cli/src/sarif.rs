//! `check --sarif FILE`: one SARIF 2.1.0 log of the whole run (`scopecheck_report::sarif`),
//! written when every file has been reported. The log is complete or absent: it is written to
//! a temporary file beside FILE and renamed onto FILE only once whole, and a FILE left by an
//! earlier run is removed at the start, so a run that dies leaves no log to be mistaken for
//! its own.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use scopecheck_report::sarif::{CheckedVerdict, SarifLog, SarifResult};

use scopecheck_frontend::Input;

use crate::pipeline::Checked;
use scopecheck_ir::Failure;

/// Where the log goes, and the log so far.
pub struct SarifOutput {
    /// `None`: standard output (`--sarif -`).
    file: Option<LogFile>,
    log: SarifLog,
}

/// A log file being made: the path asked for, and the temporary file beside it that becomes
/// it (none when the path is a device or a pipe, which is written as it is).
struct LogFile {
    path: PathBuf,
    temp: Option<PathBuf>,
    file: File,
}

impl SarifOutput {
    /// Opens `path` (`-`: standard output) before anything is checked, so that a path that
    /// cannot be written is a usage error at once, not after the run: the temporary file is
    /// made in its directory (where the rename needs it), and an old log at `path` is removed.
    /// `json`: whether the reports go to standard output as JSON lines, which the log cannot
    /// share.
    pub fn open(path: &Path, json: bool) -> Result<SarifOutput, String> {
        let file = if path == Path::new("-") {
            if json {
                return Err("--sarif - would write the SARIF log to standard output, where --json writes its lines: give --sarif a file name".into());
            }
            None
        } else {
            Some(LogFile::open(path)?)
        };
        Ok(SarifOutput {
            file,
            log: SarifLog::new(),
        })
    }

    /// Whether the log takes standard output, so the text reports are not printed there.
    pub fn on_stdout(&self) -> bool {
        self.file.is_none()
    }

    /// Adds a file that could not be read, parsed or checked.
    pub fn add_failure(&mut self, f: &Failure) {
        self.push_all(failure_results(f));
    }

    /// Adds results another subcommand made (`tune`).
    pub fn push_all(&mut self, results: Vec<scopecheck_report::sarif::SarifResult>) {
        for r in results {
            self.log.push(r);
        }
    }

    /// Writes the log.
    pub fn finish(self) -> Result<(), String> {
        let cwd = std::env::current_dir().ok();
        // No home page is invented: informationUri appears once the package names one.
        let homepage = option_env!("CARGO_PKG_HOMEPAGE").filter(|h| !h.is_empty());
        let json = self
            .log
            .to_json(env!("CARGO_PKG_VERSION"), homepage, cwd.as_deref());
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        match self.file {
            Some(f) => f.finish(&text),
            None => {
                crate::output::outln!("{text}");
                Ok(())
            }
        }
    }
}

/// One file's results, made on the thread that checked it (the log only collects them): what
/// checking found, or why the file was not checked.
pub fn results_of(input: &Input, result: &Result<Checked, Box<Failure>>) -> Vec<SarifResult> {
    let c = match result {
        Ok(c) => c,
        Err(f) => return failure_results(f),
    };
    let verdicts: Vec<CheckedVerdict> = c
        .verdicts
        .iter()
        .map(|verdict| CheckedVerdict {
            program: c.program_of(verdict),
            verdict,
        })
        .collect();
    let mut log = SarifLog::new();
    log.add_checked(&input.file, &c.source, &c.warnings, &verdicts);
    let mut results = log.results().to_vec();
    // A result the PTX verdict made is about one compilation: which, in its properties.
    if let Some(comp) = &c.compilation {
        for r in &mut results {
            let by_ptx = r
                .properties
                .get("models")
                .and_then(|m| m.as_array())
                .is_some_and(|m| m.iter().any(|x| x == "ptx"));
            if by_ptx {
                r.properties.insert(
                    "compilation".into(),
                    crate::unoptimized::compilation_json(comp),
                );
            }
        }
    }
    results
}

/// The `input-error` result of a file that could not be read, parsed or checked.
pub fn failure_results(f: &Failure) -> Vec<SarifResult> {
    let mut log = SarifLog::new();
    log.add_input_error(&f.diagnostic, f.text.as_deref());
    log.results().to_vec()
}

impl LogFile {
    fn open(path: &Path) -> Result<LogFile, String> {
        let cannot = |e: &dyn std::fmt::Display| {
            format!("cannot write the SARIF log {}: {e}", path.display())
        };
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(cannot(&"it is a directory")),
            // `/dev/stdout`, a pipe: nothing to rename onto; written as it is.
            Ok(m) if !m.is_file() => {
                let file = File::create(path).map_err(|e| cannot(&e))?;
                return Ok(LogFile {
                    path: path.to_path_buf(),
                    temp: None,
                    file,
                });
            }
            _ => {}
        }
        let name = path
            .file_name()
            .ok_or_else(|| cannot(&"the path names no file"))?;
        let temp = path.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&temp).map_err(|e| cannot(&e))?;
        crate::output::remove_on_early_end(&temp);
        // The old log would outlive a run that dies before the rename.
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                return Err(cannot(&e));
            }
        }
        Ok(LogFile {
            path: path.to_path_buf(),
            temp: Some(temp),
            file,
        })
    }

    /// Writes the whole log to the temporary file and renames it onto the path asked for; on
    /// failure the temporary file is removed and no log is left.
    fn finish(mut self, text: &str) -> Result<(), String> {
        let written = writeln!(self.file, "{text}")
            .and_then(|_| self.file.flush())
            .and_then(|_| match &self.temp {
                Some(temp) => std::fs::rename(temp, &self.path),
                None => Ok(()),
            });
        written.map_err(|e| {
            if let Some(temp) = &self.temp {
                let _ = std::fs::remove_file(temp);
            }
            format!("cannot write the SARIF log {}: {e}", self.path.display())
        })
    }
}
