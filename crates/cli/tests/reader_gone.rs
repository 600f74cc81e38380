//! Standard output's reader going away (`scopecheck check DIR | head -1`, issue 31): the run
//! stops at once, checks no further file, says nothing, and exits 141 (docs/json.md).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A directory holding a quick test and, after it in name order, one whose search takes far
/// longer than the test waits (one PTX thread of 10,000 stores, about 2-6 s to check).
fn inputs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let quick = "PTX A\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists (x == 1)\n";
    std::fs::write(dir.join("a.litmus"), quick).unwrap();
    let body: String = (1..=10_000)
        .map(|i| format!(" st.relaxed.gpu x, {i} ;\n"))
        .collect();
    let slow = format!("PTX B\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n{body}forall (x == 10000)\n");
    std::fs::write(dir.join("b.litmus"), slow).unwrap();
}

#[test]
fn a_reader_gone_ends_the_run_at_once_and_quietly() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reader_gone");
    let _ = std::fs::remove_dir_all(&dir);
    inputs(&dir.join("in"));
    let sarif = dir.join("out").join("log.sarif");
    std::fs::create_dir_all(sarif.parent().unwrap()).unwrap();
    // --jobs 1: the slow file is checked after the quick one's report was read.
    let mut child = Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args([
            "check",
            "--json",
            "--jobs",
            "1",
            "--timeout",
            "60s",
            "--sarif",
        ])
        .arg(&sarif)
        .arg(dir.join("in"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scopecheck");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(first.contains("\"name\":\"A\""), "{first}");
    // The reader goes away while the slow file is being checked.
    let gone = Instant::now();
    drop(out);
    let status = child.wait_with_output().unwrap();
    let took = gone.elapsed();
    // Ended by the watcher within its 0.1 s polls, not when the slow check finished.
    assert!(
        took < Duration::from_secs(1),
        "took {took:?} after the reader left"
    );
    assert_eq!(status.status.code(), Some(141), "{status:?}");
    assert!(
        status.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    // No SARIF log, and no temporary file left beside it.
    let left: Vec<_> = std::fs::read_dir(sarif.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
