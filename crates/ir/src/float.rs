//! Floating-point values: IEEE-754 binary32 (`float`, `.f32`) and binary64 (`double`, `.f64`).
//!
//! A floating value is held as its bit pattern, canonical as an unsigned integer of its width
//! ([`IntType::F32`]: the 32 bits zero-extended; [`IntType::F64`]: the 64 bits). One
//! representation serves every view: PTX registers and memory hold bits (`mov.b32` of an `.f32`
//! register, `ld.b32` of a float written by `st.f32`, a kernel parameter's bytes), the GPU
//! runner writes and reads words, and the language-level view then agrees with the PTX view on
//! every location's value, so `--model both` compares like with like. What a float *means* is
//! in the operation: [`BinOp::Float`](crate::BinOp::Float), [`BinOp::Cvt`](crate::BinOp::Cvt),
//! [`InstrKind::Fma`](crate::InstrKind::Fma) and the float RMWs compute on the values the bits
//! encode.
//!
//! Rounding is the hardware's: Rust's `f32`/`f64` arithmetic is IEEE round-to-nearest-even,
//! which is PTX's `.rn` (the default of `add`, `sub`, `mul`, `div.rn`, `sqrt.rn`, `fma.rn`
//! and of CUDA's `+ - * /` on floats); `fma` is fused (`mul_add`, one rounding). Conversions
//! take every rounding mode (`.rn .rz .rm .rp`, and the `.rni .rzi .rmi .rpi` of rounding to
//! an integral value). A NaN result is the canonical NaN (`0x7fffffff` for `.f32`, as the PTX
//! ISA has it; `0x7fffffffffffffff` for `.f64`, where the ISA leaves the payload open), so
//! that a result's bits do not depend on the machine scopecheck runs on.

use crate::{Arithmetic, IntType, RmwOp, Value};

/// A rounding mode (PTX `.rn`, `.rz`, `.rm`, `.rp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// To nearest, ties to even.
    #[default]
    Nearest,
    /// Toward zero.
    Zero,
    /// Toward minus infinity.
    Down,
    /// Toward plus infinity.
    Up,
}

/// The modifiers of a floating-point instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FloatMode {
    /// Arithmetic supports [`Rounding::Nearest`] only (the front-ends refuse the others);
    /// conversions take every mode.
    pub round: Rounding,
    /// `.ftz`: subnormal `.f32` inputs and results are flushed to zero of the same sign.
    pub ftz: bool,
    /// `.sat`: the result is clamped to `[0.0, 1.0]`, NaN becoming `+0.0`.
    pub sat: bool,
}

/// A floating comparison (PTX `setp.CMP`): the ordered ones are false when either operand is
/// NaN, the unordered ones (`..u`) true; `Num` says neither is NaN, `Nan` that one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl FloatCmp {
    /// The comparison a PTX `setp`/`set` mnemonic names.
    pub fn from_ptx(name: &str) -> Option<FloatCmp> {
        Some(match name {
            "eq" => FloatCmp::Eq,
            "ne" => FloatCmp::Ne,
            "lt" => FloatCmp::Lt,
            "le" => FloatCmp::Le,
            "gt" => FloatCmp::Gt,
            "ge" => FloatCmp::Ge,
            "equ" => FloatCmp::Equ,
            "neu" => FloatCmp::Neu,
            "ltu" => FloatCmp::Ltu,
            "leu" => FloatCmp::Leu,
            "gtu" => FloatCmp::Gtu,
            "geu" => FloatCmp::Geu,
            "num" => FloatCmp::Num,
            "nan" => FloatCmp::Nan,
            _ => return None,
        })
    }

    fn holds(self, a: f64, b: f64) -> bool {
        let unordered = a.is_nan() || b.is_nan();
        match self {
            FloatCmp::Eq => a == b,
            FloatCmp::Ne => !unordered && a != b,
            FloatCmp::Lt => a < b,
            FloatCmp::Le => a <= b,
            FloatCmp::Gt => a > b,
            FloatCmp::Ge => a >= b,
            FloatCmp::Equ => unordered || a == b,
            FloatCmp::Neu => a != b,
            FloatCmp::Ltu => unordered || a < b,
            FloatCmp::Leu => unordered || a <= b,
            FloatCmp::Gtu => unordered || a > b,
            FloatCmp::Geu => unordered || a >= b,
            FloatCmp::Num => !unordered,
            FloatCmp::Nan => unordered,
        }
    }
}

/// A floating-point operation of [`BinOp::Float`](crate::BinOp::Float). The unary ones
/// (`Neg`, `Abs`, `Sqrt`) read `a` only. Comparisons give 1 or 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    /// PTX `min`/`max`, C `fminf`/`fmaxf`: a NaN operand gives the other one (both NaN: NaN),
    /// and `-0.0` counts as less than `+0.0`.
    Min,
    Max,
    /// The sign bit flipped or cleared, as `neg`/`abs` do (no rounding, NaN kept).
    Neg,
    Abs,
    Sqrt,
    Cmp(FloatCmp),
}

/// The two floating formats, for code generic over them.
trait Ieee:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const BITS: u32;
    fn of(v: Value) -> Self;
    fn value(self) -> Value;
    /// The bits exactly as they are (a NaN's payload kept).
    fn bits(self) -> Value;
    fn narrow_int(x: i128) -> Self;
    fn wide(self) -> f64;
    fn narrow(v: f64) -> Self;
    fn nan(self) -> bool;
    fn subnormal(self) -> bool;
    fn zero(negative: bool) -> Self;
    fn negative(self) -> bool;
    fn up(self) -> Self;
    fn down(self) -> Self;
    fn fused(self, b: Self, c: Self) -> Self;
}

macro_rules! ieee {
    ($t:ty, $bits:expr, $u:ty) => {
        impl Ieee for $t {
            const BITS: u32 = $bits;
            fn of(v: Value) -> Self {
                <$t>::from_bits(v as $u)
            }
            fn value(self) -> Value {
                if self.is_nan() {
                    // The canonical NaN: sign clear, every exponent and fraction bit set.
                    return (<$u>::MAX >> 1) as Value;
                }
                self.to_bits() as Value
            }
            fn bits(self) -> Value {
                self.to_bits() as Value
            }
            fn narrow_int(x: i128) -> Self {
                x as $t
            }
            fn wide(self) -> f64 {
                self as f64
            }
            fn narrow(v: f64) -> Self {
                v as $t
            }
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn subnormal(self) -> bool {
                self.is_subnormal()
            }
            fn zero(negative: bool) -> Self {
                if negative {
                    -0.0
                } else {
                    0.0
                }
            }
            fn negative(self) -> bool {
                self.is_sign_negative()
            }
            fn up(self) -> Self {
                self.next_up()
            }
            fn down(self) -> Self {
                self.next_down()
            }
            fn fused(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
        }
    };
}
ieee!(f32, 32, u32);
ieee!(f64, 64, u64);

/// Whether `ty` is a floating type scopecheck computes in.
fn check(ty: IntType) -> Result<(), &'static str> {
    if ty.float && (ty.bits == 32 || ty.bits == 64) {
        Ok(())
    } else {
        Err("a floating-point operation on a value that is not a float or a double")
    }
}

/// `.ftz` on an `.f32` value: a subnormal becomes zero of its sign (`.f64` has no `.ftz`).
fn flush<F: Ieee>(x: F, mode: FloatMode) -> F {
    if mode.ftz && F::BITS == 32 && x.subnormal() {
        F::zero(x.negative())
    } else {
        x
    }
}

/// A result with `.ftz` and `.sat` applied, as bits.
fn finish<F: Ieee>(x: F, mode: FloatMode) -> Value {
    let x = flush(x, mode);
    if mode.sat {
        let w = x.wide();
        if x.nan() || w <= 0.0 {
            // NaN and every negative value (-0.0 too) saturate to +0.0.
            return F::zero(false).value();
        }
        if w > 1.0 {
            return F::narrow(1.0).value();
        }
    }
    x.value()
}

fn binary<F: Ieee>(
    op: FloatOp,
    mode: FloatMode,
    a: Value,
    b: Value,
) -> Result<Value, &'static str> {
    if !matches!(op, FloatOp::Neg | FloatOp::Abs) && mode.round != Rounding::Nearest {
        return Err("directed rounding of floating-point arithmetic is not supported");
    }
    let (x, y) = (flush(F::of(a), mode), flush(F::of(b), mode));
    let sign = 1u64 << (F::BITS - 1);
    let r = match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Div => x / y,
        FloatOp::Sqrt => F::narrow(x.wide().sqrt()),
        FloatOp::Min | FloatOp::Max => {
            let pick_x = match (x.nan(), y.nan()) {
                (true, _) => false,
                (_, true) => true,
                _ => {
                    // -0.0 below +0.0: compare the sign when the values are equal.
                    let less = x < y || (x == y && x.negative() && !y.negative());
                    (op == FloatOp::Min) == less
                }
            };
            if pick_x {
                x
            } else {
                y
            }
        }
        // Sign-bit operations keep every other bit (a NaN's payload too).
        FloatOp::Neg => return Ok(x.bits() ^ sign as Value),
        FloatOp::Abs => return Ok(x.bits() & !(sign as Value)),
        FloatOp::Cmp(c) => return Ok(Value::from(c.holds(x.wide(), y.wide()))),
    };
    Ok(finish(r, mode))
}

/// `op` on two values of floating type `ty` (F32 or F64), or why it has no value here.
pub fn eval(
    op: FloatOp,
    mode: FloatMode,
    ty: IntType,
    a: Value,
    b: Value,
) -> Result<Value, &'static str> {
    check(ty)?;
    if ty.bits == 32 {
        binary::<f32>(op, mode, a, b)
    } else {
        binary::<f64>(op, mode, a, b)
    }
}

/// `a * b + c` in `ty`, rounded once (fused, as PTX `fma.rn` and CUDA's `fmaf`/`fma` are).
pub fn fma(
    ty: IntType,
    mode: FloatMode,
    a: Value,
    b: Value,
    c: Value,
) -> Result<Value, &'static str> {
    check(ty)?;
    if mode.round != Rounding::Nearest {
        return Err("directed rounding of floating-point arithmetic is not supported");
    }
    fn go<F: Ieee>(mode: FloatMode, a: Value, b: Value, c: Value) -> Value {
        let (a, b, c) = (
            flush(F::of(a), mode),
            flush(F::of(b), mode),
            flush(F::of(c), mode),
        );
        finish(a.fused(b, c), mode)
    }
    Ok(if ty.bits == 32 {
        go::<f32>(mode, a, b, c)
    } else {
        go::<f64>(mode, a, b, c)
    })
}

/// Rounds `rn`, the round-to-nearest result for an exact value, in direction `round`, given
/// how the exact value compares with it.
fn direct<F: Ieee>(rn: F, exact_vs_rn: std::cmp::Ordering, round: Rounding) -> F {
    use std::cmp::Ordering::{Greater, Less};
    match (round, exact_vs_rn) {
        (Rounding::Up, Greater) => rn.up(),
        (Rounding::Down, Less) => rn.down(),
        (Rounding::Zero, Greater) if rn.negative() => rn.up(),
        (Rounding::Zero, Less) if !rn.negative() => rn.down(),
        _ => rn,
    }
}

/// An integer as the nearest float (any rounding mode).
fn from_int<F: Ieee>(x: i128, round: Rounding) -> F {
    // Rust's integer-to-float casts round to nearest, ties to even.
    let rn = F::narrow_int(x);
    // A float from an integer of at most 64 bits is an integer of at most 2^64: exact in i128.
    let back = rn.wide() as i128;
    direct(rn, x.cmp(&back), round)
}

/// `x` rounded to an integral value in direction `round`.
fn integral(x: f64, round: Rounding) -> f64 {
    match round {
        Rounding::Nearest => x.round_ties_even(),
        Rounding::Zero => x.trunc(),
        Rounding::Down => x.floor(),
        Rounding::Up => x.ceil(),
    }
}

/// A conversion ([`BinOp::Cvt`](crate::BinOp::Cvt)): the value `a` of type `from` as a value
/// of type `to`. To a float: rounded by `round` (an integral value first when `integral`,
/// PTX `cvt.rzi.f32.f32`); to an integer: rounded to an integral value by `round` (C's
/// conversions truncate: [`Rounding::Zero`]), then, PTX, clamped to the type's range with NaN
/// giving 0; in C a NaN or a value out of range is undefined behaviour, unless `mode.sat`
/// asks for PTX's clamping (CUDA's `__float2int_rz` and the like). Between integers the value
/// wraps to `to`.
pub fn convert(
    from: IntType,
    to: IntType,
    mode: FloatMode,
    integral_only: bool,
    rules: Arithmetic,
    a: Value,
) -> Result<Value, &'static str> {
    if from.float {
        check(from)?;
    }
    if to.float {
        check(to)?;
    }
    let a = from.wrap(a);
    match (from.float, to.float) {
        (false, false) => Ok(to.wrap(a)),
        (false, true) => {
            let x = from.exact(a);
            Ok(if to.bits == 32 {
                finish(from_int::<f32>(x, mode.round), mode)
            } else {
                finish(from_int::<f64>(x, mode.round), mode)
            })
        }
        (true, false) => {
            let x = if from.bits == 32 {
                flush(f32::of(a), mode).wide()
            } else {
                f64::of(a)
            };
            let r = integral(x, mode.round);
            let (lo, hi) = to.range();
            if x.is_nan() {
                return match rules {
                    Arithmetic::C if !mode.sat => {
                        Err("conversion of a NaN to an integer (undefined behaviour in C)")
                    }
                    _ => Ok(0),
                };
            }
            // An integral value: exact in i128 up to 2^127, past which it saturates (and is
            // out of every integer type's range anyway).
            let exact = r as i128;
            let clamped = exact.clamp(lo, hi);
            if rules == Arithmetic::C && !mode.sat && clamped != exact {
                return Err("conversion of a floating value out of the integer type's range (undefined behaviour in C)");
            }
            Ok(to.wrap(clamped as i64))
        }
        (true, true) => {
            let x = if from.bits == 32 {
                flush(f32::of(a), mode).wide()
            } else {
                f64::of(a)
            };
            let x = if integral_only && !x.is_nan() {
                integral(x, mode.round)
            } else {
                x
            };
            Ok(if to.bits == 32 {
                let rn = x as f32;
                let r = if x.is_nan() {
                    rn
                } else {
                    direct(
                        rn,
                        x.partial_cmp(&rn.wide())
                            .unwrap_or(std::cmp::Ordering::Equal),
                        mode.round,
                    )
                };
                finish(r, mode)
            } else {
                finish(x, mode)
            })
        }
    }
}

/// The value a float RMW of type `ty` writes (`atom.add.f32`, `atomicAdd` on a float,
/// `atomicExch`, `atom.min.f32`). `atom.add.f32` rounds to nearest even and flushes subnormal
/// inputs and results to zero (PTX ISA, `atom`); `.f64` keeps subnormals.
pub fn rmw(op: RmwOp, ty: IntType, old: Value, v: Value) -> Value {
    let ftz = FloatMode {
        ftz: true,
        ..FloatMode::default()
    };
    let r = match op {
        RmwOp::Exch => Ok(ty.wrap(v)),
        RmwOp::Add => eval(FloatOp::Add, ftz, ty, old, v),
        RmwOp::Sub => eval(FloatOp::Sub, ftz, ty, old, v),
        RmwOp::Min => eval(FloatOp::Min, FloatMode::default(), ty, old, v),
        RmwOp::Max => eval(FloatOp::Max, FloatMode::default(), ty, old, v),
        // The front-ends make no other float RMW; on bits they would be integer operations.
        _ => Err(""),
    };
    r.unwrap_or_else(|_| op.apply(IntType::new(ty.bits, false), old, v))
}

/// A floating value as a report prints it: the shortest decimal that reads back as the same
/// float (`0.5`, `1.0`, `100000000.0`, `NaN`, `inf`).
pub fn display(ty: IntType, v: Value) -> String {
    if ty.bits == 32 {
        format!("{:?}", f32::of(v))
    } else {
        format!("{:?}", f64::of(v))
    }
}

/// The bits of `x` as a value of floating type `ty` (`x` rounded to nearest for `.f32`).
pub fn from_f64(ty: IntType, x: f64) -> Value {
    if ty.bits == 32 {
        Value::from((x as f32).to_bits())
    } else {
        x.to_bits() as Value
    }
}

/// The value the bits `v` of floating type `ty` encode.
pub fn to_f64(ty: IntType, v: Value) -> f64 {
    if ty.bits == 32 {
        f64::from(f32::of(v))
    } else {
        f64::of(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BinOp;

    const F: IntType = IntType::F32;
    const D: IntType = IntType::F64;

    fn f(x: f32) -> Value {
        Value::from(x.to_bits())
    }
    fn d(x: f64) -> Value {
        x.to_bits() as Value
    }
    fn add(ty: IntType, a: Value, b: Value) -> Value {
        BinOp::Add.eval(ty, Arithmetic::C, a, b).unwrap()
    }
    fn cvt(
        from: IntType,
        to: IntType,
        round: Rounding,
        rules: Arithmetic,
        a: Value,
    ) -> Result<Value, &'static str> {
        let mode = FloatMode {
            round,
            ..FloatMode::default()
        };
        BinOp::Cvt {
            from,
            mode,
            integral: false,
        }
        .eval(to, rules, a, 0)
    }

    #[test]
    fn halves_add_to_one_and_keep_their_bits() {
        // 0.5 is 0x3f000000; 0.5 + 0.5 is exactly 1.0, 0x3f800000, in both widths.
        assert_eq!(f(0.5), 0x3f00_0000);
        assert_eq!(add(F, f(0.5), f(0.5)), 0x3f80_0000);
        assert_eq!(add(D, d(0.5), d(0.5)), d(1.0));
        assert_eq!(RmwOp::Add.apply(F, f(0.5), f(0.5)), f(1.0));
        assert_eq!(RmwOp::Add.apply(D, d(0.5), d(0.5)), d(1.0));
        assert_eq!(F.display(f(1.0)), "1.0");
    }

    #[test]
    fn float_addition_is_not_associative() {
        // 1e8 + 1 is 100000001, between the floats 1e8 and 1e8 + 8 (f32 has 24 significant
        // bits: the spacing at 1e8 is 8): it rounds back to 1e8, so (1e8 + 1) - 1e8 is 0,
        // while (1e8 - 1e8) + 1 is 1.
        let big = f(1e8);
        let neg = f(-1e8);
        let one = f(1.0);
        assert_eq!(add(F, add(F, big, one), neg), f(0.0));
        assert_eq!(add(F, add(F, big, neg), one), f(1.0));
        // In double precision 100000001 is exact: both orders give 1.
        assert_eq!(add(D, add(D, d(1e8), d(1.0)), d(-1e8)), d(1.0));
    }

    #[test]
    fn nan_compares_unordered() {
        let nan = f(f32::NAN);
        let one = f(1.0);
        let cmp = |c, a, b| eval(FloatOp::Cmp(c), FloatMode::default(), F, a, b).unwrap();
        // C: x == x is false for NaN and x != x true (IEEE: NaN is unordered with everything).
        assert_eq!(BinOp::Eq.eval(F, Arithmetic::C, nan, nan), Ok(0));
        assert_eq!(BinOp::Ne.eval(F, Arithmetic::C, nan, nan), Ok(1));
        assert_eq!(BinOp::Lt.eval(F, Arithmetic::C, nan, one), Ok(0));
        assert_eq!(BinOp::Le.eval(F, Arithmetic::C, one, nan), Ok(0));
        // PTX: `setp.ne` is ordered (false on NaN), `setp.neu` unordered (true).
        assert_eq!(cmp(FloatCmp::Ne, nan, one), 0);
        assert_eq!(cmp(FloatCmp::Neu, nan, one), 1);
        assert_eq!(cmp(FloatCmp::Ltu, nan, one), 1);
        assert_eq!(cmp(FloatCmp::Nan, one, nan), 1);
        assert_eq!(cmp(FloatCmp::Num, one, one), 1);
        // -0.0 == +0.0 as values, though the bits differ.
        assert_eq!(cmp(FloatCmp::Eq, f(-0.0), f(0.0)), 1);
        // An invalid operation gives the canonical NaN, whatever machine runs this.
        let inf = f(f32::INFINITY);
        assert_eq!(add(F, inf, f(f32::NEG_INFINITY)), 0x7fff_ffff);
        assert_eq!(F.display(0x7fff_ffff), "NaN");
    }

    #[test]
    fn fma_rounds_once() {
        // a = 1 + 2^-23, b = 1 - 2^-23: a * b = 1 - 2^-46 exactly, which rounds to 1.0 in f32,
        // so mul then add of -1 gives 0, and the fused operation gives -2^-46.
        let a = f(1.0 + f32::EPSILON);
        let b = f(1.0 - f32::EPSILON);
        let m = BinOp::Mul.eval(F, Arithmetic::Ptx, a, b).unwrap();
        assert_eq!(add(F, m, f(-1.0)), f(0.0));
        let fused = fma(F, FloatMode::default(), a, b, f(-1.0)).unwrap();
        assert_eq!(fused, f(-(2f32.powi(-46))));
    }

    #[test]
    fn conversions_round_as_asked() {
        use Arithmetic::{Ptx, C};
        use Rounding::{Down, Nearest, Up, Zero};
        // 0.1 lies between two floats: nearest is 0.1f (0x3dcccccd, above 0.1), toward zero
        // and down the one below (0x3dcccccc), up the one above.
        assert_eq!(cvt(D, F, Nearest, Ptx, d(0.1)), Ok(0x3dcc_cccd));
        assert_eq!(cvt(D, F, Zero, Ptx, d(0.1)), Ok(0x3dcc_cccc));
        assert_eq!(cvt(D, F, Down, Ptx, d(0.1)), Ok(0x3dcc_cccc));
        assert_eq!(cvt(D, F, Up, Ptx, d(0.1)), Ok(0x3dcc_cccd));
        assert_eq!(cvt(D, F, Zero, Ptx, d(-0.1)), Ok(f(-0.1) - 1));
        // A double too large for a float: infinity to nearest, the largest float toward zero.
        assert_eq!(cvt(D, F, Nearest, Ptx, d(1e300)), Ok(f(f32::INFINITY)));
        assert_eq!(cvt(D, F, Zero, Ptx, d(1e300)), Ok(f(f32::MAX)));
        // f32 to f64 is exact.
        assert_eq!(cvt(F, D, Nearest, Ptx, f(0.1)), Ok(d(f64::from(0.1f32))));
        // 2^24 + 1 is no float: ties to even gives 2^24, up gives 2^24 + 2.
        let odd = (1 << 24) + 1;
        assert_eq!(cvt(IntType::S32, F, Nearest, Ptx, odd), Ok(f(16_777_216.0)));
        assert_eq!(cvt(IntType::S32, F, Up, Ptx, odd), Ok(f(16_777_218.0)));
        assert_eq!(cvt(IntType::S32, F, Down, Ptx, -odd), Ok(f(-16_777_218.0)));
        assert_eq!(
            cvt(IntType::U64, D, Nearest, Ptx, -1),
            Ok(d(18_446_744_073_709_551_616.0))
        );
        // Float to integer: -2.5 is -2 to nearest (even) and toward zero, -3 down, -2 up.
        let m = f(-2.5);
        assert_eq!(cvt(F, IntType::S32, Nearest, Ptx, m), Ok(-2));
        assert_eq!(cvt(F, IntType::S32, Zero, Ptx, m), Ok(-2));
        assert_eq!(cvt(F, IntType::S32, Down, Ptx, m), Ok(-3));
        assert_eq!(cvt(F, IntType::S32, Up, Ptx, m), Ok(-2));
        // PTX clamps and takes NaN to 0; in C both are undefined behaviour.
        assert_eq!(
            cvt(F, IntType::S32, Zero, Ptx, f(3e9)),
            Ok(i64::from(i32::MAX))
        );
        assert_eq!(cvt(F, IntType::U32, Zero, Ptx, f(-1.0)), Ok(0));
        // 2^63 is one past the largest `long long`: clamped, not wrapped.
        assert_eq!(
            cvt(D, IntType::S64, Zero, Ptx, d(9.223_372_036_854_776e18)),
            Ok(i64::MAX)
        );
        assert_eq!(cvt(D, IntType::U64, Zero, Ptx, d(1.9e19)), Ok(-1));
        assert!(cvt(D, IntType::S64, Zero, C, d(9.223_372_036_854_776e18)).is_err());
        assert_eq!(cvt(F, IntType::S32, Zero, Ptx, f(f32::NAN)), Ok(0));
        assert!(cvt(F, IntType::S32, Zero, C, f(3e9)).is_err());
        assert!(cvt(F, IntType::S32, Zero, C, f(f32::NAN)).is_err());
        // C truncates -0.5 to 0, which `unsigned` holds.
        assert_eq!(cvt(F, IntType::U32, Zero, C, f(-0.5)), Ok(0));
        let int_of = BinOp::Cvt {
            from: F,
            mode: FloatMode::default(),
            integral: false,
        };
        assert!(int_of.can_be_undefined(IntType::S32, C));
        assert!(!int_of.can_be_undefined(IntType::S32, Ptx));
    }

    #[test]
    fn min_max_ftz_and_saturation_follow_the_isa() {
        let mode = FloatMode::default();
        let nan = f(f32::NAN);
        // A NaN operand gives the other one.
        assert_eq!(eval(FloatOp::Min, mode, F, nan, f(2.0)), Ok(f(2.0)));
        assert_eq!(eval(FloatOp::Max, mode, F, f(2.0), nan), Ok(f(2.0)));
        // -0.0 is below +0.0.
        assert_eq!(eval(FloatOp::Min, mode, F, f(0.0), f(-0.0)), Ok(f(-0.0)));
        assert_eq!(eval(FloatOp::Max, mode, F, f(-0.0), f(0.0)), Ok(f(0.0)));
        // The smallest subnormal: kept without .ftz, flushed (sign kept) with it; atom.add.f32
        // flushes.
        let tiny = 1;
        assert_eq!(eval(FloatOp::Add, mode, F, tiny, f(0.0)), Ok(tiny));
        let ftz = FloatMode { ftz: true, ..mode };
        assert_eq!(eval(FloatOp::Add, ftz, F, tiny, f(0.0)), Ok(f(0.0)));
        assert_eq!(RmwOp::Add.apply(F, f(0.0), tiny), f(0.0));
        assert_eq!(RmwOp::Add.apply(D, d(0.0), 1), 1);
        let sat = FloatMode { sat: true, ..mode };
        assert_eq!(eval(FloatOp::Add, sat, F, f(0.75), f(0.75)), Ok(f(1.0)));
        assert_eq!(eval(FloatOp::Sub, sat, F, f(0.25), f(0.75)), Ok(f(0.0)));
        // neg and abs touch the sign bit only.
        assert_eq!(eval(FloatOp::Neg, mode, F, f(1.5), 0), Ok(f(-1.5)));
        assert_eq!(eval(FloatOp::Abs, mode, D, d(-2.0), 0), Ok(d(2.0)));
        assert_eq!(eval(FloatOp::Sqrt, mode, D, d(2.0), 0), Ok(d(2f64.sqrt())));
        // Integer-only operations on a float are refused, not done on its bits.
        assert!(BinOp::Shl.eval(F, Arithmetic::C, f(1.0), 1).is_err());
        assert!(eval(
            FloatOp::Add,
            FloatMode {
                round: Rounding::Zero,
                ..mode
            },
            F,
            f(1.0),
            f(1.0)
        )
        .is_err());
    }
}
