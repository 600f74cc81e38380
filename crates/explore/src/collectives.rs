//! Barrier rounds and warp collectives as the threads meet them: which waiting threads a
//! complete round lets through and what it gives each (a `bar.red` reduction, a vote, a
//! shuffle), and whether the lanes an `__activemask()` reported as converged ran it.

use scopecheck_ir::{Program, ThreadId, Value, VoteOp};

use crate::graph::barrier_members;
use crate::interp::Status;
use crate::state::{Context, State};
use crate::trace::{nth_arrival, BarrierName, EventKind, PathEnd, WarpKind};

/// Every lane of a warp, as the members of a collective name them.
pub(crate) const ACTIVE_MASK_ANY: BarrierName = BarrierName::Warp {
    mask: u32::MAX,
    op: WarpKind::ActiveMask,
};

/// The masks a path's `__activemask()` executions at instruction `instr` reported, in order.
pub(crate) fn active_masks(
    events: &[crate::trace::TraceEvent],
    instr: usize,
) -> impl Iterator<Item = u32> + '_ {
    events.iter().filter_map(move |e| match e.kind {
        EventKind::Arrive {
            barrier:
                BarrierName::Warp {
                    mask,
                    op: WarpKind::ActiveMask,
                },
            ..
        } if e.instr == instr => Some(mask),
        _ => None,
    })
}

impl<'p> Context<'_, 'p> {
    /// Lets every waiting thread whose barrier round is complete through.
    pub fn complete_barriers(&self, st: &mut State<'p>) {
        loop {
            let mut released = false;
            for t in 0..st.threads.len() {
                let Status::Waiting(w) = &st.threads[t].status else {
                    continue;
                };
                let (barrier, round, red, warp) = (w.barrier, w.round as usize, w.red, w.warp);
                let members = barrier_members(self.program, t, barrier);
                // (lane rank in `members`, value) of each arrival of this round
                let mut arrivals: Vec<(usize, Option<Value>)> = Vec::new();
                match barrier {
                    // A CTA round is complete once it is formed (`rounds`).
                    BarrierName::Cta(_) => {
                        let k = st.threads[t].trace.events.len() - 1;
                        let Some(r) = st.rounds.round_of(t, k) else {
                            continue;
                        };
                        for &(u, k) in &r.arrivals {
                            let EventKind::Arrive { pred, .. } = st.threads[u].trace.events[k].kind
                            else {
                                unreachable!("a round holds arrivals")
                            };
                            arrivals.push((u, pred));
                        }
                    }
                    // A warp collective's round: the k-th arrival of every lane its mask names,
                    // the lanes that exited left out.
                    BarrierName::Warp { .. } => {
                        let mut missing = false;
                        for (rank, &u) in members.iter().enumerate() {
                            let th = &st.threads[u];
                            match nth_arrival(&th.trace.events, barrier, round) {
                                Some((_, _, pred)) => arrivals.push((rank, pred)),
                                None if th.status == Status::Stopped
                                    && th.trace.end == PathEnd::Finished => {}
                                None => missing = true,
                            }
                        }
                        if missing {
                            continue;
                        }
                    }
                }
                let result = match (red, warp, barrier) {
                    (Some((op, _)), _, _) => Ok(Some((op.reduce(arrivals.iter().map(|a| a.1)), 0))),
                    (None, Some(ww), BarrierName::Warp { mask, op }) => {
                        warp_result(self.program, t, mask, op, ww, &members, &arrivals).map(Some)
                    }
                    _ => Ok(None),
                };
                match result {
                    Ok(r) => st.threads[t].pass_barrier(r),
                    Err(message) => st.threads[t].fault_at_barrier(message),
                }
                self.sync_graph(st, t);
                released = true;
            }
            if !released {
                return;
            }
        }
    }

    /// Whether every lane that an `__activemask()` reported as converged ran that execution of
    /// it: a leaf where one did not (it took another path, finished or got stuck first) is no
    /// execution.
    pub fn convergence_kept(&self, st: &State) -> bool {
        st.threads.iter().enumerate().all(|(t, th)| {
            let mut seen: Vec<usize> = vec![];
            th.trace.events.iter().all(|e| {
                let EventKind::Arrive {
                    barrier:
                        BarrierName::Warp {
                            mask,
                            op: WarpKind::ActiveMask,
                        },
                    ..
                } = e.kind
                else {
                    return true;
                };
                // This is the k-th time `t` runs the instruction.
                let k = seen.iter().filter(|&&i| i == e.instr).count();
                seen.push(e.instr);
                barrier_members(self.program, t, ACTIVE_MASK_ANY)
                    .into_iter()
                    .filter(|&u| {
                        u != t
                            && mask & 1 << self.program.lane(ThreadId(u as u32)).unwrap_or(0) != 0
                    })
                    .all(|u| {
                        active_masks(&st.threads[u].trace.events, e.instr)
                            .nth(k)
                            .is_some()
                    })
            })
        })
    }
}

/// What a complete round of a warp collective gives thread `t`: the value and predicate for its
/// two destinations, or why the round is undefined (CUDA and the PTX ISA leave it so).
fn warp_result(
    program: &Program,
    t: usize,
    mask: u32,
    op: WarpKind,
    ww: crate::interp::WarpWait,
    members: &[usize],
    arrivals: &[(usize, Option<Value>)],
) -> Result<(Value, Value), String> {
    let lane = program.lane(ThreadId(t as u32)).unwrap_or(0);
    let lane_of = |rank: usize| program.lane(ThreadId(members[rank] as u32)).unwrap_or(0);
    if !members.contains(&t) {
        return Err(format!(
            "lane {lane} meets at a warp collective with mask {mask:#x}, which leaves it out"
        ));
    }
    let truth = |a: &(usize, Option<Value>)| a.1.unwrap_or(0) != 0;
    Ok(match op {
        WarpKind::Sync => (0, 0),
        WarpKind::ActiveMask => unreachable!("`__activemask()` has no wait"),
        WarpKind::Vote(v) => {
            let ballot = arrivals
                .iter()
                .filter(|a| truth(a))
                .fold(0u32, |m, a| m | 1 << lane_of(a.0));
            let value = match v {
                VoteOp::Ballot => Value::from(ballot),
                VoteOp::Any => Value::from(arrivals.iter().any(truth)),
                VoteOp::All => Value::from(arrivals.iter().all(truth)),
                VoteOp::Uni => {
                    Value::from(arrivals.iter().all(truth) || !arrivals.iter().any(truth))
                }
            };
            (value, 0)
        }
        WarpKind::Shfl(mode) => {
            let (j, in_range) = mode.source_lane(lane, ww.b, ww.c);
            let Some(a) = arrivals.iter().find(|a| lane_of(a.0) == j) else {
                return Err(format!(
                    "lane {lane} shuffles from lane {j}, which is not among the lanes that meet (mask {mask:#x}): CUDA leaves the value undefined"
                ));
            };
            (a.1.unwrap_or(0), Value::from(in_range))
        }
    })
}
