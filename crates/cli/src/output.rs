//! Standard output and standard error, written so that a failed write is never silent and never
//! a panic.
//!
//! `println!` panics when standard output cannot be written (a full disk, `> /dev/full`) and
//! `let _ = writeln!(stdout, ..)` drops the error: a run whose reports were lost would exit 0.
//! Every report goes through [`write_out`] instead, which remembers the first failure (and drops what
//! follows it, so one lost stream gives one error); `main` asks [`finish`] at the end and turns
//! a failure into exit status 1 with the reason on stderr. A reader that went away (`| head`)
//! is a failure too: the reports it did not read are lost as surely.
//!
//! Standard error is where failures are reported, so a failure to write there has nowhere to
//! go: [`write_err`] ignores it, but does not panic as `eprintln!` would.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// Why standard output could not be written, once a write failed.
static STDOUT_FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Writes to standard output; a failure is remembered for [`finish`].
pub fn write_out(args: fmt::Arguments) {
    // A panic elsewhere while the lock was held leaves the state as it was: still usable.
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_some() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        *failure = Some(e.to_string());
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
