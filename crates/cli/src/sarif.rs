//! `check --sarif FILE`: one SARIF 2.1.0 log of the whole run (`scopecheck_report::sarif`),
//! written when every file has been reported.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use scopecheck_report::sarif::{CheckedVerdict, SarifLog};

use crate::check::Checked;
use crate::inputs::Input;
use crate::render::Failure;

/// Where the log goes, and the log so far.
pub struct SarifOutput {
    /// `None`: standard output (`--sarif -`).
    file: Option<(PathBuf, File)>,
    log: SarifLog,
}

impl SarifOutput {
    /// Opens `path` (`-`: standard output) before anything is checked, so that a path that
    /// cannot be written is a usage error at once, not after the run. `json`: whether the
    /// reports go to standard output as JSON lines, which the log cannot share.
    pub fn open(path: &Path, json: bool) -> Result<SarifOutput, String> {
        let file = if path == Path::new("-") {
            if json {
                return Err("--sarif - would write the SARIF log to standard output, where --json writes its lines: give --sarif a file name".into());
            }
            None
        } else {
            let f = File::create(path)
                .map_err(|e| format!("cannot write the SARIF log {}: {e}", path.display()))?;
            Some((path.to_path_buf(), f))
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

    /// Adds one file's results: what checking it found, or why it was not checked.
    pub fn add(&mut self, input: &Input, result: &Result<Checked, Box<Failure>>) {
        match result {
            Ok(c) => {
                let warnings: Vec<_> = c
                    .warnings
                    .iter()
                    .map(|w| (w.span, w.message.clone()))
                    .collect();
                let verdicts: Vec<CheckedVerdict> = c
                    .verdicts
                    .iter()
                    .map(|verdict| CheckedVerdict {
                        program: c.program_of(verdict),
                        verdict,
                    })
                    .collect();
                self.log
                    .add_checked(&input.file, &c.source, &warnings, &verdicts);
            }
            Err(f) => self.add_failure(f),
        }
    }

    /// Adds a file that could not be read, parsed or checked.
    pub fn add_failure(&mut self, f: &Failure) {
        let (span, source) = f.position();
        let message = match f.help() {
            Some(help) => format!("{}; {help}", f.message),
            None => f.message.clone(),
        };
        self.log.add_input_error(&f.file, source, span, &message);
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
            Some((path, mut f)) => writeln!(f, "{text}")
                .and_then(|_| f.flush())
                .map_err(|e| format!("cannot write the SARIF log {}: {e}", path.display())),
            None => {
                let mut out = std::io::stdout().lock();
                // A closed stdout (`| head`) is not worth an error, as for the reports.
                let _ = writeln!(out, "{text}");
                Ok(())
            }
        }
    }
}
