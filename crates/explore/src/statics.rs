//! What the graph explorer knows of each thread's code before it runs it: loop heads and the
//! registers live there (for the purity of an iteration), which RMW write-backs are invisible,
//! and, for the completeness gate, what a thread could still do without waiting for the value
//! of a read (docs/explore.md, "Completeness").

use std::collections::HashSet;

use scopecheck_ir::{
    Address, BranchCond, InstrKind, LocId, Observable, Operand, Program, RmwKind, Thread, ThreadId,
};

use crate::loops::{reads_of, writes_morally_strong_with, writes_of};

/// A set of registers of one thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Regs(Vec<u64>);

impl Regs {
    fn new(n: usize) -> Self {
        Regs(vec![0; n.div_ceil(64).max(1)])
    }
    fn insert(&mut self, r: usize) {
        self.0[r / 64] |= 1 << (r % 64);
    }
    fn remove(&mut self, r: usize) {
        self.0[r / 64] &= !(1 << (r % 64));
    }
    fn contains(&self, r: usize) -> bool {
        self.0[r / 64] >> (r % 64) & 1 == 1
    }
    fn union_with(&mut self, o: &Regs) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &w)| {
            (0..64)
                .filter(move |b| w >> b & 1 == 1)
                .map(move |b| wi * 64 + b)
        })
    }
}

/// What a thread could do after a read without its value (the completeness gate's facts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AfterRead {
    /// Locations of writes reachable after the read whose address, value and enclosing
    /// branches do not depend on it.
    pub independent_writes: Vec<LocId>,
    /// A barrier arrival is reachable after the read.
    pub reaches_arrive: bool,
}

/// Which threads' code may access a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accessors {
    None,
    One(ThreadId),
    Several,
}

/// Per location, which threads' code may access it (once for the program: a thread's private
/// locations, `ThreadStatics::is_private`, are those only it accesses).
pub fn accessors(program: &Program) -> Vec<Accessors> {
    let mut who = vec![Accessors::None; program.locations.len()];
    for (t, thread) in program.threads.iter().enumerate() {
        let t = ThreadId(t as u32);
        for addr in thread.code.iter().filter_map(|i| i.kind.address()) {
            for l in program.possible_locations(addr) {
                let a = &mut who[l.0 as usize];
                *a = match *a {
                    Accessors::None => Accessors::One(t),
                    Accessors::One(u) if u == t => Accessors::One(t),
                    _ => Accessors::Several,
                };
            }
        }
    }
    who
}

/// The static facts of one thread.
#[derive(Clone, Debug)]
pub struct ThreadStatics {
    pub unroll: u32,
    loop_head: Vec<bool>,
    live: Vec<Regs>,
    write_back_ok: Vec<bool>,
    /// Per location: no other thread's code may access it, so what this thread writes there
    /// no other thread can see (a loop body may write and undo it).
    private: Vec<bool>,
    /// Locations this thread's code may write.
    pub writes: Vec<LocId>,
    /// Per instruction: the locations some path from it may still write.
    writes_from: Vec<Vec<LocId>>,
    /// Some thread starts only after this one finishes.
    pub has_launch_successors: bool,
    /// Per instruction: a read inside a loop (between a backward branch and its target), which
    /// the hole search runs after other threads' work (`Search::next_thread`).
    loop_read: Vec<bool>,
    /// Per instruction: an RMW whose result register (if any) is dead after it.
    rmw_result_dead: Vec<bool>,
    /// Per instruction: an RMW that is a blind update of a commuting location (`commute`).
    commutes: Vec<bool>,
    /// Per instruction: a load that starts after every update of the commuting locations it
    /// may read (`commute`).
    final_loads: Vec<bool>,
    /// Per location: commuting (`commute`), the same for every thread.
    commuting: std::sync::Arc<[bool]>,
}

fn successors(code: &[scopecheck_ir::Instr], pc: usize) -> Vec<usize> {
    code[pc].successors(pc)
}

/// The locations an instruction may write, given what its access may touch
/// (`provenance::access_locations`).
fn write_locs(kind: &InstrKind, touches: &[LocId]) -> Vec<LocId> {
    match kind {
        InstrKind::Store { .. } | InstrKind::Rmw { .. } => touches.to_vec(),
        _ => vec![],
    }
}

impl ThreadStatics {
    /// `accessors`: [`accessors`] of the program.
    pub fn new(program: &Program, tid: ThreadId, unroll: u32, accessors: &[Accessors]) -> Self {
        let thread = program.thread(tid);
        let code = &thread.code;
        let n = code.len();
        let nregs = thread.registers.len();
        let mut loop_head = vec![false; n + 1];
        for (pc, i) in code.iter().enumerate() {
            if let InstrKind::Branch { target, .. } = i.kind {
                if target <= pc {
                    loop_head[target] = true;
                }
            }
        }
        // Registers live at each instruction; at the end, those the condition or the report
        // reads.
        let mut at_end = Regs::new(nregs);
        for o in program.observables() {
            if let Observable::Reg(t, r) = o {
                if t == tid {
                    at_end.insert(r.0 as usize);
                }
            }
        }
        let rules = program.arithmetic();
        let mut live = vec![Regs::new(nregs); n + 1];
        live[n] = at_end;
        let mut changed = true;
        while changed {
            changed = false;
            for pc in (0..n).rev() {
                let mut out = Regs::new(nregs);
                for s in successors(code, pc) {
                    out.union_with(&live[s.min(n)]);
                }
                // Strong liveness: a move or an operation whose result is dead uses nothing
                // (a backoff delay that only feeds itself is never live), unless it can fault
                // on its operands.
                let dead_result = match code[pc].kind {
                    InstrKind::Mov { dst, .. } | InstrKind::Fma { dst, .. } => {
                        !out.contains(dst.0 as usize)
                    }
                    InstrKind::Binary { dst, op, ty, .. } => {
                        !out.contains(dst.0 as usize) && !op.can_be_undefined(ty, rules)
                    }
                    _ => false,
                };
                for d in writes_of(&code[pc].kind) {
                    out.remove(d.0 as usize);
                }
                if !dead_result {
                    for u in reads_of(&code[pc].kind) {
                        out.insert(u.0 as usize);
                    }
                }
                changed |= live[pc].union_with(&out);
            }
        }
        let write_back_ok = code
            .iter()
            .map(|i| match i.kind {
                InstrKind::Rmw { addr, scope, .. } => program
                    .possible_locations(&addr)
                    .iter()
                    .all(|&l| writes_morally_strong_with(program, thread, l, scope)),
                _ => false,
            })
            .collect();
        let touches = crate::provenance::access_locations(program, thread);
        let mut writes: Vec<LocId> = code
            .iter()
            .zip(&touches)
            .flat_map(|(i, t)| write_locs(&i.kind, t))
            .collect();
        writes.sort_unstable();
        writes.dedup();
        let private = accessors
            .iter()
            .map(|a| matches!(a, Accessors::None) || *a == Accessors::One(tid))
            .collect();
        let has_launch_successors = program.threads.iter().any(|t| t.after.contains(&tid));
        let mut writes_from: Vec<Vec<LocId>> = vec![vec![]; n + 1];
        let mut changed = true;
        while changed {
            changed = false;
            for pc in (0..n).rev() {
                let mut w: Vec<LocId> = write_locs(&code[pc].kind, &touches[pc]);
                for s in successors(code, pc) {
                    w.extend_from_slice(&writes_from[s.min(n)]);
                }
                w.sort_unstable();
                w.dedup();
                if w != writes_from[pc] {
                    writes_from[pc] = w;
                    changed = true;
                }
            }
        }
        let rmw_result_dead = (0..n)
            .map(|pc| match code[pc].kind {
                InstrKind::Rmw { dst, .. } => dst.is_none_or(|d| {
                    successors(code, pc)
                        .iter()
                        .all(|&s| !live[s.min(n)].contains(d.0 as usize))
                }),
                _ => false,
            })
            .collect();
        ThreadStatics {
            unroll,
            rmw_result_dead,
            commutes: vec![false; n],
            final_loads: vec![false; n],
            commuting: std::sync::Arc::from(vec![]),
            loop_head,
            live,
            write_back_ok,
            private,
            writes,
            writes_from,
            has_launch_successors,
            loop_read: (0..n)
                .map(|pc| {
                    matches!(code[pc].kind, InstrKind::Load { .. } | InstrKind::Rmw { .. })
                        && code.iter().enumerate().any(|(b, i)| {
                            matches!(i.kind, InstrKind::Branch { target, .. } if target <= pc && pc <= b)
                        })
                })
                .collect(),
        }
    }

    /// Whether instruction `pc` is an RMW whose result nobody reads.
    pub fn rmw_result_dead(&self, pc: usize) -> bool {
        self.rmw_result_dead.get(pc).copied().unwrap_or(false)
    }

    /// Whether instruction `pc` is a blind update of a commuting location (`commute`).
    pub fn commutes(&self, pc: usize) -> bool {
        self.commutes.get(pc).copied().unwrap_or(false)
    }

    pub(crate) fn set_commutes(
        &mut self,
        updates: Vec<bool>,
        final_loads: Vec<bool>,
        locations: std::sync::Arc<[bool]>,
    ) {
        self.commutes = updates;
        self.final_loads = final_loads;
        self.commuting = locations;
    }

    /// Whether the load at `pc`, reading `loc`, reads the final value of a commuting location
    /// (`commute`): it starts after every update of it, so it reads the last.
    pub fn reads_final(&self, pc: usize, loc: LocId) -> bool {
        self.final_loads.get(pc).copied().unwrap_or(false)
            && self.commuting.get(loc.0 as usize).copied().unwrap_or(false)
    }

    /// Whether no other thread's code may access `loc`.
    pub fn is_private(&self, loc: LocId) -> bool {
        self.private.get(loc.0 as usize).copied().unwrap_or(false)
    }

    /// Whether `loc` is a commuting location (`commute`).
    pub fn is_commuting(&self, loc: LocId) -> bool {
        self.commuting.get(loc.0 as usize).copied().unwrap_or(false)
    }

    /// Whether instruction `pc` is a read inside a loop.
    pub fn is_loop_read(&self, pc: usize) -> bool {
        self.loop_read.get(pc).copied().unwrap_or(false)
    }

    /// Whether some path from instruction `pc` writes `loc`.
    pub fn may_write_from(&self, pc: usize, loc: LocId) -> bool {
        self.writes_from[pc.min(self.writes_from.len() - 1)]
            .binary_search(&loc)
            .is_ok()
    }

    /// The locations some path from instruction `pc` may write (sorted).
    pub fn writes_from(&self, pc: usize) -> &[LocId] {
        &self.writes_from[pc.min(self.writes_from.len() - 1)]
    }

    pub fn is_loop_head(&self, pc: usize) -> bool {
        self.loop_head[pc]
    }

    /// The registers live at instruction `pc`.
    pub fn live_at(&self, pc: usize) -> impl Iterator<Item = usize> + '_ {
        self.live[pc].iter()
    }

    /// Whether the RMW at `instr`, writing back what it read, is invisible to other threads:
    /// every other write to its location is morally strong with it (docs/loops.md).
    pub fn write_back_ok(&self, _program: &Program, _thread: &Thread, instr: usize) -> bool {
        self.write_back_ok[instr]
    }
}

/// Taint analysis from instruction `pc` of a thread whose registers `unknown` hold values of
/// reads still waiting for a write: which writes it could make without those values (no data,
/// address or control dependency on them), and whether a barrier is reachable at all.
pub fn after_holes(program: &Program, thread: &Thread, pc: usize, unknown: &[usize]) -> AfterRead {
    let code = &thread.code;
    let n = code.len();
    let nregs = thread.registers.len();
    let mut out = AfterRead::default();
    // Plain reachability of a barrier arrival.
    let mut seen = vec![false; n + 1];
    let mut stack = vec![pc];
    while let Some(p) = stack.pop() {
        if p >= n || std::mem::replace(&mut seen[p], true) {
            continue;
        }
        if matches!(
            code[p].kind,
            InstrKind::Barrier { .. } | InstrKind::Warp { .. }
        ) {
            out.reaches_arrive = true;
        }
        stack.extend(successors(code, p));
    }
    let mut taint = Regs::new(nregs);
    for &r in unknown {
        taint.insert(r);
    }
    let tainted = |t: &Regs, o: &Operand| matches!(o, Operand::Reg(r) if t.contains(r.0 as usize));
    let addr_tainted = |t: &Regs, a: &Address| a.reg().is_some_and(|r| t.contains(r.0 as usize));
    let mut visited: HashSet<(usize, Regs)> = HashSet::new();
    let mut work = vec![(pc, taint)];
    while let Some((p, mut t)) = work.pop() {
        if p >= n || !visited.insert((p, t.clone())) {
            continue;
        }
        let set = |t: &mut Regs, r: scopecheck_ir::RegId, v: bool| {
            if v {
                t.insert(r.0 as usize)
            } else {
                t.remove(r.0 as usize)
            }
        };
        match &code[p].kind {
            InstrKind::Load { dst, addr, .. } => {
                let v = addr_tainted(&t, addr);
                set(&mut t, *dst, v);
            }
            InstrKind::Store { addr, value, .. } => {
                if !addr_tainted(&t, addr) && !tainted(&t, value) {
                    out.independent_writes
                        .extend(program.possible_locations(addr));
                }
            }
            InstrKind::Rmw {
                dst, addr, kind, ..
            } => {
                let a = addr_tainted(&t, addr);
                let ops = match kind {
                    RmwKind::Op(_, v) => tainted(&t, v),
                    RmwKind::Cas { expected, new } => tainted(&t, expected) || tainted(&t, new),
                };
                if !a && !ops {
                    out.independent_writes
                        .extend(program.possible_locations(addr));
                }
                if let Some(d) = dst {
                    set(&mut t, *d, a);
                }
            }
            InstrKind::Mov { dst, src } => {
                let v = tainted(&t, src);
                set(&mut t, *dst, v);
            }
            InstrKind::Binary { dst, a, b, .. } => {
                let v = tainted(&t, a) || tainted(&t, b);
                set(&mut t, *dst, v);
            }
            InstrKind::Fma { dst, a, b, c, .. } => {
                let v = tainted(&t, a) || tainted(&t, b) || tainted(&t, c);
                set(&mut t, *dst, v);
            }
            InstrKind::Barrier { kind, .. } => {
                if let scopecheck_ir::BarrierKind::Red { dst, .. } = kind {
                    set(&mut t, *dst, false);
                }
            }
            kind @ InstrKind::Warp { .. } => {
                // It cannot arrive before its own operands are known; what it receives from
                // the other lanes (which arrive only with theirs known) is not unknown.
                if crate::loops::reads_of(kind)
                    .iter()
                    .any(|r| t.contains(r.0 as usize))
                {
                    continue;
                }
                for d in kind.written_registers() {
                    set(&mut t, d, false);
                }
            }
            InstrKind::Branch {
                cond: BranchCond::Eq(a, b) | BranchCond::Ne(a, b),
                ..
            } if tainted(&t, a) || tainted(&t, b) => {
                // Everything after depends on the read through this branch.
                continue;
            }
            InstrKind::Fence { .. } | InstrKind::Branch { .. } => {}
        }
        for s in successors(code, p) {
            work.push((s, t.clone()));
        }
    }
    out.independent_writes.sort_unstable();
    out.independent_writes.dedup();
    out
}
