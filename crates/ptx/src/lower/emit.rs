//! Emitting IR instructions, and the names of a function: registers, variables, operands.

use std::collections::HashMap;

use scopecheck_ir::{BinOp, BranchCond, Instr, InstrKind, IntType, Operand, RegId};

use crate::ast::{Instruction, Operand as Op, StateSpace, Variable};

use super::geometry::unmodelled_special;
use super::locations::new_variable;
use super::qualifiers::{mnemonic, render_operand, PRED};
use super::{float, Frame, Lower, LowerError, Var, R};

impl<'a, 'm> Lower<'a, 'm> {
    pub(super) fn emit(&mut self, kind: InstrKind) {
        self.code.push(Instr {
            kind,
            span: self.span,
            text: self.text.clone(),
        });
    }

    pub(super) fn new_label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    pub(super) fn place(&mut self, label: usize) {
        self.labels[label] = Some(self.code.len());
    }

    pub(super) fn branch(&mut self, cond: BranchCond, label: usize) {
        self.fixups.push((self.code.len(), label));
        self.emit(InstrKind::Branch {
            cond,
            target: usize::MAX,
        });
    }

    pub(super) fn fresh_reg(&mut self, base: &str) -> RegId {
        let mut name = base.to_string();
        let mut k = 2;
        while self.names.contains(&name) {
            name = format!("{base}#{k}");
            k += 1;
        }
        self.names.insert(name.clone());
        self.registers.push(name);
        RegId((self.registers.len() - 1) as u32)
    }

    pub(super) fn scratch(&mut self) -> RegId {
        if self.scratch_used == self.scratch.len() {
            let r = self.fresh_reg(&format!("$t{}", self.scratch.len()));
            self.scratch.push(r);
        }
        self.scratch_used += 1;
        self.scratch[self.scratch_used - 1]
    }

    pub(super) fn binary(&mut self, dst: RegId, op: BinOp, ty: IntType, a: Operand, b: Operand) {
        self.emit(InstrKind::Binary { dst, op, ty, a, b });
    }

    /// `dst = src` made canonical in `ty` (its low bits, sign- or zero-extended).
    pub(super) fn wrap(&mut self, dst: RegId, src: Operand, ty: IntType) {
        match src {
            Operand::Imm(v) => self.emit(InstrKind::Mov {
                dst,
                src: Operand::Imm(ty.wrap(v)),
            }),
            _ if ty.bits >= 64 => self.emit(InstrKind::Mov { dst, src }),
            _ => self.binary(dst, BinOp::Or, ty, src, Operand::Imm(0)),
        }
    }

    /// `src` as a value canonical in `ty` (an immediate wrapped now, a register into a
    /// scratch register).
    pub(super) fn wrapped(&mut self, src: Operand, ty: IntType) -> Operand {
        match src {
            Operand::Imm(v) => Operand::Imm(ty.wrap(v)),
            Operand::Reg(_) if ty.bits >= 64 => src,
            Operand::Reg(_) => {
                let t = self.scratch();
                self.wrap(t, src, ty);
                Operand::Reg(t)
            }
        }
    }

    /// `cvt.to.from`: a wider target extends as the source's signedness says, a narrower one
    /// keeps the low bits (PTX ISA, "Conversion: cvt", integer rules).
    pub(super) fn convert(&mut self, dst: RegId, src: Operand, from: IntType, to: IntType) {
        if let Operand::Imm(v) = src {
            return self.emit(InstrKind::Mov {
                dst,
                src: Operand::Imm(to.wrap(from.wrap(v))),
            });
        }
        if to.bits > from.bits {
            self.wrap(dst, src, from);
            // A sign-extended value is not canonical in a narrower-than-64 unsigned type.
            if from.signed && !to.signed && to.bits < 64 {
                self.wrap(dst, Operand::Reg(dst), to);
            }
        } else {
            self.wrap(dst, src, to);
        }
    }

    /// `dst = c ? a : b` for a predicate value `c` (0 or 1), as `b ^ ((a ^ b) & -c)`: the
    /// result depends on `a`, `b` and `c` by data, as `selp`'s does in hardware; a branch
    /// would make `c` a control dependency instead.
    pub(super) fn select(&mut self, dst: RegId, c: Operand, a: Operand, b: Operand, ty: IntType) {
        let m = self.scratch();
        self.binary(m, BinOp::Sub, IntType::S64, Operand::Imm(0), c);
        let t = self.scratch();
        self.binary(t, BinOp::Xor, ty, a, b);
        self.binary(t, BinOp::And, ty, Operand::Reg(t), Operand::Reg(m));
        self.binary(dst, BinOp::Xor, ty, b, Operand::Reg(t));
    }

    /// The full product of two `ty` values in the type twice as wide (`mul.wide`).
    pub(super) fn mul_wide(&mut self, dst: RegId, a: Operand, b: Operand, ty: IntType) {
        let wide = IntType::new(ty.bits * 2, ty.signed);
        let a = self.wrapped(a, ty);
        let b = self.wrapped(b, ty);
        self.binary(dst, BinOp::Mul, wide, a, b);
    }

    /// The high half of the product (`mul.hi`), through the wide product.
    pub(super) fn mul_hi(
        &mut self,
        ins: &Instruction,
        dst: RegId,
        a: Operand,
        b: Operand,
        ty: IntType,
    ) -> R<()> {
        if ty.bits > 32 {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` is not supported yet: its {}-bit product has no IR operation",
                    mnemonic(ins),
                    2 * ty.bits
                ),
            ));
        }
        let t = self.scratch();
        self.mul_wide(t, a, b, ty);
        let wide = IntType::new(ty.bits * 2, ty.signed);
        self.binary(
            dst,
            BinOp::Shr,
            wide,
            Operand::Reg(t),
            Operand::Imm(i64::from(ty.bits)),
        );
        Ok(())
    }

    pub(super) fn lookup_reg(&mut self, f: &mut Frame<'m>, name: &str) -> Option<RegId> {
        let idx = f.regs.iter().rposition(|s| s.contains_key(name))?;
        let (_, id) = f.regs[idx][name];
        if let Some(id) = id {
            return Some(id);
        }
        let id = self.fresh_reg(&format!("{name}{}", f.suffix));
        f.regs[idx].get_mut(name).expect("found above").1 = Some(id);
        Some(id)
    }

    pub(super) fn lookup_var(&mut self, f: &Frame<'m>, name: &str) -> Option<Var> {
        if let Some(v) = f.vars.iter().rev().find_map(|s| s.get(name)) {
            return Some(*v);
        }
        let key = (None, name.to_string());
        if let Some(m) = self.memory.globals.get(&key) {
            return Some(Var::Mem(*m));
        }
        if let Some(m) = self.memory.shared.get(&(key, self.cta)) {
            return Some(Var::Mem(*m));
        }
        self.thread_mem.get(name).map(|m| Var::Mem(*m))
    }

    /// A variable of this function's own (a body's `.local`, `.shared`, `.param`).
    pub(super) fn declare_local(&mut self, f: &Frame<'m>, v: &'m Variable) -> R<Var> {
        let key = (Some(f.func.name.clone()), v.name.clone());
        Ok(match v.space {
            StateSpace::Param => {
                self.slots.push(HashMap::new());
                Var::Slot(self.slots.len() - 1)
            }
            // A function's `.shared` variable is one per CTA, however often it is called.
            StateSpace::Shared | StateSpace::SharedCluster => {
                let k = (key, self.cta);
                match self.memory.shared.get(&k) {
                    Some(m) => Var::Mem(*m),
                    None => {
                        let base = format!("{}@cta{}", v.name, self.cta);
                        let m = new_variable(self.program, &self.cx.analysis, &k.0, v, &base)?;
                        self.memory.shared.insert(k, m);
                        Var::Mem(m)
                    }
                }
            }
            StateSpace::Global | StateSpace::Const => match self.memory.globals.get(&key) {
                Some(m) => Var::Mem(*m),
                None => {
                    let m = new_variable(self.program, &self.cx.analysis, &key, v, &v.name)?;
                    self.memory.globals.insert(key, m);
                    Var::Mem(m)
                }
            },
            // `.local`: the thread's own, one per activation of the function.
            _ => {
                let base = format!("{}@{}", v.name, self.thread);
                Var::Mem(new_variable(
                    self.program,
                    &self.cx.analysis,
                    &key,
                    v,
                    &base,
                )?)
            }
        })
    }

    pub(super) fn slot_reg(&mut self, slot: usize, offset: i64, name: &str) -> RegId {
        if let Some(r) = self.slots[slot].get(&offset) {
            return *r;
        }
        let r = self.fresh_reg(&format!("{name}+{offset}"));
        self.slots[slot].insert(offset, r);
        r
    }

    pub(super) fn is_address(&self, f: &Frame<'m>, o: &Op) -> bool {
        match o {
            Op::Reg(r) => self
                .cx
                .analysis
                .addr_regs
                .get(&f.func.name)
                .is_some_and(|s| s.contains(r)),
            Op::Symbol(s) => {
                f.vars
                    .iter()
                    .any(|v| matches!(v.get(s.as_str()), Some(Var::Mem(_))))
                    || self.cx.analysis.used.contains(s)
            }
            _ => false,
        }
    }

    /// A source operand, as a value of type `ty` for immediates.
    pub(super) fn src(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        o: &Op,
        ty: IntType,
    ) -> R<Operand> {
        match o {
            Op::Reg(name) => {
                if let Some(r) = self.lookup_reg(f, name) {
                    return Ok(Operand::Reg(r));
                }
                if let Some(v) = self.sp.get(name) {
                    return Ok(Operand::Imm(ty.wrap(v)));
                }
                Err(self.bad_register(ins, name))
            }
            Op::Int(v) => Ok(Operand::Imm(ty.wrap(*v))),
            // A float is its bits in every view (scopecheck_ir::float); PTX converts a
            // literal to the instruction's width.
            Op::Float { bits, double } => Ok(Operand::Imm(float::literal(*bits, *double, ty))),
            Op::Symbol(s) => match self.lookup_var(f, s) {
                // An address is not wrapped: it keeps its allocation number (module docs).
                Some(Var::Mem(m)) => Ok(Operand::Imm(self.program.address_of(m.first))),
                Some(Var::KernelParam(_)) => Err(LowerError::at(
                    ins,
                    format!("the address of kernel parameter `{s}` is not supported: read it with `ld.param`"),
                )),
                Some(Var::Slot(_)) => Err(LowerError::at(
                    ins,
                    format!("the address of parameter `{s}` is not supported"),
                )),
                None if self.cx.module.functions.iter().any(|g| &g.name == s) => Err(
                    LowerError::at(ins, format!("function pointers (`{s}`) are not supported yet")),
                ),
                None => Err(LowerError::at(ins, format!("unknown symbol `{s}`"))),
            },
            Op::Not(p) => {
                let p = self.src(f, ins, p, PRED)?;
                let t = self.scratch();
                self.binary(t, BinOp::Xor, PRED, p, Operand::Imm(1));
                Ok(Operand::Reg(t))
            }
            _ => Err(LowerError::at(
                ins,
                format!("unexpected operand `{}` in `{}`", render_operand(o), mnemonic(ins)),
            )),
        }
    }

    pub(super) fn bad_register(&self, ins: &Instruction, name: &str) -> LowerError {
        const VECTORS: [&str; 8] = [
            "%tid",
            "%ntid",
            "%ctaid",
            "%nctaid",
            "%cluster_ctaid",
            "%cluster_nctaid",
            "%clusterid",
            "%nclusterid",
        ];
        let base = name.split('.').next().unwrap_or(name);
        if base == "%envreg1" || base == "%envreg2" {
            LowerError::at(
                ins,
                format!("special register `{name}`: the grid workspace a cooperative launch passes (cooperative groups' `this_grid().sync()`) is not modelled in the PTX view yet"),
            )
        } else if unmodelled_special(name) {
            LowerError::at(
                ins,
                format!("special register `{name}` is not supported: the program does not determine its value"),
            )
        } else if VECTORS.contains(&base) {
            LowerError::at(
                ins,
                format!(
                    "special register `{name}`: only its `.x`, `.y`, `.z` components are supported"
                ),
            )
        } else {
            LowerError::at(ins, format!("register `{name}` is not declared"))
        }
    }

    /// A destination register (`_` gives a scratch one).
    pub(super) fn dst(&mut self, f: &mut Frame<'m>, ins: &Instruction, o: &Op) -> R<RegId> {
        match o {
            Op::Reg(name) => match self.lookup_reg(f, name) {
                Some(r) => Ok(r),
                None if self.sp.get(name).is_some() => Err(LowerError::at(
                    ins,
                    format!("special register `{name}` is read-only"),
                )),
                None => Err(self.bad_register(ins, name)),
            },
            Op::Sink => Ok(self.scratch()),
            _ => Err(LowerError::at(
                ins,
                format!(
                    "expected a destination register, found `{}`",
                    render_operand(o)
                ),
            )),
        }
    }

    /// A source operand that, in a 32-bit operation on an address, is computed in 64 bits:
    /// the address as it is, anything else sign-extended (an offset).
    pub(super) fn promoted(&mut self, f: &mut Frame<'m>, ins: &Instruction, o: &Op) -> R<Operand> {
        let v = self.src(f, ins, o, IntType::S64)?;
        if self.is_address(f, o) {
            Ok(v)
        } else {
            Ok(self.wrapped(v, IntType::S32))
        }
    }

    pub(super) fn operands<'o>(&self, ins: &'o Instruction, n: usize) -> R<&'o [Op]> {
        if ins.operands.len() != n {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` takes {n} operands, found {}",
                    mnemonic(ins),
                    ins.operands.len()
                ),
            ));
        }
        Ok(&ins.operands)
    }

    /// The operands of a memory access, without the cache policy operand that
    /// `.L2::cache_hint` adds at the end (a hint only).
    pub(super) fn memory_operands<'o>(&self, ins: &'o Instruction, n: usize) -> R<&'o [Op]> {
        if ins.modifiers.iter().any(|m| m == "L2::cache_hint") && ins.operands.len() == n + 1 {
            return Ok(&ins.operands[..n]);
        }
        self.operands(ins, n)
    }
}
