//! Declarations sized by the input (issue 31): refused at the declaration, before anything
//! is allocated for them.

use crate::{parse, MAX_INLINED_AT, MAX_REGISTERS};

fn kernel(body: &str) -> String {
    format!(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n{body}\nret;\n}}\n")
}

#[test]
fn a_register_count_past_the_limit_is_an_error_at_the_count() {
    // The audit's `%rd<2147483647>` took 3.2 GB in lowering; now the parser refuses it, the
    // span on the count (line 6, after the 14 characters of `.reg .b64 %rd<`, column 15).
    let e = parse(&kernel(".reg .b64 %rd<2147483647>;")).unwrap_err();
    assert_eq!((e.line(), e.column()), (6, 15), "{}", e.message);
    assert_eq!(
        e.message,
        format!("too many registers: with `%rd` this function declares 2147483647 of them, more than {MAX_REGISTERS}")
    );
    // At the limit it is read; the limit counts every declaration of the function together.
    assert!(parse(&kernel(&format!(".reg .b64 %rd<{MAX_REGISTERS}>;"))).is_ok());
    let e = parse(&kernel(&format!(
        ".reg .b64 %rd<{MAX_REGISTERS}>;\n.reg .pred p;"
    )))
    .unwrap_err();
    assert_eq!((e.line(), e.column()), (7, 12), "{}", e.message);
    // Each function has its own count.
    let two = format!(
        ".version 8.5\n.target sm_90\n.address_size 64\n\
         .visible .entry a()\n{{\n.reg .b32 %r<{MAX_REGISTERS}>;\nret;\n}}\n\
         .visible .entry b()\n{{\n.reg .b32 %r<{MAX_REGISTERS}>;\nret;\n}}\n"
    );
    assert!(parse(&two).is_ok());
}

#[test]
fn an_inlining_chain_keeps_its_innermost_call_sites() {
    // 200 `.loc`s, each inlined at the one before: the chain of the last would name 199 call
    // sites; it keeps the MAX_INLINED_AT innermost, the first of them the direct caller.
    let locs: String = (1..=200)
        .map(|i| {
            format!(
                ".loc 1 {i} 1, function_name $L__f, inlined_at 1 {} 1\nexit;\n",
                i - 1
            )
        })
        .collect();
    let m = parse(&kernel(&locs)).unwrap();
    let body = m.functions[0].body.as_ref().unwrap();
    let chains: Vec<&Vec<(u32, u32, u32)>> = body
        .statements
        .iter()
        .filter_map(|s| match s {
            crate::ast::Statement::Instruction(i) if i.opcode == "exit" => Some(&i.inlined_at),
            _ => None,
        })
        .collect();
    assert_eq!(chains.len(), 200);
    assert_eq!(chains[0], &vec![(1, 0, 1)]);
    let last = chains[199];
    assert_eq!(last.len(), MAX_INLINED_AT);
    assert_eq!(last[0], (1, 199, 1));
    assert_eq!(
        last[MAX_INLINED_AT - 1],
        (1, 199 - MAX_INLINED_AT as u32 + 1, 1)
    );
}
