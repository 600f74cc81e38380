//! Hostile sizes and depths in the C dialect (issue 31): long operator chains are read and
//! lowered by loops, so they end in a program; nesting beyond the limits ends in an error at
//! the line and column where the limit is crossed, never in a stack overflow.

use super::tests::{at, kinds, reg};
use crate::tests::err_at;
use crate::{parse, MAX_ARRAY_LENGTH, MAX_C_CHAIN, MAX_C_NESTING, MAX_LOCATIONS};
use scopecheck_ir::*;

/// One device thread with `params` and `body`; the body starts on line 3.
fn one(params: &str, body: &str) -> String {
    format!("C t\nP0 ({params}) {{\n{body}\n}}\nexists true\n")
}

fn ok(src: &str) -> Program {
    match parse(src) {
        Ok(p) => p,
        Err(e) => panic!("{}:{}: {}", e.line(), e.column(), e.message),
    }
}

/// The value the thread's only store writes.
fn stored(p: &Program) -> Operand {
    let stores: Vec<Operand> = kinds(p, 0)
        .into_iter()
        .filter_map(|k| match k {
            InstrKind::Store { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    stores[0]
}

#[test]
fn a_sum_of_ten_thousand_constants_folds() {
    // `1 + 1 + ...` nests to the left 9,999 deep; it folds to 10000 as C evaluates it.
    let sum = vec!["1"; 10_000].join(" + ");
    let p = ok(&one("int* x", &format!("*x = {sum};")));
    assert_eq!(stored(&p), Operand::Imm(10_000));
}

#[test]
fn the_audits_985_term_sum_of_registers_lowers_to_984_additions() {
    // Of registers nothing folds: one addition per `+`, left to right, the last into `s`.
    let sum = vec!["r"; 985].join(" + ");
    let p = ok(&one(
        "int* x",
        &format!("int r = *x;\nint s = {sum};\n*x = s;"),
    ));
    let adds = kinds(&p, 0)
        .into_iter()
        .filter(|k| matches!(k, InstrKind::Binary { op: BinOp::Add, .. }))
        .count();
    assert_eq!(adds, 984);
    assert_eq!(stored(&p), Operand::Reg(reg(&p, 0, "s")));
}

#[test]
fn a_chain_at_the_limit_is_read_and_one_past_it_is_an_error() {
    // MAX_C_CHAIN operators are MAX_C_CHAIN + 1 terms; 0s keep the constant small.
    let terms = |n: usize| vec!["0"; n].join("+");
    let p = ok(&one("int* x", &format!("*x = {};", terms(MAX_C_CHAIN + 1))));
    assert_eq!(stored(&p), Operand::Imm(0));
    // `*x = ` is 5 columns, each term 2 more: the operator past the limit is at column
    // 6 + 2 * MAX_C_CHAIN + 1.
    let col = (6 + 2 * MAX_C_CHAIN + 1) as u32;
    err_at(
        &one("int* x", &format!("*x = {};", terms(MAX_C_CHAIN + 2))),
        3,
        col,
        "expression too long (more than 100000 operators in a row)",
    );
}

#[test]
fn mixed_precedence_chains_keep_cs_grouping() {
    // 1 - 2 * 3 + 8 >> 1 is ((1 - (2 * 3)) + 8) >> 1 = 3 >> 1 = 1, and 2 * 3 + 1 == 7 is
    // (6 + 1) == 7, true; the loop must not change that grouping.
    let p = ok(&one("int* x", "*x = 1 - 2 * 3 + 8 >> 1;"));
    assert_eq!(stored(&p), Operand::Imm(1));
    let p = ok(&one("int* x", "*x = 2 * 3 + 1 == 7;"));
    assert_eq!(stored(&p), Operand::Imm(1));
    // 100 - 1 - 1 - ... is left-associative: 100 - 99 = 1.
    let chain = format!("100{}", " - 1".repeat(99));
    let p = ok(&one("int* x", &format!("*x = {chain};")));
    assert_eq!(stored(&p), Operand::Imm(1));
}

#[test]
fn ten_thousand_pointer_offsets_and_fence_flags_are_walked_by_loops() {
    // `x + 0 + 0 ...` is `x` itself; a `|` chain of flags names global memory.
    let ptr = format!("x{}", " + 0".repeat(10_000));
    let p = ok(&one(
        "atomic_int* x",
        &format!("atomic_store_explicit({ptr}, 1, memory_order_relaxed);"),
    ));
    assert!(matches!(kinds(&p, 0)[0], InstrKind::Store { addr, .. } if addr == at(0)));
    let flags = vec!["CLK_GLOBAL_MEM_FENCE"; 10_000].join(" | ");
    let p = ok(&one("", &format!("barrier({flags});")));
    assert!(matches!(
        kinds(&p, 0)[0],
        InstrKind::Barrier {
            spaces: FenceSpaces {
                global: true,
                shared: false
            },
            ..
        }
    ));
}

#[test]
fn a_long_logical_chain_is_an_error_at_the_operator_past_the_limit() {
    // `&&` and `||` lower into branches recursively: each counts as a level. The statement
    // and its expression take 2 levels, and the right operand of the k-th `&&` is read at
    // 2 + k levels, its own two levels (operand, unary) on top: k + 3 < MAX_C_NESTING, so
    // MAX_C_NESTING - 4 operators fit and the operand after the next one is refused.
    let chain = |n: usize| vec!["r"; n + 1].join("&&");
    let fits = MAX_C_NESTING - 4;
    ok(&one(
        "int* x",
        &format!("int r = 1;\n*x = {};", chain(fits)),
    ));
    ok(&one(
        "int* x",
        &format!("int r = 1;\n*x = {};", chain(fits).replace("&&", "||")),
    ));
    // `*x = ` is 5 columns and each `r&&` 3: operand k starts at column 6 + 3k.
    let col = (6 + 3 * (fits + 1)) as u32;
    err_at(
        &one("int* x", &format!("int r = 1;\n*x = {};", chain(10_000))),
        4,
        col,
        "nested too deeply (more than 100 levels",
    );
}

#[test]
fn the_audits_nesting_reproducers_are_errors_with_positions() {
    // 1,473 and 10,000 nested parentheses: the declaration, its expression and that
    // expression's operand take 3 levels, and each `(` two more (the parenthesised
    // expression and its operand): inside the 49th `(` the operand is at level 100, so the
    // 50th `(`, at column 9 + 49 after `int r = `, is refused.
    for n in [1_473, 10_000] {
        let src = one("", &format!("int r = {}1{};", "(".repeat(n), ")".repeat(n)));
        err_at(
            &src,
            3,
            (9 + MAX_C_NESTING / 2 - 1) as u32,
            "nested too deeply",
        );
    }
    // 641 and 10,000 nested `if`s, one a line: the k-th, on line 3 + k, is at level k and
    // its condition's operand two levels deeper, so the 99th `if`'s condition is refused.
    for n in [641, 10_000] {
        let body = format!("int r = 1;\n{}*x = 1;", "if (r)\n".repeat(n));
        let e = crate::tests::err(&one("int* x", &body));
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
        assert_eq!(e.line(), (3 + MAX_C_NESTING - 1) as u32, "{}", e.message);
        assert_eq!(e.column(), 5, "{}", e.message);
    }
}

#[test]
fn arrays_are_bounded_before_they_are_allocated() {
    // The reproducer's length would be 2^31 locations; the limit is checked first.
    let src =
        |decl: &str| format!("C t\n{{ {decl} }}\nP0 (int* a) {{\n  *a = 1;\n}}\nexists true\n");
    err_at(
        &src("int a[2147483647];"),
        2,
        9,
        "an array of 2147483647 elements is too long (at most 4096 elements)",
    );
    ok(&src(&format!("int a[{MAX_ARRAY_LENGTH}];")));
    // Enough arrays at the limit pass MAX_LOCATIONS: the one that would is refused.
    let n = MAX_LOCATIONS / MAX_ARRAY_LENGTH as usize;
    let decls: String = (0..=n)
        .map(|i| format!("int a{i}[{MAX_ARRAY_LENGTH}]; "))
        .collect();
    let e = crate::tests::err(&src(&decls));
    assert!(e.message.contains("too many locations"), "{}", e.message);
    assert!(e.message.contains(&format!("`a{n}`")), "{}", e.message);
}

fn prop_depth(p: &Prop) -> usize {
    match p {
        Prop::True | Prop::False | Prop::Cmp(..) => 1,
        Prop::Not(a) => 1 + prop_depth(a),
        Prop::And(a, b) | Prop::Or(a, b) => 1 + prop_depth(a).max(prop_depth(b)),
    }
}

#[test]
fn a_condition_of_a_hundred_thousand_terms_is_a_shallow_tree() {
    // Read by a loop and built balanced (Prop::chain): 17 levels of `\/` over the atoms, where
    // the left-nested tree was 100,000 deep and every walk over it (evaluation, printing,
    // dropping) overflowed the stack. Both dialects share the condition parser.
    let n = 100_000;
    for (src, joined) in [
        (
            format!(
                "C t\n{{ x=0; }}\nP0 (atomic_int* x) {{\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n}}\nexists ({})\n",
                vec!["x=1"; n].join(" \\/ ")
            ),
            false,
        ),
        (
            format!(
                "PTX t\n{{ x=0; }}\n P0@cta 0,gpu 0 ;\n st.relaxed.gpu x, 1 ;\nexists ({})\n",
                vec!["x == 1"; n].join(" /\\ ")
            ),
            true,
        ),
    ] {
        let p = ok(&src);
        assert_eq!(prop_depth(&p.condition.prop), 18);
        assert_eq!(matches!(p.condition.prop, Prop::And(..)), joined);
        // x = 1 satisfies every term, x = 0 none.
        assert!(p.condition.prop.eval(&|_| 1));
        assert!(!p.condition.prop.eval(&|_| 0));
    }
}
