//! How source operations compile to PTX on sm_70 and later: the mapping the CUDA compiler uses
//! (the PTX ABI for C++ atomics, proven sound for scoped C11 by Lustig et al., ASPLOS 2019),
//! applied to a C-dialect program so that the PTX model can judge what the hardware promises.
//!
//! | source | PTX |
//! |---|---|
//! | plain load / store | weak `ld` / `st` |
//! | `volatile` load / store | `ld.volatile` / `st.volatile` (relaxed, `.sys`) |
//! | relaxed / acquire load | `ld.relaxed.S` / `ld.acquire.S` |
//! | relaxed / release store | `st.relaxed.S` / `st.release.S` |
//! | seq_cst load | `fence.sc.S; ld.acquire.S` |
//! | seq_cst store | `fence.sc.S; st.relaxed.S` |
//! | relaxed / acquire / release / acq_rel RMW | `atom.{sem}.S` |
//! | seq_cst RMW | `fence.sc.S; atom.acquire.S` |
//! | seq_cst fence / other fences | `fence.sc.S` / `fence.acq_rel.S` (PTX fences order all memory) |
//! | thread or warp scope | `.cta` (PTX has nothing narrower; a wider scope is a valid implementation) |

use scopecheck_ir::{FenceOrder, FenceSpaces, Instr, InstrKind, Order, Program, Scope};

fn scope(s: Scope) -> Scope {
    match s {
        Scope::Thread | Scope::Warp => Scope::Cta,
        other => other,
    }
}

/// The PTX instructions one source instruction compiles to.
fn lower(i: &Instr) -> Vec<InstrKind> {
    let fence_sc = |s: Scope| InstrKind::Fence {
        order: FenceOrder::Sc,
        scope: scope(s),
        spaces: FenceSpaces::ALL,
    };
    match i.kind.clone() {
        InstrKind::Load {
            dst,
            addr,
            ty,
            order,
            scope: s,
        } => {
            let load = |order, s| InstrKind::Load {
                dst,
                addr,
                ty,
                order,
                scope: s,
            };
            match order {
                Order::Weak => vec![load(Order::Weak, s)],
                Order::Volatile => vec![load(Order::Relaxed, Scope::Sys)],
                // A load cannot release: the release half of acq_rel has nothing to order.
                Order::Relaxed | Order::Release => vec![load(Order::Relaxed, scope(s))],
                Order::Acquire | Order::AcqRel => vec![load(Order::Acquire, scope(s))],
                Order::SeqCst => vec![fence_sc(s), load(Order::Acquire, scope(s))],
            }
        }
        InstrKind::Store {
            addr,
            ty,
            value,
            order,
            scope: s,
        } => {
            let store = |order, s| InstrKind::Store {
                addr,
                ty,
                value,
                order,
                scope: s,
            };
            match order {
                Order::Weak => vec![store(Order::Weak, s)],
                Order::Volatile => vec![store(Order::Relaxed, Scope::Sys)],
                Order::Relaxed | Order::Acquire => vec![store(Order::Relaxed, scope(s))],
                Order::Release | Order::AcqRel => vec![store(Order::Release, scope(s))],
                Order::SeqCst => vec![fence_sc(s), store(Order::Relaxed, scope(s))],
            }
        }
        InstrKind::Rmw {
            dst,
            addr,
            ty,
            kind,
            order,
            scope: s,
        } => {
            let rmw = |order| InstrKind::Rmw {
                dst,
                addr,
                ty,
                kind,
                order,
                scope: scope(s),
            };
            match order {
                Order::Weak | Order::Volatile | Order::Relaxed => vec![rmw(Order::Relaxed)],
                Order::Acquire | Order::Release | Order::AcqRel => vec![rmw(order)],
                Order::SeqCst => vec![fence_sc(s), rmw(Order::Acquire)],
            }
        }
        InstrKind::Fence {
            order, scope: s, ..
        } => vec![InstrKind::Fence {
            order: if order == FenceOrder::Sc {
                FenceOrder::Sc
            } else {
                FenceOrder::AcqRel
            },
            scope: scope(s),
            spaces: FenceSpaces::ALL,
        }],
        // Warp collectives compile to their PTX namesakes (`shfl.sync`, `vote.sync`,
        // `bar.warp.sync`).
        k @ (InstrKind::Barrier { .. }
        | InstrKind::Warp { .. }
        | InstrKind::Mov { .. }
        | InstrKind::Binary { .. }
        | InstrKind::Fma { .. }
        | InstrKind::Branch { .. }) => {
            vec![k]
        }
    }
}

/// The program as compiled to PTX: every instruction replaced by its PTX sequence, each keeping
/// the source span and text, branch targets moved with the code.
pub fn compile(program: &Program) -> Program {
    let mut out = program.clone();
    for t in &mut out.threads {
        let lowered: Vec<Vec<InstrKind>> = t.code.iter().map(lower).collect();
        // start[i]: where source instruction i begins in the compiled code.
        let mut start = Vec::with_capacity(lowered.len() + 1);
        let mut n = 0;
        for l in &lowered {
            start.push(n);
            n += l.len();
        }
        start.push(n);
        let mut code = Vec::with_capacity(n);
        for (i, l) in lowered.into_iter().enumerate() {
            for mut kind in l {
                if let InstrKind::Branch { target, .. } = &mut kind {
                    *target = start[*target];
                }
                code.push(Instr {
                    kind,
                    span: t.code[i].span,
                    text: t.code[i].text.clone(),
                });
            }
        }
        t.code = code;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopecheck_ir::{
        Address, Arch, BranchCond, Condition, DevicePlacement, IntType, LocId, Location,
        MemorySpace, Operand, Placement, Prop, Quantifier, RegId, Span, Thread,
    };

    fn instr(kind: InstrKind) -> Instr {
        Instr {
            kind,
            span: Span::default(),
            text: String::new(),
        }
    }

    #[test]
    fn seq_cst_load_gets_a_fence_and_the_loop_branch_follows_the_code() {
        let x = Address::loc(LocId(0));
        // L: r0 = load_seq_cst.warp(x); if r0 == 0 goto L
        let load = InstrKind::Load {
            dst: RegId(0),
            addr: x,
            ty: IntType::S32,
            order: Order::SeqCst,
            scope: Scope::Warp,
        };
        let back = InstrKind::Branch {
            cond: BranchCond::Eq(Operand::Reg(RegId(0)), Operand::Imm(0)),
            target: 0,
        };
        let program = Program {
            arch: Arch::C,
            name: "t".into(),
            description: None,
            locations: vec![Location {
                name: "x".into(),
                space: MemorySpace::Global,
                init: 0,
                ty: IntType::S32,
                span: None,
            }],
            arrays: vec![],
            threads: vec![Thread {
                name: "P0".into(),
                placement: Placement::Device(DevicePlacement {
                    gpu: 0,
                    cluster: 0,
                    cta: 0,
                    warp: None,
                }),
                span: None,
                registers: vec!["r0".into()],
                init_regs: vec![],
                code: vec![instr(load), instr(back)],
                after: vec![],
            }],
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::True,
                span: None,
            },
            extra_observables: vec![],
        };
        let code: Vec<InstrKind> = compile(&program).threads[0]
            .code
            .iter()
            .map(|i| i.kind.clone())
            .collect();
        // fence.sc.cta; ld.acquire.cta (the warp scope widens to the CTA); the branch goes back to
        // the fence, where the source instruction now starts.
        assert_eq!(code.len(), 3);
        assert_eq!(
            code[0],
            InstrKind::Fence {
                order: FenceOrder::Sc,
                scope: Scope::Cta,
                spaces: FenceSpaces::ALL
            }
        );
        assert!(matches!(
            code[1],
            InstrKind::Load {
                order: Order::Acquire,
                scope: Scope::Cta,
                ..
            }
        ));
        assert!(matches!(code[2], InstrKind::Branch { target: 0, .. }));
    }
}
