//! Hand-built programs and verdicts, with the full expected output next to each.

use super::*;
use scopecheck_ir::{
    Address, Arch, Condition, DevicePlacement, Instr, InstrKind, LocId, Location, MemorySpace,
    Observable, Operand, Order, Placement, RegId, Scope, Span, Thread, ThreadId,
};
use scopecheck_model::Incomplete;

fn thread(name: &str, cta: u32, registers: &[&str], code: Vec<InstrKind>) -> Thread {
    Thread {
        name: name.into(),
        placement: Placement::Device(DevicePlacement {
            gpu: 0,
            cluster: cta,
            cta,
            warp: None,
        }),
        span: None,
        after: vec![],
        registers: registers.iter().map(|r| r.to_string()).collect(),
        init_regs: vec![],
        code: code
            .into_iter()
            .map(|kind| Instr {
                kind,
                span: Span::default(),
                text: String::new(),
            })
            .collect(),
    }
}

fn loc(name: &str) -> Location {
    Location {
        name: name.into(),
        space: MemorySpace::Global,
        init: 0,
        ty: IntType::S64,
        span: None,
    }
}

fn r0() -> Observable {
    Observable::Reg(ThreadId(1), RegId(0))
}

fn r1() -> Observable {
    Observable::Reg(ThreadId(1), RegId(1))
}

fn eq(o: Observable, v: i64) -> Prop {
    Prop::Cmp(Term::Observable(o), CmpOp::Eq, Term::Const(v))
}

fn and(a: Prop, b: Prop) -> Prop {
    Prop::And(Box::new(a), Box::new(b))
}

fn or(a: Prop, b: Prop) -> Prop {
    Prop::Or(Box::new(a), Box::new(b))
}

/// `MP+rel.cta+acq.gpu` from docs/litmus-ptx.md.
fn mp(quantifier: Quantifier, prop: Prop) -> Program {
    let (data, flag) = (LocId(0), LocId(1));
    let at = Address::loc;
    Program {
        arch: Arch::Ptx,
        name: "MP+rel.cta+acq.gpu".into(),
        description: None,
        locations: vec![loc("data"), loc("flag")],
        arrays: vec![],
        threads: vec![
            thread(
                "P0",
                0,
                &[],
                vec![
                    InstrKind::Store {
                        addr: at(data),
                        ty: IntType::S64,
                        value: Operand::Imm(7),
                        order: Order::Weak,
                        scope: Scope::Gpu,
                    },
                    InstrKind::Store {
                        addr: at(flag),
                        ty: IntType::S64,
                        value: Operand::Imm(1),
                        order: Order::Release,
                        scope: Scope::Cta,
                    },
                ],
            ),
            thread(
                "P1",
                1,
                &["r0", "r1"],
                vec![
                    InstrKind::Load {
                        dst: RegId(0),
                        addr: at(flag),
                        ty: IntType::S64,
                        order: Order::Acquire,
                        scope: Scope::Gpu,
                    },
                    InstrKind::Load {
                        dst: RegId(1),
                        addr: at(data),
                        ty: IntType::S64,
                        order: Order::Weak,
                        scope: Scope::Gpu,
                    },
                ],
            ),
        ],
        condition: Condition {
            quantifier,
            prop,
            span: None,
        },
        extra_observables: vec![],
    }
}

fn mp_exists() -> Program {
    mp(Quantifier::Exists, and(eq(r0(), 1), eq(r1(), 0)))
}

fn state(program: &Program, r0v: i64, r1v: i64) -> FinalState {
    let values = vec![(r0(), r0v), (r1(), r1v)];
    let satisfies = program.condition.prop.eval(&|o| {
        values
            .iter()
            .find(|(x, _)| *x == o)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    });
    FinalState { values, satisfies }
}

fn mp_verdict(program: &Program) -> Verdict {
    Verdict {
        model: "ptx",
        quantifier: program.condition.quantifier,
        states: vec![
            state(program, 0, 0),
            state(program, 0, 7),
            state(program, 1, 0),
            state(program, 1, 7),
        ],
        outcome: Outcome::Ok,
        observation: Observation::Sometimes,
        positive: 1,
        negative: 3,
        executions: 4,
        rejected: vec![("causality", 2)],
        incomplete: None,
        reduced_loops: 0,
        hangs: vec![],
        races: vec![],
        platform: "ideal".into(),
        platform_notes: vec![],
        lints: vec![],
        witness: vec![],
        state_witnesses: Default::default(),
        witness_graph: None,
        race_graph: None,
        symmetry: vec![],
    }
}

#[test]
fn text_has_herd7_shape() {
    let p = mp_exists();
    let got = text(&p, &mp_verdict(&p), Duration::from_millis(3));
    let want = "\
Test MP+rel.cta+acq.gpu Allowed
States 4
P1:r0=0; P1:r1=0;
P1:r0=0; P1:r1=7;
P1:r0=1; P1:r1=0;
P1:r0=1; P1:r1=7;
Ok
Witnesses
Positive: 1 Negative: 3
Condition exists (P1:r0=1 /\\ P1:r1=0)
Observation MP+rel.cta+acq.gpu Sometimes 1 3
Time MP+rel.cta+acq.gpu 0.00
Executions 4
Liveness MP+rel.cta+acq.gpu terminates
";
    assert_eq!(got, want);
}

#[test]
fn incomplete_verdict_says_why_after_the_result() {
    let p = mp(Quantifier::NotExists, and(eq(r0(), 1), eq(r1(), 0)));
    let mut v = mp_verdict(&p);
    v.states.truncate(2);
    v.outcome = Outcome::Unknown;
    v.observation = Observation::Never;
    v.positive = 0;
    v.negative = 2;
    v.executions = 2;
    v.incomplete = Some(Incomplete {
        reason: "loop unrolled 2 times".into(),
    });
    let got = text(&p, &v, Duration::from_millis(1250));
    let want = "\
Test MP+rel.cta+acq.gpu Required
States 2
P1:r0=0; P1:r1=0;
P1:r0=0; P1:r1=7;
Unknown
Incomplete: loop unrolled 2 times
Witnesses
Positive: 0 Negative: 2
Condition ~exists (P1:r0=1 /\\ P1:r1=0)
Observation MP+rel.cta+acq.gpu Never 0 2
Time MP+rel.cta+acq.gpu 1.25
Executions 2
Liveness MP+rel.cta+acq.gpu unknown (the exploration is incomplete)
";
    assert_eq!(got, want);
}

#[test]
fn forall_is_required_and_no_is_printed() {
    let p = mp(Quantifier::Forall, or(eq(r0(), 0), eq(r1(), 7)));
    let mut v = mp_verdict(&p);
    v.outcome = Outcome::No;
    v.positive = 3;
    v.negative = 1;
    let got = text(&p, &v, Duration::ZERO);
    assert!(
        got.starts_with("Test MP+rel.cta+acq.gpu Required\n"),
        "{got}"
    );
    assert!(got.contains("\nNo\nWitnesses\n"), "{got}");
    assert!(
        got.contains("\nCondition forall (P1:r0=0 \\/ P1:r1=7)\n"),
        "{got}"
    );
}

#[test]
fn condition_text_keeps_structure_with_few_parentheses() {
    let x = Observable::Loc(LocId(0));
    let ne = Prop::Cmp(Term::Observable(x), CmpOp::Ne, Term::Const(2));
    let cases = [
        (Quantifier::Exists, eq(x, 2), "exists (data=2)"),
        (Quantifier::NotExists, Prop::True, "~exists (true)"),
        (Quantifier::Forall, Prop::False, "forall (false)"),
        (Quantifier::Exists, ne.clone(), "exists (data!=2)"),
        (
            Quantifier::Exists,
            and(or(eq(r0(), 1), eq(r1(), 1)), eq(x, 2)),
            "exists ((P1:r0=1 \\/ P1:r1=1) /\\ data=2)",
        ),
        (
            Quantifier::Exists,
            or(and(eq(r0(), 1), eq(r1(), 1)), Prop::Not(Box::new(ne))),
            "exists (P1:r0=1 /\\ P1:r1=1 \\/ ~(data!=2))",
        ),
        (
            Quantifier::NotExists,
            Prop::Cmp(Term::Observable(r0()), CmpOp::Eq, Term::Observable(r1())),
            "~exists (P1:r0=P1:r1)",
        ),
        (
            Quantifier::Exists,
            and(eq(r0(), -1), and(eq(r1(), 1), eq(x, 1))),
            "exists (P1:r0=-1 /\\ P1:r1=1 /\\ data=1)",
        ),
    ];
    for (q, prop, want) in cases {
        let p = mp(q, prop);
        assert_eq!(condition_text(&p), want);
    }
}

#[test]
fn json_has_every_field_in_order() {
    let mut p = mp_exists();
    p.extra_observables = vec![Observable::Loc(LocId(1))];
    let mut v = mp_verdict(&p);
    v.states = vec![FinalState {
        values: vec![(r0(), 1), (r1(), 0), (Observable::Loc(LocId(1)), 1)],
        satisfies: true,
    }];
    let got = json("tests/mp.litmus", &p, &v, Duration::from_micros(1500));
    let want = serde_json::json!({
        "name": "MP+rel.cta+acq.gpu",
        "file": "tests/mp.litmus",
        "model": "ptx",
        "condition": "exists",
        "result": "Ok",
        "observation": "Sometimes",
        "states": [{ "values": { "P1:r0": 1, "P1:r1": 0, "flag": 1 }, "satisfies": true }],
        "positive": 1,
        "negative": 3,
        "executions": 4,
        "counts_at_least": false,
        "complete": true,
        "vacuous": false,
        "incomplete_reason": null,
        "time_ms": 1.5,
        "terminates": true,
        "reduced_loops": 0,
        "symmetry_classes": [],
        "hangs": [],
        "lints": [],
        "platform": "ideal",
        "platform_notes": [],
        "witness": [],
        "racy": false,
        "races": [],
        "rejected": { "causality": 2 },
    });
    assert_eq!(got, want);
    // Key order is part of the format: the observables' order, then the documented order.
    assert_eq!(
        got.to_string(),
        r#"{"name":"MP+rel.cta+acq.gpu","file":"tests/mp.litmus","model":"ptx","condition":"exists","result":"Ok","observation":"Sometimes","states":[{"values":{"P1:r0":1,"P1:r1":0,"flag":1},"satisfies":true}],"positive":1,"negative":3,"executions":4,"counts_at_least":false,"complete":true,"vacuous":false,"incomplete_reason":null,"time_ms":1.5,"terminates":true,"reduced_loops":0,"symmetry_classes":[],"hangs":[],"lints":[],"platform":"ideal","platform_notes":[],"witness":[],"racy":false,"races":[],"rejected":{"causality":2}}"#
    );
}

#[test]
fn json_of_incomplete_not_exists() {
    let p = mp(Quantifier::NotExists, eq(r0(), 1));
    let mut v = mp_verdict(&p);
    v.outcome = Outcome::Unknown;
    v.incomplete = Some(Incomplete {
        reason: "execution bound reached".into(),
    });
    let got = json("a.litmus", &p, &v, Duration::ZERO);
    assert_eq!(got["condition"], "not_exists");
    assert_eq!(got["result"], "Unknown");
    assert_eq!(got["complete"], false);
    assert_eq!(got["incomplete_reason"], "execution bound reached");
    assert_eq!(got["time_ms"], 0.0);
}

#[test]
fn json_error_line() {
    let got = json_error("bad.litmus", 3, 14, "unknown instruction `ld.foo`");
    assert_eq!(
        got.to_string(),
        r#"{"file":"bad.litmus","error":"unknown instruction `ld.foo`","line":3,"column":14}"#
    );
}

#[test]
fn hangs_are_reported_in_text_and_json() {
    let p = mp_exists();
    let mut v = mp_verdict(&p);
    v.reduced_loops = 1;
    v.hangs = vec![scopecheck_model::HangReport {
        spinning: vec![scopecheck_model::Spin {
            thread: scopecheck_ir::ThreadId(1),
            line: 5,
            text: "beq r0, 0, L".into(),
            span: Default::default(),
            waits: vec![(LocId(1), 0)],
        }],
        at_barrier: vec![],
        starved: vec![scopecheck_ir::ThreadId(0)],
        progress: "obe".into(),
        reason: "block 0 of P0 need not be resident".into(),
    }];
    let got = text(&p, &v, Duration::from_millis(1));
    assert!(
        got.ends_with(
            "Liveness MP+rel.cta+acq.gpu may hang (1 await loop explored by its exiting iteration)\n\
             Hang P1 spins forever at line 5 (`beq r0, 0, L`) reading flag=0\n  \
             under obe: block 0 of P0 need not be resident\n"
        ),
        "{got}"
    );
    let j = json("t.litmus", &p, &v, Duration::from_millis(1));
    assert_eq!(j["terminates"], false);
    assert_eq!(j["hangs"][0]["thread"], "P1");
    assert_eq!(j["hangs"][0]["line"], 5);
    assert_eq!(j["hangs"][0]["waits"]["flag"], 0);
    assert_eq!(j["hangs"][0]["starved"][0], "P0");
    assert_eq!(j["hangs"][0]["progress"], "obe");
}
