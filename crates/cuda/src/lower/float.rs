//! CUDA's floating-point functions and intrinsics in device code, and `__trap()`: each the
//! operation the IR computes exactly as the hardware rounds it (`scopecheck_ir::float`).
//!
//! - `fmaf`/`fma`/`__fmaf_rn`/`__fma_rn`: fused multiply-add, one rounding;
//! - `sqrtf`/`sqrt`/`__fsqrt_rn`/`__dsqrt_rn`, `fabsf`/`fabs`, `fminf`/`fmin`, `fmaxf`/`fmax`;
//! - `__fadd_rn` ... `__ddiv_rn`, `__frcp_rn`/`__drcp_rn`: the round-to-nearest operations
//!   (the other rounding modes are refused: the IR computes arithmetic to nearest only);
//! - `floorf`/`ceilf`/`truncf`/`rintf`/`nearbyintf` (and the `double` forms): an integral
//!   value of the same type;
//! - the conversions `__float2int_rn`, `__int2float_rz`, `__double2float_rd`, ... in every
//!   rounding mode; like the `cvt` they compile to, a float to an integer clamps to the range
//!   and gives 0 for NaN;
//! - the bit casts `__int_as_float`, `__float_as_int`, `__uint_as_float`, `__float_as_uint`,
//!   `__longlong_as_double`, `__double_as_longlong`: the same bits as another type;
//! - `isnan`, `isinf`, `isfinite`, `signbit`, `__saturatef`;
//! - `__trap()`: the kernel aborts with an error, a fault of the test at its line.
//!
//! Refused with a clear message: the approximate ones (`__fdividef`, `__expf`, `sinf`, ...),
//! whose results the hardware does not specify to the bit.

use scopecheck_ir::{
    BinOp, FloatCmp, FloatMode, FloatOp, InstrKind, IntType, Operand, RegId, Rounding,
};
use tree_sitter::Node;

use super::{err, Lw, Val, R};

/// The type a name part of a conversion intrinsic names (`float`, `int`, `ull`, ...).
fn type_named(part: &str) -> Option<IntType> {
    Some(match part {
        "float" => IntType::F32,
        "double" => IntType::F64,
        "int" => IntType::S32,
        "uint" => IntType::U32,
        "ll" => IntType::S64,
        "ull" => IntType::U64,
        _ => return None,
    })
}

/// The rounding a suffix names: `rn`, `rz`, `rd` (down), `ru` (up).
fn rounding_named(s: &str) -> Option<Rounding> {
    Some(match s {
        "rn" => Rounding::Nearest,
        "rz" => Rounding::Zero,
        "rd" => Rounding::Down,
        "ru" => Rounding::Up,
        _ => return None,
    })
}

/// A `float` function (`f` suffix or `__f...`) or its `double` twin.
fn width(float: bool) -> IntType {
    if float {
        IntType::F32
    } else {
        IntType::F64
    }
}

/// The approximate functions: their results are the hardware's own approximations.
const APPROXIMATE: &[&str] = &[
    "__fdividef",
    "__expf",
    "__exp10f",
    "__logf",
    "__log2f",
    "__log10f",
    "__powf",
    "__sinf",
    "__cosf",
    "__tanf",
    "__sincosf",
    "expf",
    "exp",
    "exp2f",
    "exp2",
    "logf",
    "log",
    "log2f",
    "log2",
    "log10f",
    "log10",
    "powf",
    "pow",
    "sinf",
    "sin",
    "cosf",
    "cos",
    "tanf",
    "tan",
    "tanhf",
    "tanh",
    "rsqrtf",
    "rsqrt",
    "cbrtf",
    "cbrt",
    "erff",
    "erf",
    "atanf",
    "atan",
    "atan2f",
    "atan2",
    "asinf",
    "asin",
    "acosf",
    "acos",
    "sinhf",
    "coshf",
    "hypotf",
    "hypot",
    "roundf",
    "round",
];

impl<'t> Lw<'_, '_, 't> {
    /// A floating-point function or `__trap()`, if `name` is one (and not a function of the
    /// file); `None` otherwise.
    pub(super) fn float_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Val>> {
        if self.cx.funcs.contains_key(name) {
            return Ok(None);
        }
        if name == "__trap" {
            self.device_only(name, e)?;
            self.arity(name, args, (0, 0), "no arguments", e)?;
            let t = self.build.temp(IntType::S32);
            self.emit(
                InstrKind::Binary {
                    dst: t,
                    op: BinOp::Trap,
                    ty: IntType::S32,
                    a: Operand::Imm(0),
                    b: Operand::Imm(0),
                },
                e,
            );
            return Ok(Some(Val::imm(0, IntType::S32)));
        }
        if APPROXIMATE.contains(&name) {
            return err(
                e,
                format!(
                    "not supported: `{name}` (its result is the hardware's approximation, not \
                     one value the IR can compute; the exactly rounded operations are + - * /, \
                     sqrtf, fmaf, fminf, fmaxf, fabsf and the `_rn` intrinsics)"
                ),
            );
        }
        let plain = FloatMode::default();
        let unary = |o: FloatOp, ty| Some((BinOp::Float(o, plain), ty, 1));
        let binary = |o: FloatOp, ty| Some((BinOp::Float(o, plain), ty, 2));
        // (operation, type, arguments) of the simple ones.
        let simple = match name {
            "sqrtf" | "__fsqrt_rn" => unary(FloatOp::Sqrt, IntType::F32),
            "sqrt" | "__dsqrt_rn" => unary(FloatOp::Sqrt, IntType::F64),
            "fabsf" => unary(FloatOp::Abs, IntType::F32),
            "fabs" => unary(FloatOp::Abs, IntType::F64),
            "fminf" => binary(FloatOp::Min, IntType::F32),
            "fmin" => binary(FloatOp::Min, IntType::F64),
            "fmaxf" => binary(FloatOp::Max, IntType::F32),
            "fmax" => binary(FloatOp::Max, IntType::F64),
            "__fadd_rn" | "__dadd_rn" => binary(FloatOp::Add, width(name.starts_with("__f"))),
            "__fsub_rn" | "__dsub_rn" => binary(FloatOp::Sub, width(name.starts_with("__f"))),
            "__fmul_rn" | "__dmul_rn" => binary(FloatOp::Mul, width(name.starts_with("__f"))),
            "__fdiv_rn" | "__ddiv_rn" => binary(FloatOp::Div, width(name.starts_with("__f"))),
            _ => None,
        };
        if let Some((op, ty, n)) = simple {
            self.arity(
                name,
                args,
                (n, n),
                if n == 1 { "one value" } else { "two values" },
                e,
            )?;
            let a = self.float_arg(args[0], ty)?;
            let b = if n == 2 {
                self.float_arg(args[1], ty)?
            } else {
                a
            };
            return Ok(Some(self.in_register(op, ty, (a, b), hint, e)));
        }
        match name {
            "fmaf" | "fma" | "__fmaf_rn" | "__fma_rn" => {
                let ty = width(matches!(name, "fmaf" | "__fmaf_rn"));
                self.arity(name, args, (3, 3), "three values", e)?;
                let a = self.float_arg(args[0], ty)?;
                let b = self.float_arg(args[1], ty)?;
                let c = self.float_arg(args[2], ty)?;
                let dst = self.build.dst_for(hint, ty);
                self.emit(
                    InstrKind::Fma {
                        dst,
                        ty,
                        mode: plain,
                        a,
                        b,
                        c,
                    },
                    e,
                );
                return Ok(Some(Val {
                    op: Operand::Reg(dst),
                    ty,
                }));
            }
            "__frcp_rn" | "__drcp_rn" => {
                let ty = width(name == "__frcp_rn");
                self.arity(name, args, (1, 1), "one value", e)?;
                let a = self.float_arg(args[0], ty)?;
                let one = Val::imm(scopecheck_ir::float::from_f64(ty, 1.0), ty);
                let op = BinOp::Float(FloatOp::Div, plain);
                return Ok(Some(self.in_register(op, ty, (one.op, a), hint, e)));
            }
            "__saturatef" => {
                self.arity(name, args, (1, 1), "one value", e)?;
                let a = self.float_arg(args[0], IntType::F32)?;
                let sat = FloatMode { sat: true, ..plain };
                // x + -0.0 is x (and -0.0 for -0.0), then clamped to [0, 1].
                let minus_zero = Operand::Imm(scopecheck_ir::float::from_f64(IntType::F32, -0.0));
                let op = BinOp::Float(FloatOp::Add, sat);
                return Ok(Some(self.in_register(
                    op,
                    IntType::F32,
                    (a, minus_zero),
                    hint,
                    e,
                )));
            }
            "isnan" | "isinf" | "isfinite" | "signbit" => {
                self.arity(name, args, (1, 1), "one value", e)?;
                let v = self.val(args[0], None)?;
                if !v.ty.float {
                    return err(args[0], format!("`{name}` takes a float or a double"));
                }
                return Ok(Some(self.classify(name, v, hint, e)));
            }
            _ => {}
        }
        if let Some(v) = self.rounding_call(name, args, hint, e)? {
            return Ok(Some(v));
        }
        if let Some(v) = self.bit_cast(name, args, e)? {
            return Ok(Some(v));
        }
        self.conversion_call(name, args, hint, e)
    }

    /// `floorf`, `ceilf`, `truncf`, `rintf`, `nearbyintf` and the double forms: an integral
    /// value of the same type, rounded so.
    fn rounding_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Val>> {
        let rounds = [
            ("floor", Rounding::Down),
            ("ceil", Rounding::Up),
            ("trunc", Rounding::Zero),
            ("rint", Rounding::Nearest),
            ("nearbyint", Rounding::Nearest),
        ];
        for (base, round) in rounds {
            let ty = if name == base {
                IntType::F64
            } else if name.strip_suffix('f') == Some(base) {
                IntType::F32
            } else {
                continue;
            };
            self.arity(name, args, (1, 1), "one value", e)?;
            let a = self.float_arg(args[0], ty)?;
            let op = BinOp::Cvt {
                from: ty,
                mode: FloatMode {
                    round,
                    ..FloatMode::default()
                },
                integral: true,
            };
            return Ok(Some(self.in_register(
                op,
                ty,
                (a, Operand::Imm(0)),
                hint,
                e,
            )));
        }
        Ok(None)
    }

    /// `__int_as_float` and the other bit casts: the argument converted to the source type,
    /// its bits taken as the target type.
    fn bit_cast(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<Option<Val>> {
        let (from, to) = match name {
            "__int_as_float" => (IntType::S32, IntType::F32),
            "__uint_as_float" => (IntType::U32, IntType::F32),
            "__float_as_int" => (IntType::F32, IntType::S32),
            "__float_as_uint" => (IntType::F32, IntType::U32),
            "__longlong_as_double" => (IntType::S64, IntType::F64),
            "__double_as_longlong" => (IntType::F64, IntType::S64),
            _ => return Ok(None),
        };
        self.arity(name, args, (1, 1), "one value", e)?;
        let v = self.val(args[0], None)?;
        let v = self.convert(v, from, None, e);
        let dst = self.build.temp(to);
        let src = match v.op {
            Operand::Imm(x) => Operand::Imm(to.wrap(x)),
            r => r,
        };
        // A move keeps the bits; the register's type says how they are read from now on.
        self.emit(InstrKind::Mov { dst, src }, e);
        Ok(Some(Val {
            op: Operand::Reg(dst),
            ty: to,
        }))
    }

    /// `__float2int_rn` and the other conversion intrinsics (`__{from}2{to}_{rounding}`).
    fn conversion_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Val>> {
        let Some(rest) = name.strip_prefix("__") else {
            return Ok(None);
        };
        let Some((from, rest)) = rest.split_once('2') else {
            return Ok(None);
        };
        let Some((to, round)) = rest.split_once('_') else {
            return Ok(None);
        };
        let (Some(from), Some(to)) = (type_named(from), type_named(to)) else {
            return Ok(None);
        };
        if !(from.float || to.float) {
            return Ok(None);
        }
        let Some(round) = rounding_named(round) else {
            return err(
                e,
                format!("not supported: `{name}` (rounding suffixes are _rn, _rz, _rd, _ru)"),
            );
        };
        self.arity(name, args, (1, 1), "one value", e)?;
        let a = self.float_arg(args[0], from)?;
        // To an integer the intrinsic is PTX's `cvt.rXi`: it clamps, and NaN gives 0.
        let op = BinOp::Cvt {
            from,
            mode: FloatMode {
                round,
                ftz: false,
                sat: !to.float,
            },
            integral: false,
        };
        Ok(Some(self.in_register(
            op,
            to,
            (a, Operand::Imm(0)),
            hint,
            e,
        )))
    }

    /// An argument as a value of type `ty` (converted as C converts a function's argument).
    fn float_arg(&mut self, a: Node<'t>, ty: IntType) -> R<Operand> {
        let v = self.val(a, None)?;
        Ok(self.convert(v, ty, None, a).op)
    }

    /// `op` computed into a register of type `ty` (a call's value is always a register, so
    /// that its type travels with it).
    fn in_register(
        &mut self,
        op: BinOp,
        ty: IntType,
        (a, b): (Operand, Operand),
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> Val {
        let result = match op {
            BinOp::Float(FloatOp::Cmp(_), _) => IntType::S32,
            _ => ty,
        };
        let dst = self.build.dst_for(hint, result);
        self.emit(InstrKind::Binary { dst, op, ty, a, b }, e);
        Val {
            op: Operand::Reg(dst),
            ty: result,
        }
    }

    /// `isnan`, `isinf`, `isfinite`, `signbit` of a float value: 1 or 0, an `int`.
    fn classify(&mut self, name: &str, v: Val, hint: Option<RegId>, e: Node<'t>) -> Val {
        let ty = v.ty;
        let plain = FloatMode::default();
        let cmp = |c| BinOp::Float(FloatOp::Cmp(c), plain);
        let inf = Operand::Imm(scopecheck_ir::float::from_f64(ty, f64::INFINITY));
        match name {
            "isnan" => self.in_register(cmp(FloatCmp::Nan), ty, (v.op, v.op), hint, e),
            "signbit" => {
                // The sign bit: the value as unsigned bits, shifted down.
                let bits = IntType::new(ty.bits, false);
                let t = self.build.temp(bits);
                self.emit(InstrKind::Mov { dst: t, src: v.op }, e);
                let s = self.build.temp(bits);
                self.emit(
                    InstrKind::Binary {
                        dst: s,
                        op: BinOp::Shr,
                        ty: bits,
                        a: Operand::Reg(t),
                        b: Operand::Imm(i64::from(ty.bits) - 1),
                    },
                    e,
                );
                let d = self.build.dst_for(hint, IntType::S32);
                self.emit(
                    InstrKind::Binary {
                        dst: d,
                        op: BinOp::Cvt {
                            from: bits,
                            mode: plain,
                            integral: false,
                        },
                        ty: IntType::S32,
                        a: Operand::Reg(s),
                        b: Operand::Imm(0),
                    },
                    e,
                );
                Val {
                    op: Operand::Reg(d),
                    ty: IntType::S32,
                }
            }
            _ => {
                let abs =
                    self.in_register(BinOp::Float(FloatOp::Abs, plain), ty, (v.op, v.op), None, e);
                // isinf: |x| == inf; isfinite: |x| < inf (false for NaN).
                let c = if name == "isinf" {
                    FloatCmp::Eq
                } else {
                    FloatCmp::Lt
                };
                self.in_register(cmp(c), ty, (abs.op, inf), hint, e)
            }
        }
    }
}
