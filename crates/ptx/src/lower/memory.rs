//! The memory instructions: `ld`, `ld.param`, `st`, `atom` and `red`.

use scopecheck_ir::ptx::{Sem, RMW_DEFAULT};
use scopecheck_ir::{Address, BinOp, InstrKind, IntType, LocId, Operand, RmwKind, RmwOp};

use crate::ast::{Instruction, Operand as Op, ScalarType, StateSpace};

use super::qualifiers::{
    access_order, float_error, int_of, mnemonic, one_type, only, quals, render_operand, Quals,
};
use super::{Arg, Frame, Lower, LowerError, Var, R};

impl<'a, 'm> Lower<'a, 'm> {
    /// The access type of `ld`/`st`/`atom`/`red` (floats are their bits when moved).
    fn access_type(&self, ins: &Instruction, q: &Quals, bits_only: bool) -> R<IntType> {
        let t = one_type(ins, q)?;
        match t {
            ScalarType::F(_) if !bits_only => Err(float_error(ins)),
            ScalarType::Pred => Err(LowerError::at(
                ins,
                format!("`{}`: a `.pred` access", mnemonic(ins)),
            )),
            t => Ok(int_of(t, true).expect("an integer or float")),
        }
    }

    /// The address of element `k` of a vector access of type `ty`.
    fn address(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        o: &Op,
        ty: IntType,
        extra: i64,
    ) -> R<Address> {
        let Op::Address { base, offset } = o else {
            return Err(LowerError::at(
                ins,
                format!("expected an address `[...]`, found `{}`", render_operand(o)),
            ));
        };
        let disp = offset + extra;
        match base.as_ref() {
            Op::Reg(name) => match self.lookup_reg(f, name) {
                Some(reg) => Ok(Address::Ptr { reg, disp }),
                None => Err(self.bad_register(ins, name)),
            },
            Op::Symbol(s) => match self.lookup_var(f, s) {
                Some(Var::Mem(m)) => {
                    if m.ty.bits != ty.bits {
                        return Err(LowerError::at(
                            ins,
                            format!(
                                "mixed-size access to `{s}` is not supported: it holds {}-bit values, `{}` accesses {} bits",
                                m.ty.bits,
                                mnemonic(ins),
                                ty.bits
                            ),
                        ));
                    }
                    let w = m.ty.bytes() as i64;
                    if disp % w != 0 {
                        return Err(LowerError::at(
                            ins,
                            format!("`[{s}+{disp}]` is misaligned for {w}-byte values"),
                        ));
                    }
                    let i = disp / w;
                    if !(0..i64::from(m.len)).contains(&i) {
                        return Err(LowerError::at(
                            ins,
                            format!(
                                "`[{s}+{disp}]` is out of bounds of `{s}` ({} bytes)",
                                i64::from(m.len) * w
                            ),
                        ));
                    }
                    Ok(Address::loc(LocId(m.first.0 + i as u32)))
                }
                Some(Var::KernelParam(_) | Var::Slot(_)) => Err(LowerError::at(
                    ins,
                    format!("parameter `{s}` is read with `ld.param` and written with `st.param`"),
                )),
                None => Err(LowerError::at(ins, format!("unknown variable `{s}`"))),
            },
            _ => Err(LowerError::at(
                ins,
                format!("unsupported address `{}`", render_operand(o)),
            )),
        }
    }

    /// The width of the parts an access of type `ty` through `addr` is split into: when it
    /// only reaches `.local` variables whose locations are narrower.
    fn local_split(&mut self, f: &Frame<'m>, addr: &Op, ty: IntType) -> Option<IntType> {
        let Op::Address { base, .. } = addr else {
            return None;
        };
        let part = match base.as_ref() {
            Op::Symbol(s) => match self.lookup_var(f, s) {
                Some(Var::Mem(m)) if m.private => m.ty,
                _ => return None,
            },
            Op::Reg(r) => *self.cx.analysis.local_regs.get(&f.func.name)?.get(r)?,
            _ => return None,
        };
        (part.bits < ty.bits).then_some(part)
    }

    /// The registers and values of a scalar or vector operand, checked against `.vN`.
    fn elements<'o>(&self, ins: &Instruction, q: &Quals, o: &'o Op) -> R<Vec<&'o Op>> {
        let v: Vec<&Op> = match o {
            Op::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if v.len() != q.vec.unwrap_or(1) {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` takes {} value(s), found {}",
                    mnemonic(ins),
                    q.vec.unwrap_or(1),
                    v.len()
                ),
            ));
        }
        Ok(v)
    }

    fn memory_quals(&self, ins: &Instruction, q: &Quals, allowed: &[&str]) -> R<()> {
        only(ins, q, allowed)?;
        if q.space == Some(StateSpace::SharedCluster) {
            // Another CTA's shared memory is reached through `mapa`, which is not supported.
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}`: distributed shared memory (`.shared::cluster`) is not supported yet",
                    mnemonic(ins)
                ),
            ));
        }
        if q.sem == Some(Sem::Mmio) {
            return Err(LowerError::at(
                ins,
                format!("`{}`: `.mmio` is not supported", mnemonic(ins)),
            ));
        }
        Ok(())
    }

    pub(super) fn load(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        // `.nc` reads through the non-coherent cache: a weak load that is only correct when
        // nothing writes the data during the kernel (PTX ISA, "ld.global.nc"); as a weak
        // load here, a racing write shows up as the data race it is.
        self.memory_quals(ins, &q, &["nc"])?;
        let ty = self.access_type(ins, &q, true)?;
        let [dsts, addr] = self.memory_operands(ins, 2)? else {
            unreachable!()
        };
        let dsts = self.elements(ins, &q, dsts)?;
        if q.space == Some(StateSpace::Param) {
            return self.load_param(f, ins, ty, &dsts, addr);
        }
        let (order, scope) = access_order(ins, &q, true)?;
        let split = self.local_split(f, addr, ty);
        for (k, d) in dsts.into_iter().enumerate() {
            let at = (k as i64) * ty.bytes() as i64;
            let dst = self.dst(f, ins, d)?;
            let Some(part) = split else {
                let addr = self.address(f, ins, addr, ty, at)?;
                self.emit(InstrKind::Load {
                    dst,
                    addr,
                    ty,
                    order,
                    scope,
                });
                continue;
            };
            // The parts, little-endian, or-ed together.
            let wide = IntType::new(ty.bits, false);
            let acc = self.scratch();
            self.emit(InstrKind::Mov {
                dst: acc,
                src: Operand::Imm(0),
            });
            for j in 0..ty.bits / part.bits {
                let addr =
                    self.address(f, ins, addr, part, at + i64::from(j) * part.bytes() as i64)?;
                let t = self.scratch();
                self.emit(InstrKind::Load {
                    dst: t,
                    addr,
                    ty: part,
                    order,
                    scope,
                });
                let shift = Operand::Imm(i64::from(j) * i64::from(part.bits));
                self.binary(t, BinOp::Shl, wide, Operand::Reg(t), shift);
                self.binary(acc, BinOp::Or, wide, Operand::Reg(acc), Operand::Reg(t));
            }
            self.wrap(dst, Operand::Reg(acc), ty);
        }
        Ok(())
    }

    fn load_param(
        &mut self,
        f: &mut Frame<'m>,
        ins: &Instruction,
        ty: IntType,
        dsts: &[&Op],
        addr: &Op,
    ) -> R<()> {
        let Op::Address { base, offset } = addr else {
            return Err(LowerError::at(ins, "`ld.param` needs an address `[param]`"));
        };
        let Op::Symbol(name) = base.as_ref() else {
            return Err(LowerError::at(
                ins,
                "`ld.param` through a register is not supported: name the parameter",
            ));
        };
        match self.lookup_var(f, name) {
            Some(Var::KernelParam(i)) => {
                let arg = &self.cx.launch.args[i];
                if dsts.len() != 1 && !matches!(arg, Arg::Struct(_)) {
                    return Err(LowerError::at(
                        ins,
                        format!("`{name}` read as a vector: only struct parameters are"),
                    ));
                }
                let mut values = Vec::with_capacity(dsts.len());
                for k in 0..dsts.len() {
                    let at = offset + (k as i64) * ty.bytes() as i64;
                    let piece = match arg {
                        Arg::Struct(fields) => match fields.iter().find(|(o, _)| *o == at) {
                            Some((_, a)) => a,
                            None => {
                                return Err(LowerError::at(
                                    ins,
                                    format!("`{name}` read at byte {at}, where argument {i} (a struct) has no field"),
                                ))
                            }
                        },
                        a if at == 0 => a,
                        _ => {
                            return Err(LowerError::at(
                                ins,
                                format!("`{name}` read at an offset, but argument {i} is not a struct"),
                            ))
                        }
                    };
                    let value = match *piece {
                        Arg::Value(v) => ty.wrap(v),
                        Arg::Pointer(_) | Arg::PointerAt(..) if ty.bits != 64 => {
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "argument {i} is a pointer, but `{}` reads {} bits of it",
                                    mnemonic(ins),
                                    ty.bits
                                ),
                            ));
                        }
                        Arg::Pointer(l) => self.program.address_of(l),
                        Arg::PointerAt(l, off) => self.program.address_of(l).wrapping_add(off),
                        Arg::Struct(_) => {
                            return Err(LowerError::at(
                                ins,
                                format!(
                                    "`{name}` read at byte {at}: a nested struct, not supported"
                                ),
                            ))
                        }
                    };
                    values.push(value);
                }
                for (d, value) in dsts.iter().zip(values) {
                    let dst = self.dst(f, ins, d)?;
                    self.emit(InstrKind::Mov {
                        dst,
                        src: Operand::Imm(value),
                    });
                }
                Ok(())
            }
            Some(Var::Slot(s)) => {
                for (k, d) in dsts.iter().enumerate() {
                    let r = self.slot_reg(s, offset + (k as i64) * ty.bytes() as i64, name);
                    let dst = self.dst(f, ins, d)?;
                    self.wrap(dst, Operand::Reg(r), ty);
                }
                Ok(())
            }
            Some(Var::Mem(_)) | None => Err(LowerError::at(
                ins,
                format!("`{name}` is not a parameter of `{}`", f.func.name),
            )),
        }
    }

    pub(super) fn store(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, true);
        self.memory_quals(ins, &q, &[])?;
        let ty = self.access_type(ins, &q, true)?;
        let [addr, values] = self.memory_operands(ins, 2)? else {
            unreachable!()
        };
        let values = self.elements(ins, &q, values)?;
        if q.space == Some(StateSpace::Param) {
            let Op::Address { base, offset } = addr else {
                return Err(LowerError::at(ins, "`st.param` needs an address `[param]`"));
            };
            let slot = match base.as_ref() {
                Op::Symbol(name) => match self.lookup_var(f, name) {
                    Some(Var::Slot(s)) => Some((s, name)),
                    _ => None,
                },
                _ => None,
            };
            let Some((s, name)) = slot else {
                return Err(LowerError::at(
                    ins,
                    format!("`{}` writes no call parameter", render_operand(addr)),
                ));
            };
            for (k, v) in values.into_iter().enumerate() {
                let v = self.src(f, ins, v, ty)?;
                let r = self.slot_reg(s, offset + (k as i64) * ty.bytes() as i64, name);
                self.wrap(r, v, ty);
            }
            return Ok(());
        }
        let (order, scope) = access_order(ins, &q, false)?;
        let split = self.local_split(f, addr, ty);
        for (k, v) in values.into_iter().enumerate() {
            let at = (k as i64) * ty.bytes() as i64;
            let value = self.src(f, ins, v, ty)?;
            let Some(part) = split else {
                let addr = self.address(f, ins, addr, ty, at)?;
                self.emit(InstrKind::Store {
                    addr,
                    value,
                    ty,
                    order,
                    scope,
                });
                continue;
            };
            // The value's parts, little-endian (the store keeps each part's low bits).
            let wide = IntType::new(ty.bits, false);
            let value = self.wrapped(value, ty);
            for j in 0..ty.bits / part.bits {
                let addr =
                    self.address(f, ins, addr, part, at + i64::from(j) * part.bytes() as i64)?;
                let t = self.scratch();
                let shift = Operand::Imm(i64::from(j) * i64::from(part.bits));
                self.binary(t, BinOp::Shr, wide, value, shift);
                self.emit(InstrKind::Store {
                    addr,
                    value: Operand::Reg(t),
                    ty: part,
                    order,
                    scope,
                });
            }
        }
        Ok(())
    }

    /// `atom` and `red` (PTX ISA, "Parallel Synchronization and Communication").
    pub(super) fn rmw(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let is_atom = ins.opcode == "atom";
        let q = quals(ins, true);
        if q.vec.is_some() {
            return Err(LowerError::at(
                ins,
                format!("vector `{}` is not supported", mnemonic(ins)),
            ));
        }
        if q.other.contains(&"noftz") {
            return Err(float_error(ins));
        }
        let op_names: Vec<&str> = RmwOp::PTX_NAMES
            .iter()
            .map(|(n, _)| *n)
            .chain(["cas"])
            .collect();
        self.memory_quals(ins, &q, &op_names)?;
        let sel: Vec<&str> = q.other.clone();
        let [sel] = sel.as_slice() else {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` needs one operation (`.add`, `.cas`, ...)",
                    mnemonic(ins)
                ),
            ));
        };
        if *sel == "cas" && !is_atom {
            return Err(LowerError::at(ins, "`red` has no `.cas`"));
        }
        if q.space == Some(StateSpace::Param) || q.space == Some(StateSpace::Const) {
            return Err(LowerError::at(
                ins,
                format!("`{}` on this state space", mnemonic(ins)),
            ));
        }
        // `atom.add.f32`/`.f64` and `red.add.f32`/`.f64`: a float add (the IR's float RMW
        // rounds to nearest, and for `.f32` flushes subnormals as the ISA says).
        let ty = match one_type(ins, &q)? {
            ScalarType::F(n @ (32 | 64)) if *sel == "add" => IntType::float(n),
            _ => self.access_type(ins, &q, false)?,
        };
        if !(matches!(ty.bits, 32 | 64) || (ty.bits == 16 && *sel == "cas")) {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}`: {}-bit atomics are not supported",
                    mnemonic(ins),
                    ty.bits
                ),
            ));
        }
        // The defaults of the table (as in the litmus dialect): no semantics is `.relaxed`, no
        // scope `.gpu`.
        let order = match q.sem.unwrap_or(RMW_DEFAULT.0) {
            sem @ (Sem::Relaxed | Sem::Acquire | Sem::Release | Sem::AcqRel) => sem.order(),
            other => {
                return Err(LowerError::at(
                    ins,
                    format!("`.{}` is not allowed on `{}`", other.name(), ins.opcode),
                ))
            }
        };
        let scope = q.scope.unwrap_or(RMW_DEFAULT.1);
        let ops =
            self.memory_operands(ins, usize::from(is_atom) + 2 + usize::from(*sel == "cas"))?;
        let ops = if is_atom { &ops[1..] } else { ops };
        let addr = self.address(f, ins, &ops[0], ty, 0)?;
        if self.local_split(f, &ops[0], ty).is_some() {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}` on `.local` memory accessed at other widths too",
                    mnemonic(ins)
                ),
            ));
        }
        let kind = if *sel == "cas" {
            RmwKind::Cas {
                expected: self.src(f, ins, &ops[1], ty)?,
                new: self.src(f, ins, &ops[2], ty)?,
            }
        } else {
            let op = RmwOp::from_ptx(sel).expect("checked above");
            RmwKind::Op(op, self.src(f, ins, &ops[1], ty)?)
        };
        let dst = if is_atom {
            Some(self.dst(f, ins, &ins.operands[0])?)
        } else {
            None
        };
        self.emit(InstrKind::Rmw {
            dst,
            addr,
            kind,
            ty,
            order,
            scope,
        });
        Ok(())
    }
}
