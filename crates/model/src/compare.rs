//! Where the language and the hardware disagree: a C program judged by scoped C11 and, compiled,
//! by PTX.

use std::collections::BTreeSet;

use scopecheck_ir::{Observable, Placement, Program, Value};

use crate::{Outcome, Verdict};

/// The final states of `v` on what both views share: locations and host registers. A kernel
/// thread's registers differ between the views (the PTX view's are NVRTC's, its device
/// `assert`s one register per thread where the language view has one per `assert`); the
/// verdicts compare those through the outcome.
fn state_set(program: &Program, v: &Verdict) -> BTreeSet<Vec<(Observable, Value)>> {
    let shared = |o: &Observable| match *o {
        Observable::Loc(_) => true,
        Observable::Reg(t, _) => program
            .threads
            .get(t.0 as usize)
            .is_some_and(|t| t.placement == Placement::Host),
    };
    v.states
        .iter()
        .map(|s| {
            s.values
                .iter()
                .filter(|(o, _)| shared(o))
                .copied()
                .collect()
        })
        .collect()
}

fn show(program: &Program, s: &[(Observable, Value)]) -> String {
    s.iter()
        .map(|(o, v)| format!("{}={v};", program.observable_name(*o)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The disagreements between `language` (scoped C11) and `hardware` (PTX, after the mapping),
/// in words. Empty when they agree on result, states, races and termination.
pub fn compare(program: &Program, language: &Verdict, hardware: &Verdict) -> Vec<String> {
    let mut out = Vec::new();
    match (language.is_racy(), hardware.is_racy()) {
        (true, false) => out.push(format!(
            "racy in {} ({} race{}), so undefined for the language, yet without PTX data races once compiled: benign on this hardware, not portable",
            language.model,
            language.races.len(),
            if language.races.len() == 1 { "" } else { "s" }
        )),
        (false, true) => out.push(format!(
            "race-free in {}, but the compiled code has PTX data races (plain accesses the language orders through happens-before): the hardware still keeps the language's promises if the mapping holds",
            language.model
        )),
        _ => {}
    }
    let (l, h) = (state_set(program, language), state_set(program, hardware));
    for s in l.difference(&h) {
        out.push(format!(
            "allowed by {} but never by {}: {} (a compiler or a future chip may produce it)",
            language.model,
            hardware.model,
            show(program, s)
        ));
    }
    for s in h.difference(&l) {
        let why = if language.is_racy() {
            "the program is racy, so the language promises nothing"
        } else {
            "the compiled code may show what the language forbids; for example scoped RC11 forbids load buffering (sb ∪ rf acyclic) where PTX only forbids it along dependencies"
        };
        out.push(format!(
            "allowed by {} but not by {}: {} ({why})",
            hardware.model,
            language.model,
            show(program, s)
        ));
    }
    if language.outcome != hardware.outcome
        && language.outcome != Outcome::Unknown
        && hardware.outcome != Outcome::Unknown
    {
        out.push(format!(
            "the condition is {:?} under {} and {:?} under {}",
            language.outcome, language.model, hardware.outcome, hardware.model
        ));
    }
    if language.terminates() != hardware.terminates() {
        out.push(format!(
            "termination differs: {:?} under {}, {:?} under {}",
            language.terminates(),
            language.model,
            hardware.terminates(),
            hardware.model
        ));
    }
    out
}
