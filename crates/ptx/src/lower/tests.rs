//! Tests of the lowering: modules built by hand, lowered, and the generated code run by a
//! tiny evaluator.

use scopecheck_ir::{
    Address, Arch, Arithmetic, BarrierKind, BarrierRedOp, BinOp, BranchCond, Condition, FenceOrder,
    FenceSpaces, IntType, Location, MemorySpace, Operand, Order, Prop, Quantifier, RmwKind, RmwOp,
    Scope, ShflMode, Value, VoteOp, WarpOp,
};

use super::*;
use crate::ast::{Operand as Op, Param, RegDecl};

// ---- building modules by hand ----

fn span(line: u32) -> Span {
    Span {
        offset: line as usize * 100,
        len: 10,
        line,
        column: 5,
    }
}
pub(super) fn r(n: &str) -> Op {
    Op::Reg(n.into())
}
pub(super) fn imm(v: i64) -> Op {
    Op::Int(v)
}
fn sym(n: &str) -> Op {
    Op::Symbol(n.into())
}
fn at(base: Op, offset: i64) -> Op {
    Op::Address {
        base: Box::new(base),
        offset,
    }
}
fn vector(v: &[&str]) -> Op {
    Op::Vector(v.iter().map(|n| r(n)).collect())
}
fn list(v: &[&str]) -> Op {
    Op::List(v.iter().map(|n| sym(n)).collect())
}

/// `mnemonic operands;` at line `line`.
pub(super) fn i(line: u32, mnemonic: &str, operands: Vec<Op>) -> Statement {
    let mut parts = mnemonic.split('.');
    Statement::Instruction(Instruction {
        inlined_at: Vec::new(),
        guard: None,
        opcode: parts.next().unwrap().into(),
        modifiers: parts.map(Into::into).collect(),
        operands,
        span: span(line),
        loc: Some((1, line, 5)),
    })
}
fn guarded(p: &str, negated: bool, s: Statement) -> Statement {
    match s {
        Statement::Instruction(mut ins) => {
            ins.guard = Some((p.into(), negated));
            Statement::Instruction(ins)
        }
        s => s,
    }
}
fn label(n: &str) -> Statement {
    Statement::Label(n.into(), span(0))
}
fn param(name: &str, ty: ScalarType) -> Param {
    Param {
        ty,
        name: name.into(),
        ptr_space: None,
        align: None,
        array: None,
        span: span(1),
    }
}
/// The registers every test kernel declares.
fn regs() -> Vec<RegDecl> {
    [
        (ScalarType::Pred, "%p"),
        (ScalarType::B(16), "%rs"),
        (ScalarType::B(32), "%r"),
        (ScalarType::B(64), "%rd"),
    ]
    .into_iter()
    .map(|(ty, prefix)| RegDecl {
        ty,
        names: vec![(prefix.into(), Some(20))],
        span: span(2),
    })
    .collect()
}
pub(super) fn body(statements: Vec<Statement>) -> Body {
    Body {
        regs: regs(),
        locals: vec![],
        statements,
    }
}
fn block(locals: Vec<Variable>, statements: Vec<Statement>) -> Statement {
    Statement::Block(Body {
        regs: vec![],
        locals,
        statements,
    })
}
fn function(
    entry: bool,
    name: &str,
    returns: Vec<Param>,
    params: Vec<Param>,
    b: Option<Body>,
) -> Function {
    Function {
        entry,
        name: name.into(),
        returns,
        params,
        directives: vec![],
        body: b,
        span: span(1),
    }
}
fn kernel(name: &str, params: Vec<Param>, statements: Vec<Statement>) -> Function {
    function(true, name, vec![], params, Some(body(statements)))
}
fn var(
    space: StateSpace,
    ty: ScalarType,
    name: &str,
    dims: Vec<Option<u64>>,
    init: Vec<i64>,
) -> Variable {
    Variable {
        space,
        external: false,
        linkage: None,
        align: Some(4),
        ty,
        name: name.into(),
        dims,
        init,
        init_symbols: vec![],
        span: span(3),
    }
}
fn module(variables: Vec<Variable>, functions: Vec<Function>) -> Module {
    Module {
        version: Some("8.5".into()),
        target: Some("sm_90".into()),
        address_size: Some(64),
        files: vec![],
        variables,
        functions,
    }
}
fn program() -> Program {
    Program {
        arch: Arch::Ptx,
        name: "t".into(),
        description: None,
        locations: vec![],
        arrays: vec![],
        threads: vec![],
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::True,
            span: None,
        },
        extra_observables: vec![],
    }
}
fn launch(kernel: &str, grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
    Launch {
        kernel: kernel.into(),
        grid,
        block,
        cluster: [1, 1, 1],
        gpu: 0,
        args,
        first_thread: 0,
        shared_bytes: 0,
    }
}
/// The program of a one-thread launch of a kernel `k` without parameters.
pub(super) fn one_thread(variables: Vec<Variable>, statements: Vec<Statement>) -> Program {
    let m = module(variables, vec![kernel("k", vec![], statements)]);
    let mut p = program();
    lower(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]), &mut p).expect("lowers");
    p
}
fn lower_err(m: &Module, l: &Launch) -> LowerError {
    lower(m, l, &mut program()).expect_err("does not lower")
}
pub(super) fn one_thread_err(statements: Vec<Statement>) -> LowerError {
    let m = module(vec![], vec![kernel("k", vec![], statements)]);
    lower_err(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]))
}

// ---- a tiny evaluator of the generated code ----

/// Runs thread `t` alone: registers, branches, loads of what it stored or else of the
/// initial values; returns the final registers and the stores made, in order (location
/// and value).
pub(super) fn run(p: &Program, t: &Thread) -> (Vec<Value>, Vec<(LocId, Value)>) {
    let mut regs = vec![0; t.registers.len()];
    let mut stores: Vec<(LocId, Value)> = vec![];
    let mut pc = 0;
    let mut steps = 0;
    let loc = |regs: &[Value], a: &Address, ty: IntType| match *a {
        Address::Ptr { reg, disp } => p
            .resolve(regs[reg.0 as usize].wrapping_add(disp), ty)
            .unwrap_or_else(|f| panic!("{}", f.0)),
        Address::Loc { loc, index: None } => loc,
        Address::Loc { .. } => panic!("an indexed address"),
    };
    while pc < t.code.len() {
        steps += 1;
        assert!(steps < 10_000, "runs too long");
        let val = |regs: &[Value], o: &Operand| match *o {
            Operand::Reg(r) => regs[r.0 as usize],
            Operand::Imm(v) => v,
        };
        match &t.code[pc].kind {
            InstrKind::Mov { dst, src } => regs[dst.0 as usize] = val(&regs, src),
            InstrKind::Binary { dst, op, ty, a, b } => {
                regs[dst.0 as usize] = op
                    .eval(*ty, Arithmetic::Ptx, val(&regs, a), val(&regs, b))
                    .expect("defined")
            }
            InstrKind::Fma {
                dst,
                ty,
                mode,
                a,
                b,
                c,
            } => {
                let [a, b, c] = [a, b, c].map(|o| val(&regs, o));
                regs[dst.0 as usize] =
                    scopecheck_ir::float::fma(*ty, *mode, a, b, c).expect("defined")
            }
            InstrKind::Branch { cond, target } => {
                let taken = match cond {
                    BranchCond::Always => true,
                    BranchCond::Eq(a, b) => val(&regs, a) == val(&regs, b),
                    BranchCond::Ne(a, b) => val(&regs, a) != val(&regs, b),
                };
                if taken {
                    pc = *target;
                    continue;
                }
            }
            InstrKind::Load { dst, addr, ty, .. } => {
                let l = loc(&regs, addr, *ty);
                let last = stores.iter().rev().find(|s| s.0 == l);
                regs[dst.0 as usize] = ty.wrap(last.map_or(p.location(l).init, |s| s.1));
            }
            InstrKind::Store {
                addr, value, ty, ..
            } => {
                let l = loc(&regs, addr, *ty);
                stores.push((l, ty.wrap(val(&regs, value))));
            }
            _ => {}
        }
        pc += 1;
    }
    (regs, stores)
}

/// The final value of register `name` of thread `t`, as `ty` reads it.
pub(super) fn value(p: &Program, t: usize, name: &str, ty: IntType) -> i128 {
    let th = &p.threads[t];
    let (regs, _) = run(p, th);
    let reg = th.reg(name).unwrap_or_else(|| panic!("no register {name}"));
    ty.exact(ty.wrap(regs[reg.0 as usize]))
}

fn kinds(p: &Program, t: usize) -> Vec<&InstrKind> {
    p.threads[t].code.iter().map(|i| &i.kind).collect()
}

fn reg_of(p: &Program, t: usize, name: &str) -> RegId {
    p.threads[t].reg(name).unwrap()
}

// ---- tests ----

#[test]
fn a_store_through_a_pointer_parameter_goes_where_the_pointer_says() {
    let m = module(
        vec![],
        vec![kernel(
            "_Z5storePj",
            vec![param("_Z5storePj_param_0", ScalarType::U(64))],
            vec![
                i(
                    10,
                    "ld.param.u64",
                    vec![r("%rd1"), at(sym("_Z5storePj_param_0"), 0)],
                ),
                i(11, "cvta.to.global.u64", vec![r("%rd2"), r("%rd1")]),
                i(12, "mov.u32", vec![r("%r1"), r("%tid.x")]),
                i(13, "mul.wide.u32", vec![r("%rd3"), r("%r1"), imm(4)]),
                i(14, "add.s64", vec![r("%rd4"), r("%rd2"), r("%rd3")]),
                i(15, "st.global.u32", vec![at(r("%rd4"), 4), imm(7)]),
            ],
        )],
    );
    let mut p = program();
    // The harness's array `a` of four unsigned ints.
    for k in 0..4 {
        p.locations.push(Location {
            name: format!("a[{k}]"),
            space: MemorySpace::Global,
            init: 0,
            ty: IntType::U32,
            span: None,
        });
    }
    p.arrays.push(scopecheck_ir::Array {
        name: "a".into(),
        first: LocId(0),
        len: 4,
    });
    let l = launch("store", [1, 1, 1], [2, 1, 1], vec![Arg::Pointer(LocId(0))]);
    let ids = lower(&m, &l, &mut p).unwrap();
    assert_eq!(ids, vec![ThreadId(0), ThreadId(1)]);
    assert_eq!(p.threads[1].name, "P1");
    let k = kinds(&p, 1);
    assert_eq!(
        k[0],
        &InstrKind::Mov {
            dst: reg_of(&p, 1, "%rd1"),
            src: Operand::Imm(p.address_of(LocId(0))),
        }
    );
    let store = p.threads[1].code.last().unwrap();
    assert_eq!(
        store.kind,
        InstrKind::Store {
            addr: Address::Ptr {
                reg: reg_of(&p, 1, "%rd4"),
                disp: 4
            },
            value: Operand::Imm(7),
            ty: IntType::U32,
            order: Order::Weak,
            scope: Scope::Sys,
        }
    );
    assert_eq!(store.text, "st.global.u32 [%rd4+4], 7");
    assert_eq!(store.span, span(15));
    // Thread 1 writes a[1 + 1]; thread 0 a[1].
    assert_eq!(run(&p, &p.threads[1]).1, vec![(LocId(2), 7)]);
    assert_eq!(run(&p, &p.threads[0]).1, vec![(LocId(1), 7)]);
}

/// A struct passed by value (`.param .b8 p[16]`): `ld.param` at each field's offset reads
/// that field of the argument; a read where the struct has no field is an error.
#[test]
fn struct_parameters_are_read_at_their_fields_offsets() {
    let mut s = param("_Z1k1S_param_0", ScalarType::B(8));
    s.array = Some(16);
    let body = |off: i64| {
        vec![
            i(
                1,
                "ld.param.u64",
                vec![r("%rd1"), at(sym("_Z1k1S_param_0"), 0)],
            ),
            i(
                2,
                "ld.param.u32",
                vec![r("%r1"), at(sym("_Z1k1S_param_0"), off)],
            ),
            i(3, "cvta.to.global.u64", vec![r("%rd2"), r("%rd1")]),
            i(4, "st.global.u32", vec![at(r("%rd2"), 0), r("%r1")]),
        ]
    };
    let m = module(vec![], vec![kernel("_Z1k1S", vec![s.clone()], body(8))]);
    let mut p = program();
    p.locations.push(Location {
        name: "out".into(),
        space: MemorySpace::Global,
        init: 0,
        ty: IntType::U32,
        span: None,
    });
    p.arrays.push(scopecheck_ir::Array {
        name: "out".into(),
        first: LocId(0),
        len: 1,
    });
    // struct S { unsigned *out; unsigned n; } with n = 5: out at byte 0, n at byte 8.
    let arg = Arg::Struct(vec![(0, Arg::Pointer(LocId(0))), (8, Arg::Value(5))]);
    let l = launch("k", [1; 3], [1; 3], vec![arg]);
    lower(&m, &l, &mut p).unwrap();
    let k = kinds(&p, 0);
    assert_eq!(
        k[0],
        &InstrKind::Mov {
            dst: reg_of(&p, 0, "%rd1"),
            src: Operand::Imm(p.address_of(LocId(0))),
        }
    );
    assert_eq!(
        k[1],
        &InstrKind::Mov {
            dst: reg_of(&p, 0, "%r1"),
            src: Operand::Imm(5),
        }
    );
    // Byte 4 is padding: no field there (the pointer field is a number here: lower_err's
    // program has no locations).
    let m = module(vec![], vec![kernel("_Z1k1S", vec![s], body(4))]);
    let arg = Arg::Struct(vec![(0, Arg::Value(0)), (8, Arg::Value(5))]);
    let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![arg]));
    assert!(e.message.contains("has no field"), "{}", e.message);
}

#[test]
fn bfi_inserts_a_field_as_nvrtc_packs_two_halves() {
    // NVRTC's `((uint64_t)hi << 32) | lo`: bfi.b64 d, hi, lo, 32, 32; and an 8-bit field.
    let p = one_thread(
        vec![],
        vec![
            i(1, "mov.u64", vec![r("%rd1"), imm(0x1234_5678)]),
            i(2, "mov.u64", vec![r("%rd2"), imm(0xdead_beef)]),
            i(
                3,
                "bfi.b64",
                vec![r("%rd3"), r("%rd2"), r("%rd1"), imm(32), imm(32)],
            ),
            i(4, "mov.u32", vec![r("%r1"), imm(0xffff_ffff)]),
            i(
                5,
                "bfi.b32",
                vec![r("%r2"), imm(0x5a), r("%r1"), imm(8), imm(8)],
            ),
            // A field past the msb leaves b as it is.
            i(
                6,
                "bfi.b32",
                vec![r("%r3"), imm(1), r("%r1"), imm(40), imm(4)],
            ),
        ],
    );
    let v = |name: &str, ty: IntType| value(&p, 0, name, ty);
    assert_eq!(v("%rd3", IntType::U64), 0xdead_beef_1234_5678);
    assert_eq!(v("%r2", IntType::U32), 0xffff_5aff);
    assert_eq!(v("%r3", IntType::U32), 0xffff_ffff);
}

#[test]
fn register_arithmetic_extends_and_compares_as_its_types_say() {
    let p = one_thread(
        vec![],
        vec![
            i(1, "mov.u32", vec![r("%r1"), imm(-1)]),
            i(2, "mov.u32", vec![r("%r2"), imm(4)]),
            i(3, "mul.wide.s32", vec![r("%rd1"), r("%r1"), r("%r2")]),
            i(4, "mul.wide.u32", vec![r("%rd2"), r("%r1"), r("%r2")]),
            i(5, "cvt.u64.u32", vec![r("%rd3"), r("%r1")]),
            i(6, "cvt.s64.s32", vec![r("%rd4"), r("%r1")]),
            i(7, "setp.lt.u32", vec![r("%p1"), r("%r1"), imm(1)]),
            i(8, "setp.lt.s32", vec![r("%p2"), r("%r1"), imm(1)]),
            i(9, "selp.b32", vec![r("%r3"), imm(10), imm(20), r("%p2")]),
            i(10, "selp.b32", vec![r("%r4"), imm(10), imm(20), r("%p1")]),
            i(11, "min.s32", vec![r("%r5"), r("%r1"), r("%r2")]),
            i(12, "min.u32", vec![r("%r6"), r("%r1"), r("%r2")]),
            i(13, "max.s32", vec![r("%r7"), r("%r1"), r("%r2")]),
            i(14, "abs.s32", vec![r("%r8"), r("%r1")]),
            i(15, "neg.s32", vec![r("%r9"), r("%r2")]),
            i(16, "not.b32", vec![r("%r10"), r("%r2")]),
            i(17, "shr.s32", vec![r("%r11"), r("%r1"), imm(4)]),
            i(18, "shr.u32", vec![r("%r12"), r("%r1"), imm(28)]),
            i(19, "mul.hi.u32", vec![r("%r13"), r("%r1"), r("%r2")]),
            i(20, "mul.hi.s32", vec![r("%r14"), r("%r1"), r("%r2")]),
            i(
                21,
                "mad.lo.s32",
                vec![r("%r15"), r("%r2"), r("%r2"), imm(1)],
            ),
            i(22, "mov.b64", vec![r("%rd5"), vector(&["%r2", "%r1"])]),
            i(23, "mov.b64", vec![vector(&["%r16", "%r17"]), r("%rd5")]),
            i(
                24,
                "setp.ne.and.s32",
                vec![r("%p3"), r("%r2"), imm(0), r("%p1")],
            ),
            i(
                25,
                "setp.gt.s32",
                vec![r("%p4"), r("%p5"), r("%r2"), r("%r1")],
            ),
            i(26, "cvt.u32.u64", vec![r("%r18"), r("%rd2")]),
            i(27, "mov.u32", vec![r("%r19"), imm(17)]),
            i(28, "mov.u16", vec![r("%rs1"), imm(1)]),
            i(29, "shl.b16", vec![r("%rs2"), r("%rs1"), r("%r19")]),
            i(
                30,
                "mad.wide.s32",
                vec![r("%rd6"), r("%r1"), r("%r2"), r("%rd3")],
            ),
            i(31, "cvt.s32.s16", vec![r("%r0"), r("%rs1")]),
            i(
                32,
                "and.pred",
                vec![r("%p6"), r("%p2"), Op::Not(Box::new(r("%p1")))],
            ),
            i(33, "div.s32", vec![r("%r0"), imm(-7), r("%r2")]),
            i(34, "rem.u32", vec![r("%r16"), r("%r1"), imm(10)]),
        ],
    );
    let v = |name: &str, ty: IntType| value(&p, 0, name, ty);
    let (s32, u32_, s64, u64_) = (IntType::S32, IntType::U32, IntType::S64, IntType::U64);
    assert_eq!(v("%rd1", s64), -4, "mul.wide.s32 -1 * 4");
    assert_eq!(v("%rd2", u64_), 0x3_ffff_fffc, "mul.wide.u32");
    assert_eq!(v("%rd3", u64_), 4_294_967_295, "cvt.u64.u32 zero-extends");
    assert_eq!(v("%rd4", s64), -1, "cvt.s64.s32 sign-extends");
    assert_eq!(v("%p1", u32_), 0, "0xffffffff < 1 unsigned");
    assert_eq!(v("%p2", u32_), 1, "-1 < 1 signed");
    assert_eq!(v("%r3", u32_), 10);
    assert_eq!(v("%r4", u32_), 20);
    assert_eq!(v("%r5", s32), -1);
    assert_eq!(v("%r6", u32_), 4);
    assert_eq!(v("%r7", s32), 4);
    assert_eq!(v("%r8", s32), 1);
    assert_eq!(v("%r9", s32), -4);
    assert_eq!(v("%r10", u32_), 0xffff_fffb);
    assert_eq!(v("%r11", s32), -1);
    assert_eq!(v("%r12", u32_), 15);
    assert_eq!(v("%r13", u32_), 3, "high half of 0xffffffff * 4");
    assert_eq!(v("%r14", s32), -1, "high half of -4");
    assert_eq!(v("%r15", s32), 17);
    assert_eq!(
        v("%rd5", u64_),
        0xffff_ffff_0000_0004,
        "packing: first is low"
    );
    assert_eq!(v("%r17", u32_), 0xffff_ffff);
    assert_eq!(v("%p3", u32_), 0, "4 != 0 and false");
    assert_eq!((v("%p4", u32_), v("%p5", u32_)), (1, 0), "p|q");
    assert_eq!(v("%r18", u32_), 0xffff_fffc, "cvt.u32.u64 truncates");
    assert_eq!(v("%rs2", IntType::U16), 0, "a 16-bit shift by 17 clamps");
    assert_eq!(v("%rd6", s64), 4_294_967_295 - 4, "mad.wide.s32");
    assert_eq!(v("%p6", u32_), 1);
    assert_eq!(v("%r0", s32), -1, "-7 / 4 truncates");
    assert_eq!(v("%r16", u32_), 5, "4294967295 % 10");
}

#[test]
fn special_registers_are_the_threads_constants() {
    let stmts = vec![
        i(1, "mov.u32", vec![r("%r1"), r("%tid.x")]),
        i(2, "mov.u32", vec![r("%r2"), r("%tid.y")]),
        i(3, "mov.u32", vec![r("%r3"), r("%ctaid.x")]),
        i(4, "mov.u32", vec![r("%r4"), r("%laneid")]),
        i(5, "mov.u32", vec![r("%r5"), r("%ntid.y")]),
        i(6, "mov.u32", vec![r("%r6"), r("%nctaid.x")]),
        i(7, "mov.u32", vec![r("%r7"), r("%cluster_ctarank")]),
        i(8, "mov.u32", vec![r("%r8"), r("%clusterid.x")]),
        i(9, "mov.u32", vec![r("%r9"), r("%warpid")]),
    ];
    let m = module(vec![], vec![kernel("k", vec![], stmts)]);
    let mut p = program();
    let mut l = launch("k", [3, 1, 1], [4, 2, 1], vec![]);
    l.first_thread = 10;
    let ids = lower(&m, &l, &mut p).unwrap();
    assert_eq!(ids.len(), 24);
    // Thread 5 of block 2: block-major numbering, x fastest.
    let t = 2 * 8 + 5;
    assert_eq!(p.threads[t].name, "P31");
    let consts: Vec<Value> = kinds(&p, t)
        .iter()
        .map(|k| match k {
            InstrKind::Mov {
                src: Operand::Imm(v),
                ..
            } => *v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(consts, vec![1, 1, 2, 5, 2, 3, 0, 2, 0]);
    assert_eq!(
        p.threads[t].placement,
        Placement::Device(DevicePlacement {
            gpu: 0,
            cluster: 2,
            cta: 2,
            warp: Some(0)
        })
    );
    // Clusters of 3 CTAs: one cluster, CTA 2 of it.
    let mut p = program();
    l.cluster = [3, 1, 1];
    lower(&m, &l, &mut p).unwrap();
    let Placement::Device(d) = p.threads[t].placement else {
        panic!()
    };
    assert_eq!((d.cluster, d.cta), (0, 2));
    assert!(matches!(
        kinds(&p, t)[6],
        InstrKind::Mov {
            src: Operand::Imm(2),
            ..
        }
    ));
    l.cluster = [2, 1, 1];
    assert!(lower_err(&m, &l)
        .message
        .contains("whole number of clusters"));
}

#[test]
fn shared_variables_are_one_per_cta_and_globals_one_per_program() {
    let vars = vec![
        var(
            StateSpace::Shared,
            ScalarType::U(32),
            "flag",
            vec![],
            vec![],
        ),
        var(
            StateSpace::Global,
            ScalarType::U(32),
            "counter",
            vec![],
            vec![],
        ),
        var(
            StateSpace::Global,
            ScalarType::B(8),
            "table",
            vec![Some(16)],
            vec![1, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 4, 0, 0, 0],
        ),
        // Not used by the kernel: no locations.
        var(
            StateSpace::Global,
            ScalarType::U(32),
            "unused",
            vec![],
            vec![],
        ),
    ];
    let stmts = vec![
        i(1, "st.shared.u32", vec![at(sym("flag"), 0), imm(1)]),
        i(2, "ld.global.u32", vec![r("%r1"), at(sym("table"), 8)]),
        i(
            3,
            "atom.global.add.u32",
            vec![r("%r2"), at(sym("counter"), 0), imm(1)],
        ),
        i(4, "mov.u64", vec![r("%rd1"), sym("table")]),
        i(5, "ld.global.s32", vec![r("%r3"), at(r("%rd1"), 12)]),
    ];
    let m = module(vars, vec![kernel("k", vec![], stmts)]);
    let mut p = program();
    // The harness made `counter` already.
    p.locations.push(Location {
        name: "counter".into(),
        space: MemorySpace::Global,
        init: 5,
        ty: IntType::U32,
        span: None,
    });
    lower(&m, &launch("k", [2, 1, 1], [1, 1, 1], vec![]), &mut p).unwrap();
    let names: Vec<&str> = p.locations.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "counter",
            "table[0]",
            "table[1]",
            "table[2]",
            "table[3]",
            "flag@cta0",
            "flag@cta1"
        ]
    );
    let table: Vec<(IntType, Value)> = p.locations[1..5].iter().map(|l| (l.ty, l.init)).collect();
    assert_eq!(
        table,
        [
            (IntType::U32, 1),
            (IntType::U32, 2),
            (IntType::U32, 0xffff_ffff),
            (IntType::U32, 4)
        ]
    );
    assert_eq!(p.locations[5].space, MemorySpace::Shared);
    assert_eq!(p.arrays.len(), 1);
    for t in 0..2 {
        let k = kinds(&p, t);
        assert_eq!(k[0].address(), Some(&Address::loc(LocId(5 + t as u32))));
        assert_eq!(k[1].address(), Some(&Address::loc(LocId(3))));
        assert!(matches!(
            k[2],
            InstrKind::Rmw {
                addr,
                kind: RmwKind::Op(RmwOp::Add, Operand::Imm(1)),
                order: Order::Relaxed,
                scope: Scope::Gpu,
                ..
            } if *addr == Address::loc(LocId(0))
        ));
    }
    assert_eq!(value(&p, 1, "%r3", IntType::S32), 4);
    assert_eq!(value(&p, 1, "%r1", IntType::S32), -1);
}

#[test]
fn vector_accesses_are_consecutive_elements_in_order() {
    let p = one_thread(
        vec![],
        vec![
            i(
                1,
                "ld.global.v4.u32",
                vec![vector(&["%r1", "%r2", "%r3", "%r4"]), at(r("%rd1"), 16)],
            ),
            i(
                2,
                "st.global.v2.u64",
                vec![at(r("%rd1"), 0), vector(&["%rd2", "%rd3"])],
            ),
        ],
    );
    let k = kinds(&p, 0);
    assert_eq!(k.len(), 6);
    for (n, disp) in [16, 20, 24, 28].into_iter().enumerate() {
        let InstrKind::Load { dst, addr, ty, .. } = k[n] else {
            panic!("{:?}", k[n])
        };
        assert_eq!(*dst, reg_of(&p, 0, &format!("%r{}", n + 1)));
        assert_eq!(*ty, IntType::U32);
        assert!(matches!(addr, Address::Ptr { disp: d, .. } if *d == disp));
    }
    assert!(matches!(
        k[5],
        InstrKind::Store {
            addr: Address::Ptr { disp: 8, .. },
            ty: IntType::U64,
            ..
        }
    ));
}

#[test]
fn guards_branch_around_their_instruction() {
    let p = one_thread(
        vec![],
        vec![
            i(1, "setp.eq.u32", vec![r("%p1"), r("%tid.x"), imm(0)]),
            guarded(
                "%p1",
                false,
                i(2, "st.global.u32", vec![at(r("%rd1"), 0), imm(1)]),
            ),
            guarded("%p1", true, i(3, "bra.uni", vec![sym("$L__BB0_2")])),
            i(4, "mov.u32", vec![r("%r1"), imm(5)]),
            guarded("%p2", false, i(5, "ret", vec![])),
            label("$L__BB0_2"),
            i(6, "mov.u32", vec![r("%r2"), imm(6)]),
        ],
    );
    let p1 = Operand::Reg(reg_of(&p, 0, "%p1"));
    let p2 = Operand::Reg(reg_of(&p, 0, "%p2"));
    let k = kinds(&p, 0);
    assert_eq!(
        k[1],
        &InstrKind::Branch {
            cond: BranchCond::Eq(p1, Operand::Imm(0)),
            target: 3
        }
    );
    assert!(matches!(k[2], InstrKind::Store { .. }));
    assert_eq!(
        k[3],
        &InstrKind::Branch {
            cond: BranchCond::Eq(p1, Operand::Imm(0)),
            target: 6
        }
    );
    assert_eq!(
        k[5],
        &InstrKind::Branch {
            cond: BranchCond::Ne(p2, Operand::Imm(0)),
            target: 7
        }
    );
    assert_eq!(k.len(), 7);
    assert_eq!(p.threads[0].code[3].text, "@!%p1 bra.uni $L__BB0_2");
}

#[test]
fn a_call_is_inlined_with_its_parameters_and_result() {
    let add = function(
        false,
        "_Z3addii",
        vec![param("func_retval0", ScalarType::B(32))],
        vec![
            param("_Z3addii_param_0", ScalarType::B(32)),
            param("_Z3addii_param_1", ScalarType::B(32)),
        ],
        Some(body(vec![
            i(
                20,
                "ld.param.u32",
                vec![r("%r1"), at(sym("_Z3addii_param_0"), 0)],
            ),
            i(
                21,
                "ld.param.u32",
                vec![r("%r2"), at(sym("_Z3addii_param_1"), 0)],
            ),
            i(22, "add.s32", vec![r("%r3"), r("%r1"), r("%r2")]),
            i(
                23,
                "st.param.b32",
                vec![at(sym("func_retval0"), 0), r("%r3")],
            ),
            i(24, "ret", vec![]),
            i(25, "mov.u32", vec![r("%r3"), imm(99)]),
        ])),
    );
    let printf = function(
        false,
        "vprintf",
        vec![param("r", ScalarType::B(32))],
        vec![param("a", ScalarType::B(64)), param("b", ScalarType::B(64))],
        None,
    );
    let slot = |n: &str| var(StateSpace::Param, ScalarType::B(32), n, vec![], vec![]);
    let k = kernel(
        "k",
        vec![],
        vec![
            i(1, "mov.u32", vec![r("%r1"), imm(40)]),
            block(
                vec![slot("param0"), slot("param1"), slot("retval0")],
                vec![
                    i(2, "st.param.b32", vec![at(sym("param0"), 0), r("%r1")]),
                    i(3, "st.param.b32", vec![at(sym("param1"), 0), imm(2)]),
                    i(
                        4,
                        "call.uni",
                        vec![
                            list(&["retval0"]),
                            sym("_Z3addii"),
                            list(&["param0", "param1"]),
                        ],
                    ),
                    i(5, "ld.param.b32", vec![r("%r2"), at(sym("retval0"), 0)]),
                ],
            ),
            i(6, "add.s32", vec![r("%r3"), r("%r2"), imm(1)]),
            block(
                vec![slot("param0"), slot("param1"), slot("retval0")],
                vec![i(
                    7,
                    "call.uni",
                    vec![
                        list(&["retval0"]),
                        sym("vprintf"),
                        list(&["param0", "param1"]),
                    ],
                )],
            ),
        ],
    );
    let m = module(vec![], vec![add.clone(), printf, k]);
    let mut p = program();
    lower(&m, &launch("k", [1, 1, 1], [1, 1, 1], vec![]), &mut p).unwrap();
    assert_eq!(value(&p, 0, "%r2", IntType::S32), 42);
    assert_eq!(value(&p, 0, "%r3", IntType::S32), 43);
    // The callee's registers are its own.
    assert!(p.threads[0].reg("%r3@_Z3addii#1").is_some());
    // Another extern function is refused, by name; recursion too.
    let malloc = function(false, "malloc", vec![], vec![], None);
    let k = kernel(
        "k",
        vec![],
        vec![i(9, "call.uni", vec![sym("malloc"), Op::List(vec![])])],
    );
    let e = lower_err(
        &module(vec![], vec![malloc, k]),
        &launch("k", [1; 3], [1; 3], vec![]),
    );
    assert!(e.message.contains("`malloc`"), "{}", e.message);
    assert_eq!(e.span, Some(span(9)));
    let rec = function(
        false,
        "f",
        vec![],
        vec![],
        Some(body(vec![i(30, "call", vec![sym("f")])])),
    );
    let k = kernel("k", vec![], vec![i(9, "call", vec![sym("f")])]);
    let e = lower_err(
        &module(vec![], vec![rec, k]),
        &launch("k", [1; 3], [1; 3], vec![]),
    );
    assert!(e.message.contains("recursive"), "{}", e.message);
    assert_eq!(e.span, Some(span(30)));
}

#[test]
fn fences_and_barriers_map_as_the_litmus_dialect_does() {
    let p = one_thread(
        vec![],
        vec![
            i(1, "fence.sc.gpu", vec![]),
            i(2, "fence.acq_rel.cta", vec![]),
            i(3, "membar.gl", vec![]),
            i(4, "bar.sync", vec![imm(0)]),
            i(5, "barrier.sync.aligned", vec![imm(1), imm(64)]),
            i(6, "bar.arrive", vec![imm(2), imm(32)]),
            i(7, "bar.red.popc.u32", vec![r("%r1"), imm(3), r("%p1")]),
            i(13, "nanosleep.u32", vec![imm(100)]),
        ],
    );
    let k = kinds(&p, 0);
    let fence = |order, scope| InstrKind::Fence {
        order,
        scope,
        spaces: FenceSpaces::ALL,
    };
    assert_eq!(k[0], &fence(FenceOrder::Sc, Scope::Gpu));
    assert_eq!(k[1], &fence(FenceOrder::AcqRel, Scope::Cta));
    assert_eq!(k[2], &fence(FenceOrder::Sc, Scope::Gpu));
    assert_eq!(
        k[3],
        &InstrKind::Barrier {
            id: Operand::Imm(0),
            kind: BarrierKind::Sync,
            count: None,
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
    assert_eq!(
        k[4],
        &InstrKind::Barrier {
            id: Operand::Imm(1),
            kind: BarrierKind::Sync,
            count: Some(Operand::Imm(64)),
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
    assert_eq!(
        k[5],
        &InstrKind::Barrier {
            id: Operand::Imm(2),
            kind: BarrierKind::Arrive,
            count: Some(Operand::Imm(32)),
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    );
    assert!(matches!(
        k[6],
        InstrKind::Barrier {
            id: Operand::Imm(3),
            kind: BarrierKind::Red {
                op: BarrierRedOp::Popc,
                ..
            },
            count: None,
            spaces: scopecheck_ir::FenceSpaces::ALL,
        }
    ));
    assert_eq!(k.len(), 7, "nanosleep emits nothing");
}

#[test]
fn accesses_and_atomics_map_as_the_litmus_dialect_does() {
    let p = one_thread(
        vec![],
        vec![
            i(
                8,
                "ld.acquire.gpu.global.u32",
                vec![r("%r2"), at(r("%rd1"), 0)],
            ),
            i(
                9,
                "st.release.sys.global.u32",
                vec![at(r("%rd1"), 0), r("%r2")],
            ),
            i(
                10,
                "ld.volatile.global.L1::no_allocate.u32",
                vec![r("%r2"), at(r("%rd1"), 0)],
            ),
            i(
                11,
                "atom.acq_rel.gpu.global.cas.b32",
                vec![r("%r3"), at(r("%rd1"), 0), imm(0), imm(1)],
            ),
            i(
                12,
                "red.release.cta.shared.add.u64",
                vec![at(r("%rd1"), 8), imm(1)],
            ),
            i(
                14,
                "ld.global.nc.v2.u32",
                vec![vector(&["%r4", "%r5"]), at(r("%rd1"), 0)],
            ),
            i(
                15,
                "st.global.L2::cache_hint.u32",
                vec![at(r("%rd1"), 0), imm(1), r("%rd9")],
            ),
        ],
    );
    let k = kinds(&p, 0);
    assert!(matches!(
        k[0],
        InstrKind::Load {
            order: Order::Acquire,
            scope: Scope::Gpu,
            ..
        }
    ));
    assert!(matches!(
        k[1],
        InstrKind::Store {
            order: Order::Release,
            scope: Scope::Sys,
            ..
        }
    ));
    assert!(matches!(
        k[2],
        InstrKind::Load {
            order: Order::Relaxed,
            scope: Scope::Sys,
            ..
        }
    ));
    assert!(matches!(
        k[3],
        InstrKind::Rmw {
            dst: Some(_),
            kind: RmwKind::Cas {
                expected: Operand::Imm(0),
                new: Operand::Imm(1)
            },
            ty: IntType::U32,
            order: Order::AcqRel,
            scope: Scope::Gpu,
            ..
        }
    ));
    assert!(matches!(
        k[4],
        InstrKind::Rmw {
            dst: None,
            ty: IntType::U64,
            order: Order::Release,
            scope: Scope::Cta,
            ..
        }
    ));
    // The `.nc` vector load: two weak loads (k[5], k[6]); the cache-hint operand of the store
    // is dropped.
    assert!(matches!(
        k[5],
        InstrKind::Load {
            order: Order::Weak,
            ..
        }
    ));
    assert!(matches!(
        k[7],
        InstrKind::Store {
            value: Operand::Imm(1),
            ..
        }
    ));
    assert_eq!(k.len(), 8);
}

#[test]
fn addresses_in_32_bit_registers_keep_their_allocation() {
    // `mov.u32 %r1, smem` and 32-bit arithmetic on it, as nvcc writes shared indexing.
    let p = {
        let m = module(
            vec![
                var(
                    StateSpace::Shared,
                    ScalarType::B(8),
                    "smem",
                    vec![Some(64)],
                    vec![],
                ),
                var(
                    StateSpace::Shared,
                    ScalarType::U(32),
                    "other",
                    vec![Some(2)],
                    vec![],
                ),
            ],
            vec![kernel(
                "k",
                vec![],
                vec![
                    i(1, "mov.u32", vec![r("%r1"), sym("smem")]),
                    i(2, "mov.u32", vec![r("%r2"), r("%tid.x")]),
                    i(3, "shl.b32", vec![r("%r3"), r("%r2"), imm(2)]),
                    i(4, "add.s32", vec![r("%r4"), r("%r1"), r("%r3")]),
                    i(5, "st.shared.u32", vec![at(r("%r4"), 4), r("%r2")]),
                    i(6, "cvt.u64.u32", vec![r("%rd1"), r("%r4")]),
                    i(7, "cvta.shared.u64", vec![r("%rd2"), r("%rd1")]),
                    i(8, "st.u32", vec![at(r("%rd2"), 0), imm(9)]),
                    // `p ? other : smem`, then back to a 32-bit shared address.
                    i(9, "mov.u32", vec![r("%r5"), sym("other")]),
                    i(10, "setp.eq.u32", vec![r("%p1"), r("%r2"), imm(2)]),
                    i(11, "selp.b32", vec![r("%r6"), r("%r5"), r("%r1"), r("%p1")]),
                    i(12, "cvta.shared.u64", vec![r("%rd3"), r("%r6")]),
                    i(13, "cvta.to.shared.u32", vec![r("%r7"), r("%rd3")]),
                    i(14, "add.s32", vec![r("%r8"), r("%r7"), imm(4)]),
                    i(15, "st.shared.u32", vec![at(r("%r8"), 0), imm(1)]),
                ],
            )],
        );
        let mut p = program();
        lower(&m, &launch("k", [1, 1, 1], [3, 1, 1], vec![]), &mut p).unwrap();
        p
    };
    // The byte array takes the width of its accesses: 16 words.
    assert_eq!(p.arrays[0].len, 16);
    assert_eq!(p.arrays[0].name, "smem@cta0");
    let other = p.arrays[1].first;
    assert_eq!(p.arrays[1].name, "other@cta0");
    assert_eq!(
        run(&p, &p.threads[2]).1,
        vec![(LocId(3), 2), (LocId(2), 9), (LocId(other.0 + 1), 1)]
    );
    assert_eq!(run(&p, &p.threads[1]).1[2], (LocId(1), 1));
}

#[test]
fn pointer_globals_and_local_depots() {
    let x = var(StateSpace::Global, ScalarType::U(32), "x", vec![], vec![3]);
    let mut px = var(StateSpace::Global, ScalarType::U(64), "px", vec![], vec![0]);
    px.init_symbols = vec![crate::ast::SymbolInit {
        index: 0,
        symbol: "x".into(),
        offset: 0,
        generic: true,
    }];
    let depot = var(
        StateSpace::Local,
        ScalarType::B(8),
        "__local_depot0",
        vec![Some(8)],
        vec![],
    );
    let mut k = kernel(
        "k",
        vec![],
        vec![
            i(1, "ld.global.u64", vec![r("%rd1"), at(sym("px"), 0)]),
            i(2, "ld.u32", vec![r("%r1"), at(r("%rd1"), 0)]),
            i(3, "mov.u64", vec![r("%rd2"), sym("__local_depot0")]),
            i(4, "cvta.local.u64", vec![r("%rd3"), r("%rd2")]),
            i(5, "st.u32", vec![at(r("%rd3"), 4), r("%r1")]),
            // A wider access to the private depot: split into its 32-bit words.
            i(6, "mov.u64", vec![r("%rd4"), imm(0x5_0000_0007)]),
            i(7, "st.local.u64", vec![at(r("%rd2"), 0), r("%rd4")]),
            i(8, "ld.local.u64", vec![r("%rd5"), at(r("%rd2"), 0)]),
        ],
    );
    k.body.as_mut().unwrap().locals.push(depot);
    let m = module(vec![px, x], vec![k]);
    let mut p = program();
    lower(&m, &launch("k", [1; 3], [2, 1, 1], vec![]), &mut p).unwrap();
    // `px` needs `x`, though the kernel names only `px`.
    assert_eq!(p.locations[0].name, "px");
    assert_eq!(p.locations[0].init, p.address_of(LocId(1)));
    assert_eq!(value(&p, 0, "%r1", IntType::U32), 3);
    // One depot per thread, of the width it is accessed with.
    assert_eq!(p.arrays[1].name, "__local_depot0@P1");
    assert_eq!(p.arrays[1].len, 2);
    let depot1 = p.arrays[1].first;
    let words = |k: u32| LocId(depot1.0 + k);
    assert_eq!(
        run(&p, &p.threads[1]).1,
        vec![(words(1), 3), (words(0), 7), (words(1), 5)]
    );
    assert_eq!(value(&p, 1, "%rd5", IntType::U64), 0x5_0000_0007);
}

#[test]
fn kernels_are_found_by_mangled_or_base_name() {
    let m = module(
        vec![],
        vec![
            kernel("_Z8producerPi", vec![], vec![]),
            kernel("_ZN2ns8consumerEv", vec![], vec![]),
            kernel("_ZN3ns28consumerEv", vec![], vec![]),
        ],
    );
    for name in ["_Z8producerPi", "producer", "ns::consumer", "ns2::consumer"] {
        assert!(
            lower(&m, &launch(name, [1; 3], [1; 3], vec![]), &mut program()).is_ok(),
            "{name}"
        );
    }
    let e = lower_err(&m, &launch("consumer", [1; 3], [1; 3], vec![]));
    assert!(e.message.contains("several kernels"), "{}", e.message);
    let e = lower_err(&m, &launch("nope", [1; 3], [1; 3], vec![]));
    assert!(e.message.contains("no kernel `nope`"), "{}", e.message);
    let e = lower_err(&m, &launch("producer", [1; 3], [1; 3], vec![Arg::Value(1)]));
    assert!(e.message.contains("takes 0 parameter"), "{}", e.message);
}

#[test]
fn warp_collectives_lower_to_the_ir_collective() {
    let p = one_thread(
        vec![],
        vec![
            i(1, "mov.u32", vec![r("%r1"), imm(5)]),
            i(
                2,
                "shfl.sync.down.b32",
                vec![r("%r2"), r("%p1"), r("%r1"), imm(1), imm(31), imm(-1)],
            ),
            i(
                3,
                "shfl.sync.bfly.b32",
                vec![r("%r3"), r("%r1"), imm(2), imm(4127), imm(3)],
            ),
            i(
                4,
                "vote.sync.ballot.b32",
                vec![r("%r4"), Op::Not(Box::new(r("%p1"))), imm(-1)],
            ),
            i(5, "vote.sync.any.pred", vec![r("%p2"), r("%p1"), imm(-1)]),
            i(6, "bar.warp.sync", vec![imm(-1)]),
            i(7, "popc.b32", vec![r("%r5"), r("%r4")]),
            i(8, "activemask.b32", vec![r("%r6")]),
        ],
    );
    let t = &p.threads[0];
    let warp: Vec<&InstrKind> = t
        .code
        .iter()
        .map(|i| &i.kind)
        .filter(|k| matches!(k, InstrKind::Warp { .. }))
        .collect();
    let reg = |n: &str| Operand::Reg(reg_of(&p, 0, n));
    assert!(matches!(
        warp[0],
        InstrKind::Warp {
            op: WarpOp::Shfl {
                mode: ShflMode::Down,
                lane: Operand::Imm(1),
                clamp: Operand::Imm(31)
            },
            mask: Operand::Imm(0xffff_ffff),
            dst: Some(_),
            pred_dst: Some(_),
            ..
        }
    ));
    // Without a predicate destination; the mask as written.
    assert!(matches!(
        warp[1],
        InstrKind::Warp {
            op: WarpOp::Shfl {
                mode: ShflMode::Bfly,
                ..
            },
            mask: Operand::Imm(3),
            pred_dst: None,
            ..
        }
    ));
    assert!(matches!(
        warp[2],
        InstrKind::Warp {
            op: WarpOp::Vote(VoteOp::Ballot),
            ..
        }
    ));
    assert!(
        matches!(warp[3], InstrKind::Warp { op: WarpOp::Vote(VoteOp::Any), value, .. } if *value == reg("%p1"))
    );
    assert!(matches!(
        warp[4],
        InstrKind::Warp {
            op: WarpOp::Sync,
            ..
        }
    ));
    assert_eq!(warp.len(), 6);
    assert!(matches!(
        warp[5],
        InstrKind::Warp {
            op: WarpOp::ActiveMask,
            dst: Some(d),
            ..
        } if Operand::Reg(*d) == reg("%r6")
    ));
    assert!(t.code.iter().any(|i| matches!(
        i.kind,
        InstrKind::Binary {
            op: BinOp::Popc,
            ..
        }
    )));
}

#[test]
fn unsupported_instructions_are_errors_at_their_span() {
    let e = one_thread_err(vec![
        i(1, "mov.u32", vec![r("%r1"), imm(0)]),
        i(7, "prmt.b32", vec![r("%r1"), r("%r1"), r("%r1"), r("%r1")]),
    ]);
    assert!(e.message.contains("`prmt`"), "{}", e.message);
    assert_eq!((e.span, e.loc), (Some(span(7)), Some((1, 7, 5))));
    let e = one_thread_err(vec![i(
        8,
        "redux.sync.add.u32",
        vec![r("%r1"), r("%r1"), imm(-1)],
    )]);
    assert_eq!(e.message, "warp-collective `redux` is not supported yet");
    assert_eq!(e.span, Some(span(8)));
    let e = one_thread_err(vec![i(8, "activemask.u32", vec![r("%r1")])]);
    assert!(e.message.contains("`activemask.b32`"), "{}", e.message);
    // The pre-Volta forms without `.sync` name no lanes.
    let e = one_thread_err(vec![i(8, "vote.ballot.b32", vec![r("%r1"), imm(1)])]);
    assert!(e.message.contains("without `.sync`"), "{}", e.message);
    let e = one_thread_err(vec![i(9, "fence.proxy.async", vec![])]);
    assert!(e.message.contains("proxy"), "{}", e.message);
    let e = one_thread_err(vec![i(9, "add.f16", vec![r("%r1"), r("%r1"), r("%r1")])]);
    assert!(e.message.contains("half-precision"), "{}", e.message);
    let e = one_thread_err(vec![i(
        9,
        "ld.relaxed.global.u32",
        vec![r("%r1"), at(r("%rd1"), 0)],
    )]);
    assert!(e.message.contains("needs a scope"), "{}", e.message);
    let e = one_thread_err(vec![i(
        9,
        "mul.hi.u64",
        vec![r("%rd1"), r("%rd1"), r("%rd1")],
    )]);
    assert!(e.message.contains("not supported yet"), "{}", e.message);
    let e = one_thread_err(vec![i(9, "mov.u32", vec![r("%r1"), r("%clock")])]);
    assert!(e.message.contains("%clock"), "{}", e.message);
    let e = one_thread_err(vec![i(9, "mov.u32", vec![r("%r99"), imm(1)])]);
    assert!(e.message.contains("not declared"), "{}", e.message);
    let e = one_thread_err(vec![guarded("%r1", false, i(9, "exit", vec![]))]);
    assert!(e.message.contains("not a `.pred`"), "{}", e.message);
    // The program is left as it was.
    let m = module(
        vec![var(
            StateSpace::Global,
            ScalarType::U(32),
            "x",
            vec![],
            vec![],
        )],
        vec![kernel(
            "k",
            vec![],
            vec![
                i(1, "st.global.u32", vec![at(sym("x"), 0), imm(1)]),
                i(2, "prmt.b32", vec![r("%r1"), r("%r1"), r("%r1"), r("%r1")]),
            ],
        )],
    );
    let mut p = program();
    assert!(lower(&m, &launch("k", [1; 3], [1; 3], vec![]), &mut p).is_err());
    assert_eq!(p, program());
    // A struct passed by value: at the parameter.
    let mut s = param("_Z1k1S_param_0", ScalarType::B(8));
    s.array = Some(16);
    s.span = span(42);
    let m = module(vec![], vec![kernel("_Z1k1S", vec![s], vec![])]);
    let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![Arg::Value(0)]));
    assert!(
        e.message.contains("struct passed by value") && e.message.contains("not one"),
        "{}",
        e.message
    );
    assert_eq!(e.span, Some(span(42)));
    // A byte array accessed at two widths.
    let m = module(
        vec![var(
            StateSpace::Global,
            ScalarType::B(8),
            "buf",
            vec![Some(8)],
            vec![],
        )],
        vec![kernel(
            "k",
            vec![],
            vec![
                i(1, "ld.global.u32", vec![r("%r1"), at(sym("buf"), 0)]),
                i(2, "ld.global.u64", vec![r("%rd1"), at(sym("buf"), 0)]),
            ],
        )],
    );
    let e = lower_err(&m, &launch("k", [1; 3], [1; 3], vec![]));
    assert!(
        e.message
            .contains("mixed-size access to `buf` is not supported"),
        "{}",
        e.message
    );
    assert_eq!(e.span, Some(span(2)));
}
