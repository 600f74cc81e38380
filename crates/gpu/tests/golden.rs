//! Golden tests of the generated PTX: the whole text of a few tests' modules is compared with
//! the file under `tests/golden/`. The litmus sources are copies kept beside the goldens, so that
//! an edit to the corpus does not change them. After an intended change, `BLESS=1 cargo test -p
//! scopecheck-gpu --test golden` rewrites them; review the diff.

use std::path::Path;

use scopecheck_gpu::{generate, GenOptions};

/// Tests covering each layout and instruction family: the thread layout (MP), fences, CAS and
/// RMWs, a bounded spin, the warp layout with bar.red decoys, shared memory, and a 64-bit
/// location and register read back as two words.
const GOLDEN: &[&str] = &[
    "MP+relaxed.gpus",
    "MP+fence.sc.ctas",
    "Atom+cas.gpus",
    "Atom+red.gpus",
    "MP+rel.gpu+spin.acq.gpu",
    "BarRed+popc",
    "MP+bar.sync+ctas",
    "MP+rel.cta+acq.cta+shared",
    "MP+rel.gpu+acq.gpu+64",
];

#[test]
fn generated_ptx_matches_the_goldens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("BLESS").is_some();
    let mut diffs = Vec::new();
    for name in GOLDEN {
        let src = std::fs::read_to_string(root.join(format!("tests/golden/{name}.litmus")))
            .expect("golden test source");
        let program = scopecheck_litmus::parse(&src).expect("golden test parses");
        let ptx = generate(&program, &GenOptions::default())
            .expect("golden test generates")
            .ptx;
        let golden = root.join(format!("tests/golden/{name}.ptx"));
        if bless {
            std::fs::write(&golden, &ptx).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if want != ptx {
            let line = want
                .lines()
                .zip(ptx.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(ptx.lines().count()));
            diffs.push(format!("{name}: first difference at line {}", line + 1));
        }
    }
    assert!(
        diffs.is_empty(),
        "generated PTX differs from the goldens (BLESS=1 rewrites them):\n{}",
        diffs.join("\n")
    );
}
