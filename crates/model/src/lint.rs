//! Lints: patterns in the code that are usually mistakes, found without exploring.
//!
//! - a release (release write, or a strong write after a release fence) whose location no other
//!   thread reads with acquire semantics (an acquire read, or a read followed by a fence), and
//!   the reverse: an acquire whose location no other thread writes with release semantics. A
//!   release without a matching acquire orders nothing for the reader.
//! - a fence whose scope leaves out a thread that shares a location with the fencing thread: it
//!   cannot order anything for that thread.
//!
//! - a flag polled (read in a loop) while another thread writes other data on its 128-byte
//!   line: the elements of one allocation (struct fields, array neighbours, laid out one after
//!   the other from a line-aligned start, as `cudaMalloc` aligns). Every such write meets the
//!   polls at one L2 line. Litmus tests' locations have no addresses, and separate globals no
//!   known order, so only allocations of several elements are looked at.
//!
//! (Atomics on shared memory with a scope wider than the block are reported by the front-end,
//! which narrows them.)

use scopecheck_ir::{
    FenceOrder, InstrKind, LocId, MemorySpace, Order, Program, Scope, Span, Thread,
};

/// One finding, at a source span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lint {
    pub kind: LintKind,
    pub span: Span,
    pub message: String,
}

/// Which pattern a lint found. Each has a stable rule id (`LintKind::id`), which JSON and SARIF
/// reports carry so that tools can filter or suppress one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LintKind {
    /// A release write whose location no other thread reads with acquire semantics.
    ReleaseWithoutAcquire,
    /// An acquire read whose location no other thread writes with release semantics.
    AcquireWithoutRelease,
    /// A fence whose scope leaves out a thread sharing a location with the fencing thread.
    FenceScopeExcludesSharer,
    /// A flag polled while another thread writes other data on its 128-byte line.
    FlagOnSharedLine,
}

impl LintKind {
    /// Every kind, in the order the rule ids are documented (docs/json.md).
    pub const ALL: [LintKind; 4] = [
        LintKind::ReleaseWithoutAcquire,
        LintKind::AcquireWithoutRelease,
        LintKind::FenceScopeExcludesSharer,
        LintKind::FlagOnSharedLine,
    ];

    /// The stable rule id: never renamed once released (tools key suppressions on it).
    pub fn id(self) -> &'static str {
        match self {
            LintKind::ReleaseWithoutAcquire => "release-without-acquire",
            LintKind::AcquireWithoutRelease => "acquire-without-release",
            LintKind::FenceScopeExcludesSharer => "fence-scope-excludes-sharer",
            LintKind::FlagOnSharedLine => "flag-on-shared-line",
        }
    }
}

/// What an instruction does to memory, for the lints.
struct Access {
    loc: LocId,
    /// Index of the instruction in its thread.
    at: usize,
    write: bool,
    read: bool,
    order: Order,
    /// A fence that releases comes before it in the thread.
    release_fence_before: bool,
    /// A fence that acquires comes after it in the thread.
    acquire_fence_after: bool,
}

fn accesses(t: &Thread) -> Vec<Access> {
    // Whether a releasing fence is among the first k instructions, and an acquiring one among
    // those from k on: found once per thread, not once per access (a thread of 20,000 stores
    // took 0.7 s scanning its code for fences once per store).
    let n = t.code.len();
    let mut release_before = vec![false; n + 1];
    for k in 0..n {
        release_before[k + 1] = release_before[k] || fence_at(t, k, true);
    }
    let mut acquire_from = vec![false; n + 1];
    for k in (0..n).rev() {
        acquire_from[k] = acquire_from[k + 1] || fence_at(t, k, false);
    }
    let mut all: Vec<Access> = t
        .code
        .iter()
        .enumerate()
        // Accesses through computed addresses name no location statically.
        .filter_map(|(at, i)| match i.kind {
            InstrKind::Load { addr, order, .. } => Some(Access {
                loc: addr.fixed()?,
                at,
                write: false,
                read: true,
                order,
                release_fence_before: false,
                acquire_fence_after: false,
            }),
            InstrKind::Store { addr, order, .. } => Some(Access {
                loc: addr.fixed()?,
                at,
                write: true,
                read: false,
                order,
                release_fence_before: false,
                acquire_fence_after: false,
            }),
            InstrKind::Rmw { addr, order, .. } => Some(Access {
                loc: addr.fixed()?,
                at,
                write: true,
                read: true,
                order,
                release_fence_before: false,
                acquire_fence_after: false,
            }),
            _ => None,
        })
        .collect();
    for a in &mut all {
        a.release_fence_before = release_before[a.at];
        a.acquire_fence_after = acquire_from[a.at + 1];
    }
    all
}

fn fence_at(t: &Thread, at: usize, release: bool) -> bool {
    matches!(t.code[at].kind, InstrKind::Fence { order, .. }
        if order == FenceOrder::Sc || order == FenceOrder::AcqRel
            || order == if release { FenceOrder::Release } else { FenceOrder::Acquire })
        || matches!(t.code[at].kind, InstrKind::Barrier { .. })
}

/// A write with release semantics: a release write, or a strong write after a release fence.
fn releases(a: &Access) -> bool {
    a.write && (a.order.is_release() || (a.order.is_strong() && a.release_fence_before))
}

/// A read with acquire semantics: an acquire read, or a strong read before an acquire fence.
fn acquires(a: &Access) -> bool {
    a.read && (a.order.is_acquire() || (a.order.is_strong() && a.acquire_fence_after))
}

fn line(t: &Thread, at: usize) -> u32 {
    t.code[at].span.line
}

/// Whether thread `b` starts only after `a` finished, directly or through others (launch order):
/// such threads need no fence or release/acquire between them.
fn launched_after(program: &Program, a: usize, b: usize) -> bool {
    let mut seen = vec![false; program.threads.len()];
    let mut stack = vec![b];
    while let Some(t) = stack.pop() {
        for w in &program.threads[t].after {
            let w = w.0 as usize;
            if w == a {
                return true;
            }
            if !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        }
    }
    false
}

/// Whether threads `a` and `b` run at the same time (neither is launched after the other).
fn concurrent(program: &Program, a: usize, b: usize) -> bool {
    !launched_after(program, a, b) && !launched_after(program, b, a)
}

/// Every lint of `program`.
pub fn lints(program: &Program) -> Vec<Lint> {
    let per_thread: Vec<Vec<Access>> = program.threads.iter().map(accesses).collect();
    let mut out = Vec::new();
    for (ti, t) in program.threads.iter().enumerate() {
        for a in &per_thread[ti] {
            let loc = &program.location(a.loc).name;
            let others = || {
                program
                    .threads
                    .iter()
                    .enumerate()
                    .filter(move |(o, _)| *o != ti && concurrent(program, ti, *o))
                    .flat_map(|(o, th)| {
                        per_thread[o]
                            .iter()
                            .filter(move |b| b.loc == a.loc)
                            .map(move |b| (th, b))
                    })
            };
            if releases(a) && a.order.is_release() {
                let readers: Vec<(&Thread, &Access)> = others().filter(|(_, b)| b.read).collect();
                if !readers.is_empty() && !readers.iter().any(|(_, b)| acquires(b)) {
                    let who: Vec<String> = readers
                        .iter()
                        .map(|(th, b)| format!("{} line {}", th.name, line(th, b.at)))
                        .collect();
                    out.push(Lint {
                        kind: LintKind::ReleaseWithoutAcquire,
                        span: t.code[a.at].span,
                        message: format!(
                            "release of `{loc}` with no matching acquire: {} read{} it without acquire semantics (no acquire read, no fence after it), so the release orders nothing for them",
                            who.join(", "),
                            if who.len() == 1 { "s" } else { "" }
                        ),
                    });
                }
            }
            if acquires(a) && a.order.is_acquire() {
                let writers: Vec<(&Thread, &Access)> = others().filter(|(_, b)| b.write).collect();
                if !writers.is_empty() && !writers.iter().any(|(_, b)| releases(b)) {
                    let who: Vec<String> = writers
                        .iter()
                        .map(|(th, b)| format!("{} line {}", th.name, line(th, b.at)))
                        .collect();
                    out.push(Lint {
                        kind: LintKind::AcquireWithoutRelease,
                        span: t.code[a.at].span,
                        message: format!(
                            "acquire of `{loc}` with no matching release: {} write{} it without release semantics (no release write, no fence before it), so the acquire orders nothing",
                            who.join(", "),
                            if who.len() == 1 { "s" } else { "" }
                        ),
                    });
                }
            }
        }
        // The concurrent threads sharing a location with this one, found once for all its
        // fences.
        let mine: std::collections::HashSet<LocId> = per_thread[ti].iter().map(|a| a.loc).collect();
        let sharers: Vec<bool> = (0..program.threads.len())
            .map(|o| {
                o != ti
                    && concurrent(program, ti, o)
                    && per_thread[o].iter().any(|b| mine.contains(&b.loc))
            })
            .collect();
        for i in &t.code {
            let InstrKind::Fence { scope, .. } = i.kind else {
                continue;
            };
            if scope == Scope::Sys {
                continue;
            }
            // Threads sharing a location with this one that the fence's scope leaves out.
            let outside: Vec<String> = program
                .threads
                .iter()
                .enumerate()
                .filter(|(o, th)| sharers[*o] && !t.placement.scope_includes(scope, &th.placement))
                .map(|(_, th)| th.name.clone())
                .collect();
            if !outside.is_empty() {
                out.push(Lint {
                    kind: LintKind::FenceScopeExcludesSharer,
                    span: i.span,
                    message: format!(
                        "`{}` has scope {scope}, which leaves out {} though {} share{} locations with {}: it orders nothing for {}",
                        i.text,
                        outside.join(", "),
                        if outside.len() == 1 { "it" } else { "they" },
                        if outside.len() == 1 { "s" } else { "" },
                        t.name,
                        if outside.len() == 1 { "it" } else { "them" },
                    ),
                });
            }
        }
    }
    out.extend(shared_line_polls(program, &per_thread));
    out
}

/// Bytes of a cache line of the GPU's L1 and L2.
const LINE: u64 = 128;

/// What the lint's cost was measured to be, quoted in its message (scripts/padding-experiment.cu
/// on an H100, 2026-12-06; docs/hardware/h200.md, "Measured 2026-12-06").
const PADDING_MEASURED: &str =
    "Measured on an H100 (scripts/padding-experiment.cu, docs/hardware/h200.md): the writer's \
     stores cost the same either way (13.2 ns each), and 32 to 264 blocks polling with \
     ld.acquire.gpu made 11-17% fewer polls per microsecond than with the flag on a line of its \
     own; polling with atomicAdd(flag, 0) cost the same either way.";

/// Whether the read at `at` is a poll: inside a loop, a backward branch at or after it jumping
/// to it or before it.
fn polled(t: &Thread, at: usize) -> bool {
    t.code[at..]
        .iter()
        .any(|i| matches!(i.kind, InstrKind::Branch { target, .. } if target <= at))
}

/// The byte offset of each element of the allocation `loc` belongs to, from its start, each
/// element at its natural alignment; `None` for a location alone in its allocation.
fn offsets(program: &Program, loc: LocId) -> Option<Vec<(LocId, u64)>> {
    let a = program.array_of(loc)?;
    let mut off = 0u64;
    let mut out = Vec::with_capacity(a.len as usize);
    for k in 0..a.len {
        let id = LocId(a.first.0 + k);
        let size = program.location(id).ty.bytes().max(1);
        off = off.div_ceil(size) * size;
        out.push((id, off));
        off += size;
    }
    Some(out)
}

/// Flags polled on a line that another thread writes other data of the same allocation on.
fn shared_line_polls(program: &Program, per_thread: &[Vec<Access>]) -> Vec<Lint> {
    let mut out = Vec::new();
    for (ti, t) in program.threads.iter().enumerate() {
        let mut seen: Vec<LocId> = Vec::new();
        for a in per_thread[ti].iter().filter(|a| a.read && polled(t, a.at)) {
            let flag = program.location(a.loc);
            if seen.contains(&a.loc) || flag.space == MemorySpace::Shared {
                continue;
            }
            let Some(offs) = offsets(program, a.loc) else {
                continue;
            };
            let line_of = |l: LocId| offs.iter().find(|(id, _)| *id == l).map(|(_, o)| o / LINE);
            let mine = line_of(a.loc);
            // Writes by other concurrent threads to other elements on the flag's line.
            let writers: Vec<String> = program
                .threads
                .iter()
                .enumerate()
                .filter(|(o, _)| *o != ti && concurrent(program, ti, *o))
                .flat_map(|(o, th)| {
                    per_thread[o]
                        .iter()
                        .filter(|b| b.write && b.loc != a.loc && line_of(b.loc) == mine)
                        .map(move |b| {
                            format!(
                                "`{}` ({} line {})",
                                program.location(b.loc).name,
                                th.name,
                                line(th, b.at)
                            )
                        })
                })
                .collect();
            if writers.is_empty() {
                continue;
            }
            seen.push(a.loc);
            out.push(Lint {
                kind: LintKind::FlagOnSharedLine,
                span: t.code[a.at].span,
                message: format!(
                    "`{}` is polled here while {} on its 128-byte line {} written by another \
                     thread: the writes and the polls meet at one L2 line, which slows the \
                     polls; give the flag a line of its own (alignas(128), or 128 bytes of \
                     padding). {PADDING_MEASURED}",
                    flag.name,
                    writers.join(", "),
                    if writers.len() == 1 { "is" } else { "are" },
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lints_of(src: &str) -> Vec<String> {
        let p = scopecheck_litmus::parse(src).expect("test parses");
        lints(&p)
            .into_iter()
            .map(|l| format!("{} {}: {}", l.kind.id(), l.span.line, l.message))
            .collect()
    }

    #[test]
    fn release_without_acquire_and_acquire_without_release() {
        // P0 releases the flag but P1 reads it relaxed with no fence after: the release orders
        // nothing for P1. And P2's acquire pairs with P3's relaxed store: nothing to acquire.
        let l = lints_of(
            "PTX t\n{ x=0; f=0; y=0; }\n P0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;\n st.weak x, 1 | ld.relaxed.gpu r0, f | ld.acquire.gpu r1, y | st.relaxed.gpu y, 1 ;\n st.release.gpu f, 1 | ld.weak r2, x | | ;\nexists (P1:r0 == 1)\n",
        );
        assert_eq!(l.len(), 2, "{l:?}");
        assert!(
            l[0].starts_with(
                "release-without-acquire 5: release of `f` with no matching acquire: P1 line 4"
            ),
            "{l:?}"
        );
        assert!(
            l[1].starts_with(
                "acquire-without-release 4: acquire of `y` with no matching release: P3 line 4"
            ),
            "{l:?}"
        );
    }

    #[test]
    fn a_release_fence_or_an_acquire_fence_counts() {
        // The reader's relaxed load is followed by fence.acq_rel: an acquire pattern; no lint.
        let l = lints_of(
            "PTX t\n{ x=0; f=0; }\n P0 | P1@cta 1,gpu 0 ;\n st.weak x, 1 | ld.relaxed.gpu r0, f ;\n st.release.gpu f, 1 | fence.acq_rel.gpu ;\n | ld.weak r2, x ;\nexists (P1:r0 == 1)\n",
        );
        assert!(l.is_empty(), "{l:?}");
    }

    #[test]
    fn a_cta_fence_does_not_cover_another_cta() {
        let l = lints_of(
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 | P2@cta 1,gpu 0 ;\n st.weak x, 1 | ld.weak r0, x | ld.weak r0, x ;\n fence.sc.cta | | ;\nexists (P1:r0 == 1)\n",
        );
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(
            l[0].starts_with(
                "fence-scope-excludes-sharer 5: `fence.sc.cta` has scope cta, which leaves out P2 though it shares"
            ),
            "{l:?}"
        );
    }
}
