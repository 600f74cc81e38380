//! The floating-point instructions of the PTX view: `.f32` and `.f64` arithmetic (`add`,
//! `sub`, `mul`, `div.rn`, `fma.rn`, `mad.rn`, `neg`, `abs`, `min`, `max`, `sqrt.rn`,
//! `rcp.rn`), comparisons (`setp` with the ordered and unordered comparisons) and conversions
//! (`cvt` with every rounding mode). Registers hold a float's bits (`scopecheck_ir::float`);
//! these instructions say what the bits mean.
//!
//! Refused, with the reason: half precision (`.f16`, `.bf16`, `.f16x2`), the approximate
//! forms (`.approx`, `.full`, `sin`, `ex2`, ...: the ISA bounds their error but not their
//! result, so no one value is the hardware's), and directed rounding of arithmetic
//! (`add.rz`), which the IR computes only to nearest.

use super::qualifiers::int_of;

use scopecheck_ir::{BinOp, FloatCmp, FloatMode, FloatOp, InstrKind, IntType, Operand, Rounding};

use super::qualifiers::{mnemonic, no_memory_quals, quals, Quals};
use super::{Frame, Instruction, Lower, LowerError, ScalarType, R};

/// The instructions that compute on floats when a type of theirs is `.fN`.
const ARITHMETIC: &[&str] = &[
    "add", "sub", "mul", "div", "mad", "fma", "neg", "abs", "min", "max", "sqrt", "rcp", "rsqrt",
    "sin", "cos", "lg2", "ex2", "tanh", "setp", "set", "testp", "copysign", "cvt",
];

/// Whether `ins` is a floating-point computation (for [`Lower::float_op`]).
pub(super) fn is_float_op(ins: &Instruction) -> bool {
    ARITHMETIC.contains(&ins.opcode.as_str())
        && quals(ins, false)
            .types
            .iter()
            .any(|t| matches!(t, ScalarType::F(_)))
}

/// A literal's bits in an instruction of type `ty`: PTX converts a floating literal to the
/// instruction's width (`0d` to `.f32` rounding to nearest; `0f` to `.f64` exactly).
pub(super) fn literal(bits: u64, double: bool, ty: IntType) -> i64 {
    match (double, ty.bits) {
        (true, 32) => i64::from((f64::from_bits(bits) as f32).to_bits()),
        (false, 64) => f64::from(f32::from_bits(bits as u32)).to_bits() as i64,
        _ => ty.bits_type().wrap(bits as i64),
    }
}

/// The float type of a PTX type.
fn float_type(ins: &Instruction, t: ScalarType) -> R<IntType> {
    match t {
        ScalarType::F(32) => Ok(IntType::F32),
        ScalarType::F(64) => Ok(IntType::F64),
        ScalarType::F(_) => Err(LowerError::at(
            ins,
            format!(
                "half-precision `{}` is not supported (only `.f32` and `.f64`)",
                mnemonic(ins)
            ),
        )),
        _ => Err(LowerError::at(
            ins,
            format!("`{}` mixes float and integer types", mnemonic(ins)),
        )),
    }
}

/// The modifiers of a float instruction: rounding (`.rn` ... and, with `integral`, `.rni`
/// ...), `.ftz`, `.sat`; whether one was an integral rounding; what is left.
fn modifiers<'q>(ins: &Instruction, q: &Quals<'q>) -> R<(FloatMode, Option<bool>, Vec<&'q str>)> {
    let mut mode = FloatMode::default();
    let mut rounding = None;
    let mut rest = Vec::new();
    for m in &q.other {
        let (round, integral) = match *m {
            "rn" => (Rounding::Nearest, false),
            "rz" => (Rounding::Zero, false),
            "rm" => (Rounding::Down, false),
            "rp" => (Rounding::Up, false),
            "rni" => (Rounding::Nearest, true),
            "rzi" => (Rounding::Zero, true),
            "rmi" => (Rounding::Down, true),
            "rpi" => (Rounding::Up, true),
            "ftz" => {
                mode.ftz = true;
                continue;
            }
            "sat" => {
                mode.sat = true;
                continue;
            }
            "approx" | "full" => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "approximate `{}` is not supported: the ISA bounds its error but does \
                         not define its result, so no single value is the hardware's",
                        mnemonic(ins)
                    ),
                ))
            }
            other => {
                rest.push(other);
                continue;
            }
        };
        mode.round = round;
        rounding = Some(integral);
    }
    Ok((mode, rounding, rest))
}

fn unexpected(ins: &Instruction, m: &str) -> LowerError {
    LowerError::at(
        ins,
        format!("`.{m}` is not supported on `{}`", mnemonic(ins)),
    )
}

impl<'a, 'm> Lower<'a, 'm> {
    /// A floating-point instruction ([`is_float_op`]).
    pub(super) fn float_op(&mut self, f: &mut Frame<'m>, ins: &'m Instruction) -> R<()> {
        let q = quals(ins, false);
        no_memory_quals(ins, &q)?;
        match ins.opcode.as_str() {
            "setp" => return self.float_setp(f, ins, &q),
            "cvt" => return self.float_cvt(f, ins, &q),
            _ => {}
        }
        let [t] = q.types.as_slice() else {
            return Err(LowerError::at(
                ins,
                format!("`{}` needs one type", mnemonic(ins)),
            ));
        };
        let ty = float_type(ins, *t)?;
        let (mode, rounding, rest) = modifiers(ins, &q)?;
        if let Some(m) = rest.first() {
            return Err(unexpected(ins, m));
        }
        if mode.ftz && ty.bits != 32 {
            return Err(unexpected(ins, "ftz"));
        }
        let op = ins.opcode.as_str();
        // Arithmetic rounds to nearest only; `div`, `sqrt`, `rcp`, `fma` and `mad` must say
        // how they round (no modifier is invalid PTX for them, `.approx` refused above).
        if rounding == Some(true) || mode.round != Rounding::Nearest {
            return Err(LowerError::at(
                ins,
                format!(
                    "`{}`: directed rounding of float arithmetic is not supported (only `.rn`)",
                    mnemonic(ins)
                ),
            ));
        }
        if matches!(op, "div" | "sqrt" | "rcp" | "fma" | "mad") && rounding.is_none() {
            return Err(LowerError::at(
                ins,
                format!("`{}` needs a rounding modifier (`.rn`)", mnemonic(ins)),
            ));
        }
        let binary = |o| BinOp::Float(o, mode);
        match op {
            "add" | "sub" | "mul" | "div" | "min" | "max" => {
                let [d, a, b] = self.operands(ins, 3)? else {
                    unreachable!()
                };
                let o = match op {
                    "add" => FloatOp::Add,
                    "sub" => FloatOp::Sub,
                    "mul" => FloatOp::Mul,
                    "div" => FloatOp::Div,
                    "min" => FloatOp::Min,
                    _ => FloatOp::Max,
                };
                let a = self.src(f, ins, a, ty)?;
                let b = self.src(f, ins, b, ty)?;
                let d = self.dst(f, ins, d)?;
                self.binary(d, binary(o), ty, a, b);
            }
            "neg" | "abs" | "sqrt" | "rcp" => {
                let [d, a] = self.operands(ins, 2)? else {
                    unreachable!()
                };
                let a = self.src(f, ins, a, ty)?;
                let d = self.dst(f, ins, d)?;
                match op {
                    "neg" => self.binary(d, binary(FloatOp::Neg), ty, a, a),
                    "abs" => self.binary(d, binary(FloatOp::Abs), ty, a, a),
                    "sqrt" => self.binary(d, binary(FloatOp::Sqrt), ty, a, a),
                    // `rcp.rn`: 1 / a, correctly rounded.
                    _ => {
                        let one = super::float::literal(1f64.to_bits(), true, ty);
                        self.binary(d, binary(FloatOp::Div), ty, Operand::Imm(one), a);
                    }
                }
            }
            // `mad.rn.f32`/`.f64` is `fma` (PTX ISA, "mad": on sm_20 and later the float
            // form with a rounding modifier is a fused multiply-add).
            "fma" | "mad" => {
                let [d, a, b, c] = self.operands(ins, 4)? else {
                    unreachable!()
                };
                let a = self.src(f, ins, a, ty)?;
                let b = self.src(f, ins, b, ty)?;
                let c = self.src(f, ins, c, ty)?;
                let d = self.dst(f, ins, d)?;
                self.emit(InstrKind::Fma {
                    dst: d,
                    ty,
                    mode,
                    a,
                    b,
                    c,
                });
            }
            _ => {
                return Err(LowerError::at(
                    ins,
                    format!(
                        "floating-point `{}` is not supported (approximate transcendental \
                         functions have no single defined result)",
                        mnemonic(ins)
                    ),
                ))
            }
        }
        Ok(())
    }

    /// `setp.CMP{.BoolOp}{.ftz}.f32 p{|q}, a, b{, {!}c}`.
    fn float_setp(&mut self, f: &mut Frame<'m>, ins: &'m Instruction, q: &Quals) -> R<()> {
        let [t] = q.types.as_slice() else {
            return Err(LowerError::at(
                ins,
                format!("`{}` needs one type", mnemonic(ins)),
            ));
        };
        let ty = float_type(ins, *t)?;
        let mut mode = FloatMode::default();
        let mut cmp = None;
        let mut combine = None;
        for m in &q.other {
            match *m {
                "ftz" if ty.bits == 32 => mode.ftz = true,
                "and" => combine = Some(BinOp::And),
                "or" => combine = Some(BinOp::Or),
                "xor" => combine = Some(BinOp::Xor),
                m => match FloatCmp::from_ptx(m) {
                    Some(c) if cmp.is_none() => cmp = Some(c),
                    _ => return Err(unexpected(ins, m)),
                },
            }
        }
        let Some(cmp) = cmp else {
            return Err(LowerError::at(
                ins,
                "`setp` needs a comparison (`.eq`, `.ltu`, ...)",
            ));
        };
        let op = BinOp::Float(FloatOp::Cmp(cmp), mode);
        self.setp_with(f, ins, (op, ty, false), combine)
    }

    /// `cvt{.rnd}{.ftz}{.sat}.to.from d, a` where either type is a float.
    fn float_cvt(&mut self, f: &mut Frame<'m>, ins: &'m Instruction, q: &Quals) -> R<()> {
        let [to, from] = q.types.as_slice() else {
            return Err(LowerError::at(
                ins,
                format!("`{}` needs two types (`cvt.rn.f32.s32`)", mnemonic(ins)),
            ));
        };
        let ty_of = |t: ScalarType| match t {
            ScalarType::F(_) => float_type(ins, t),
            ScalarType::Pred => Err(LowerError::at(
                ins,
                format!("`{}`: a predicate type here", mnemonic(ins)),
            )),
            t => Ok(int_of(t, false).expect("an integer type")),
        };
        let (to, from) = (ty_of(*to)?, ty_of(*from)?);
        let (mode, rounding, rest) = modifiers(ins, q)?;
        if let Some(m) = rest.first() {
            return Err(unexpected(ins, m));
        }
        // Which rounding the ISA asks for: an integral one from a float to an integer or to
        // the same float type, a float one to a narrower float or from an integer, none
        // from `.f32` to `.f64` (exact).
        let needs = match (from.float, to.float) {
            (true, false) => Some(true),
            (true, true) if from.bits == to.bits => Some(true),
            (true, true) if from.bits < to.bits => None,
            _ => Some(false),
        };
        let ok = match (needs, rounding) {
            (None, None) => true,
            // `cvt.rni.f64.f32` rounds to an integral value on the way.
            (None, Some(true)) => true,
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if !ok {
            let want = match needs {
                Some(true) => "an integral rounding (`.rni`, `.rzi`, `.rmi`, `.rpi`)",
                Some(false) => "a rounding (`.rn`, `.rz`, `.rm`, `.rp`)",
                None => "no rounding",
            };
            return Err(LowerError::at(
                ins,
                format!("`{}` takes {want}", mnemonic(ins)),
            ));
        }
        if mode.ftz && !(from == IntType::F32 || to == IntType::F32) {
            return Err(unexpected(ins, "ftz"));
        }
        let [d, a] = self.operands(ins, 2)? else {
            unreachable!()
        };
        let a = self.src(f, ins, a, from)?;
        let d = self.dst(f, ins, d)?;
        let op = BinOp::Cvt {
            from,
            mode,
            integral: rounding == Some(true) && to.float,
        };
        self.binary(d, op, to, a, Operand::Imm(0));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{i, imm, one_thread, one_thread_err, r, value};
    use crate::ast::Operand as Op;
    use scopecheck_ir::IntType;

    fn f32(x: f32) -> Op {
        Op::Float {
            bits: u64::from(x.to_bits()),
            double: false,
        }
    }
    fn f64(x: f64) -> Op {
        Op::Float {
            bits: x.to_bits(),
            double: true,
        }
    }
    fn bits32(p: &scopecheck_ir::Program, name: &str) -> f32 {
        f32::from_bits(value(p, 0, name, IntType::U32) as u32)
    }

    #[test]
    fn float_arithmetic_rounds_to_nearest_and_fma_is_fused() {
        // 1e8 + 1 rounds back to 1e8 (floats near 1e8 are 8 apart); then - 1e8 gives 0.
        // fma(1 + 2^-23, 1 - 2^-23, -1) is -2^-46 exactly, where mul then add gives 0.
        let a = 1.0 + f32::EPSILON;
        let b = 1.0 - f32::EPSILON;
        let p = one_thread(
            vec![],
            vec![
                i(1, "add.f32", vec![r("%r1"), f32(1e8), f32(1.0)]),
                i(2, "sub.rn.f32", vec![r("%r2"), r("%r1"), f32(1e8)]),
                i(3, "mov.f32", vec![r("%r3"), f32(a)]),
                i(4, "fma.rn.f32", vec![r("%r4"), r("%r3"), f32(b), f32(-1.0)]),
                i(5, "mul.f32", vec![r("%r5"), r("%r3"), f32(b)]),
                i(6, "add.f32", vec![r("%r5"), r("%r5"), f32(-1.0)]),
                // A decimal literal is a double, converted to the instruction's .f32.
                i(7, "div.rn.f32", vec![r("%r6"), f64(1.0), f64(3.0)]),
                i(8, "mul.f64", vec![r("%rd1"), f64(0.5), f64(3.0)]),
                i(9, "neg.f32", vec![r("%r7"), f32(0.0)]),
            ],
        );
        assert_eq!(bits32(&p, "%r2"), 0.0);
        assert_eq!(bits32(&p, "%r4"), -(2f32.powi(-46)));
        assert_eq!(bits32(&p, "%r5"), 0.0);
        assert_eq!(bits32(&p, "%r6"), 1.0f32 / 3.0);
        assert_eq!(
            f64::from_bits(value(&p, 0, "%rd1", IntType::U64) as u64),
            1.5
        );
        assert_eq!(value(&p, 0, "%r7", IntType::U32), 0x8000_0000);
    }

    #[test]
    fn setp_compares_ordered_and_unordered() {
        // %r1 = 0/0 is NaN: `eq` and `ne` are false, `neu` and `nan` true, `lt` false.
        let p = one_thread(
            vec![],
            vec![
                i(1, "div.rn.f32", vec![r("%r1"), f32(0.0), f32(0.0)]),
                i(2, "setp.eq.f32", vec![r("%p1"), r("%r1"), r("%r1")]),
                i(3, "setp.ne.f32", vec![r("%p2"), r("%r1"), f32(1.0)]),
                i(4, "setp.neu.f32", vec![r("%p3"), r("%r1"), f32(1.0)]),
                i(5, "setp.nan.f32", vec![r("%p4"), r("%r1"), f32(1.0)]),
                i(6, "setp.lt.f32", vec![r("%p5"), r("%r1"), f32(1.0)]),
                i(7, "setp.eq.f32", vec![r("%p6"), f32(-0.0), f32(0.0)]),
            ],
        );
        let p_ = |n| value(&p, 0, n, IntType::U32);
        assert_eq!(
            [
                p_("%p1"),
                p_("%p2"),
                p_("%p3"),
                p_("%p4"),
                p_("%p5"),
                p_("%p6")
            ],
            [0, 0, 1, 1, 0, 1]
        );
    }

    #[test]
    fn cvt_takes_every_rounding_mode() {
        let p = one_thread(
            vec![],
            vec![
                i(1, "cvt.rzi.s32.f32", vec![r("%r1"), f32(-2.5)]),
                i(2, "cvt.rmi.s32.f32", vec![r("%r2"), f32(-2.5)]),
                i(3, "cvt.rni.s32.f32", vec![r("%r3"), f32(-2.5)]),
                // 2^24 + 1: to nearest (even) 2^24, up 2^24 + 2.
                i(4, "cvt.rn.f32.s32", vec![r("%r4"), imm(16_777_217)]),
                i(5, "cvt.rp.f32.s32", vec![r("%r5"), imm(16_777_217)]),
                i(6, "cvt.rz.f32.f64", vec![r("%r6"), f64(0.1)]),
                i(7, "cvt.f64.f32", vec![r("%rd1"), f32(0.1)]),
                // PTX clamps: 3e9 to .s32 is INT_MAX.
                i(8, "cvt.rzi.s32.f32", vec![r("%r7"), f32(3e9)]),
            ],
        );
        let s = |n| value(&p, 0, n, IntType::S32);
        assert_eq!([s("%r1"), s("%r2"), s("%r3")], [-2, -3, -2]);
        assert_eq!(bits32(&p, "%r4"), 16_777_216.0);
        assert_eq!(bits32(&p, "%r5"), 16_777_218.0);
        assert_eq!(value(&p, 0, "%r6", IntType::U32), 0x3dcc_cccc);
        assert_eq!(
            f64::from_bits(value(&p, 0, "%rd1", IntType::U64) as u64),
            f64::from(0.1f32)
        );
        assert_eq!(s("%r7"), i128::from(i32::MAX));
    }

    #[test]
    fn what_has_no_single_result_is_refused() {
        for (ins, says) in [
            ("div.approx.f32", "approximate"),
            ("div.full.f32", "approximate"),
            ("add.rz.f32", "directed rounding"),
            ("div.f32", "rounding modifier"),
            ("ex2.approx.f32", "approximate"),
        ] {
            let e = one_thread_err(vec![i(9, ins, vec![r("%r1"), r("%r1"), r("%r1")])]);
            assert!(e.message.contains(says), "{ins}: {}", e.message);
        }
        let e = one_thread_err(vec![i(9, "cvt.f32.s32", vec![r("%r1"), r("%r2")])]);
        assert!(e.message.contains("takes a rounding"), "{}", e.message);
        let e = one_thread_err(vec![i(9, "cvt.s32.f32", vec![r("%r1"), r("%r2")])]);
        assert!(e.message.contains("integral rounding"), "{}", e.message);
    }
}
