//! Tuning: the narrowest scopes and weakest orders a right program can have and stay right,
//! the opposite search to [`crate::suggest`].
//!
//! The unit of a change is a *site*: one synchronizing instruction of the source (a fence, or an
//! atomic load, store or RMW), with every device thread's copy of it (a kernel's statement runs
//! in each thread of the launch, and a change to the statement changes all of them). Host
//! threads are left alone: they run on the CPU, whose atomics have no scope.
//!
//! A site steps down one [`Step`] at a time: a fence is removed, or its `sc` becomes `acq_rel`
//! (and, in the C dialects, `acq_rel` becomes `acquire` or `release`); an order loses one half
//! (`ir::weaken::weaker_orders`); a scope narrows one level (`sys` → `gpu` → `cluster` → `cta`,
//! `cluster` only where some cluster holds more than one CTA); an exchange whose old value
//! nothing reads becomes a store of the same value; an RMW that never changes the value (`add
//! 0`, `or 0`, `and` all-ones, a CAS whose expected and new value are one operand) becomes a
//! load, keeping its destination. A weakened program *keeps the verdict* when, under every
//! model asked for, its check is complete, it is right ([`is_right`]), and an `exists` test's
//! outcome is the original's.
//!
//! The search: first how far each site goes alone (greedy descent, the first step that keeps
//! the verdict taken each time); then greedy descents of all sites together, one site after
//! another until none moves, so that each result is *maximal*: no single further step of any
//! site keeps the verdict. When no single step keeps it, joint scope steps are tried (every
//! access of one location, or every access at one scope, one level narrower), for models where
//! scopes must match (OpenCL's inclusive scopes are equal ones). When sites interfere (either of two fences may go, not both), a site
//! left short of where it goes alone is tried earlier in another descent, and the distinct
//! results are the maximal sets. Re-checks are bounded; the search says when it was cut.

use std::collections::{HashMap, HashSet, VecDeque};

use scopecheck_ir::weaken::{remove, weaker_orders};
use scopecheck_ir::{
    FenceOrder, FenceSpaces, InstrKind, Observable, Operand, Order, Placement, Program, Quantifier,
    RegId, RmwKind, RmwOp, Scope, Span, ThreadId,
};

use crate::suggest::{cost_of, is_right, CostTable};
use crate::{check, CheckOptions, Verdict};
use scopecheck_ir::Diagnostic;

/// Default bound on the re-checks one tuning may spend.
pub const DEFAULT_MAX_CHECKS: usize = 2000;
/// Most greedy descents tried in search of further maximal sets.
const MAX_DESCENTS: usize = 64;

/// One step down of one site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    DropFence,
    Order {
        from: Order,
        to: Order,
    },
    FenceOrder {
        from: FenceOrder,
        to: FenceOrder,
    },
    Scope {
        from: Scope,
        to: Scope,
    },
    /// An exchange whose old value nothing reads becomes a store of the value it writes.
    RmwToStore,
    /// An RMW that never changes the value becomes a load of it.
    RmwToLoad,
}

/// One synchronizing instruction of the source, in every device thread that runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// The instruction in each thread, in thread order.
    pub members: Vec<(ThreadId, usize)>,
    pub span: Span,
    /// The source text of the instruction.
    pub text: String,
    /// The instruction as written (the first member's).
    pub kind: InstrKind,
}

/// What one site of a maximal set becomes.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteChange {
    /// Index into [`Tuned::sites`].
    pub site: usize,
    /// The steps from the original, summarized: one per aspect that changed.
    pub steps: Vec<Step>,
    /// The new instruction (the first member's); `None` when the fence is removed. A load
    /// replacing an RMW without destination reads into a register nothing uses.
    pub becomes: Option<InstrKind>,
    /// Cycles saved per execution of the instruction, when the cost table knows both ends.
    pub saved_cycles: Option<f64>,
}

/// A maximal set of weakenings that keeps every verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct WeakenedSet {
    pub changes: Vec<SiteChange>,
    pub saved_cycles: Option<f64>,
}

/// A site no single step of which keeps the verdict, even alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Weakest {
    pub site: usize,
    /// The single steps tried, each of which breaks the program; empty when none is weaker.
    pub breaking: Vec<Step>,
}

/// What tuning a right program found.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    pub sites: Vec<Site>,
    /// The maximal sets, most cycles saved first; empty when nothing can be weakened.
    pub sets: Vec<WeakenedSet>,
    /// The sites already the weakest that keeps the verdict.
    pub weakest: Vec<Weakest>,
    /// Re-checks spent.
    pub checks: usize,
    /// Why the search stopped before it was done (the sets found are then maximal, but there
    /// may be others).
    pub incomplete: Option<String>,
}

/// The answer of [`tune`].
#[derive(Clone, Debug, PartialEq)]
pub enum Tuning {
    Tuned(Tuned),
    /// The program is not right under some model: nothing to tune, make it right first
    /// (`check --suggest`). The verdicts are those of the original.
    NotRight(Vec<Verdict>),
    /// The program's own check is incomplete under some model: whether a weakening keeps the
    /// verdict cannot be told.
    Unsettled(String),
}

/// What a site is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Form {
    Kept,
    Store,
    Load,
    Removed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct State {
    form: Form,
    order: Order,
    fence: FenceOrder,
    scope: Scope,
}

fn state_of(kind: &InstrKind) -> State {
    let (order, fence, scope) = match *kind {
        InstrKind::Fence { order, scope, .. } => (Order::Relaxed, order, scope),
        InstrKind::Load { order, scope, .. }
        | InstrKind::Store { order, scope, .. }
        | InstrKind::Rmw { order, scope, .. } => (order, FenceOrder::Sc, scope),
        _ => (Order::Weak, FenceOrder::Sc, Scope::Sys),
    };
    State {
        form: Form::Kept,
        order,
        fence,
        scope,
    }
}

/// Whether tuning looks at this instruction: a fence or an atomic access.
fn synchronizing(kind: &InstrKind) -> bool {
    match kind {
        InstrKind::Fence { .. } => true,
        InstrKind::Load { order, .. }
        | InstrKind::Store { order, .. }
        | InstrKind::Rmw { order, .. } => order.is_atomic(),
        _ => false,
    }
}

/// The instruction `orig` becomes in state `s`; `fresh` is the register a load replacing an
/// RMW without destination reads into.
fn realize(orig: &InstrKind, s: State, fresh: RegId) -> Option<InstrKind> {
    let mut k = orig.clone();
    match (&mut k, s.form) {
        (_, Form::Removed) => return None,
        (InstrKind::Fence { order, scope, .. }, _) => {
            *order = s.fence;
            *scope = s.scope;
        }
        (
            InstrKind::Rmw {
                addr,
                kind: RmwKind::Op(RmwOp::Exch, value),
                ty,
                ..
            },
            Form::Store,
        ) => {
            return Some(InstrKind::Store {
                addr: *addr,
                value: *value,
                ty: *ty,
                order: s.order,
                scope: s.scope,
            })
        }
        (InstrKind::Rmw { dst, addr, ty, .. }, Form::Load) => {
            return Some(InstrKind::Load {
                dst: dst.unwrap_or(fresh),
                addr: *addr,
                ty: *ty,
                order: s.order,
                scope: s.scope,
            })
        }
        (
            InstrKind::Load { order, scope, .. }
            | InstrKind::Store { order, scope, .. }
            | InstrKind::Rmw { order, scope, .. },
            _,
        ) => {
            *order = s.order;
            *scope = s.scope;
        }
        _ => {}
    }
    Some(k)
}

/// Whether nothing reads the value an instruction of `thread` leaves in `r`: no instruction of
/// the thread reads `r`, and the condition does not name it (conservative: any read anywhere
/// counts).
fn unused(program: &Program, thread: ThreadId, r: RegId) -> bool {
    let t = program.thread(thread);
    let mut read = Vec::new();
    for i in &t.code {
        read.extend(i.kind.read_registers());
    }
    !read.contains(&r) && !program.observables().contains(&Observable::Reg(thread, r))
}

/// Whether an RMW leaves every value as it found it, so that only its read matters.
fn never_changes(kind: &RmwKind, ty: scopecheck_ir::IntType) -> bool {
    match kind {
        RmwKind::Op(RmwOp::Add | RmwOp::Sub | RmwOp::Or | RmwOp::Xor, Operand::Imm(v)) => {
            ty.wrap(*v) == 0
        }
        RmwKind::Op(RmwOp::And, Operand::Imm(v)) => ty.wrap(*v) == ty.wrap(-1),
        RmwKind::Cas { expected, new } => expected == new,
        RmwKind::Op(..) => false,
    }
}

/// The order the read half (a load replacing an RMW) or the write half (a store) keeps.
fn read_half(o: Order) -> Order {
    match o {
        Order::AcqRel => Order::Acquire,
        Order::Release => Order::Relaxed,
        o => o,
    }
}

fn write_half(o: Order) -> Order {
    match o {
        Order::AcqRel => Order::Release,
        Order::Acquire => Order::Relaxed,
        o => o,
    }
}

/// The scope one level narrower, `cluster` only where it is a population of its own.
fn narrower(s: Scope, cluster: bool) -> Option<Scope> {
    match s {
        Scope::Sys => Some(Scope::Gpu),
        Scope::Gpu if cluster => Some(Scope::Cluster),
        Scope::Gpu | Scope::Cluster => Some(Scope::Cta),
        Scope::Cta | Scope::Warp | Scope::Thread => None,
    }
}

/// The sites of `program`: its device threads' synchronizing instructions, those of one source
/// span and kind together.
pub fn sites(program: &Program) -> Vec<Site> {
    let mut out: Vec<Site> = Vec::new();
    for (ti, t) in program.threads.iter().enumerate() {
        if t.placement == Placement::Host {
            continue;
        }
        for (i, ins) in t.code.iter().enumerate() {
            if !synchronizing(&ins.kind) {
                continue;
            }
            let member = (ThreadId(ti as u32), i);
            // Instructions without a source span (made by a front-end) stand alone.
            let same = |s: &Site| {
                ins.span.len > 0
                    && s.span == ins.span
                    && std::mem::discriminant(&s.kind) == std::mem::discriminant(&ins.kind)
            };
            match out.iter_mut().find(|s| same(s)) {
                Some(s) => s.members.push(member),
                None => out.push(Site {
                    members: vec![member],
                    span: ins.span,
                    text: ins.text.clone(),
                    kind: ins.kind.clone(),
                }),
            }
        }
    }
    out
}

/// The latency of an instruction (removed: none), a `seq_cst` access costing its `fence.sc`
/// besides, as the PTX mapping issues one.
fn cycles(kind: Option<&InstrKind>, table: &CostTable) -> Option<f64> {
    let Some(kind) = kind else {
        return Some(0.0);
    };
    let own = cost_of(kind, table)?;
    let sc = match *kind {
        InstrKind::Load { order, scope, .. }
        | InstrKind::Store { order, scope, .. }
        | InstrKind::Rmw { order, scope, .. }
            if order == Order::SeqCst =>
        {
            let fence = InstrKind::Fence {
                order: FenceOrder::Sc,
                scope,
                spaces: FenceSpaces::ALL,
            };
            cost_of(&fence, table).unwrap_or(0.0)
        }
        _ => 0.0,
    };
    Some(own + sc)
}

/// The re-check budget (`--max-checks`) or the deadline (`--timeout`) ran out.
struct Cut;

struct Search<'a> {
    program: &'a Program,
    sites: Vec<Site>,
    origin: Vec<State>,
    /// Per site: whether it may become a store, and a load.
    to_store: Vec<bool>,
    to_load: Vec<bool>,
    /// Per site: the location its accesses name, when the code names one.
    locs: Vec<Option<scopecheck_ir::LocId>>,
    models: &'a [CheckOptions],
    originals: Vec<Verdict>,
    cache: HashMap<Vec<State>, bool>,
    checks: usize,
    max_checks: usize,
    cluster: bool,
    /// The deadline of the models' options (`CheckOptions::deadline`): one for the whole
    /// tuning, which every re-check gets what is left of.
    deadline: Option<std::time::Instant>,
    /// A re-check was cut by the deadline: the search stopped there.
    timed_out: bool,
}

impl Search<'_> {
    /// The program in configuration `config`.
    fn build(&self, config: &[State]) -> Program {
        let mut p = self.program.clone();
        let mut removed: Vec<(ThreadId, usize)> = Vec::new();
        for (site, (&s, &o)) in self.sites.iter().zip(config.iter().zip(&self.origin)) {
            if s == o {
                continue;
            }
            for &(t, i) in &site.members {
                let th = &mut p.threads[t.0 as usize];
                let fresh = RegId(th.registers.len() as u32);
                let needs_fresh = matches!(th.code[i].kind, InstrKind::Rmw { dst: None, .. })
                    && s.form == Form::Load;
                match realize(&th.code[i].kind, s, fresh) {
                    Some(k) => {
                        if needs_fresh {
                            th.registers.push(format!("tune{i}"));
                        }
                        th.code[i].kind = k;
                    }
                    None => removed.push((t, i)),
                }
            }
        }
        // Later instructions first, so that the earlier indices stay valid.
        removed.sort_by(|a, b| b.cmp(a));
        for (t, i) in removed {
            remove(&mut p.threads[t.0 as usize].code, i);
        }
        p
    }

    fn keeps(&mut self, config: &[State]) -> Result<bool, Cut> {
        if let Some(&k) = self.cache.get(config) {
            return Ok(k);
        }
        if self.checks >= self.max_checks {
            return Err(Cut);
        }
        let past =
            |d: &Option<std::time::Instant>| d.is_some_and(|d| std::time::Instant::now() >= d);
        if past(&self.deadline) {
            self.timed_out = true;
            return Err(Cut);
        }
        self.checks += 1;
        let p = self.build(config);
        let mut keeps = true;
        for (opts, original) in self.models.iter().zip(&self.originals) {
            keeps = match check(&p, opts) {
                // Cut by the deadline: the weakening is not known to break the verdict.
                Ok(v) if !v.is_complete() && past(&self.deadline) => {
                    self.timed_out = true;
                    return Err(Cut);
                }
                Ok(v) => {
                    v.is_complete()
                        && is_right(&v)
                        && (v.quantifier != Quantifier::Exists || v.outcome == original.outcome)
                }
                // A weakened program that faults has not kept the verdict.
                Err(_) => false,
            };
            if !keeps {
                break;
            }
        }
        self.cache.insert(config.to_vec(), keeps);
        Ok(keeps)
    }

    /// The single steps down from state `s` of site `i`, in the order they are tried: removals
    /// and replacements first (they save the most), then orders, then scopes.
    fn moves(&self, i: usize, s: State) -> Vec<(Step, State)> {
        let site = &self.sites[i];
        let mut out = Vec::new();
        if s.form == Form::Removed {
            return out;
        }
        if let InstrKind::Fence { .. } = site.kind {
            out.push((
                Step::DropFence,
                State {
                    form: Form::Removed,
                    ..s
                },
            ));
            let c = self.program.arch.is_c();
            let weaker: &[FenceOrder] = match s.fence {
                FenceOrder::Sc => &[FenceOrder::AcqRel],
                FenceOrder::AcqRel if c => &[FenceOrder::Acquire, FenceOrder::Release],
                _ => &[],
            };
            for &to in weaker {
                out.push((
                    Step::FenceOrder { from: s.fence, to },
                    State { fence: to, ..s },
                ));
            }
        } else {
            if s.form == Form::Kept && self.to_store[i] {
                let order = write_half(s.order);
                out.push((
                    Step::RmwToStore,
                    State {
                        form: Form::Store,
                        order,
                        ..s
                    },
                ));
            }
            if s.form == Form::Kept && self.to_load[i] {
                let order = read_half(s.order);
                out.push((
                    Step::RmwToLoad,
                    State {
                        form: Form::Load,
                        order,
                        ..s
                    },
                ));
            }
            if let Some(now) = realize(&site.kind, s, RegId(0)) {
                for to in weaker_orders(s.order, &now) {
                    out.push((Step::Order { from: s.order, to }, State { order: to, ..s }));
                }
            }
        }
        if let Some(to) = narrower(s.scope, self.cluster) {
            out.push((Step::Scope { from: s.scope, to }, State { scope: to, ..s }));
        }
        out
    }

    /// Steps site `i` down as far as it goes in `config`; whether it moved.
    fn descend(&mut self, config: &mut [State], i: usize) -> Result<bool, Cut> {
        let mut moved = false;
        'again: loop {
            for (_, next) in self.moves(i, config[i]) {
                let was = config[i];
                config[i] = next;
                if self.keeps(config)? {
                    moved = true;
                    continue 'again;
                }
                config[i] = was;
            }
            return Ok(moved);
        }
    }

    /// Scope steps of several sites at once, for when no single step keeps the verdict but a
    /// common one does (OpenCL's inclusive scopes must be equal: one access of a location at
    /// work-group scope beside others at device scope races, all of them at work-group scope
    /// may not). Two kinds: every atomic access of one location at the widest scope among
    /// them, and every atomic access at one scope; each narrowed one level.
    fn joint_moves(&self, config: &[State]) -> Vec<Vec<(usize, State)>> {
        let access = |i: usize| {
            !matches!(self.sites[i].kind, InstrKind::Fence { .. })
                && config[i].form != Form::Removed
                && config[i].order.is_atomic()
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut locs: Vec<_> = self.locs.iter().flatten().copied().collect();
        locs.sort();
        locs.dedup();
        for l in locs {
            let of_l: Vec<usize> = (0..self.sites.len())
                .filter(|&i| access(i) && self.locs[i] == Some(l))
                .collect();
            if let Some(w) = of_l.iter().map(|&i| config[i].scope).max() {
                groups.push(of_l.into_iter().filter(|&i| config[i].scope == w).collect());
            }
        }
        for w in [Scope::Sys, Scope::Gpu, Scope::Cluster] {
            groups.push(
                (0..self.sites.len())
                    .filter(|&i| access(i) && config[i].scope == w)
                    .collect(),
            );
        }
        let mut out: Vec<Vec<(usize, State)>> = Vec::new();
        for g in groups {
            let step: Vec<(usize, State)> = g
                .iter()
                .filter_map(|&i| {
                    narrower(config[i].scope, self.cluster).map(|to| {
                        (
                            i,
                            State {
                                scope: to,
                                ..config[i]
                            },
                        )
                    })
                })
                .collect();
            if step.len() > 1 && !out.contains(&step) {
                out.push(step);
            }
        }
        out
    }

    /// Descends every site in `order`, again and again until none moves, then tries the joint
    /// moves, until nothing moves: a maximal set.
    fn greedy(&mut self, start: &[State], order: &[usize]) -> Result<Vec<State>, Cut> {
        let mut config = start.to_vec();
        loop {
            let mut moved = false;
            for &i in order {
                moved |= self.descend(&mut config, i)?;
            }
            if !moved {
                for joint in self.joint_moves(&config) {
                    let mut next = config.clone();
                    for &(i, s) in &joint {
                        next[i] = s;
                    }
                    if self.keeps(&next)? {
                        config = next;
                        moved = true;
                        break;
                    }
                }
            }
            if !moved {
                return Ok(config);
            }
        }
    }

    /// The summary of what changed at site `i` from its origin to `s`.
    fn change(&self, i: usize, s: State, table: &CostTable) -> SiteChange {
        let o = self.origin[i];
        let site = &self.sites[i];
        let mut steps = Vec::new();
        match s.form {
            Form::Removed => steps.push(Step::DropFence),
            Form::Store => steps.push(Step::RmwToStore),
            Form::Load => steps.push(Step::RmwToLoad),
            Form::Kept => {}
        }
        if s.form != Form::Removed {
            // An RMW's order as a store or load keeps one half: the change is from that.
            let from = match s.form {
                Form::Store => write_half(o.order),
                Form::Load => read_half(o.order),
                _ => o.order,
            };
            if matches!(site.kind, InstrKind::Fence { .. }) {
                if s.fence != o.fence {
                    steps.push(Step::FenceOrder {
                        from: o.fence,
                        to: s.fence,
                    });
                }
            } else if s.order != from {
                steps.push(Step::Order { from, to: s.order });
            }
            if s.scope != o.scope {
                steps.push(Step::Scope {
                    from: o.scope,
                    to: s.scope,
                });
            }
        }
        let becomes = realize(&site.kind, s, RegId(u32::MAX));
        let saved_cycles = cycles(Some(&site.kind), table)
            .zip(cycles(becomes.as_ref(), table))
            .map(|(a, b)| a - b);
        SiteChange {
            site: i,
            steps,
            becomes,
            saved_cycles,
        }
    }
}

/// Whether some cluster holds device threads of more than one CTA, so that `.cluster` is a
/// scope between `.cta` and `.gpu` (in OpenCL there is none).
fn clusters_matter(program: &Program) -> bool {
    if program.arch == scopecheck_ir::Arch::OpenCl {
        return false;
    }
    let device: Vec<_> = program
        .threads
        .iter()
        .filter_map(|t| match t.placement {
            Placement::Device(d) => Some(d),
            Placement::Host => None,
        })
        .collect();
    device.iter().any(|a| {
        device
            .iter()
            .any(|b| a.gpu == b.gpu && a.cluster == b.cluster && a.cta != b.cta)
    })
}

/// Tunes `program`: checks it under each of `models`, and when it is right under all, searches
/// the maximal sets of weakenings that keep every verdict, spending at most `max_checks`
/// re-checks. An error in checking the program itself is returned.
pub fn tune(
    program: &Program,
    models: &[CheckOptions],
    table: &CostTable,
    max_checks: usize,
) -> Result<Tuning, Diagnostic> {
    let originals = models
        .iter()
        .map(|o| check(program, o))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(v) = originals.iter().find(|v| !v.is_complete()) {
        let why = v.incomplete.as_ref().map_or("", |i| i.reason.as_str());
        return Ok(Tuning::Unsettled(format!(
            "the check of the program itself under {} is incomplete ({why})",
            v.model
        )));
    }
    if !originals.iter().all(is_right) {
        return Ok(Tuning::NotRight(originals));
    }
    let mut search = Search::new(program, models, originals, max_checks);
    let origin = search.origin.clone();
    let n = search.sites.len();
    let mut found: Vec<Vec<State>> = Vec::new();
    let mut incomplete = None;
    // How far each site goes alone.
    let mut limits = origin.clone();
    let mut alone_cut = false;
    for i in 0..n {
        let mut c = origin.clone();
        if search.descend(&mut c, i).is_err() {
            alone_cut = true;
            break;
        }
        limits[i] = c[i];
    }
    if alone_cut {
        incomplete = Some(search.cut());
    } else {
        let program_order: Vec<usize> = (0..n).collect();
        // Every site at its own limit at once: when that keeps the verdict, the sites do not
        // interfere and the one maximal set is there (checked by one more descent).
        let together = search.keeps(&limits);
        match together {
            Err(Cut) => incomplete = Some(search.cut()),
            Ok(true) => match search.greedy(&limits, &program_order) {
                Ok(m) => found.push(m),
                Err(Cut) => incomplete = Some(search.cut()),
            },
            Ok(false) => incomplete = search.maximal_sets(&limits, &mut found),
        }
    }
    let sets = search.ranked(&found, table);
    let weakest = if alone_cut {
        vec![]
    } else {
        (0..n)
            .filter(|&i| limits[i] == origin[i] && found.iter().all(|m| m[i] == origin[i]))
            .map(|i| Weakest {
                site: i,
                breaking: search
                    .moves(i, origin[i])
                    .into_iter()
                    .map(|(s, _)| s)
                    .collect(),
            })
            .collect()
    };
    Ok(Tuning::Tuned(Tuned {
        sites: search.sites,
        sets,
        weakest,
        checks: search.checks,
        incomplete,
    }))
}

impl<'a> Search<'a> {
    /// The search over `program`'s sites, right under every one of `models` (`originals`, its
    /// verdicts), with the original configuration known to keep them.
    fn new(
        program: &'a Program,
        models: &'a [CheckOptions],
        originals: Vec<Verdict>,
        max_checks: usize,
    ) -> Search<'a> {
        let sites = sites(program);
        let origin: Vec<State> = sites.iter().map(|s| state_of(&s.kind)).collect();
        let rmw_members = |s: &Site, ok: &dyn Fn(&RmwKind, Option<RegId>, ThreadId) -> bool| {
            s.members.iter().all(|&(t, i)| {
                matches!(&program.thread(t).code[i].kind,
                    InstrKind::Rmw { kind, dst, .. } if ok(kind, *dst, t))
            })
        };
        let to_store = sites
            .iter()
            .map(|s| {
                rmw_members(s, &|k, dst, t| {
                    matches!(k, RmwKind::Op(RmwOp::Exch, _))
                        && dst.is_none_or(|r| unused(program, t, r))
                })
            })
            .collect();
        let to_load = sites
            .iter()
            .map(|s| {
                let ty = match s.kind {
                    InstrKind::Rmw { ty, .. } => ty,
                    _ => return false,
                };
                rmw_members(s, &|k, _, _| never_changes(k, ty))
            })
            .collect();
        let locs = sites
            .iter()
            .map(|s| {
                s.members
                    .first()
                    .and_then(|&(t, i)| program.thread(t).code[i].kind.named_loc())
            })
            .collect();
        let mut search = Search {
            locs,
            program,
            sites,
            origin: origin.clone(),
            to_store,
            to_load,
            models,
            originals,
            cache: HashMap::new(),
            checks: 0,
            max_checks,
            cluster: clusters_matter(program),
            deadline: models.iter().filter_map(|o| o.deadline).min(),
            timed_out: false,
        };
        search.cache.insert(origin, true);
        search
    }

    /// Why the search stopped short, after a [`Cut`].
    fn cut(&self) -> String {
        if self.timed_out {
            format!(
                "stopped after {} re-checks: the --timeout was reached",
                self.checks
            )
        } else {
            format!("stopped after {} re-checks (--max-checks)", self.checks)
        }
    }

    /// The maximal sets when the sites interfere (all at their own `limits` at once loses a
    /// verdict): greedy descents from the original in many site orders, each order trying
    /// first the sites an earlier descent held short of their limit. Adds the sets to `found`;
    /// returns why it stopped short, if it did.
    fn maximal_sets(&mut self, limits: &[State], found: &mut Vec<Vec<State>>) -> Option<String> {
        let origin = self.origin.clone();
        let n = self.sites.len();
        let mut queue: VecDeque<Vec<usize>> = VecDeque::from([vec![]]);
        let mut seen: HashSet<Vec<usize>> = HashSet::from([vec![]]);
        let mut descents = 0;
        while let Some(first) = queue.pop_front() {
            if descents == MAX_DESCENTS {
                return Some(format!(
                    "stopped after {MAX_DESCENTS} descents: there may be more maximal sets"
                ));
            }
            descents += 1;
            let order: Vec<usize> = first
                .iter()
                .copied()
                .chain((0..n).filter(|i| !first.contains(i)))
                .collect();
            let m = match self.greedy(&origin, &order) {
                Ok(m) => m,
                Err(Cut) => return Some(self.cut()),
            };
            // A site held short of its own limit may go further when tried earlier.
            for &i in &order {
                if m[i] != limits[i] && !first.contains(&i) {
                    let mut next = first.clone();
                    next.push(i);
                    if seen.insert(next.clone()) {
                        queue.push_back(next);
                    }
                }
            }
            if !found.contains(&m) {
                found.push(m);
            }
        }
        None
    }

    /// The sets `found` as changes with their costs from `table`: most cycles saved first, a
    /// set whose saving is unknown last, ties in the order found. The original is no set.
    fn ranked(&self, found: &[Vec<State>], table: &CostTable) -> Vec<WeakenedSet> {
        let origin = &self.origin;
        let n = self.sites.len();
        let mut sets: Vec<WeakenedSet> = found
            .iter()
            .filter(|m| *m != origin)
            .map(|m| {
                let changes: Vec<SiteChange> = (0..n)
                    .filter(|&i| m[i] != origin[i])
                    .map(|i| self.change(i, m[i], table))
                    .collect();
                WeakenedSet {
                    saved_cycles: changes.iter().map(|c| c.saved_cycles).sum(),
                    changes,
                }
            })
            .collect();
        sets.sort_by(|a, b| {
            let key = |s: &WeakenedSet| s.saved_cycles.unwrap_or(f64::NEG_INFINITY);
            key(b).total_cmp(&key(a))
        });
        sets
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
                c("ld.relaxed.gpu", 265.0),
                c("ld.acquire.cta", 51.0),
                c("ld.acquire.gpu", 279.0),
                c("atom.acq_rel.gpu.add", 661.0),
                c("st.weak + fence.acq_rel.gpu", 406.0),
                c("st.weak + fence.sc.gpu", 406.0),
            ],
        }
    }

    fn tuned(src: &str) -> Tuned {
        let p = scopecheck_litmus::parse(src).expect("parses");
        match tune(&p, &[CheckOptions::default()], &table(), DEFAULT_MAX_CHECKS) {
            Ok(Tuning::Tuned(t)) => t,
            other => panic!("not tuned: {other:?}"),
        }
    }

    /// Each set as `line: steps` per change, for exact comparison.
    fn sets(t: &Tuned) -> Vec<Vec<String>> {
        t.sets
            .iter()
            .map(|s| {
                s.changes
                    .iter()
                    .map(|c| format!("{}: {:?}", t.sites[c.site].span.line, c.steps))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_release_at_sys_between_threads_of_one_cta_narrows_to_cta() {
        // Both threads sit in CTA 0: a .cta release and a .cta acquire are morally strong and
        // still synchronize, so the stale read stays forbidden. Neither can go relaxed: without
        // the release/acquire pair nothing orders the data before the flag. No cluster holds
        // two CTAs, so .gpu steps straight to .cta.
        let t = tuned(
            "PTX t\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak d, 7 | ld.acquire.gpu r0, f ;\n st.release.sys f, 1 | ld.weak r1, d ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        );
        assert_eq!(
            sets(&t),
            [[
                "5: [Scope { from: Sys, to: Cta }]",
                "4: [Scope { from: Gpu, to: Cta }]"
            ]]
        );
        // 987 - 14 for the release, 279 - 51 for the acquire.
        assert_eq!(t.sets[0].saved_cycles, Some(973.0 + 228.0));
        assert!(t.weakest.is_empty());
        assert!(t.incomplete.is_none());
    }

    #[test]
    fn sb_with_two_sc_fences_keeps_both_fences_as_they_are() {
        // Store buffering across two CTAs: only the two fence.sc.gpu, morally strong and in one
        // Fence-SC order, forbid both loads reading 0. Removing either, making it acq_rel (no
        // SC order) or .cta (not morally strong with the other CTA's) allows it. The relaxed
        // accesses can narrow to .cta: the first fence in Fence-SC order synchronizes with the
        // second whatever the accesses are, so a store before it causally precedes the load
        // after the other, which may then not read the initial value (causality, coherence);
        // their race is no fault under PTX.
        let t = tuned(
            "PTX SB\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.relaxed.gpu x, 1 | st.relaxed.gpu y, 1 ;\n fence.sc.gpu | fence.sc.gpu ;\n ld.relaxed.gpu r0, y | ld.relaxed.gpu r1, x ;\n~exists (P0:r0 == 0 /\\ P1:r1 == 0)\n",
        );
        let cta = "[Scope { from: Gpu, to: Cta }]";
        assert_eq!(
            sets(&t),
            [[4, 6, 4, 6].map(|l| format!("{l}: {cta}"))],
            "{:?}",
            sets(&t)
        );
        let fences: Vec<(u32, Vec<Step>)> = t
            .weakest
            .iter()
            .filter(|w| matches!(t.sites[w.site].kind, InstrKind::Fence { .. }))
            .map(|w| (t.sites[w.site].span.line, w.breaking.clone()))
            .collect();
        let breaking = vec![
            Step::DropFence,
            Step::FenceOrder {
                from: FenceOrder::Sc,
                to: FenceOrder::AcqRel,
            },
            Step::Scope {
                from: Scope::Gpu,
                to: Scope::Cta,
            },
        ];
        assert_eq!(fences, [(5, breaking.clone()), (5, breaking)]);
        // Only the fences are needed as they are.
        assert_eq!(t.weakest.len(), 2);
    }

    #[test]
    fn two_fences_of_which_either_may_go_give_two_maximal_sets() {
        // The writer has two fence.acq_rel.gpu in a row before its flag store: either one
        // orders the data before the flag, so either may go, but not both (then nothing does).
        // The reader's fence and the .gpu flag accesses are needed: the threads are in two
        // CTAs. A fence kept alone cannot narrow to .cta either. So two maximal sets, one fence
        // removed in each, both saving the fence's 406 - 7 cycles.
        let t = tuned(
            "PTX MP2\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak d, 1 | ld.relaxed.gpu r0, f ;\n fence.acq_rel.gpu | fence.acq_rel.gpu ;\n fence.acq_rel.gpu | ld.weak r1, d ;\n st.relaxed.gpu f, 1 | ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        );
        assert_eq!(
            sets(&t),
            [["5: [DropFence]"], ["6: [DropFence]"]],
            "{:?}",
            t.sets
        );
        assert_eq!(t.sets[0].saved_cycles, Some(399.0));
        // The flag store, the reader's load and the reader's fence.
        let weakest: Vec<u32> = t
            .weakest
            .iter()
            .map(|w| t.sites[w.site].span.line)
            .collect();
        assert_eq!(weakest, [7, 4, 5]);
    }

    #[test]
    fn an_unused_exchange_becomes_a_store_and_an_add_of_zero_a_load() {
        // The writer publishes with an acq_rel exchange whose old value nothing reads: a
        // release store does the same publishing. The reader's fetch_add of 0 only reads: an
        // acquire load of the flag synchronizes the same way. Neither can go relaxed (the data
        // would not be ordered) nor to work-group scope (the threads are in two work-groups).
        let t = tuned(
            "OPENCL X\n{ data=0; flag=0; }\nP0@wg 0, dev 0 (global int* data, global atomic_int* flag) {\n  *data = 7;\n  atomic_exchange_explicit(flag, 1, memory_order_acq_rel, memory_scope_device);\n}\nP1@wg 1, dev 0 (global int* data, global atomic_int* flag) {\n  int r0 = atomic_fetch_add_explicit(flag, 0, memory_order_acquire, memory_scope_device);\n  int r1 = 0;\n  if (r0 == 1) { r1 = *data; }\n}\n~exists (1:r0=1 /\\ 1:r1=0)\n",
        );
        assert_eq!(
            sets(&t),
            [["5: [RmwToStore]", "8: [RmwToLoad]"]],
            "{:?}",
            t.sets
        );
        let becomes: Vec<_> = t.sets[0]
            .changes
            .iter()
            .map(|c| c.becomes.clone())
            .collect();
        assert!(matches!(
            becomes[0],
            Some(InstrKind::Store {
                order: Order::Release,
                scope: Scope::Gpu,
                ..
            })
        ));
        assert!(matches!(
            becomes[1],
            Some(InstrKind::Load {
                order: Order::Acquire,
                scope: Scope::Gpu,
                ..
            })
        ));
        // 661 - 389 for the store; an acquire RMW is priced as acq_rel (PTX atom has no cheaper
        // acquire in the table): 661 - 279 for the load.
        assert_eq!(t.sets[0].saved_cycles, Some(272.0 + 382.0));
    }

    #[test]
    fn opencl_scopes_that_must_be_equal_narrow_together() {
        // SB with seq_cst atomics at device scope, both work-items in one work-group. OpenCL
        // counts two scopes as inclusive only when they are equal: one access narrowed alone to
        // work-group scope races with the other thread's device-scope access of its location,
        // so no single step keeps the verdict; the accesses of one location narrowed together
        // are inclusive again, and the seq_cst order among them still forbids both reads of 0.
        // seq_cst cannot weaken (release/acquire allow the SB outcome).
        let t = tuned(
            "OPENCL SB\n{ x=0; y=0; }\nP0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {\n  atomic_store_explicit(x, 1, memory_order_seq_cst, memory_scope_device);\n  int r0 = atomic_load_explicit(y, memory_order_seq_cst, memory_scope_device);\n}\nP1@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) {\n  atomic_store_explicit(y, 1, memory_order_seq_cst, memory_scope_device);\n  int r0 = atomic_load_explicit(x, memory_order_seq_cst, memory_scope_device);\n}\n~exists (0:r0=0 /\\ 1:r0=0)\n",
        );
        let wg = "[Scope { from: Gpu, to: Cta }]";
        assert_eq!(sets(&t), [[4, 5, 8, 9].map(|l| format!("{l}: {wg}"))]);
        assert!(t.weakest.is_empty());
    }

    #[test]
    fn a_wrong_program_is_not_tuned() {
        // Relaxed flag accesses order nothing: the stale read is allowed, nothing to tune.
        let p = scopecheck_litmus::parse(
            "PTX t\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak d, 7 | ld.relaxed.gpu r0, f ;\n st.relaxed.gpu f, 1 | ld.weak r1, d ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        )
        .expect("parses");
        let t = tune(&p, &[CheckOptions::default()], &table(), 100).expect("checks");
        assert!(matches!(t, Tuning::NotRight(_)), "{t:?}");
    }

    #[test]
    fn a_cut_search_says_so() {
        // One re-check is not enough to find how far the first site goes alone and see that
        // its next step breaks it.
        let p = scopecheck_litmus::parse(
            "PTX t\n{ d=0; f=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak d, 7 | ld.acquire.gpu r0, f ;\n st.release.sys f, 1 | ld.weak r1, d ;\n~exists (P1:r0 == 1 /\\ P1:r1 == 0)\n",
        )
        .expect("parses");
        let Ok(Tuning::Tuned(t)) = tune(&p, &[CheckOptions::default()], &table(), 1) else {
            panic!("tuned");
        };
        assert_eq!(t.checks, 1);
        assert!(t.sets.is_empty());
        assert_eq!(
            t.incomplete.as_deref(),
            Some("stopped after 1 re-checks (--max-checks)")
        );
    }
}
