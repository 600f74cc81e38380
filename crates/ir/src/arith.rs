//! Values and their arithmetic: the [`IntType`] a value has, what the read-modify-writes
//! ([`RmwOp`]) and the register operations ([`BinOp`]) compute, and which cases have no
//! defined value under C's and PTX's rules ([`Arithmetic`]).

use std::fmt;

use crate::{float, FloatCmp, FloatMode, FloatOp, Operand, Value};

/// The type of a value, as the source states it: the width and signedness of an integer (C
/// `int` is 32-bit signed, `unsigned` 32-bit unsigned, `long long` 64-bit; PTX `.s32`, `.u32`,
/// `.b32` (untyped bits: unsigned here), `.u64`, `.b64` as written), or a floating type
/// (`float`/`.f32`, `double`/`.f64`: `float` set, `signed` clear, the value its bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntType {
    pub bits: u8,
    pub signed: bool,
    /// An IEEE-754 binary float of `bits` bits, held as its bit pattern ([`float`]).
    pub float: bool,
}

impl IntType {
    pub const S8: IntType = IntType::new(8, true);
    pub const U8: IntType = IntType::new(8, false);
    pub const S16: IntType = IntType::new(16, true);
    pub const U16: IntType = IntType::new(16, false);
    pub const S32: IntType = IntType::new(32, true);
    pub const U32: IntType = IntType::new(32, false);
    pub const S64: IntType = IntType::new(64, true);
    pub const U64: IntType = IntType::new(64, false);
    /// `float`, `.f32`: IEEE-754 binary32.
    pub const F32: IntType = IntType::float(32);
    /// `double`, `.f64`: IEEE-754 binary64.
    pub const F64: IntType = IntType::float(64);

    pub const fn new(bits: u8, signed: bool) -> Self {
        IntType {
            bits,
            signed,
            float: false,
        }
    }

    /// The floating type of `bits` bits.
    pub const fn float(bits: u8) -> Self {
        IntType {
            bits,
            signed: false,
            float: true,
        }
    }

    /// The unsigned integer type of the same width: what holds the bits of a float.
    pub const fn bits_type(self) -> Self {
        IntType::new(self.bits, self.signed && !self.float)
    }

    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        u64::from(self.bits) / 8
    }

    /// The canonical form of `v` in this type: its low `bits` bits, sign- or zero-extended.
    /// This is exactly how the hardware wraps: an `int` counter past `INT_MAX` becomes
    /// `INT_MIN`, an `unsigned` one past `2^32 - 1` becomes 0.
    pub fn wrap(self, v: Value) -> Value {
        if self.bits >= 64 {
            return v;
        }
        let shift = 64 - u32::from(self.bits);
        if self.signed {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }

    /// Whether `v` (an exact mathematical result, as an `i128`) fits this type unchanged.
    pub fn holds(self, v: i128) -> bool {
        let (lo, hi) = self.range();
        (lo..=hi).contains(&v)
    }

    /// The smallest and largest value of the type.
    pub fn range(self) -> (i128, i128) {
        let b = u32::from(self.bits);
        if self.signed {
            (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
        } else {
            (0, (1i128 << b) - 1)
        }
    }

    /// The mathematical value of canonical `v` in this type (a `u64` above `i64::MAX` too).
    pub fn exact(self, v: Value) -> i128 {
        if !self.signed && self.bits == 64 {
            i128::from(v as u64)
        } else {
            i128::from(v)
        }
    }

    /// The value as a report prints it (a float as the number its bits encode).
    pub fn display(self, v: Value) -> String {
        if self.float {
            return float::display(self, v);
        }
        self.exact(v).to_string()
    }

    /// The PTX spelling (`s32`, `u64`, `f32`).
    pub fn ptx_name(self) -> String {
        let kind = if self.float {
            'f'
        } else if self.signed {
            's'
        } else {
            'u'
        };
        format!("{kind}{}", self.bits)
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.float {
            return f.write_str(if self.bits == 32 { "float" } else { "double" });
        }
        let name = match (self.bits, self.signed) {
            (8, true) => "signed char",
            (8, false) => "unsigned char",
            (16, true) => "short",
            (16, false) => "unsigned short",
            (32, true) => "int",
            (32, false) => "unsigned int",
            (64, true) => "long long",
            (64, false) => "unsigned long long",
            _ => return write!(f, "{}-bit integer", self.bits),
        };
        f.write_str(name)
    }
}

/// Read-modify-write operations (`atom` / `red`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Add,
    Sub,
    /// PTX `inc`: `old >= v ? 0 : old + 1`.
    Inc,
    /// PTX `dec`: `old == 0 || old > v ? v : old - 1`.
    Dec,
    Exch,
    And,
    Or,
    Xor,
    Min,
    Max,
}

impl RmwOp {
    /// Every operation with its PTX mnemonic (`atom.add`, `red.exch`, ...).
    pub const PTX_NAMES: [(&'static str, RmwOp); 10] = [
        ("add", RmwOp::Add),
        ("sub", RmwOp::Sub),
        ("inc", RmwOp::Inc),
        ("dec", RmwOp::Dec),
        ("exch", RmwOp::Exch),
        ("and", RmwOp::And),
        ("or", RmwOp::Or),
        ("xor", RmwOp::Xor),
        ("min", RmwOp::Min),
        ("max", RmwOp::Max),
    ];

    /// The operation a PTX mnemonic names.
    pub fn from_ptx(name: &str) -> Option<RmwOp> {
        Self::PTX_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// The value an RMW of type `ty` writes, given the value it read and its operand: computed
    /// in `ty` and wrapped to it, as the hardware's atomics do (an atomic add never overflows
    /// into undefined behaviour, in C++ either). `min`/`max` compare as `ty` is signed or not;
    /// `inc`/`dec` compare unsigned (PTX has them for `.u32` only).
    pub fn apply(self, ty: IntType, old: Value, v: Value) -> Value {
        if ty.float {
            return float::rmw(self, ty, old, v);
        }
        let (old, v) = (ty.wrap(old), ty.wrap(v));
        let (xo, xv) = (ty.exact(old), ty.exact(v));
        let out = match self {
            RmwOp::Add => old.wrapping_add(v),
            RmwOp::Sub => old.wrapping_sub(v),
            RmwOp::Inc => {
                if (xo as u128) >= (xv as u128) {
                    0
                } else {
                    old.wrapping_add(1)
                }
            }
            RmwOp::Dec => {
                if old == 0 || (xo as u128) > (xv as u128) {
                    v
                } else {
                    old.wrapping_sub(1)
                }
            }
            RmwOp::Exch => v,
            RmwOp::And => old & v,
            RmwOp::Or => old | v,
            RmwOp::Xor => old ^ v,
            RmwOp::Min => {
                if xo <= xv {
                    old
                } else {
                    v
                }
            }
            RmwOp::Max => {
                if xo >= xv {
                    old
                } else {
                    v
                }
            }
        };
        ty.wrap(out)
    }
}

/// The operation of an RMW instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RmwKind {
    /// Unconditional RMW with one operand.
    Op(RmwOp, Operand),
    /// Compare-and-swap: writes `new` only when the old value equals `expected`. A failed CAS is
    /// a read only.
    Cas { expected: Operand, new: Operand },
}

/// Register arithmetic in an [`IntType`]: the operands are taken as values of the type, the
/// result wraps to it. The comparisons give 1 or 0, comparing signed or unsigned as the type
/// is. Division and remainder truncate toward zero; `Shr` is arithmetic on a signed type and
/// logical on an unsigned one.
///
/// What has no defined value depends on the language ([`Arithmetic`]): division or remainder
/// by zero never has one; in C a shift by a negative amount or by the width or more, and a
/// signed `+ - * /` whose exact result the type cannot hold, are undefined behaviour; PTX
/// clamps shift amounts to the width and wraps signed results. The explorer reports the
/// undefined cases as faults of the test at their line ([`BinOp::eval`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Eq,
    Ne,
    Lt,
    Le,
    /// Bit operations of `a` alone (`b` is unused), over the type's width: the number of set
    /// bits (`popc`, `__popc`), of leading zeros (`clz`, `__clz`), the bits reversed (`brev`,
    /// `__brev`), and the position of the most significant bit that differs from the sign
    /// (`bfind`: all bits set when there is none), or that position counted from the top
    /// (`bfind.shiftamt`).
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShift,
    /// A floating-point operation in `ty` (a float type), with its modifiers ([`float`]).
    Float(FloatOp, FloatMode),
    /// The conversion of `a` from type `from` to `ty` (`b` is unused): between floats and
    /// integers and between float widths, rounded by the mode; `integral` rounds to an
    /// integral value first (PTX `cvt.rzi.f32.f32`). See [`float::convert`].
    Cvt {
        from: IntType,
        mode: FloatMode,
        integral: bool,
    },
    /// No value: the thread faults here (CUDA `__trap()`, PTX `trap`, which abort the kernel
    /// with an error). `a` and `b` are unused.
    Trap,
    /// `a` itself when `0 <= a < b`, else no value: the thread faults here. An index of a
    /// two-dimensional C array checked against its dimension (`t[i][j]` with `j` past a row
    /// of `t` is undefined behaviour, even where the element it would reach lies in `t`).
    Bound,
}

/// Whose rules decide the undefined cases of [`BinOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// C and C++: signed overflow and over-wide shifts are undefined behaviour.
    C,
    /// PTX: signed arithmetic wraps, shift amounts are clamped to the width.
    Ptx,
}

impl BinOp {
    /// `a op b` in type `ty`, or why it has no defined value.
    pub fn eval(
        self,
        ty: IntType,
        rules: Arithmetic,
        a: Value,
        b: Value,
    ) -> Result<Value, &'static str> {
        if let Some(r) = self.eval_float(ty, rules, a, b) {
            return r;
        }
        let (a, b) = (ty.wrap(a), ty.wrap(b));
        let (xa, xb) = (ty.exact(a), ty.exact(b));
        let width = i128::from(ty.bits);
        let checked = |exact: i128| {
            if rules == Arithmetic::C && ty.signed && !ty.holds(exact) {
                Err("signed integer overflow (undefined behaviour in C)")
            } else {
                Ok(ty.wrap(exact as i64))
            }
        };
        match self {
            // Taken by `eval_float` above.
            BinOp::Float(..) | BinOp::Cvt { .. } | BinOp::Trap => {
                Err("a floating-point operation on integers")
            }
            BinOp::Add => checked(xa + xb),
            BinOp::Sub => checked(xa - xb),
            BinOp::Mul => checked(xa.wrapping_mul(xb)),
            BinOp::Bound if (0..xb).contains(&xa) => Ok(a),
            BinOp::Bound => Err("an index outside its array dimension (undefined behaviour in C)"),
            BinOp::Div | BinOp::Rem if xb == 0 => Err(if self == BinOp::Div {
                "division by zero"
            } else {
                "remainder by zero"
            }),
            BinOp::Div => checked(xa / xb),
            BinOp::Rem => checked(xa % xb),
            BinOp::Shl | BinOp::Shr => {
                // PTX reads the shift amount as unsigned and clamps it to the width.
                let amount = match rules {
                    Arithmetic::C if !(0..width).contains(&xb) => {
                        return Err(
                            "shift by a negative amount or by the width or more (undefined behaviour in C)",
                        )
                    }
                    Arithmetic::C => xb,
                    Arithmetic::Ptx => i128::from(b as u64).min(width),
                };
                if self == BinOp::Shr {
                    // Arithmetic on signed values (sign fill), logical on unsigned ones.
                    let shifted = if amount >= width {
                        if xa < 0 {
                            -1
                        } else {
                            0
                        }
                    } else {
                        xa >> amount
                    };
                    return Ok(ty.wrap(shifted as i64));
                }
                if amount >= width {
                    return Ok(0);
                }
                if rules == Arithmetic::C && ty.signed {
                    // C: shifting a negative value, or a 1 into or past the sign bit, is undefined.
                    if xa < 0 || !ty.holds(xa << amount) {
                        return Err("left shift of a signed value past its range (undefined behaviour in C)");
                    }
                }
                Ok(ty.wrap(((xa as u128) << amount) as i64))
            }
            BinOp::And => Ok(ty.wrap(a & b)),
            BinOp::Or => Ok(ty.wrap(a | b)),
            BinOp::Xor => Ok(ty.wrap(a ^ b)),
            BinOp::Eq => Ok(Value::from(xa == xb)),
            BinOp::Ne => Ok(Value::from(xa != xb)),
            BinOp::Lt => Ok(Value::from(xa < xb)),
            BinOp::Le => Ok(Value::from(xa <= xb)),
            BinOp::Popc | BinOp::Clz | BinOp::Brev | BinOp::Bfind | BinOp::BfindShift => {
                let bits = u32::from(ty.bits);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                let u = a as u64 & mask;
                Ok(match self {
                    BinOp::Popc => Value::from(u.count_ones()),
                    BinOp::Clz => Value::from(u.leading_zeros() - (64 - bits)),
                    BinOp::Brev => ty.wrap((u.reverse_bits() >> (64 - bits)) as i64),
                    _ => {
                        // A negative signed value: the most significant 0 bit.
                        let v = if ty.signed && xa < 0 { !u & mask } else { u };
                        match (v != 0, self == BinOp::BfindShift) {
                            (false, _) => ty.wrap(0xffff_ffff),
                            (true, false) => Value::from(63 - v.leading_zeros()),
                            (true, true) => Value::from(bits - 1 - (63 - v.leading_zeros())),
                        }
                    }
                })
            }
        }
    }

    /// The floating-point operations: [`BinOp::Float`], [`BinOp::Cvt`], and the arithmetic
    /// and comparisons of a float type (C's `+ - * /` and `== != < <=` on floats: `!=` is true
    /// when an operand is NaN, the others false). `None` for integer arithmetic.
    fn eval_float(
        self,
        ty: IntType,
        rules: Arithmetic,
        a: Value,
        b: Value,
    ) -> Option<Result<Value, &'static str>> {
        let plain = FloatMode::default();
        let op = match self {
            BinOp::Trap => return Some(Err("a trap (`__trap()`, `trap`): the kernel aborts here")),
            BinOp::Float(op, mode) => return Some(float::eval(op, mode, ty, a, b)),
            BinOp::Cvt {
                from,
                mode,
                integral,
            } => return Some(float::convert(from, ty, mode, integral, rules, a)),
            _ if !ty.float => return None,
            BinOp::Add => FloatOp::Add,
            BinOp::Sub => FloatOp::Sub,
            BinOp::Mul => FloatOp::Mul,
            BinOp::Div => FloatOp::Div,
            BinOp::Eq => FloatOp::Cmp(FloatCmp::Eq),
            BinOp::Ne => FloatOp::Cmp(FloatCmp::Neu),
            BinOp::Lt => FloatOp::Cmp(FloatCmp::Lt),
            BinOp::Le => FloatOp::Cmp(FloatCmp::Le),
            _ => return Some(Err("an integer operation on a floating value")),
        };
        Some(float::eval(op, plain, ty, a, b))
    }

    /// Whether the operation can have no defined value for some operands (so an operand not
    /// known yet must be waited for before it is applied).
    pub fn can_be_undefined(self, ty: IntType, rules: Arithmetic) -> bool {
        if let BinOp::Cvt { from, mode, .. } = self {
            // C: a float converted to an integer type that cannot hold it (unless it
            // saturates, as CUDA's `__float2int_rn` and PTX's `cvt` do).
            return rules == Arithmetic::C && from.float && !ty.float && !mode.sat;
        }
        if self == BinOp::Trap {
            return true;
        }
        if ty.float || matches!(self, BinOp::Float(..)) {
            return false;
        }
        match self {
            BinOp::Div | BinOp::Rem | BinOp::Bound => true,
            BinOp::Add | BinOp::Sub | BinOp::Mul => rules == Arithmetic::C && ty.signed,
            BinOp::Shl | BinOp::Shr => rules == Arithmetic::C,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::*;

    const C: Arithmetic = Arithmetic::C;
    const PTX: Arithmetic = Arithmetic::Ptx;

    #[test]
    fn bit_operations_count_in_the_width() {
        let u = |op: BinOp, ty, a| op.eval(ty, C, a, 0).unwrap();
        assert_eq!(u(BinOp::Popc, IntType::U32, 0xf0f0), 8);
        // -1 as 32 bits has 32 set bits, not 64.
        assert_eq!(u(BinOp::Popc, IntType::S32, -1), 32);
        assert_eq!(u(BinOp::Clz, IntType::U32, 1), 31);
        assert_eq!(u(BinOp::Clz, IntType::U64, 1), 63);
        assert_eq!(u(BinOp::Clz, IntType::U32, 0), 32);
        assert_eq!(u(BinOp::Brev, IntType::U32, 1), 0x8000_0000);
        assert_eq!(u(BinOp::Brev, IntType::U32, 0b110), 0x6000_0000);
        // bfind: the highest set bit, all ones when none; .shiftamt counts it from the top.
        assert_eq!(u(BinOp::Bfind, IntType::U32, 0x50), 6);
        assert_eq!(u(BinOp::Bfind, IntType::U32, 0), 0xffff_ffff);
        assert_eq!(u(BinOp::BfindShift, IntType::U32, 0x50), 25);
        // Signed: for a negative value, the highest 0 bit.
        assert_eq!(u(BinOp::Bfind, IntType::S32, -5), 2);
        // NVRTC's __ffs(x) - 1: bfind.shiftamt of the bits reversed.
        let ffs = |x: Value| {
            u(
                BinOp::BfindShift,
                IntType::U32,
                u(BinOp::Brev, IntType::U32, x),
            )
        };
        assert_eq!(ffs(0b1000), 3);
        assert_eq!(ffs(1), 0);
        assert_eq!(IntType::S32.wrap(ffs(0)), -1);
    }

    /// `Bound`: the index itself inside `0..b`, no value outside (below 0, or `b` and up,
    /// compared in the type: an `unsigned` index is never below 0).
    #[test]
    fn bound_passes_an_index_inside_its_dimension_and_faults_outside() {
        let b = |ty, a, n| BinOp::Bound.eval(ty, C, a, n);
        assert_eq!(b(IntType::S32, 0, 4), Ok(0));
        assert_eq!(b(IntType::S32, 3, 4), Ok(3));
        assert!(b(IntType::S32, 4, 4).is_err());
        assert!(b(IntType::S32, -1, 4).is_err());
        assert!(b(IntType::U32, -1, 4).is_err());
        assert!(BinOp::Bound.can_be_undefined(IntType::S64, C));
    }

    #[test]
    fn shuffle_source_lanes_follow_the_isa() {
        // c = 31: the whole warp is one segment, clamp 31 (down, bfly, idx); up uses c = 0.
        assert_eq!(ShflMode::Down.source_lane(3, 2, 31), (5, true));
        assert_eq!(ShflMode::Down.source_lane(30, 2, 31), (30, false));
        assert_eq!(ShflMode::Up.source_lane(1, 2, 0), (1, false));
        assert_eq!(ShflMode::Up.source_lane(5, 2, 0), (3, true));
        assert_eq!(ShflMode::Bfly.source_lane(5, 1, 31), (4, true));
        assert_eq!(ShflMode::Idx.source_lane(9, 0, 31), (0, true));
        // width 16 (c = (32 - 16) << 8 | 31): each half-warp is a segment.
        let c = (16 << 8) | 31;
        assert_eq!(ShflMode::Idx.source_lane(20, 3, c), (19, true));
        assert_eq!(ShflMode::Down.source_lane(14, 4, c), (14, false));
        assert_eq!(ShflMode::Bfly.source_lane(17, 2, c), (19, true));
        let c_up = 16 << 8;
        assert_eq!(ShflMode::Up.source_lane(17, 2, c_up), (17, false));
        assert_eq!(ShflMode::Up.source_lane(19, 2, c_up), (17, true));
    }

    #[test]
    fn values_wrap_to_their_width() {
        // Two's complement truncation, then sign or zero extension.
        assert_eq!(
            IntType::S32.wrap(i64::from(i32::MAX) + 1),
            i64::from(i32::MIN)
        );
        assert_eq!(IntType::U32.wrap(-1), 4_294_967_295);
        assert_eq!(IntType::U8.wrap(256 + 7), 7);
        assert_eq!(IntType::S8.wrap(0xff), -1);
        assert_eq!(IntType::U64.display(-1), "18446744073709551615");
    }

    #[test]
    fn c_signed_overflow_is_undefined_and_unsigned_wraps() {
        let max = i64::from(i32::MAX);
        assert!(BinOp::Add.eval(IntType::S32, C, max, 1).is_err());
        assert_eq!(
            BinOp::Add.eval(IntType::S32, PTX, max, 1),
            Ok(i64::from(i32::MIN))
        );
        assert_eq!(BinOp::Add.eval(IntType::U32, C, 4_294_967_295, 1), Ok(0));
        // INT_MIN / -1 overflows too.
        assert!(BinOp::Div
            .eval(IntType::S32, C, i64::from(i32::MIN), -1)
            .is_err());
        assert_eq!(BinOp::Sub.eval(IntType::U32, C, 0, 1), Ok(4_294_967_295));
    }

    #[test]
    fn division_truncates_and_by_zero_is_undefined_everywhere() {
        assert_eq!(BinOp::Div.eval(IntType::S32, C, -7, 2), Ok(-3));
        assert_eq!(BinOp::Rem.eval(IntType::S32, C, -7, 2), Ok(-1));
        // Unsigned division sees -7 as 2^32 - 7.
        assert_eq!(BinOp::Div.eval(IntType::U32, C, -7, 2), Ok(2_147_483_644));
        assert!(BinOp::Div.eval(IntType::S32, PTX, 1, 0).is_err());
        assert!(BinOp::Rem.eval(IntType::U64, C, 1, 0).is_err());
    }

    #[test]
    fn shifts_are_undefined_past_the_width_in_c_and_clamped_in_ptx() {
        assert_eq!(BinOp::Shl.eval(IntType::S32, C, 1, 4), Ok(16));
        assert!(BinOp::Shl.eval(IntType::U32, C, 1, 32).is_err());
        assert!(BinOp::Shl.eval(IntType::S32, C, 1, -1).is_err());
        assert!(BinOp::Shl.eval(IntType::S32, C, 1, 31).is_err());
        assert_eq!(BinOp::Shl.eval(IntType::U32, C, 1, 31), Ok(2_147_483_648));
        assert_eq!(BinOp::Shl.eval(IntType::U32, PTX, 1, 40), Ok(0));
        assert_eq!(BinOp::Shr.eval(IntType::S32, PTX, -16, 40), Ok(-1));
        assert_eq!(BinOp::Shr.eval(IntType::S32, C, -16, 2), Ok(-4));
        // Logical on unsigned values.
        assert_eq!(BinOp::Shr.eval(IntType::U32, C, -16, 28), Ok(15));
    }

    #[test]
    fn comparisons_follow_the_signedness() {
        assert_eq!(BinOp::Lt.eval(IntType::S32, C, -1, 0), Ok(1));
        assert_eq!(BinOp::Lt.eval(IntType::U32, C, -1, 0), Ok(0));
        assert_eq!(BinOp::Eq.eval(IntType::U32, C, -1, 4_294_967_295), Ok(1));
    }

    #[test]
    fn atomics_wrap_and_compare_in_their_type() {
        assert_eq!(RmwOp::Add.apply(IntType::U32, 4_294_967_295, 1), 0);
        assert_eq!(
            RmwOp::Add.apply(IntType::S32, i64::from(i32::MAX), 1),
            i64::from(i32::MIN)
        );
        assert_eq!(RmwOp::Max.apply(IntType::U32, -1, 5), 4_294_967_295);
        assert_eq!(RmwOp::Max.apply(IntType::S32, -1, 5), 5);
    }

    fn program(arrays: Vec<Array>, tys: &[IntType]) -> Program {
        Program {
            arch: Arch::C,
            name: "t".into(),
            description: None,
            locations: tys
                .iter()
                .enumerate()
                .map(|(i, &ty)| Location {
                    name: format!("l{i}"),
                    space: MemorySpace::Global,
                    init: 0,
                    ty,
                    span: None,
                })
                .collect(),
            arrays,
            threads: vec![],
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::True,
                span: None,
            },
            extra_observables: vec![],
        }
    }

    #[test]
    fn pointers_name_elements_and_faults_name_the_allocation() {
        // x (one int), a[3] (ints), y (a long long).
        let a = Array {
            name: "a".into(),
            first: LocId(1),
            len: 3,
        };
        let p = program(
            vec![a],
            &[
                IntType::S32,
                IntType::S32,
                IntType::S32,
                IntType::S32,
                IntType::S64,
            ],
        );
        let a0 = p.address_of(LocId(1));
        assert_eq!(p.address_of(LocId(2)), a0 + 4);
        assert_eq!(p.resolve(a0 + 8, IntType::U32), Ok(LocId(3)));
        assert!(p
            .resolve(a0 + 12, IntType::S32)
            .unwrap_err()
            .0
            .contains("out of bounds of `a`"));
        assert!(p
            .resolve(a0 + 2, IntType::S32)
            .unwrap_err()
            .0
            .contains("misaligned"));
        assert!(p
            .resolve(a0, IntType::S64)
            .unwrap_err()
            .0
            .contains("mixed-size"));
        assert_eq!(
            p.resolve(p.address_of(LocId(4)), IntType::S64),
            Ok(LocId(4))
        );
        assert!(p.resolve(0, IntType::S32).unwrap_err().0.contains("null"));
        assert_eq!(p.element(LocId(1), 2), Ok(LocId(3)));
        assert_eq!(p.element(LocId(2), -1), Ok(LocId(1)));
        assert!(p
            .element(LocId(1), 3)
            .unwrap_err()
            .0
            .contains("out of bounds of `a` (3 elements)"));
        assert!(p
            .element(LocId(0), 1)
            .unwrap_err()
            .0
            .contains("holds one value"));
    }
}
