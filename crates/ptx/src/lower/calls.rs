//! Calls: device functions are inlined.

use std::collections::HashMap;

use scopecheck_ir::{InstrKind, Operand, RegId};

use crate::ast::{Instruction, Operand as Op};

use super::analysis::{call_parts, find_function};
use super::qualifiers::{int_of, only, quals, render, PRED};
use super::{Frame, Lower, LowerError, Var, ASSERT_REGISTER, MAX_CALL_DEPTH, R};

impl<'a, 'm> Lower<'a, 'm> {
    /// `call{.uni} (ret), f, (args)`: the callee's body, inlined. Parameters pass through
    /// slots: the caller's `st.param [param0+0]` and the callee's `ld.param [f_param_0]` are
    /// the same registers, as are the callee's `st.param [func_retval0]` and the caller's
    /// `ld.param [retval0]` (PTX ISA, "Function declarations and definitions").
    pub(super) fn call(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        only(ins, &quals(ins, false), &["uni"])?;
        let (rets, callee, args) = call_parts(ins);
        let name = match callee {
            Some(Op::Symbol(n)) => n.as_str(),
            _ => {
                return Err(LowerError::at(
                    ins,
                    "indirect calls (through a register) are not supported yet",
                ))
            }
        };
        let Some(func) = find_function(self.cx.module, name) else {
            return Err(LowerError::at(
                ins,
                format!("call to undeclared function `{name}`"),
            ));
        };
        let Some(body) = &func.body else {
            // printf only writes to the host's output, which the model does not see.
            if name == "vprintf" {
                return Ok(());
            }
            // A device `assert` that fails: the requirement of the thread's register
            // ASSERT_REGISTER (0 until here) breaks; the view's condition requires it 0.
            if name == "__assertfail" {
                let r = match self.registers.iter().position(|n| n == ASSERT_REGISTER) {
                    Some(k) => RegId(k as u32),
                    None => self.fresh_reg(ASSERT_REGISTER),
                };
                self.emit(InstrKind::Mov {
                    dst: r,
                    src: Operand::Imm(1),
                });
                return Ok(());
            }
            return Err(LowerError::at(
                ins,
                format!(
                    "call to external function `{name}` (no body in the module): not supported"
                ),
            ));
        };
        if func.entry {
            return Err(LowerError::at(
                ins,
                format!("`{name}` is a kernel, not a function"),
            ));
        }
        if self.stack.contains(&name) {
            return Err(LowerError::at(
                ins,
                format!("recursive call to `{name}` is not supported"),
            ));
        }
        if self.stack.len() > MAX_CALL_DEPTH {
            return Err(LowerError::at(
                ins,
                format!("calls nested more than {MAX_CALL_DEPTH} deep are not supported"),
            ));
        }
        if args.len() != func.params.len() || rets.len() != func.returns.len() {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{name}` takes {} argument(s) and returns {} value(s); the call passes {} and receives {}",
                    func.params.len(),
                    func.returns.len(),
                    args.len(),
                    rets.len()
                ),
            ));
        }
        let mut params: HashMap<&'m str, Var> = HashMap::new();
        // Register results, copied out after the body.
        let mut copy_out = Vec::new();
        for (p, a) in func.params.iter().zip(args) {
            params.insert(p.name.as_str(), self.binding(f, ins, a, p, true)?);
        }
        for (p, r) in func.returns.iter().zip(rets) {
            let v = self.binding(f, ins, r, p, false)?;
            if let (Op::Reg(_), Var::Slot(s)) = (r, v) {
                copy_out.push((r, s, p));
            }
            params.insert(p.name.as_str(), v);
        }
        self.inlined += 1;
        let end = self.new_label();
        let suffix = format!("@{name}#{}", self.inlined);
        let mut frame = self.frame(func, suffix, params, end)?;
        self.stack.push(name);
        self.body(&mut frame, body)?;
        self.stack.pop();
        self.span = ins.span;
        self.text = render(ins);
        self.scratch_used = 0;
        self.place(end);
        for (r, s, p) in copy_out {
            let ty = int_of(p.ty, true).unwrap_or(PRED);
            let src = self.slot_reg(s, 0, &p.name);
            let d = self.dst(f, ins, r)?;
            self.wrap(d, Operand::Reg(src), ty);
        }
        Ok(())
    }

    /// The slot a call argument or result goes through: the caller's `.param` variable, or
    /// for a register or constant (non-ABI calls) a fresh one.
    fn binding(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        o: &Op,
        p: &crate::ast::Param,
        input: bool,
    ) -> R<Var> {
        if let Op::Symbol(s) = o {
            return match self.lookup_var(f, s) {
                Some(v @ Var::Slot(_)) => Ok(v),
                _ => Err(LowerError::at(
                    ins,
                    format!("`{s}` is not a `.param` variable"),
                )),
            };
        }
        self.slots.push(HashMap::new());
        let s = self.slots.len() - 1;
        if input {
            let ty = int_of(p.ty, true).unwrap_or(PRED);
            let v = self.src(f, ins, o, ty)?;
            let r = self.slot_reg(s, 0, &p.name);
            self.wrap(r, v, ty);
        }
        Ok(Var::Slot(s))
    }
}
