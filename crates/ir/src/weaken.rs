//! Single weakenings of a program's synchronization: what a mutation score runs on the GPU
//! (`scopecheck run --mutants`) and what a search for the weakest correct program steps through.
//!
//! Each [`Weakening`] changes one instruction of one device thread, one step down:
//! - a fence is removed;
//! - an order loses one half: `seq_cst` becomes `acq_rel` (an RMW or a fence), `acquire` (a
//!   load) or `release` (a store); `acq_rel` becomes `acquire` or `release`; `acquire` and
//!   `release` become `relaxed`;
//! - a scope narrows one level: `sys` to `gpu`, `gpu` to `cluster`, `cluster` to `cta`;
//! - an RMW is split into a load and a store of the value it would write (for a CAS, a store
//!   only when the load read the expected value), so that another write may come between.
//!
//! Host threads are left alone: they run on the CPU, whose atomics have no scope.

use crate::{
    BinOp, BranchCond, FenceOrder, Instr, InstrKind, Operand, Order, Placement, Program, RegId,
    RmwKind, RmwOp, Scope, ThreadId,
};

/// What one weakening does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    DropFence,
    Order { from: Order, to: Order },
    FenceOrder { from: FenceOrder, to: FenceOrder },
    Scope { from: Scope, to: Scope },
    SplitRmw,
}

/// One weakening: `change` at instruction `instr` of `thread`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weakening {
    pub thread: ThreadId,
    pub instr: usize,
    pub change: Change,
}

impl Weakening {
    /// What it does, for a report: `P0 line 3 (st.release.gpu flag, 1): release -> relaxed`.
    pub fn describe(&self, program: &Program) -> String {
        let t = program.thread(self.thread);
        let i = &t.code[self.instr];
        format!(
            "{} line {} ({}): {}",
            t.name,
            i.span.line,
            i.text,
            self.class()
        )
    }

    /// The kind of weakening, without where: `release -> relaxed`, `scope gpu -> cluster`.
    pub fn class(&self) -> String {
        match &self.change {
            Change::DropFence => "fence removed".to_string(),
            Change::Order { from, to } => format!("{from} -> {to}"),
            Change::FenceOrder { from, to } => format!("fence {from} -> {to}"),
            Change::Scope { from, to } => format!("scope {from} -> {to}"),
            Change::SplitRmw => "RMW split into a load and a store".to_string(),
        }
    }

    /// The scope of the instruction weakened (the one before a narrowing), if it has one.
    pub fn scope(&self, program: &Program) -> Option<Scope> {
        match &program.thread(self.thread).code[self.instr].kind {
            InstrKind::Fence { scope, .. }
            | InstrKind::Load { scope, .. }
            | InstrKind::Store { scope, .. }
            | InstrKind::Rmw { scope, .. } => Some(*scope),
            _ => None,
        }
    }

    /// The program with this weakening applied.
    pub fn apply(&self, program: &Program) -> Program {
        let mut p = program.clone();
        let t = &mut p.threads[self.thread.0 as usize];
        match &self.change {
            Change::DropFence => remove(&mut t.code, self.instr),
            Change::Order { to, .. } => set_order(&mut t.code[self.instr].kind, *to),
            Change::FenceOrder { to, .. } => {
                if let InstrKind::Fence { order, .. } = &mut t.code[self.instr].kind {
                    *order = *to;
                }
            }
            Change::Scope { to, .. } => set_scope(&mut t.code[self.instr].kind, *to),
            Change::SplitRmw => {
                let old = RegId(t.registers.len() as u32);
                t.registers.push(format!("split{}", self.instr));
                let split = split_rmw(&t.code[self.instr], old, self.instr);
                replace(&mut t.code, self.instr, split);
            }
        }
        p
    }
}

/// The orders one step weaker than `o` for an access of this kind.
pub fn weaker_orders(o: Order, kind: &InstrKind) -> Vec<Order> {
    let rmw = matches!(kind, InstrKind::Rmw { .. });
    let load = matches!(kind, InstrKind::Load { .. });
    match o {
        Order::SeqCst if rmw => vec![Order::AcqRel],
        Order::SeqCst if load => vec![Order::Acquire],
        Order::SeqCst => vec![Order::Release],
        Order::AcqRel => vec![Order::Acquire, Order::Release],
        Order::Acquire | Order::Release => vec![Order::Relaxed],
        Order::Relaxed | Order::Weak | Order::Volatile => vec![],
    }
}

fn narrower(s: Scope) -> Option<Scope> {
    match s {
        Scope::Sys => Some(Scope::Gpu),
        Scope::Gpu => Some(Scope::Cluster),
        Scope::Cluster => Some(Scope::Cta),
        Scope::Cta | Scope::Warp | Scope::Thread => None,
    }
}

/// Every single weakening of `program`'s device threads, in thread and instruction order.
pub fn weakenings(program: &Program) -> Vec<Weakening> {
    let mut out = Vec::new();
    for (ti, t) in program.threads.iter().enumerate() {
        if matches!(t.placement, Placement::Host) {
            continue;
        }
        let thread = ThreadId(ti as u32);
        let mut add = |instr: usize, change: Change| {
            out.push(Weakening {
                thread,
                instr,
                change,
            })
        };
        for (i, ins) in t.code.iter().enumerate() {
            match &ins.kind {
                InstrKind::Fence { order, scope, .. } => {
                    add(i, Change::DropFence);
                    if *order == FenceOrder::Sc {
                        add(
                            i,
                            Change::FenceOrder {
                                from: FenceOrder::Sc,
                                to: FenceOrder::AcqRel,
                            },
                        );
                    }
                    if let Some(to) = narrower(*scope) {
                        add(i, Change::Scope { from: *scope, to });
                    }
                }
                InstrKind::Load { order, scope, .. }
                | InstrKind::Store { order, scope, .. }
                | InstrKind::Rmw { order, scope, .. } => {
                    for to in weaker_orders(*order, &ins.kind) {
                        add(i, Change::Order { from: *order, to });
                    }
                    let atomic = !matches!(order, Order::Weak | Order::Volatile);
                    if let Some(to) = narrower(*scope).filter(|_| atomic) {
                        add(i, Change::Scope { from: *scope, to });
                    }
                    if let InstrKind::Rmw { kind, .. } = &ins.kind {
                        if splittable(kind) {
                            add(i, Change::SplitRmw);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn set_order(kind: &mut InstrKind, to: Order) {
    match kind {
        InstrKind::Load { order, .. }
        | InstrKind::Store { order, .. }
        | InstrKind::Rmw { order, .. } => *order = to,
        _ => {}
    }
}

fn set_scope(kind: &mut InstrKind, to: Scope) {
    match kind {
        InstrKind::Load { scope, .. }
        | InstrKind::Store { scope, .. }
        | InstrKind::Rmw { scope, .. }
        | InstrKind::Fence { scope, .. } => *scope = to,
        _ => {}
    }
}

/// The register arithmetic an RMW's write computes, where one instruction does it.
fn rmw_binop(op: RmwOp) -> Option<BinOp> {
    match op {
        RmwOp::Add => Some(BinOp::Add),
        RmwOp::Sub => Some(BinOp::Sub),
        RmwOp::And => Some(BinOp::And),
        RmwOp::Or => Some(BinOp::Or),
        RmwOp::Xor => Some(BinOp::Xor),
        RmwOp::Exch | RmwOp::Inc | RmwOp::Dec | RmwOp::Min | RmwOp::Max => None,
    }
}

fn splittable(kind: &RmwKind) -> bool {
    match kind {
        RmwKind::Op(op, _) => *op == RmwOp::Exch || rmw_binop(*op).is_some(),
        RmwKind::Cas { .. } => true,
    }
}

/// The read half of an RMW's order, and its write half.
fn halves(o: Order) -> (Order, Order) {
    match o {
        Order::Acquire => (Order::Acquire, Order::Relaxed),
        Order::Release => (Order::Relaxed, Order::Release),
        Order::AcqRel => (Order::Acquire, Order::Release),
        other => (other, other),
    }
}

/// `atom op dst, [a], v` as `ld old, [a]; dst = old; new = old op v; st [a], new` (a CAS stores
/// only when `old` is the expected value). `at` is the RMW's index: the branch of a split CAS
/// targets the instruction after the split, computed once the split is in place.
fn split_rmw(rmw: &Instr, old: RegId, at: usize) -> Vec<Instr> {
    let InstrKind::Rmw {
        dst,
        addr,
        kind,
        ty,
        order,
        scope,
    } = &rmw.kind
    else {
        return vec![rmw.clone()];
    };
    let (ro, wo) = halves(*order);
    let like = |kind: InstrKind| Instr {
        kind,
        span: rmw.span,
        text: rmw.text.clone(),
    };
    let mut out = vec![like(InstrKind::Load {
        dst: old,
        addr: *addr,
        ty: *ty,
        order: ro,
        scope: *scope,
    })];
    if let Some(d) = dst {
        out.push(like(InstrKind::Mov {
            dst: *d,
            src: Operand::Reg(old),
        }));
    }
    let store = |value: Operand| InstrKind::Store {
        addr: *addr,
        value,
        ty: *ty,
        order: wo,
        scope: *scope,
    };
    match kind {
        RmwKind::Op(RmwOp::Exch, v) => out.push(like(store(*v))),
        RmwKind::Op(op, v) => {
            let Some(bin) = rmw_binop(*op) else {
                return vec![rmw.clone()];
            };
            // A float atomic add rounds and flushes subnormals as `float::rmw` does.
            let bin = match bin {
                BinOp::Add | BinOp::Sub if ty.float => BinOp::Float(
                    if bin == BinOp::Add {
                        crate::FloatOp::Add
                    } else {
                        crate::FloatOp::Sub
                    },
                    crate::FloatMode {
                        ftz: true,
                        ..Default::default()
                    },
                ),
                _ => bin,
            };
            out.push(like(InstrKind::Binary {
                dst: old,
                op: bin,
                ty: *ty,
                a: Operand::Reg(old),
                b: *v,
            }));
            out.push(like(store(Operand::Reg(old))));
        }
        RmwKind::Cas { expected, new } => {
            // Skip the store when the load did not read the expected value: the branch
            // targets the instruction after the store.
            let after = at + out.len() + 2;
            out.push(like(InstrKind::Branch {
                cond: BranchCond::Ne(Operand::Reg(old), *expected),
                target: after,
            }));
            out.push(like(store(*new)));
        }
    }
    out
}

/// Replaces instruction `at` by `with`, moving every branch target past it.
fn replace(code: &mut Vec<Instr>, at: usize, with: Vec<Instr>) {
    let grow = with.len() as isize - 1;
    for ins in code.iter_mut() {
        if let InstrKind::Branch { target, .. } = &mut ins.kind {
            if *target > at {
                *target = (*target as isize + grow) as usize;
            }
        }
    }
    code.splice(at..=at, with);
}

/// Removes instruction `at`, moving every branch target past it.
pub fn remove(code: &mut Vec<Instr>, at: usize) {
    replace(code, at, Vec::new());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Address, IntType, LocId, Span};

    fn instr(kind: InstrKind, text: &str) -> Instr {
        Instr {
            kind,
            span: Span::default(),
            text: text.into(),
        }
    }

    fn at(l: u32) -> Address {
        Address::loc(LocId(l))
    }

    /// One device thread: `fence.sc.gpu; L: atom.acq_rel.sys.add r0, [x], 1; bne r0, 0, L;
    /// st.release.cta [y], 1`.
    fn program() -> Program {
        let mut p = Program {
            arch: crate::Arch::Ptx,
            name: "t".into(),
            description: None,
            locations: vec![crate::Location {
                name: "x".into(),
                space: crate::MemorySpace::Global,
                init: 0,
                ty: IntType::S32,
                span: None,
            }],
            arrays: vec![],
            threads: vec![crate::Thread {
                name: "P0".into(),
                placement: Placement::Device(crate::DevicePlacement {
                    gpu: 0,
                    cluster: 0,
                    cta: 0,
                    warp: None,
                }),
                span: None,
                registers: vec![],
                init_regs: vec![],
                code: vec![],
                after: vec![],
            }],
            condition: crate::Condition {
                quantifier: crate::Quantifier::Exists,
                prop: crate::Prop::True,
                span: None,
            },
            extra_observables: vec![],
        };
        let t = &mut p.threads[0];
        t.registers = vec!["r0".into()];
        t.code = vec![
            instr(
                InstrKind::Fence {
                    order: FenceOrder::Sc,
                    scope: Scope::Gpu,
                    spaces: crate::FenceSpaces::ALL,
                },
                "fence.sc.gpu",
            ),
            instr(
                InstrKind::Rmw {
                    dst: Some(RegId(0)),
                    addr: at(0),
                    kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                    ty: IntType::S32,
                    order: Order::AcqRel,
                    scope: Scope::Sys,
                },
                "atom.acq_rel.sys.add r0, x, 1",
            ),
            instr(
                InstrKind::Branch {
                    cond: BranchCond::Ne(Operand::Reg(RegId(0)), Operand::Imm(0)),
                    target: 1,
                },
                "bne r0, 0, L",
            ),
            instr(
                InstrKind::Store {
                    addr: at(0),
                    value: Operand::Imm(1),
                    ty: IntType::S32,
                    order: Order::Release,
                    scope: Scope::Cta,
                },
                "st.release.cta x, 1",
            ),
        ];
        p
    }

    #[test]
    fn every_synchronizing_instruction_weakens_one_step_at_a_time() {
        let p = program();
        let w: Vec<String> = weakenings(&p).iter().map(|w| w.describe(&p)).collect();
        assert_eq!(
            w,
            [
                "P0 line 0 (fence.sc.gpu): fence removed",
                "P0 line 0 (fence.sc.gpu): fence sc -> acq_rel",
                "P0 line 0 (fence.sc.gpu): scope gpu -> cluster",
                "P0 line 0 (atom.acq_rel.sys.add r0, x, 1): acq_rel -> acquire",
                "P0 line 0 (atom.acq_rel.sys.add r0, x, 1): acq_rel -> release",
                "P0 line 0 (atom.acq_rel.sys.add r0, x, 1): scope sys -> gpu",
                "P0 line 0 (atom.acq_rel.sys.add r0, x, 1): RMW split into a load and a store",
                // cta is the narrowest scope already.
                "P0 line 0 (st.release.cta x, 1): release -> relaxed",
            ]
        );
    }

    #[test]
    fn dropping_a_fence_moves_the_branches_after_it() {
        let p = program();
        let q = weakenings(&p)[0].apply(&p);
        assert_eq!(q.threads[0].code.len(), 3);
        assert!(matches!(
            q.threads[0].code[1].kind,
            InstrKind::Branch { target: 0, .. }
        ));
    }

    #[test]
    fn a_split_rmw_loads_computes_and_stores_with_the_halves_of_its_order() {
        let p = program();
        let split = weakenings(&p)
            .into_iter()
            .find(|w| w.change == Change::SplitRmw)
            .unwrap();
        let q = split.apply(&p);
        let t = &q.threads[0];
        assert_eq!(t.registers, ["r0", "split1"]);
        let kinds: Vec<&InstrKind> = t.code.iter().map(|i| &i.kind).collect();
        assert!(matches!(
            kinds[1],
            InstrKind::Load {
                dst: RegId(1),
                order: Order::Acquire,
                scope: Scope::Sys,
                ..
            }
        ));
        assert!(matches!(
            kinds[2],
            InstrKind::Mov {
                dst: RegId(0),
                src: Operand::Reg(RegId(1))
            }
        ));
        assert!(matches!(
            kinds[3],
            InstrKind::Binary {
                dst: RegId(1),
                op: BinOp::Add,
                ..
            }
        ));
        assert!(matches!(
            kinds[4],
            InstrKind::Store {
                value: Operand::Reg(RegId(1)),
                order: Order::Release,
                ..
            }
        ));
        // The loop's branch still goes back to the first instruction of the split RMW.
        assert!(matches!(kinds[5], InstrKind::Branch { target: 1, .. }));
    }

    #[test]
    fn a_split_cas_stores_only_after_reading_the_expected_value() {
        let mut p = program();
        p.threads[0].code[1].kind = InstrKind::Rmw {
            dst: None,
            addr: at(0),
            kind: RmwKind::Cas {
                expected: Operand::Imm(0),
                new: Operand::Imm(1),
            },
            ty: IntType::S32,
            order: Order::Acquire,
            scope: Scope::Gpu,
        };
        let split = weakenings(&p)
            .into_iter()
            .find(|w| w.change == Change::SplitRmw)
            .unwrap();
        let t = split.apply(&p).threads.remove(0);
        // fence; ld; bne old, 0 -> 4; st; bne r0 (the loop) -> 1; st.release
        assert!(matches!(
            t.code[1].kind,
            InstrKind::Load {
                order: Order::Acquire,
                ..
            }
        ));
        assert!(matches!(
            t.code[2].kind,
            InstrKind::Branch {
                cond: BranchCond::Ne(Operand::Reg(RegId(1)), Operand::Imm(0)),
                target: 4
            }
        ));
        assert!(matches!(
            t.code[3].kind,
            InstrKind::Store {
                value: Operand::Imm(1),
                order: Order::Relaxed,
                ..
            }
        ));
        assert!(matches!(
            t.code[4].kind,
            InstrKind::Branch { target: 1, .. }
        ));
    }
}
