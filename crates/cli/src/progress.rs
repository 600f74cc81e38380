//! Progress of long checks on stderr: executions found, blocked executions and the rate, shown
//! once a check has run for a second, and only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use scopecheck_model::Counters;

/// How long a run goes before progress is shown.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Counters for the searches, when progress is worth showing (stderr is a terminal).
pub fn counters() -> Option<Arc<Counters>> {
    std::io::stderr()
        .is_terminal()
        .then(|| Arc::new(Counters::default()))
}

/// Shows the counters on stderr until `done` is set; call on its own thread.
pub fn show(counters: &Counters, done: &AtomicBool) {
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let elapsed = start.elapsed();
        if elapsed < SHOW_AFTER {
            continue;
        }
        let bar = bar.get_or_insert_with(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b
        });
        let executions = counters.executions.load(Ordering::Relaxed);
        let blocked = counters.blocked.load(Ordering::Relaxed);
        let rate = (executions + blocked) as f64 / elapsed.as_secs_f64();
        bar.set_message(format!(
            "{executions} executions, {blocked} blocked, {rate:.0} graphs/s"
        ));
        bar.tick();
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}
