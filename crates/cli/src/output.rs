//! Standard output and standard error, written so that a failed write is never silent and never
//! a panic.
//!
//! `println!` panics when standard output cannot be written (a full disk, `> /dev/full`) and
//! `let _ = writeln!(stdout, ..)` drops the error: a run whose reports were lost would exit 0.
//! Every report goes through [`write_out`] instead, which remembers the first failure (and drops what
//! follows it, so one lost stream gives one error); `main` asks [`finish`] at the end and turns
//! a failure into exit status 1 with the reason on stderr.
//!
//! A reader that went away (`| head -1`) is different: it asked for no more, so checking more
//! files for it is wasted time. The process ends at once, quietly, with status
//! [`READER_GONE`] (docs/json.md), as a shell reports a tool that the broken pipe's signal
//! ended: `cat` or `grep` in the same place end so.
//!
//! Standard error is where failures are reported, so a failure to write there has nowhere to
//! go: [`write_err`] ignores it, but does not panic as `eprintln!` would.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// Why standard output could not be written, once a write failed.
static STDOUT_FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// The exit status when standard output's reader went away: 128 + SIGPIPE (13), what a shell
/// shows for a tool that signal ended. Not 0, since reports were not delivered, nor 1, which
/// says a file could not be checked or a report was lost to a failure.
pub const READER_GONE: i32 = 141;

/// Writes to standard output; a failure is remembered for [`finish`], and a reader that went
/// away ends the process (see the module's note).
pub fn write_out(args: fmt::Arguments) {
    // A panic elsewhere while the lock was held leaves the state as it was: still usable.
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_some() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        reader_gone(&e);
        *failure = Some(e.to_string());
    }
}

/// Watches, on a thread of its own, for standard output's reader to go away while nothing is
/// being written (a file's check may run for minutes between two reports): a pipe whose
/// reading end closed polls as an error, and the process then ends as a failed write would
/// end it. Only for a pipe; a file or a terminal has no reader to lose.
pub fn watch_reader() {
    // SAFETY: fstat fills the struct it is given, on a descriptor that may be closed (then
    // it fails and nothing is watched).
    let is_pipe = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(libc::STDOUT_FILENO, &mut st) == 0
            && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
    };
    if !is_pipe {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("stdout-reader".into())
        .stack_size(64 * 1024)
        .spawn(|| loop {
            let mut fd = libc::pollfd {
                fd: libc::STDOUT_FILENO,
                events: 0,
                revents: 0,
            };
            // SAFETY: one pollfd, owned here, for the duration of the call.
            let n = unsafe { libc::poll(&mut fd, 1, 100) };
            if n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                reader_gone(&std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            if n < 0 {
                // poll failed (not a pipe after all?): leave the writes to find out.
                return;
            }
        });
}

/// Temporary files to remove if the process ends early (the SARIF log's, before its rename).
static TEMPORARY: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Registers a temporary file that an early end (a reader gone) must not leave behind.
pub fn remove_on_early_end(path: &std::path::Path) {
    let mut t = TEMPORARY.lock().unwrap_or_else(|p| p.into_inner());
    t.push(path.to_path_buf());
}

/// Ends the process quietly when `e` says standard output's reader went away. Every other
/// file's check, running or not, is dropped with it; no file output is left half written:
/// pictures are written whole per file, and the SARIF log's temporary file is removed (the
/// log is not written, as for any run that fails).
fn reader_gone(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        let t = TEMPORARY.lock().unwrap_or_else(|p| p.into_inner());
        for path in t.iter() {
            let _ = std::fs::remove_file(path);
        }
        std::process::exit(READER_GONE);
    }
}

/// Writes to standard error, ignoring a failure (there is nowhere left to report it).
pub fn write_err(args: fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Flushes standard output; returns why some write to it failed, if one did.
pub fn finish() -> Result<(), String> {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_none() {
        if let Err(e) = std::io::stdout().lock().flush() {
            reader_gone(&e);
            *failure = Some(e.to_string());
        }
    }
    match failure.as_ref() {
        Some(why) => Err(format!("cannot write to standard output: {why}")),
        None => Ok(()),
    }
}

/// `print!` through [`write_out`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!($($arg)*))
    };
}

/// `println!` through [`write_out`].
macro_rules! outln {
    () => {
        $crate::output::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` through [`write_err`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
