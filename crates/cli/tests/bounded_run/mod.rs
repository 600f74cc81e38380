//! Running the scopecheck binary under a deadline, shared by the integration tests that feed it
//! hostile inputs: a hang is a test failure, not a stuck suite.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run gave.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs scopecheck with `args`, killing it and failing the test after `limit`.
pub fn run_within(limit: Duration, args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scopecheck");
    // Read both pipes while waiting, so that a full pipe cannot stall the child.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for scopecheck") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("scopecheck {args:?} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}
