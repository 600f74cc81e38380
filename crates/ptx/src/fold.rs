//! Addresses the PTX computes from constants, named as the locations they are.
//!
//! Compiled code reaches even a global variable through a register (`mov.u64 %rd3, flag;
//! atom.global.add.u32 %r1, [%rd3], 0;`), and every parameter, special register and address
//! computation from them is a constant of the thread once lowered. An access through a pointer
//! register may touch any location as far as the static analyses can tell (which writes may
//! reach a spinning RMW, `Program::possible_locations`), so loops over such accesses would not
//! be recognised as awaits. Where exactly one write of the register reaches the access (every
//! path from the thread's start to the access ends with that write of it, or with no write at
//! all for a register's initial value) and that write computes a constant, the access names
//! the location instead: the same access in every execution, now visible to the analyses.
//!
//! Unique reaching writes, not registers written once: the lowering reuses its scratch
//! registers from one PTX instruction to the next (`mul.wide`'s operand, made canonical in a
//! scratch register, is written by every `mul.wide` of the kernel), so an address like
//! `&flag[blockIdx.x - 1]` is computed through a register many instructions write, each of its
//! uses reached by the one write just before it.

use scopecheck_ir::{
    Address, BinOp, Instr, InstrKind, IntType, Operand, Program, RegId, ThreadId, Value,
};

/// Folds the constant pointer accesses of `threads` (see the module documentation).
pub fn fold_addresses(program: &mut Program, threads: &[ThreadId]) {
    let rules = program.arithmetic();
    for &t in threads {
        let thread = &program.threads[t.0 as usize];
        let code = &thread.code;
        let reaching = Reaching::new(code, thread.registers.len());
        let init = |r: RegId| {
            thread
                .init_regs
                .iter()
                .find(|(x, _)| *x == r)
                .map_or(0, |(_, v)| *v)
        };
        // Where each register operand's value comes from, found once: the fixed point below
        // runs over the code several times.
        let source = |o: &Operand, at: usize| match o {
            Operand::Imm(v) => Source::Value(*v),
            Operand::Reg(r) => match reaching.unique(code, *r, at) {
                Some(Write::Initial) => Source::Value(init(*r)),
                Some(Write::At(k)) => Source::Write(k),
                None => Source::Unknown,
            },
        };
        let computed: Vec<Computed> = code
            .iter()
            .enumerate()
            .map(|(k, i)| match &i.kind {
                InstrKind::Mov { src, .. } => Computed::Mov(source(src, k)),
                InstrKind::Binary { op, ty, a, b, .. } => {
                    Computed::Binary(*op, *ty, source(a, k), source(b, k))
                }
                _ => Computed::Other,
            })
            .collect();
        // The value each write computes where it is known, by the index of the writing
        // instruction (a Mov or a Binary writes one register).
        let mut known: Vec<Option<Value>> = vec![None; code.len()];
        let value = |s: Source, known: &[Option<Value>]| match s {
            Source::Value(v) => Some(v),
            Source::Write(k) => known[k],
            Source::Unknown => None,
        };
        loop {
            let mut changed = false;
            for (k, c) in computed.iter().enumerate() {
                if known[k].is_some() {
                    continue;
                }
                let v = match *c {
                    Computed::Mov(s) => value(s, &known),
                    Computed::Binary(op, ty, a, b) => match (value(a, &known), value(b, &known)) {
                        (Some(a), Some(b)) => op.eval(ty, rules, a, b).ok(),
                        _ => None,
                    },
                    Computed::Other => None,
                };
                if v.is_some() {
                    known[k] = v;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let folded: Vec<Option<Address>> = code
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let (Some(Address::Ptr { reg, disp }), Some(ty)) =
                    (i.kind.address(), access_type(&i.kind))
                else {
                    return None;
                };
                let base = value(source(&Operand::Reg(*reg), k), &known)?;
                let loc = program.resolve(base.wrapping_add(*disp), ty).ok()?;
                Some(Address::loc(loc))
            })
            .collect();
        let thread = &mut program.threads[t.0 as usize];
        for (i, f) in thread.code.iter_mut().zip(folded) {
            if let Some(a) = f {
                set_address(&mut i.kind, a);
            }
        }
    }
}

/// Where an operand's value comes from.
#[derive(Clone, Copy)]
enum Source {
    Value(Value),
    /// The value the instruction at this index wrote.
    Write(usize),
    Unknown,
}

/// What an instruction computes, its operands' sources found.
enum Computed {
    Mov(Source),
    Binary(BinOp, IntType, Source, Source),
    Other,
}

/// A write that may reach a use of a register: the register's initial value, or the
/// instruction at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    Initial,
    At(usize),
}

/// Reaching writes (the classic data-flow problem), per basic block: which writes of each
/// register may be the last one run before a block starts. Within a block the last write
/// before a use is found by looking back.
struct Reaching {
    /// The basic block of each instruction, and each block's first instruction.
    block_of: Vec<usize>,
    starts: Vec<usize>,
    /// Every write, numbered: first each register's initial value (numbered by register),
    /// then each instruction's writes in order.
    writes: Vec<(RegId, Write)>,
    /// Each register's writes (their numbers).
    of_reg: Vec<Vec<usize>>,
    /// The writes that may reach each block's start, a bit per write.
    entering: Vec<Vec<u64>>,
}

impl Reaching {
    fn new(code: &[Instr], registers: usize) -> Reaching {
        let n = code.len();
        // A block starts at the first instruction, at each branch target and after each branch.
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (k, i) in code.iter().enumerate() {
            let succ = i.successors(k);
            if succ != [k + 1] {
                leader[k + 1] = true;
                for s in succ {
                    leader[s.min(n)] = true;
                }
            }
        }
        let starts: Vec<usize> = (0..n).filter(|&k| leader[k]).collect();
        let mut block_of = vec![0; n];
        for (b, &s) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            block_of[s..end].fill(b);
        }
        let mut writes: Vec<(RegId, Write)> = (0..registers as u32)
            .map(|r| (RegId(r), Write::Initial))
            .collect();
        for (k, i) in code.iter().enumerate() {
            writes.extend(i.kind.written_registers().map(|r| (r, Write::At(k))));
        }
        let mut of_reg = vec![Vec::new(); registers];
        for (w, (r, _)) in writes.iter().enumerate() {
            if let Some(list) = of_reg.get_mut(r.0 as usize) {
                list.push(w);
            }
        }
        let words = writes.len().div_ceil(64);
        let blocks = starts.len();
        // Each block's own last writes (`generated`) and the registers it writes (whose
        // writes from before it do not survive it).
        let mut generated = vec![vec![0u64; words]; blocks];
        let mut killed = vec![vec![0u64; words]; blocks];
        let mut numbered = registers;
        for (k, i) in code.iter().enumerate() {
            let b = block_of[k];
            for r in i.kind.written_registers() {
                for &w in of_reg.get(r.0 as usize).into_iter().flatten() {
                    killed[b][w / 64] |= 1 << (w % 64);
                    generated[b][w / 64] &= !(1 << (w % 64));
                }
                generated[b][numbered / 64] |= 1 << (numbered % 64);
                numbered += 1;
            }
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); blocks];
        for b in 0..blocks {
            let last = starts.get(b + 1).copied().unwrap_or(n) - 1;
            for t in code[last].successors(last) {
                if t < n {
                    preds[block_of[t]].push(b);
                }
            }
        }
        let mut entering = vec![vec![0u64; words]; blocks];
        for w in 0..registers {
            entering[0][w / 64] |= 1 << (w % 64);
        }
        let mut leaving: Vec<Vec<u64>> = (0..blocks)
            .map(|b| out(&entering[b], &generated[b], &killed[b]))
            .collect();
        loop {
            let mut changed = false;
            for b in 0..blocks {
                let mut into = entering[b].clone();
                for &p in &preds[b] {
                    for (x, y) in into.iter_mut().zip(&leaving[p]) {
                        *x |= y;
                    }
                }
                if into != entering[b] {
                    leaving[b] = out(&into, &generated[b], &killed[b]);
                    entering[b] = into;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Reaching {
            block_of,
            starts,
            writes,
            of_reg,
            entering,
        }
    }

    /// The one write of `r` that reaches instruction `at`, if only one may.
    fn unique(&self, code: &[Instr], r: RegId, at: usize) -> Option<Write> {
        let b = *self.block_of.get(at)?;
        for k in (self.starts[b]..at).rev() {
            if code[k].kind.written_registers().any(|x| x == r) {
                return Some(Write::At(k));
            }
        }
        let set = &self.entering[b];
        let mut found = None;
        for &w in self.of_reg.get(r.0 as usize)? {
            if set[w / 64] >> (w % 64) & 1 == 1 {
                if found.is_some() {
                    return None;
                }
                found = Some(self.writes[w].1);
            }
        }
        found
    }
}

/// What leaves a block: what entered it, less what it overwrites, and its own last writes.
fn out(entering: &[u64], generated: &[u64], killed: &[u64]) -> Vec<u64> {
    entering
        .iter()
        .zip(generated)
        .zip(killed)
        .map(|((e, g), k)| (e & !k) | g)
        .collect()
}

fn access_type(kind: &InstrKind) -> Option<scopecheck_ir::IntType> {
    match kind {
        InstrKind::Load { ty, .. } | InstrKind::Store { ty, .. } | InstrKind::Rmw { ty, .. } => {
            Some(*ty)
        }
        _ => None,
    }
}

fn set_address(kind: &mut InstrKind, a: Address) {
    match kind {
        InstrKind::Load { addr, .. }
        | InstrKind::Store { addr, .. }
        | InstrKind::Rmw { addr, .. } => *addr = a,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopecheck_ir::{
        Arch, BinOp, BranchCond, Condition, Instr, IntType, Location, MemorySpace, Order,
        Placement, Prop, Quantifier, RmwKind, RmwOp, Scope, Span, Thread,
    };

    fn instr(kind: InstrKind) -> Instr {
        Instr {
            kind,
            span: Span::default(),
            text: String::new(),
        }
    }

    fn program(code: Vec<InstrKind>, regs: usize) -> Program {
        let loc = |name: &str| Location {
            name: name.into(),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::U32,
            span: None,
        };
        Program {
            arch: Arch::Ptx,
            name: "t".into(),
            description: None,
            locations: vec![loc("a"), loc("flag")],
            arrays: vec![],
            threads: vec![Thread {
                name: "k".into(),
                placement: Placement::Host,
                span: None,
                registers: (0..regs).map(|r| format!("%r{r}")).collect(),
                init_regs: vec![],
                code: code.into_iter().map(instr).collect(),
                after: vec![],
            }],
            condition: Condition {
                quantifier: Quantifier::Forall,
                prop: Prop::True,
                span: None,
            },
            extra_observables: vec![],
        }
    }

    /// An await's `atom.add r1, [reg], 0` through pointer register `reg`.
    fn rmw(reg: RegId) -> InstrKind {
        InstrKind::Rmw {
            dst: Some(RegId(1)),
            addr: Address::Ptr { reg, disp: 0 },
            kind: RmwKind::Op(RmwOp::Add, Operand::Imm(0)),
            ty: IntType::U32,
            order: Order::Relaxed,
            scope: Scope::Gpu,
        }
    }

    fn addrs(p: &Program) -> Vec<Option<Address>> {
        p.threads[0]
            .code
            .iter()
            .map(|i| i.kind.address().copied())
            .collect()
    }

    fn ptr(reg: u32) -> Option<Address> {
        Some(Address::Ptr {
            reg: RegId(reg),
            disp: 0,
        })
    }

    fn mov(dst: u32, v: Value) -> InstrKind {
        InstrKind::Mov {
            dst: RegId(dst),
            src: Operand::Imm(v),
        }
    }

    /// `mov %rd3, flag` then an await RMW through `%rd3` inside a loop: the RMW names `flag`.
    /// An access before the register's write reads its initial value, 0, which is no
    /// location: it stays a pointer access.
    #[test]
    fn constant_pointers_become_locations() {
        let p0 = program(vec![], 0);
        let flag = p0.address_of(scopecheck_ir::LocId(1));
        let mut p = program(
            vec![
                rmw(RegId(0)), // before the write: the initial 0, stays
                mov(0, flag - 4),
                InstrKind::Binary {
                    dst: RegId(2),
                    op: BinOp::Add,
                    ty: IntType::U64,
                    a: Operand::Reg(RegId(0)),
                    b: Operand::Imm(4),
                },
                rmw(RegId(2)), // the loop head
                InstrKind::Branch {
                    cond: BranchCond::Eq(Operand::Reg(RegId(1)), Operand::Imm(0)),
                    target: 3,
                },
            ],
            3,
        );
        fold_addresses(&mut p, &[ThreadId(0)]);
        let addrs = addrs(&p);
        assert_eq!(addrs[0], ptr(0));
        assert_eq!(addrs[3], Some(Address::loc(scopecheck_ir::LocId(1))));
    }

    /// The lowering's scratch register reused (`mul.wide`'s operand, issue 33's look-back
    /// loop): `t = 1; p = t * 4 + (flag - 4); t = 0; q = t * 4 + a`. Each use of `t` is
    /// reached by the write just before it, so `[p]` names `flag` and `[q]` names `a`.
    #[test]
    fn a_reused_register_is_folded_through_the_write_that_reaches_each_use() {
        let p0 = program(vec![], 0);
        let a = p0.address_of(scopecheck_ir::LocId(0));
        let flag = p0.address_of(scopecheck_ir::LocId(1));
        let product = |dst: u32| InstrKind::Binary {
            dst: RegId(dst),
            op: BinOp::Mul,
            ty: IntType::S64,
            a: Operand::Reg(RegId(0)),
            b: Operand::Imm(4),
        };
        let sum = |dst: u32, base: Value| InstrKind::Binary {
            dst: RegId(dst),
            op: BinOp::Add,
            ty: IntType::U64,
            a: Operand::Reg(RegId(dst)),
            b: Operand::Imm(base),
        };
        let mut p = program(
            vec![
                mov(0, 1),
                product(2),
                sum(2, flag - 4),
                rmw(RegId(2)), // 3: flag
                mov(0, 0),
                product(3),
                sum(3, a),
                rmw(RegId(3)), // 7: a
                rmw(RegId(2)), // 8: still flag (p's write reaches it)
            ],
            4,
        );
        fold_addresses(&mut p, &[ThreadId(0)]);
        let addrs = addrs(&p);
        assert_eq!(addrs[3], Some(Address::loc(scopecheck_ir::LocId(1))));
        assert_eq!(addrs[7], Some(Address::loc(scopecheck_ir::LocId(0))));
        assert_eq!(addrs[8], Some(Address::loc(scopecheck_ir::LocId(1))));
    }

    /// Two writes that may both reach a use, whatever they write: `if (r1 != 0) p = flag;
    /// else p = a; rmw [p]` leaves `[p]` a pointer access; so does a pointer stepped in a
    /// loop (`p = a; loop: rmw [p]; p += 4; goto loop`: the loop's own write reaches its head).
    #[test]
    fn a_register_two_writes_may_reach_stays_a_pointer() {
        let p0 = program(vec![], 0);
        let a = p0.address_of(scopecheck_ir::LocId(0));
        let flag = p0.address_of(scopecheck_ir::LocId(1));
        let mut p = program(
            vec![
                InstrKind::Branch {
                    cond: BranchCond::Ne(Operand::Reg(RegId(1)), Operand::Imm(0)),
                    target: 3,
                },
                mov(0, a),
                InstrKind::Branch {
                    cond: BranchCond::Always,
                    target: 4,
                },
                mov(0, flag),
                rmw(RegId(0)), // 4: a or flag
                mov(2, a),
                rmw(RegId(2)), // 6: the loop head, a then flag
                InstrKind::Binary {
                    dst: RegId(2),
                    op: BinOp::Add,
                    ty: IntType::U64,
                    a: Operand::Reg(RegId(2)),
                    b: Operand::Imm(4),
                },
                InstrKind::Branch {
                    cond: BranchCond::Always,
                    target: 6,
                },
            ],
            3,
        );
        fold_addresses(&mut p, &[ThreadId(0)]);
        let addrs = addrs(&p);
        assert_eq!(addrs[4], ptr(0));
        assert_eq!(addrs[6], ptr(2));
    }

    /// A block's branch: `if (r1 == 0) { p = flag; rmw [p] } rmw [p]`. The write of `p` inside
    /// the branch is the one that reaches the access there, which is folded; after the join
    /// `p`'s initial value may reach it too (the other way round the branch), so it stays a
    /// pointer access.
    #[test]
    fn an_address_computed_inside_a_branch_is_folded_where_only_its_write_reaches() {
        let p0 = program(vec![], 0);
        let flag = p0.address_of(scopecheck_ir::LocId(1));
        let mut p = program(
            vec![
                InstrKind::Branch {
                    cond: BranchCond::Ne(Operand::Reg(RegId(1)), Operand::Imm(0)),
                    target: 3,
                },
                InstrKind::Mov {
                    dst: RegId(0),
                    src: Operand::Imm(flag),
                },
                rmw(RegId(0)), // dominated by the write: folded
                rmw(RegId(0)), // the join: not dominated, stays
            ],
            2,
        );
        fold_addresses(&mut p, &[ThreadId(0)]);
        let addrs = addrs(&p);
        assert_eq!(addrs[2], Some(Address::loc(scopecheck_ir::LocId(1))));
        assert_eq!(addrs[3], ptr(0));
    }
}
