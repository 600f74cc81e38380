//! Statements: bodies, labels, guards and the dispatch of an instruction by opcode.

use std::collections::HashMap;

use scopecheck_ir::ptx::Opcode;
use scopecheck_ir::{BinOp, BranchCond, IntType, Operand};

use crate::ast::{Body, Instruction, Operand as Op, ScalarType, Statement};

use super::qualifiers::{mnemonic, only, quals, render};
use super::{float, Frame, Lower, LowerError, R};

impl<'a, 'm> Lower<'a, 'm> {
    pub(super) fn body(&mut self, f: &mut Frame<'m>, b: &'m Body) -> R<()> {
        let mut regs = HashMap::new();
        for d in &b.regs {
            for (name, n) in &d.names {
                match n {
                    Some(n) => {
                        for i in 0..*n {
                            regs.insert(format!("{name}{i}"), (d.ty, None));
                        }
                    }
                    None => {
                        regs.insert(name.clone(), (d.ty, None));
                    }
                }
            }
        }
        f.regs.push(regs);
        let mut vars = HashMap::new();
        f.vars.push(HashMap::new());
        for v in &b.locals {
            let var = self.declare_local(f, v)?;
            vars.insert(v.name.as_str(), var);
        }
        *f.vars.last_mut().expect("pushed above") = vars;
        for s in &b.statements {
            match s {
                Statement::Label(name, _) => {
                    let l = f.labels[name.as_str()];
                    self.place(l);
                }
                Statement::Instruction(ins) => self.instruction(f, ins)?,
                Statement::Block(inner) => self.body(f, inner)?,
            }
        }
        f.regs.pop();
        f.vars.pop();
        Ok(())
    }

    fn label(&self, f: &Frame<'m>, ins: &Instruction) -> R<usize> {
        match ins.operands.as_slice() {
            [Op::Symbol(l)] => {
                f.labels.get(l.as_str()).copied().ok_or_else(|| {
                    LowerError::at(ins, format!("no label `{l}` in `{}`", f.func.name))
                })
            }
            _ => Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs one label (indirect branches are not supported)",
                    mnemonic(ins)
                ),
            )),
        }
    }

    fn instruction(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        self.span = ins.span;
        self.text = render(ins);
        self.scratch_used = 0;
        let op = Opcode::from_name(&ins.opcode);
        // No effect on the memory the model sees (`nanosleep` only delays a thread, which the
        // explorer's schedules cover; prefetches only warm caches).
        if matches!(
            op,
            Some(Opcode::Nanosleep | Opcode::Prefetch | Opcode::Prefetchu)
        ) {
            return Ok(());
        }
        let guard = match &ins.guard {
            Some((p, neg)) => {
                let declared = f.regs.iter().rev().find_map(|s| s.get(p.as_str()));
                if declared.is_some_and(|(t, _)| *t != ScalarType::Pred) {
                    return Err(LowerError::at(
                        ins,
                        format!("the guard `{p}` is not a `.pred` register"),
                    ));
                }
                let r = self
                    .lookup_reg(f, p)
                    .ok_or_else(|| self.bad_register(ins, p))?;
                Some((Operand::Reg(r), *neg))
            }
            None => None,
        };
        // The branch when the guard lets the instruction run, and when it does not.
        let runs = |g: Option<(Operand, bool)>| match g {
            None => BranchCond::Always,
            Some((p, false)) => BranchCond::Ne(p, Operand::Imm(0)),
            Some((p, true)) => BranchCond::Eq(p, Operand::Imm(0)),
        };
        match op {
            Some(Opcode::Bra) => {
                only(ins, &quals(ins, false), &["uni"])?;
                let l = self.label(f, ins)?;
                self.branch(runs(guard), l);
            }
            Some(Opcode::Ret | Opcode::Exit) => {
                only(ins, &quals(ins, false), &["uni"])?;
                let l = if op == Some(Opcode::Ret) {
                    f.ret
                } else {
                    self.exit
                };
                self.branch(runs(guard), l);
            }
            _ => {
                let skip = guard.map(|(p, neg)| {
                    let l = self.new_label();
                    let skip = if neg {
                        BranchCond::Ne(p, Operand::Imm(0))
                    } else {
                        BranchCond::Eq(p, Operand::Imm(0))
                    };
                    self.branch(skip, l);
                    l
                });
                self.op(f, ins)?;
                if let Some(l) = skip {
                    self.place(l);
                }
            }
        }
        Ok(())
    }

    fn op(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        if float::is_float_op(ins) {
            return self.float_op(f, ins);
        }
        // Every opcode of the table is named here, so that one added there is handled here.
        match Opcode::from_name(&ins.opcode) {
            Some(Opcode::Mov) => self.mov(f, ins),
            Some(
                Opcode::Add
                | Opcode::Sub
                | Opcode::And
                | Opcode::Or
                | Opcode::Xor
                | Opcode::Div
                | Opcode::Rem
                | Opcode::Shl
                | Opcode::Shr,
            ) => self.arith(f, ins),
            Some(Opcode::Mul | Opcode::Mad) => self.mul(f, ins),
            Some(Opcode::Bfi) => self.bfi(f, ins),
            Some(Opcode::Not | Opcode::Cnot | Opcode::Neg | Opcode::Abs) => self.unary(f, ins),
            Some(Opcode::Min | Opcode::Max) => self.min_max(f, ins),
            Some(Opcode::Setp) => self.setp(f, ins),
            Some(Opcode::Selp) => self.selp(f, ins),
            Some(Opcode::Cvt) => self.cvt(f, ins),
            Some(Opcode::Cvta) => self.cvta(f, ins),
            Some(Opcode::Ld | Opcode::Ldu) => self.load(f, ins),
            Some(Opcode::St) => self.store(f, ins),
            Some(Opcode::Atom | Opcode::Red) => self.rmw(f, ins),
            Some(Opcode::Fence) => self.fence(ins),
            Some(Opcode::Membar) => self.membar(ins),
            Some(Opcode::Bar | Opcode::Barrier) => self.barrier(f, ins),
            Some(Opcode::Call) => self.call(f, ins),
            // A trap aborts the kernel with an error: a fault of the test at its line.
            Some(Opcode::Trap) => {
                only(ins, &quals(ins, false), &[])?;
                let t = self.scratch();
                self.binary(
                    t,
                    BinOp::Trap,
                    IntType::S32,
                    Operand::Imm(0),
                    Operand::Imm(0),
                );
                Ok(())
            }
            Some(Opcode::Shfl) => self.shfl(f, ins),
            Some(Opcode::Vote) => self.vote(f, ins),
            Some(Opcode::Popc | Opcode::Clz | Opcode::Brev | Opcode::Bfind) => self.bits(f, ins),
            Some(Opcode::Activemask) => self.activemask(f, ins),
            Some(Opcode::Match | Opcode::Redux | Opcode::Elect) => Err(LowerError::at(
                ins,
                format!("warp-collective `{}` is not supported yet", ins.opcode),
            )),
            // Branches, returns and the no-effect instructions are done by `instruction`.
            Some(
                Opcode::Bra
                | Opcode::Ret
                | Opcode::Exit
                | Opcode::Nanosleep
                | Opcode::Prefetch
                | Opcode::Prefetchu,
            )
            | None => Err(LowerError::at(
                ins,
                format!(
                    "instruction `{}` (`{}`) is not supported",
                    ins.opcode,
                    mnemonic(ins)
                ),
            )),
        }
    }
}
