//! The source's races where NVRTC's optimizer removed the racing accesses: the PTX view's
//! unoptimized compile (`scopecheck_cuda::Unoptimized`, built only where the optimized code
//! lost accesses and no language view checks the source in this run) is checked under the PTX
//! model, and its races join the PTX verdict's, so that a race in the source is reported
//! whatever the optimizer then did (docs/kernels.md, "Honest about the compiler").

use scopecheck_cuda::Unoptimized;
use scopecheck_ir::{Diagnostic, Program};
use scopecheck_model::{CheckOptions, Incomplete, RaceReport, Verdict};

/// What the unoptimized compile's check added, for the JSON (`unoptimized`).
pub struct SourceRaces {
    pub compilation: scopecheck_cuda::Compilation,
    /// Per kernel, the `.cu` lines whose accesses the optimizer removed.
    pub removed: Vec<(String, Vec<u32>)>,
    /// Races of the unoptimized compile that the optimized code's verdict did not have.
    pub added: usize,
    /// Whether its exploration covered every execution.
    pub complete: bool,
}

/// The unoptimized compile's part of the PTX verdict: its races added (`add_source_races`),
/// or, when it could not be built (its `-G` code is beyond the PTX front-end more often than
/// optimized code: calls through function pointers, `isspacep`), a warning that says so: the
/// verdict then stays about the optimized code alone, as its `compilation` says, and whether
/// the optimizer removed anything is not known.
pub fn source_races(
    ptx: &mut Program,
    verdict: &mut Verdict,
    u: Result<Unoptimized, String>,
    opts: &CheckOptions,
    warnings: &mut Vec<Diagnostic>,
) -> Option<SourceRaces> {
    match u {
        Ok(u) => Some(add_source_races(ptx, verdict, &u, opts, warnings)),
        Err(why) => {
            warnings.push(
                Diagnostic::warning(format!(
                    "NVRTC's unoptimized compile (-G), which would show races of accesses the optimizer removed, is beyond the PTX view ({why}): the PTX verdict is about the optimized code alone"
                ))
                .at(scopecheck_ir::Span::default()),
            );
            None
        }
    }
}

/// Checks `u` under `opts` (the PTX verdict's options) and adds its races to `verdict` (the
/// PTX verdict about `ptx`, the optimized view, whose locations gain any the races name that
/// it lacks). A check that is cut short makes `verdict` incomplete, with why: the source's
/// race freedom is then not shown; one that fails is a warning. Warnings go to `warnings`.
pub fn add_source_races(
    ptx: &mut Program,
    verdict: &mut Verdict,
    u: &Unoptimized,
    opts: &CheckOptions,
    warnings: &mut Vec<Diagnostic>,
) -> SourceRaces {
    let mut report = SourceRaces {
        compilation: u.compilation.clone(),
        removed: u.removed.clone(),
        added: 0,
        complete: false,
    };
    let cut = |verdict: &mut Verdict, why: String| {
        if verdict.incomplete.is_none() {
            verdict.incomplete = Some(Incomplete {
                reason: format!(
                    "the race check of NVRTC's unoptimized compile (-G), for the accesses the optimizer removed, {why}"
                ),
            });
        }
    };
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        scopecheck_model::check(&u.program, opts)
    }));
    let g = match checked {
        Ok(Ok(g)) => g,
        // An error of the check is, in practice, `-G` code beyond the explorer (its unions
        // are byte arrays its 64-bit accesses cannot mix with): as for a `-G` view that cannot
        // be built, the verdict stays about the optimized code, and a warning says so.
        Ok(Err(e)) => {
            let d = e;
            warnings.push(
                Diagnostic::warning(format!(
                    "NVRTC's unoptimized compile (-G) could not be checked ({}): races of the accesses the optimizer removed were not looked for; the PTX verdict is about the optimized code alone",
                    d.message
                ))
                .at(d.span.unwrap_or_default()),
            );
            return report;
        }
        Err(_) => {
            cut(verdict, "failed (an internal error)".into());
            return report;
        }
    };
    if let Some(i) = &g.incomplete {
        cut(verdict, format!("was cut short: {}", i.reason));
    } else {
        report.complete = true;
    }
    for r in &g.races {
        let mapped = RaceReport {
            kind: r.kind,
            first: remap(ptx, &u.program, &r.first),
            second: remap(ptx, &u.program, &r.second),
        };
        let same = |a: &RaceReport| {
            a.kind == mapped.kind
                && a.first.loc == mapped.first.loc
                && [a.first.line, a.second.line] == [mapped.first.line, mapped.second.line]
        };
        if !verdict.races.iter().any(same) {
            verdict.races.push(mapped);
            report.added += 1;
        }
    }
    report
}

/// `a`, an access of `from` (the unoptimized view), as one of `to`: the same thread (the two
/// views share their threads), the location of the same name (added to `to` when the
/// optimized code has none: its accesses were all removed).
fn remap(
    to: &mut Program,
    from: &Program,
    a: &scopecheck_model::Access,
) -> scopecheck_model::Access {
    let loc = from.location(a.loc);
    let id = match to.locations.iter().position(|l| l.name == loc.name) {
        Some(k) => k,
        None => {
            to.locations.push(loc.clone());
            to.locations.len() - 1
        }
    };
    scopecheck_model::Access {
        loc: scopecheck_ir::LocId(id as u32),
        ..a.clone()
    }
}

/// The `unoptimized` object of a PTX verdict's JSON (docs/json.md).
pub fn json(s: &SourceRaces) -> serde_json::Value {
    serde_json::json!({
        "compilation": compilation_json(&s.compilation),
        "removed": s.removed.iter().map(|(k, lines)| serde_json::json!({
            "kernel": k,
            "lines": lines,
        })).collect::<Vec<_>>(),
        "races_added": s.added,
        "complete": s.complete,
    })
}

/// The `compilation` object of a PTX verdict's JSON (docs/json.md).
pub fn compilation_json(c: &scopecheck_cuda::Compilation) -> serde_json::Value {
    serde_json::json!({
        "compiler": c.compiler,
        "version": c.version,
        "arch": c.arch,
        "options": c.options,
        "optimized": c.optimized,
    })
}
