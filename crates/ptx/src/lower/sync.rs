//! Fences and barriers.

use scopecheck_ir::ptx::{
    self, barrier_reduction, membar_level, BarrierMode, Sem, FENCE_DEFAULT, SCOPE_LIST,
};
use scopecheck_ir::{BarrierKind, FenceOrder, FenceSpaces, InstrKind, IntType, Operand, Value};

use crate::ast::{Instruction, Operand as Op};

use super::qualifiers::{mnemonic, PRED};
use super::{Frame, Lower, LowerError, R};

impl<'a, 'm> Lower<'a, 'm> {
    /// `fence{.sem}.scope`, as in the litmus dialect: the default semantics is `.acq_rel`
    /// (PTX ISA, "membar/fence"), the scope is required.
    pub(super) fn fence(&mut self, ins: &Instruction) -> R<()> {
        if ins
            .modifiers
            .iter()
            .any(|m| m.starts_with("proxy") || m.starts_with("mbarrier"))
        {
            return Err(LowerError::at(
                ins,
                format!(
                    "proxy fence `{}` is not supported yet: the model has one proxy (generic)",
                    mnemonic(ins)
                ),
            ));
        }
        let mut order = FENCE_DEFAULT;
        let mut scope = None;
        for m in &ins.modifiers {
            let s = m.as_str();
            match Sem::from_name(s).and_then(Sem::fence_order) {
                Some(o) => order = o,
                None => match ptx::scope(s) {
                    Some(sc) if scope.is_none() => scope = Some(sc),
                    _ => {
                        return Err(LowerError::at(
                            ins,
                            format!("`.{s}` is not supported on `fence`"),
                        ))
                    }
                },
            }
        }
        let Some(scope) = scope else {
            return Err(LowerError::at(
                ins,
                format!("`fence` needs a scope; expected one of {SCOPE_LIST}"),
            ));
        };
        self.emit(InstrKind::Fence {
            order,
            scope,
            spaces: FenceSpaces::ALL,
        });
        Ok(())
    }

    /// `membar.level`: `membar` is `fence.sc` (PTX ISA, "membar/fence"), as in the litmus
    /// dialect.
    pub(super) fn membar(&mut self, ins: &Instruction) -> R<()> {
        let level = match ins.modifiers.as_slice() {
            [l] => membar_level(l),
            _ => None,
        };
        let scope = match (level, ins.modifiers.as_slice()) {
            (Some(scope), _) => scope,
            (None, [p, ..]) if p.starts_with("proxy") => {
                return Err(LowerError::at(
                    ins,
                    format!("proxy fence `{}` is not supported yet", mnemonic(ins)),
                ))
            }
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: `membar` takes one level, .cta, .gl or .sys",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        self.emit(InstrKind::Fence {
            order: FenceOrder::Sc,
            scope,
            spaces: FenceSpaces::ALL,
        });
        Ok(())
    }

    /// `bar{.cta}.sync a{, b}`, `bar{.cta}.arrive a, b`, `bar{.cta}.red.op.type d, a{, b},
    /// {!}c` and the same with `barrier` (`bar.sync` is `barrier.sync.aligned`), as in the
    /// litmus dialect.
    pub(super) fn barrier(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let mut mode = None;
        let mut red = None;
        for m in &ins.modifiers {
            let m = m.as_str();
            match (BarrierMode::from_name(m), barrier_reduction(m)) {
                (Some(md), _) if mode.is_none() => {
                    mode = Some(md);
                    continue;
                }
                (_, Some(op)) => {
                    red = Some(op);
                    continue;
                }
                _ => {}
            }
            match m {
                // `.cta` is the only barrier scope here, `.aligned` a promise about
                // convergence: neither changes what the barrier does.
                "cta" | "aligned" | "u32" | "pred" => {}
                "warp" => return self.warp_sync(f, ins),
                "cluster" => {
                    return Err(LowerError::at(
                        ins,
                        format!("cluster barrier `{}` is not supported yet", mnemonic(ins)),
                    ))
                }
                other => {
                    return Err(LowerError::at(
                        ins,
                        format!("`.{other}` is not supported on `{}`", ins.opcode),
                    ))
                }
            }
        }
        // An id or count in a register is checked when it runs (the explorer's fault).
        let id_of = |lw: &mut Self, f: &mut Frame<'m>, o: &Op| -> R<Operand> {
            let id = lw.src(f, ins, o, IntType::U32)?;
            if let Operand::Imm(v) = id {
                if !(0..Value::from(scopecheck_ir::BARRIER_IDS)).contains(&v) {
                    return Err(LowerError::at(
                        ins,
                        format!("barrier number {v} is out of range; PTX has barriers 0 to 15"),
                    ));
                }
            }
            Ok(id)
        };
        let count_of = |lw: &mut Self, f: &mut Frame<'m>, o: &Op| -> R<Operand> {
            let c = lw.src(f, ins, o, IntType::U32)?;
            if c == Operand::Imm(0) {
                return Err(LowerError::at(
                    ins,
                    "a barrier's thread count must be positive",
                ));
            }
            Ok(c)
        };
        let ops = &ins.operands;
        let kind = match (mode, red) {
            (Some(BarrierMode::Sync), None) if matches!(ops.len(), 1 | 2) => InstrKind::Barrier {
                id: id_of(self, f, &ops[0])?,
                kind: BarrierKind::Sync,
                count: match ops.get(1) {
                    Some(o) => Some(count_of(self, f, o)?),
                    None => None,
                }, spaces: scopecheck_ir::FenceSpaces::ALL,
            },
            (Some(BarrierMode::Arrive), None) if ops.len() == 2 => InstrKind::Barrier {
                id: id_of(self, f, &ops[0])?,
                kind: BarrierKind::Arrive,
                count: Some(count_of(self, f, &ops[1])?), spaces: scopecheck_ir::FenceSpaces::ALL,
            },
            (Some(BarrierMode::Red), Some(op)) if matches!(ops.len(), 3 | 4) => {
                let id = id_of(self, f, &ops[1])?;
                let count = if ops.len() == 4 {
                    Some(count_of(self, f, &ops[2])?)
                } else {
                    None
                };
                let pred = self.src(f, ins, ops.last().expect("3 or 4"), PRED)?;
                let dst = self.dst(f, ins, &ops[0])?;
                InstrKind::Barrier {
                    id,
                    kind: BarrierKind::Red { op, dst, pred },
                    count, spaces: scopecheck_ir::FenceSpaces::ALL,
                }
            }
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "`{}`: expected `.sync a{{, b}}`, `.arrive a, b` or `.red.{{popc,and,or}} d, a{{, b}}, p`",
                        mnemonic(ins)
                    ),
                ))
            }
        };
        self.emit(kind);
        Ok(())
    }
}
