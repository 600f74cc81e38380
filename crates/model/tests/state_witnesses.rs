//! `CheckOptions::state_witnesses`: one execution behind each final state, as who read what
//! from whom (the native host path shows it for each outcome the host may see).

use scopecheck_model::{check, CheckOptions, Verdict};

fn verdict(src: &str, state_witnesses: bool) -> Verdict {
    let p = scopecheck_litmus::parse(src).unwrap_or_else(|e| panic!("{e:?}"));
    let opts = CheckOptions {
        state_witnesses,
        ..CheckOptions::default()
    };
    check(&p, &opts).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Store buffering with seq_cst accesses: each load reads 0 (the initial value) or the other
/// thread's 1, and both reading 0 is forbidden, so the states (P0:r0, P1:r0) are (0,1), (1,0)
/// and (1,1), each made by exactly one execution: (0,1) is P0 reading y=0 from the initial
/// value and P1 reading x=1 from P0's store (line 5); (1,0) the mirror image; (1,1) both
/// reading the other's store (P1's is on line 10). Each state gets that execution's reads, in
/// thread order.
#[test]
fn each_state_gets_the_execution_that_ends_in_it() {
    let src = "CUDA SB+host\n{ host int x = 0; host int y = 0; }\n\n\
        P0@host (host std::atomic<int>* x, host std::atomic<int>* y) {\n  x->store(1);\n  int r0 = y->load();\n}\n\n\
        P1@host (host std::atomic<int>* x, host std::atomic<int>* y) {\n  y->store(1);\n  int r0 = x->load();\n}\n\n\
        exists (0:r0=0 /\\ 1:r0=0)\n";
    let v = verdict(src, true);
    let p = scopecheck_litmus::parse(src).unwrap();
    let shown = |vals: &[i64]| -> Vec<String> {
        v.state_witnesses[vals]
            .iter()
            .map(|r| {
                let from = match &r.from {
                    Some(w) => format!("{} line {}", p.thread(w.thread).name, w.line),
                    None => "init".into(),
                };
                format!(
                    "{} {}={} from {from}",
                    p.thread(r.reader.thread).name,
                    p.location(r.reader.loc).name,
                    r.value
                )
            })
            .collect()
    };
    assert_eq!(v.state_witnesses.len(), 3, "{:?}", v.state_witnesses);
    assert_eq!(
        shown(&[0, 1]),
        ["P0 y=0 from init", "P1 x=1 from P0 line 5"]
    );
    assert_eq!(
        shown(&[1, 0]),
        ["P0 y=1 from P1 line 10", "P1 x=0 from init"]
    );
    assert_eq!(
        shown(&[1, 1]),
        ["P0 y=1 from P1 line 10", "P1 x=1 from P0 line 5"]
    );
    // Without the option, nothing is kept.
    assert!(verdict(src, false).state_witnesses.is_empty());
}
