//! Addresses the PTX computes from constants, named as the locations they are.
//!
//! Compiled code reaches even a global variable through a register (`mov.u64 %rd3, flag;
//! atom.global.add.u32 %r1, [%rd3], 0;`), and every parameter, special register and address
//! computation from them is a constant of the thread once lowered. An access through a pointer
//! register may touch any location as far as the static analyses can tell (which writes may
//! reach a spinning RMW, `Program::possible_locations`), so loops over such accesses would not
//! be recognised as awaits. Where the register is written exactly once, by a computation of
//! constants, and that write dominates the access (every path to the access runs it first:
//! an address computed inside the branch a block takes counts too), the access names the
//! location instead: the same access in every execution, now visible to the analyses.

use std::collections::HashMap;

use scopecheck_ir::{Address, InstrKind, Operand, Program, RegId, ThreadId, Value};

/// Folds the constant pointer accesses of `threads` (see the module documentation).
pub fn fold_addresses(program: &mut Program, threads: &[ThreadId]) {
    let rules = program.arithmetic();
    for &t in threads {
        let thread = &program.threads[t.0 as usize];
        let code = &thread.code;
        let mut writers: HashMap<RegId, usize> = HashMap::new();
        for i in code {
            for r in i.kind.written_registers() {
                *writers.entry(r).or_default() += 1;
            }
        }
        let dom = dominators(code);
        // Registers never written hold their initial value throughout.
        let mut known: HashMap<RegId, (Value, usize)> = HashMap::new();
        for r in 0..thread.registers.len() as u32 {
            let r = RegId(r);
            if !writers.contains_key(&r) {
                let v = thread
                    .init_regs
                    .iter()
                    .find(|(x, _)| *x == r)
                    .map_or(0, |(_, v)| *v);
                known.insert(r, (v, usize::MAX));
            }
        }
        // A register written once, by a computation of constants known where it runs, holds
        // that value wherever its write dominates (every path there runs the write first).
        // `known` maps it to (value, index of its write); usize::MAX: never written.
        let available = |r: &RegId, at: usize, known: &HashMap<RegId, (Value, usize)>| {
            known
                .get(r)
                .filter(|&&(_, from)| from == usize::MAX || (from != at && dom.dominates(from, at)))
                .map(|&(v, _)| v)
        };
        let value = |o: &Operand, at: usize, known: &HashMap<RegId, (Value, usize)>| match o {
            Operand::Imm(v) => Some(*v),
            Operand::Reg(r) => available(r, at, known),
        };
        loop {
            let mut changed = false;
            for (k, i) in code.iter().enumerate() {
                let (dst, v) = match &i.kind {
                    InstrKind::Mov { dst, src } => (*dst, value(src, k, &known)),
                    InstrKind::Binary { dst, op, ty, a, b } => {
                        let v = match (value(a, k, &known), value(b, k, &known)) {
                            (Some(a), Some(b)) => op.eval(*ty, rules, a, b).ok(),
                            _ => None,
                        };
                        (*dst, v)
                    }
                    _ => continue,
                };
                if let (Some(v), Some(1), false) = (v, writers.get(&dst), known.contains_key(&dst))
                {
                    known.insert(dst, (v, k));
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
                let base = available(reg, k, &known)?;
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

/// The dominator sets of a thread's instructions (and its end, index `code.len()`): `a`
/// dominates `b` when every path from the first instruction to `b` runs `a`.
struct Dominators {
    sets: Vec<Vec<u64>>,
}

impl Dominators {
    fn dominates(&self, a: usize, b: usize) -> bool {
        self.sets
            .get(b)
            .is_some_and(|s| s[a / 64] >> (a % 64) & 1 == 1)
    }
}

fn dominators(code: &[scopecheck_ir::Instr]) -> Dominators {
    let n = code.len() + 1;
    let words = n.div_ceil(64);
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, i) in code.iter().enumerate() {
        for s in i.successors(k) {
            preds[s.min(n - 1)].push(k);
        }
    }
    let full = vec![u64::MAX; words];
    let mut sets = vec![full; n];
    sets[0] = vec![0; words];
    sets[0][0] = 1;
    loop {
        let mut changed = false;
        for b in 1..n {
            let mut new = vec![u64::MAX; words];
            if preds[b].is_empty() {
                // Unreachable: nothing runs before it (and it never runs).
                new = vec![0; words];
            }
            for &p in &preds[b] {
                for (w, x) in new.iter_mut().zip(&sets[p]) {
                    *w &= x;
                }
            }
            new[b / 64] |= 1 << (b % 64);
            if new != sets[b] {
                sets[b] = new;
                changed = true;
            }
        }
        if !changed {
            return Dominators { sets };
        }
    }
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

    /// `mov %rd3, flag` then an await RMW through `%rd3` inside a loop: the RMW names `flag`.
    /// A register written twice, or an access before its one write, stays a pointer access.
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

    #[test]
    fn constant_pointers_become_locations() {
        let p0 = program(vec![], 0);
        let flag = p0.address_of(scopecheck_ir::LocId(1));
        let mut p = program(
            vec![
                rmw(RegId(0)), // before the write: stays
                InstrKind::Mov {
                    dst: RegId(0),
                    src: Operand::Imm(flag - 4),
                },
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
                InstrKind::Mov {
                    dst: RegId(3),
                    src: Operand::Imm(flag),
                },
                InstrKind::Mov {
                    dst: RegId(3),
                    src: Operand::Imm(flag),
                },
                rmw(RegId(3)), // written twice: stays
            ],
            4,
        );
        fold_addresses(&mut p, &[ThreadId(0)]);
        let addrs: Vec<Option<Address>> = p.threads[0]
            .code
            .iter()
            .map(|i| i.kind.address().copied())
            .collect();
        assert_eq!(
            addrs[0],
            Some(Address::Ptr {
                reg: RegId(0),
                disp: 0
            })
        );
        assert_eq!(addrs[3], Some(Address::loc(scopecheck_ir::LocId(1))));
        assert_eq!(
            addrs[7],
            Some(Address::Ptr {
                reg: RegId(3),
                disp: 0
            })
        );
    }

    /// A block's branch: `if (r1 == 0) { p = flag; rmw [p] } rmw [p]`. The write of `p` inside
    /// the branch dominates the access there, which is folded; after the join the access may
    /// run without it (the other way round the branch), so it stays a pointer access.
    #[test]
    fn an_address_computed_inside_a_branch_is_folded_where_its_write_dominates() {
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
        let addrs: Vec<Option<Address>> = p.threads[0]
            .code
            .iter()
            .map(|i| i.kind.address().copied())
            .collect();
        assert_eq!(addrs[2], Some(Address::loc(scopecheck_ir::LocId(1))));
        assert_eq!(
            addrs[3],
            Some(Address::Ptr {
                reg: RegId(0),
                disp: 0
            })
        );
    }
}
