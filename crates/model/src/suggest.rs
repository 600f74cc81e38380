//! Suggestions: the weakest order and narrowest scope that make a wrong program right, and what
//! each costs.
//!
//! A program is *right* when its condition is validated, it has no race, and no thread can wait
//! forever. For a program that is not, we try every single strengthening of one instruction
//! (a plain or relaxed load made acquire, a store made release, an RMW made acq_rel, a wider
//! scope, a fence made `sc`, a fence inserted), narrowest scope first, re-check each, and keep
//! those that make it right, cheapest first by the cost table (cycles measured on a GPU, e.g.
//! `docs/hardware/h200-cost.toml`). When no single change is enough, pairs of changes are
//! tried, up to a bound.

use scopecheck_ir::{
    FenceOrder, FenceSpaces, Instr, InstrKind, Order, Program, Quantifier, Scope, ThreadId,
};

use crate::{check, CheckOptions, Outcome, Verdict};

/// Most re-checks one search may spend.
pub const MAX_TRIALS: usize = 4000;
/// Most suggestions reported.
pub const MAX_SUGGESTIONS: usize = 5;

/// Latencies in cycles by operation name, as `scopecheck cost --toml` writes them
/// (`"ld.acquire.gpu"`, `"st.weak + fence.sc.gpu"`, ...).
#[derive(Clone, Debug, Default)]
pub struct CostTable {
    pub cycles: Vec<(String, f64)>,
}

impl CostTable {
    fn get(&self, op: &str) -> Option<f64> {
        self.cycles.iter().find(|(k, _)| k == op).map(|(_, v)| *v)
    }
}

/// One change to one instruction (or a fence inserted before it).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub thread: ThreadId,
    /// Source line the change is at.
    pub line: u32,
    /// What it was, in source text, and what it becomes, in PTX terms.
    pub was: String,
    pub becomes: String,
    /// Estimated extra cycles per execution of the instruction, when the cost table knows.
    pub cost_cycles: Option<f64>,
}

/// A set of changes that makes the program right.
#[derive(Clone, Debug, PartialEq)]
pub struct Suggestion {
    pub changes: Vec<Change>,
    pub cost_cycles: Option<f64>,
}

/// Whether a verdict is what a careful author wants: the requirement holds, no thread can hang,
/// and, for a language model where a race is undefined behaviour, no race (PTX defines what a
/// racy program does, so there a race alone is no fault). An `exists` condition asks a question
/// rather than stating a requirement, so only races and hangs count for it.
pub fn is_right(v: &Verdict) -> bool {
    let requirement = match v.quantifier {
        Quantifier::Exists => true,
        Quantifier::NotExists | Quantifier::Forall => v.outcome == Outcome::Ok,
    };
    let races_matter = v.model != "ptx";
    requirement && !(races_matter && v.is_racy()) && v.terminates() != Some(false)
}

pub(crate) fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Thread | Scope::Warp | Scope::Cta => "cta",
        Scope::Cluster => "cluster",
        Scope::Gpu => "gpu",
        Scope::Sys => "sys",
    }
}

/// The PTX name of an instruction for the cost table, and its latency when known.
pub(crate) fn cost_of(kind: &InstrKind, table: &CostTable) -> Option<f64> {
    let name = match *kind {
        InstrKind::Load { order, scope, .. } => match order {
            Order::Weak => "ld.weak".to_string(),
            Order::Volatile => "ld.volatile".to_string(),
            Order::Relaxed => format!("ld.relaxed.{}", scope_name(scope)),
            _ => format!("ld.acquire.{}", scope_name(scope)),
        },
        InstrKind::Store { order, scope, .. } => match order {
            Order::Weak => "st.weak".to_string(),
            Order::Volatile | Order::Relaxed => "st.weak".to_string(),
            _ => format!("st.release.{}", scope_name(scope)),
        },
        InstrKind::Rmw { order, scope, .. } => match order {
            Order::Weak | Order::Volatile | Order::Relaxed => {
                format!("atom.relaxed.{}.add", scope_name(scope))
            }
            _ => format!("atom.acq_rel.{}.add", scope_name(scope)),
        },
        InstrKind::Fence { order, scope, .. } => {
            let f = if order == FenceOrder::Sc {
                "sc"
            } else {
                "acq_rel"
            };
            let with = table.get(&format!("st.weak + fence.{f}.{}", scope_name(scope)))?;
            return Some(with - table.get("st.weak").unwrap_or(0.0));
        }
        _ => return Some(0.0),
    };
    table.get(&name)
}

fn describe(kind: &InstrKind) -> String {
    match *kind {
        InstrKind::Load { order, scope, .. } => {
            format!("{} load at {} scope", order_word(order), scope_name(scope))
        }
        InstrKind::Store { order, scope, .. } => {
            format!("{} store at {} scope", order_word(order), scope_name(scope))
        }
        InstrKind::Rmw { order, scope, .. } => {
            format!("{} RMW at {} scope", order_word(order), scope_name(scope))
        }
        InstrKind::Fence { order, scope, .. } => format!(
            "fence.{}.{}",
            if order == FenceOrder::Sc {
                "sc"
            } else {
                "acq_rel"
            },
            scope_name(scope)
        ),
        _ => "instruction".into(),
    }
}

/// The order as a suggestion names it: a plain access for a weak one.
fn order_word(o: Order) -> &'static str {
    match o {
        Order::Weak => "plain",
        o => o.name(),
    }
}

const SCOPES: [Scope; 3] = [Scope::Cta, Scope::Gpu, Scope::Sys];

/// Every single strengthening of one instruction: (thread, index, new instruction kind), and
/// fence insertions as (thread, index, fence) with `insert` set.
#[derive(Clone)]
struct Candidate {
    thread: usize,
    at: usize,
    kind: InstrKind,
    insert: bool,
}

fn candidates(program: &Program) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (t, th) in program.threads.iter().enumerate() {
        let host = th.placement == scopecheck_ir::Placement::Host;
        let scopes: &[Scope] = if host { &[Scope::Sys] } else { &SCOPES };
        for (at, i) in th.code.iter().enumerate() {
            let mut push = |kind: InstrKind| {
                if kind != i.kind {
                    out.push(Candidate {
                        thread: t,
                        at,
                        kind,
                        insert: false,
                    });
                }
            };
            match i.kind {
                InstrKind::Load {
                    dst,
                    addr,
                    ty,
                    order,
                    scope,
                } => {
                    for &s in scopes.iter().filter(|s| !order.is_atomic() || **s >= scope) {
                        push(InstrKind::Load {
                            dst,
                            addr,
                            ty,
                            order: Order::Acquire.max(order),
                            scope: s,
                        });
                    }
                }
                InstrKind::Store {
                    addr,
                    ty,
                    value,
                    order,
                    scope,
                } => {
                    for &s in scopes.iter().filter(|s| !order.is_atomic() || **s >= scope) {
                        let o = if order == Order::SeqCst {
                            order
                        } else {
                            Order::Release
                        };
                        push(InstrKind::Store {
                            addr,
                            ty,
                            value,
                            order: o,
                            scope: s,
                        });
                    }
                }
                InstrKind::Rmw {
                    dst,
                    addr,
                    ty,
                    kind,
                    order,
                    scope,
                } => {
                    for &s in scopes.iter().filter(|s| **s >= scope) {
                        let o = if order == Order::SeqCst {
                            order
                        } else {
                            Order::AcqRel
                        };
                        push(InstrKind::Rmw {
                            dst,
                            addr,
                            ty,
                            kind,
                            order: o,
                            scope: s,
                        });
                    }
                }
                InstrKind::Fence { order, scope, .. } => {
                    for &s in scopes.iter().filter(|s| **s >= scope) {
                        for o in [order, FenceOrder::Sc] {
                            push(InstrKind::Fence {
                                order: o,
                                scope: s,
                                spaces: FenceSpaces::ALL,
                            });
                        }
                    }
                }
                _ => {}
            }
            // A fence just before this instruction (between two memory accesses).
            if at > 0
                && matches!(
                    i.kind,
                    InstrKind::Load { .. } | InstrKind::Store { .. } | InstrKind::Rmw { .. }
                )
            {
                for &s in scopes {
                    out.push(Candidate {
                        thread: t,
                        at,
                        kind: InstrKind::Fence {
                            order: FenceOrder::AcqRel,
                            scope: s,
                            spaces: FenceSpaces::ALL,
                        },
                        insert: true,
                    });
                }
            }
        }
    }
    out
}

/// `program` with `c` applied; inserting moves branch targets past the insertion point.
fn apply(program: &Program, c: &Candidate) -> Program {
    let mut p = program.clone();
    let code = &mut p.threads[c.thread].code;
    if c.insert {
        for i in code.iter_mut() {
            if let InstrKind::Branch { target, .. } = &mut i.kind {
                if *target > c.at {
                    *target += 1;
                }
            }
        }
        let at = &code[c.at];
        let fence = Instr {
            kind: c.kind.clone(),
            span: at.span,
            text: describe(&c.kind),
        };
        code.insert(c.at, fence);
    } else {
        code[c.at].kind = c.kind.clone();
    }
    p
}

fn change(program: &Program, c: &Candidate, table: &CostTable) -> Change {
    let i = &program.threads[c.thread].code[c.at];
    let (was, extra) = if c.insert {
        (format!("before `{}`", i.text), cost_of(&c.kind, table))
    } else {
        (
            format!("`{}`", i.text),
            cost_of(&c.kind, table)
                .zip(cost_of(&i.kind, table))
                .map(|(a, b)| a - b),
        )
    };
    Change {
        thread: ThreadId(c.thread as u32),
        line: i.span.line,
        was,
        becomes: if c.insert {
            format!("insert {}", describe(&c.kind))
        } else {
            describe(&c.kind)
        },
        cost_cycles: extra,
    }
}

fn total(changes: &[Change]) -> Option<f64> {
    changes.iter().map(|c| c.cost_cycles).sum()
}

/// What [`suggest`] found, and whether its deadline cut the search for it short.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Suggested {
    pub suggestions: Vec<Suggestion>,
    /// Why not every candidate was judged, when the file's deadline (`--timeout`) cut the
    /// search: cheaper fixes than those listed, or any fix when none is, may exist.
    pub incomplete: Option<String>,
}

/// The cheapest ways to make `program` right under `opts`, or nothing when it already is or no
/// single change or pair of changes within [`MAX_TRIALS`] does it.
pub fn suggest(program: &Program, opts: &CheckOptions, table: &CostTable) -> Suggested {
    // Each candidate is judged right or not; none is drawn.
    let opts = &CheckOptions {
        graphs: false,
        ..opts.clone()
    };
    // A candidate counts as a fix only when its check is complete: a search cut by a bound
    // vouches for no requirement (and for no absence of races or hangs). Once the file's
    // deadline passes, no more candidates are tried: the fixes found so far are returned.
    let past = || {
        opts.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    };
    // Set once the deadline cut a candidate's check or the search: what was judged so far.
    let cut = std::cell::Cell::new(false);
    let right = |p: &Program| {
        let r = check(p, opts);
        if past() && !r.as_ref().is_ok_and(|v| v.is_complete()) {
            cut.set(true);
        }
        r.map(|v| v.is_complete() && is_right(&v)).unwrap_or(false)
    };
    match check(program, opts) {
        // Not settled because the deadline passed: nothing tried, and it says so.
        Ok(v) if !v.is_complete() && past() => {
            return Suggested {
                suggestions: vec![],
                incomplete: Some("the --timeout was reached before any change was tried".into()),
            }
        }
        // Right already, or not settled: nothing to vouch for.
        Ok(v) if is_right(&v) || !v.is_complete() => return Suggested::default(),
        // A fault or a wrong verdict: a change may fix it.
        Ok(_) | Err(_) => {}
    }
    let cands = candidates(program);
    let mut trials = 0;
    let mut found: Vec<Suggestion> = Vec::new();
    for c in &cands {
        if past() {
            cut.set(true);
            break;
        }
        trials += 1;
        if right(&apply(program, c)) {
            let changes = vec![change(program, c, table)];
            found.push(Suggestion {
                cost_cycles: total(&changes),
                changes,
            });
        }
    }
    if found.is_empty() {
        'pairs: for (k, a) in cands.iter().enumerate() {
            for b in &cands[k + 1..] {
                // Two changes to one instruction, or an insertion and a change at one place,
                // would interfere; keep pairs apart.
                if a.thread == b.thread && a.at == b.at {
                    continue;
                }
                trials += 1;
                if past() {
                    cut.set(true);
                    break 'pairs;
                }
                if trials > MAX_TRIALS {
                    break 'pairs;
                }
                // Apply the later position first so the earlier index stays valid.
                let (first, second) = if (a.thread, a.at) > (b.thread, b.at) {
                    (a, b)
                } else {
                    (b, a)
                };
                let p = apply(&apply(program, first), second);
                if right(&p) {
                    let changes = vec![
                        change(program, second, table),
                        change(program, first, table),
                    ];
                    found.push(Suggestion {
                        cost_cycles: total(&changes),
                        changes,
                    });
                }
            }
        }
    }
    found.sort_by(|x, y| {
        let cost = |s: &Suggestion| s.cost_cycles.unwrap_or(f64::INFINITY);
        cost(x).total_cmp(&cost(y))
    });
    found.truncate(MAX_SUGGESTIONS);
    Suggested {
        suggestions: found,
        incomplete: cut.get().then(|| {
            format!(
                "the --timeout was reached before every candidate change was tried ({} tried)",
                trials.min(MAX_TRIALS)
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> CostTable {
        let c = |k: &str, v: f64| (k.to_string(), v);
        CostTable {
            cycles: vec![
                c("st.weak", 7.0),
                c("st.release.cta", 14.0),
                c("st.release.gpu", 389.0),
                c("st.release.sys", 987.0),
                c("ld.weak", 42.0),
                c("ld.acquire.gpu", 279.0),
                c("ld.acquire.sys", 279.0),
            ],
        }
    }

    #[test]
    fn a_release_too_narrow_is_widened_to_the_gpu_not_the_system() {
        // The release is .cta but the reader sits in another CTA: no synchronization, the stale
        // read is possible. Widening the release to .gpu makes the pair morally strong; .sys
        // would too, at a higher cost, so .gpu comes first.
        let p = scopecheck_litmus::parse(
            "PTX t\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak d, 7 | ld.acquire.gpu r0, f ;\n st.release.cta f, 1 | ld.weak r1, d ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        )
        .expect("parses");
        let s = suggest(&p, &CheckOptions::default(), &table()).suggestions;
        assert!(!s.is_empty());
        let best = &s[0];
        assert_eq!(best.changes.len(), 1, "{s:?}");
        assert_eq!(best.changes[0].line, 5);
        assert_eq!(best.changes[0].becomes, "release store at gpu scope");
        assert_eq!(best.cost_cycles, Some(375.0));
    }

    #[test]
    fn a_right_program_gets_no_suggestion() {
        // Release and acquire at .gpu: the stale read is forbidden; PTX gives racy programs a
        // meaning, so the race on d when the flag is still 0 is no fault to fix.
        let p = scopecheck_litmus::parse(
            "PTX t\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak d, 7 | ld.acquire.gpu r0, f ;\n st.release.gpu f, 1 | ld.weak r1, d ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        )
        .expect("parses");
        assert!(suggest(&p, &CheckOptions::default(), &table())
            .suggestions
            .is_empty());
    }
}
