//! Loading under a deadline: no front-end step asks the clock (NVRTC's compile cannot be
//! interrupted at all), so a load that must end by a deadline runs on a thread of its own that
//! the caller stops waiting for.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Instant;

/// The stack of every thread that reads or checks files: a stopgap while some recursion depth
/// in the explorer, the judge, the parsers and the lowerings still follows the input (issue
/// 31); a stack overflow aborts the process and loses every other file's result, which a panic
/// does not. Only the pages used are committed.
pub const WORKER_STACK: usize = 256 << 20;

/// The message of a file whose loading its `--timeout` cut.
pub const LOADING_TIMED_OUT: &str = "the --timeout was reached while loading the file \
    (reading, preprocessing, parsing, lowering, or NVRTC's compile for the PTX view): \
    nothing was checked";

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

/// `load` (one file's reading, preprocessing, parsing and lowering) with a `deadline`: on a
/// thread of its own that the caller stops waiting for at the deadline; the file then ends in
/// an error that says so ([`LOADING_TIMED_OUT`]). The thread is left to finish on its own and
/// its result dropped; the front-ends' size limits (docs/limits.md) bound what it can still
/// take. A panic in `load` becomes the file's internal error.
pub(crate) fn load_within<T: Send + 'static>(
    file: &str,
    deadline: Option<Instant>,
    load: impl FnOnce() -> Result<T, Box<crate::Failure>> + Send + 'static,
) -> Result<T, Box<crate::Failure>> {
    let Some(deadline) = deadline else {
        return load();
    };
    let owned = file.to_string();
    let loaded = within(Some(deadline), move || {
        catch_unwind(AssertUnwindSafe(load)).unwrap_or_else(|payload| {
            Err(crate::Failure::internal(
                &owned,
                None,
                &panic_message(&*payload),
            ))
        })
    });
    loaded.unwrap_or_else(|| Err(crate::Failure::io(file, LOADING_TIMED_OUT.into())))
}

/// What a caught panic said: its message when it was a string, as `panic!` makes it.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
