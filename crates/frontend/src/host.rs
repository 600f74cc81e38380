//! Which harness runs a `.cu` file's host program (issue 35), decided while loading:
//! - `--host interpreted` (the default): the CUDA front-end reads `main()` as a thread of the
//!   explored program (the subset docs/cuda.md describes);
//! - `--host native`: the host part is built by the system C++ compiler and run
//!   (`scopecheck-hostrun`, docs/host.md), unless the host code touches memory a running
//!   kernel may access (zero-copy memory, host threads, completion polling, managed memory
//!   used between a launch and a wait: `scopecheck_hostrun::concurrent`), which only the
//!   interpreted harness explores. Such a file is read as under `--host interpreted`, and
//!   [`crate::Loaded::harness`] says why.

use scopecheck_cuda::CudaOptions;
use scopecheck_hostrun::{HostError, Native, Prepared};
use scopecheck_ir::{Diagnostic, Span};

use crate::{Failure, Input, Kind};

/// How a `.cu` file's `main()` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostMode {
    /// Read by the CUDA front-end and explored as a thread of the program.
    #[default]
    Interpreted,
    /// Compiled and run, the device explored at each observation, where it can be.
    Native,
}

/// A `.cu` file whose host program runs natively: built, ready to run.
#[derive(Debug)]
pub struct NativeHost {
    /// The file's text, for diagnostics.
    pub source: String,
    pub program: Native,
}

/// Why a file asked to run natively runs on the interpreted harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Harness {
    pub name: &'static str,
    pub why: String,
}

/// What preparing a file for its host harness gave.
pub(crate) enum Chosen {
    Native(Box<NativeHost>),
    Interpreted(Harness),
}

/// Whether `input` is a file whose host program the native path runs when asked: a `.cu`
/// file checked whole (not one kernel of a kernel-only file), without `--harness`; `None`:
/// yes; otherwise why not.
fn not_native(input: &Input, cuda: &CudaOptions) -> Option<&'static str> {
    if Kind::of(&input.path) != Kind::Cuda {
        return Some("not a .cu file");
    }
    if input.kernel.is_some() {
        return Some("a kernel-only file: no host program");
    }
    if cuda.harness.is_some() {
        return Some("a harness in its own file (--harness) is read by the interpreter");
    }
    None
}

/// Prepares `input` for the native host path: built, or why the interpreted harness reads it
/// (`None`: the file is not one the native path runs at all).
pub(crate) fn choose(
    input: &Input,
    cuda: &CudaOptions,
    max_file_size: u64,
) -> Result<Option<Chosen>, Box<Failure>> {
    if not_native(input, cuda).is_some() {
        return Ok(None);
    }
    let source = crate::read::read_source(&input.file, &input.path, max_file_size)?;
    match scopecheck_hostrun::prepare(&input.path, &source, cuda) {
        Ok(Prepared::Native(program)) => Ok(Some(Chosen::Native(Box::new(NativeHost {
            source,
            program: *program,
        })))),
        Ok(Prepared::Interpreted(c)) => Ok(Some(Chosen::Interpreted(Harness {
            name: "interpreted",
            why: format!(
                "the host code touches memory a running kernel may access ({c}); only the interpreted harness explores that"
            ),
        }))),
        Err(e) => Err(host_error(&input.file, source, e)),
    }
}

/// A native-path error as a diagnostic of the file: a compile error at the first line the
/// compiler names in the file, with all its messages.
fn host_error(file: &str, source: String, e: HostError) -> Box<Failure> {
    let span = match &e {
        HostError::Compile { messages, .. } => first_position(messages, file, &source),
        _ => None,
    };
    let mut d = Diagnostic::error(e.to_string());
    if let Some(span) = span {
        d = d.at(span);
    }
    Failure::in_source(file, source, d)
}

/// The first `FILE:LINE:COL:` of `messages` that names `file`, as a span of `source`.
fn first_position(messages: &str, file: &str, source: &str) -> Option<Span> {
    let prefix = format!("{file}:");
    messages.lines().find_map(|l| {
        let rest = l.strip_prefix(&prefix)?;
        let mut parts = rest.splitn(3, ':');
        let line: u32 = parts.next()?.parse().ok()?;
        let column: u32 = parts.next()?.parse().ok()?;
        let start: usize = source
            .split_inclusive('\n')
            .take(line.saturating_sub(1) as usize)
            .map(str::len)
            .sum();
        let offset = (start + column.saturating_sub(1) as usize).min(source.len());
        Some(Span {
            offset,
            len: 1.min(source.len() - offset),
            line,
            column,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compiler message names the user's line and column; other files' lines are passed by.
    #[test]
    fn the_first_message_in_the_file_places_the_error() {
        let src = "int main() {\n  int x = y;\n}\n";
        let m = "in file included from a.h:3:1:\nk.cu:2:11: error: 'y' was not declared\n";
        let s = first_position(m, "k.cu", src).expect("a position");
        assert_eq!((s.line, s.column, s.offset), (2, 11, 23));
        assert_eq!(&src[s.offset..s.offset + 1], "y");
        assert!(first_position("ld: undefined reference", "k.cu", src).is_none());
    }
}
