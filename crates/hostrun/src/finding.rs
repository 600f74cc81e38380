//! What the native host path reports about the device, as data: the reads of the execution
//! behind an outcome, races, hangs, failed kernel asserts, faults, cut explorations and calls
//! not modelled, each at its place in the user's files. The explored program is made anew at
//! every observation (its threads and locations numbered its own way), so everything here
//! carries names and places, not the program's ids; the CLI renders it (`crates/cli`).

use scopecheck_ir::Span;

use crate::device::At;

/// A place in one of the user's files: a kernel's instruction (`column` > 0), or a whole line
/// (`column` 0: a launch, where the explored harness stands for the host's call).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    pub file: String,
    pub line: u32,
    /// 1-based, in bytes; 0 for the whole line.
    pub column: u32,
    /// Bytes from `column`.
    pub len: usize,
    /// The instruction's text (a launch: the kernel's name).
    pub text: String,
}

impl Site {
    /// The span of this site in `source`, the text of `self.file`: found from its line and
    /// column (the device part the front-end read keeps every line where it was, but not every
    /// byte offset), kept inside its line; a whole line without its indentation. `None` when
    /// the line is not in `source`.
    pub fn span(&self, source: &str) -> Option<Span> {
        let start = source
            .split_inclusive('\n')
            .take(self.line.checked_sub(1)? as usize)
            .map(str::len)
            .sum::<usize>();
        let rest = source.get(start..)?;
        if rest.is_empty() && self.line > 1 {
            return None;
        }
        let text = rest.split('\n').next().unwrap_or("").trim_end_matches('\r');
        let (from, len) = if self.column == 0 {
            let indent = text.len() - text.trim_start().len();
            (indent, text.trim().len())
        } else {
            let from = (self.column as usize - 1).min(text.len());
            (from, self.len.min(text.len() - from))
        };
        let mut offset = start + from;
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        Some(Span {
            offset,
            len,
            line: self.line,
            column: (offset - start) as u32 + 1,
        })
    }
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One memory access of a thread, as a race names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Access {
    pub thread: String,
    pub site: Site,
    /// The location as the kernels name it (an allocation by the parameter it was passed to).
    pub location: String,
    /// A write (or an RMW's write); otherwise a read.
    pub write: bool,
}

/// A write some read took its value from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    pub thread: String,
    pub site: Site,
}

/// One read of a device execution: what it read and from which write (`None`: the value the
/// memory held when the launches began).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    pub thread: String,
    pub site: Site,
    pub location: String,
    pub value: i64,
    pub from: Option<Writer>,
}

/// The reads of one device execution: the one behind an outcome of an observation.
pub type Witness = Vec<Read>;

/// A thread that waits forever in a hang: where, and the values that never let it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub thread: String,
    pub site: Site,
    /// Empty for a thread waiting at a barrier.
    pub waits: Vec<(String, i64)>,
}

/// The two kinds of race of the language models (data, heterogeneous).
pub use scopecheck_model::RaceKind;

/// What an observation's exploration (or a call) found, to report whatever the host does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    Race {
        kind: RaceKind,
        first: Access,
        second: Access,
        /// The first launch of the work explored.
        launched_at: At,
    },
    Hang {
        waiting: Vec<Waiting>,
        /// The weakest scheduler under which it happens.
        progress: String,
        reason: String,
        launched_at: At,
    },
    /// An assertion in a kernel fails in some execution; the reads of one.
    DeviceAssert { launched_at: At, witness: Witness },
    /// The exploration was cut short: its outcomes may be missing some.
    Incomplete { launched_at: At, reason: String },
    /// A fault on the device (out-of-bounds access, ...), which stops the process.
    Fault {
        at: At,
        site: Option<Site>,
        message: String,
    },
    /// A runtime call the native path does not model, which stops the process.
    Unsupported { at: At, what: String },
    /// Device work or a call the native path cannot go on with (what, where), which stops
    /// the process.
    Stopped { why: String },
}

impl Finding {
    pub fn is_race(&self) -> bool {
        matches!(self, Finding::Race { .. })
    }
}

impl std::fmt::Display for Finding {
    /// One line, as the first slice printed its findings.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Race {
                kind,
                first,
                second,
                launched_at,
            } => write!(
                f,
                "race ({kind:?}): {} `{}` and {} `{}` (launched at {launched_at})",
                first.site, first.site.text, second.site, second.site.text
            ),
            Finding::Hang {
                waiting, reason, ..
            } => {
                let at: Vec<String> = waiting
                    .iter()
                    .map(|w| format!("{} `{}`", w.site, w.site.text))
                    .collect();
                write!(f, "hang: {} ({reason})", at.join(", "))
            }
            Finding::DeviceAssert { launched_at, .. } => write!(
                f,
                "an assertion in a kernel fails in some execution of the launches from {launched_at}"
            ),
            Finding::Incomplete {
                launched_at,
                reason,
            } => write!(
                f,
                "the exploration of the launches from {launched_at} is incomplete: {reason}"
            ),
            Finding::Fault { at, site, message } => match site {
                Some(s) => write!(f, "{s}: a fault on the device: {message}"),
                None => write!(f, "{at}: a fault on the device: {message}"),
            },
            Finding::Unsupported { at, what } => write!(
                f,
                "{at}: `{what}` is not supported by the native host path yet"
            ),
            Finding::Stopped { why } => f.write_str(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: u32, column: u32, len: usize) -> Site {
        Site {
            file: "f.cu".into(),
            line,
            column,
            len,
            text: String::new(),
        }
    }

    /// A site is found from its line and column: line 2 starts at byte 11 ("int a = 1;\n"),
    /// so column 5 of it is byte 15, the `*p` there.
    #[test]
    fn a_site_is_placed_by_line_and_column() {
        let src = "int a = 1;\n    *p = 2;\n";
        let s = site(2, 5, 2).span(src).unwrap();
        assert_eq!((s.offset, s.len, s.line, s.column), (15, 2, 2, 5));
        assert_eq!(&src[s.offset..s.offset + s.len], "*p");
    }

    /// A whole line (a launch) is its text without the indentation; a length past the line's
    /// end is cut at it; a line past the file is no place.
    #[test]
    fn whole_lines_and_long_spans_stay_on_their_line() {
        let src = "a;\n  k<<<1, 1>>>(p);\nb;";
        let s = site(2, 0, 0).span(src).unwrap();
        assert_eq!(&src[s.offset..s.offset + s.len], "k<<<1, 1>>>(p);");
        let s = site(3, 1, 40).span(src).unwrap();
        assert_eq!(&src[s.offset..s.offset + s.len], "b;");
        assert_eq!(site(9, 1, 1).span(src), None);
    }
}
