//! Typed values and computed addresses, end to end: the front-ends state widths, the explorer
//! wraps and faults as the languages define. Each expectation is derived in its comment.

use scopecheck_ir::Diagnostic;
use scopecheck_model::{check, CheckOptions, Outcome};

fn verdict_of(src: &str) -> Result<scopecheck_model::Verdict, Diagnostic> {
    let p = scopecheck_litmus::parse(src).unwrap_or_else(|e| panic!("{e:?}"));
    check(&p, &CheckOptions::default())
}

fn fault_of(src: &str) -> (String, u32) {
    match verdict_of(src) {
        Err(fault) => (fault.message.clone(), fault.span.map_or(0, |s| s.line)),
        Ok(v) => panic!("expected a fault, got {:?}", v.outcome),
    }
}

/// `int` addition past INT_MAX is undefined behaviour in C: the one execution faults at the
/// line of the addition (line 5), instead of wrapping silently.
#[test]
fn c_signed_overflow_is_a_fault_with_its_line() {
    let (message, line) = fault_of(
        "C Overflow\n{ int c = 2147483647; }\nP0 (int* c) {\n  int r0 = *c;\n  *c = r0 + 1;\n}\nexists true\n",
    );
    assert!(message.contains("signed integer overflow"), "{message}");
    assert_eq!(line, 5);
}

/// The same increment on an `unsigned` wraps (C defines unsigned arithmetic modulo 2^32): the
/// counter ends at 0.
#[test]
fn c_unsigned_arithmetic_wraps() {
    let v = verdict_of(
        "C Wrap\n{ unsigned c = 4294967295; }\nP0 (unsigned* c) {\n  unsigned r0 = *c;\n  *c = r0 + 1;\n}\nforall (c=0)\n",
    )
    .expect("no fault");
    assert_eq!(v.outcome, Outcome::Ok);
}

/// A divisor read from memory that can be 0 (P1 may not have written 2 yet): the execution
/// reading the initial 0 divides by zero, a fault at line 5 whatever the other executions do.
#[test]
fn c_division_by_a_value_read_as_zero_is_a_fault() {
    let (message, line) = fault_of(
        "C Div\n{ int d = 0; }\nP0 (int* d) {\n  int r0 = *d;\n  int r1 = 10 / r0;\n}\nP1 (int* d) {\n  *d = 2;\n}\nexists true\n",
    );
    assert!(message.contains("division by zero"), "{message}");
    assert_eq!(line, 5);
}

/// A shift by 32 of an `unsigned` is undefined in C (the amount must be below the width).
#[test]
fn c_shift_by_the_width_is_a_fault() {
    let (message, _) = fault_of(
        "C Shift\n{ int s = 32; }\nP0 (int* s) {\n  int r0 = *s;\n  unsigned r1 = 1u;\n}\nexists true\n"
            .replace("unsigned r1 = 1u;", "unsigned r1 = 1; unsigned r2 = r1 << r0;")
            .as_str(),
    );
    assert!(message.contains("shift"), "{message}");
}

/// An index read at run time that leaves the location: the execution reading 1 faults, with a
/// message naming the location (`y` holds one value).
#[test]
fn an_index_out_of_bounds_is_a_fault_naming_the_location() {
    let (message, line) = fault_of(
        "PTX Index\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, x | st.weak x, 1 ;\n st.weak [y+r0], 1 | ;\nexists true\n",
    );
    assert!(message.contains("index 1 leaves `y`"), "{message}");
    assert_eq!(line, 5);
}

/// PTX `.u32` and `.s32` views of one 32-bit word: the store writes 2^32 - 1, the signed load
/// reads it as -1, and `add.u32` of it and 1 wraps to 0.
#[test]
fn ptx_typed_views_of_one_word() {
    let v = verdict_of(
        "PTX Views\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak.u32 x, 4294967295 ;\n ld.weak.s32 r0, x ;\n add.u32 r1, r0, 1 ;\nforall (P0:r0 == -1 /\\ P0:r1 == 0)\n",
    )
    .expect("no fault");
    assert_eq!(v.outcome, Outcome::Ok);
}

/// Accessing one location with two widths is refused when the test is read.
#[test]
fn mixed_size_accesses_are_an_error() {
    let e = scopecheck_litmus::parse(
        "PTX Mixed\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak.u32 x, 1 ;\n ld.weak.u64 r0, x ;\nexists true\n",
    )
    .expect_err("mixed sizes");
    assert!(e.message.contains("mixed-size"), "{}", e.message);
    assert_eq!(e.line(), 5);
}
