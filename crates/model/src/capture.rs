//! Pictures' data: one consistent execution as an [`ExecutionGraph`], its events labelled in the
//! model's words and the edges that explain it (`scopecheck check --graph`).

use scopecheck_explore::trace::{BarrierName, WarpKind};
use scopecheck_explore::{EventKind, Graph, Model, Race, RaceKind, Relation};
use scopecheck_ir::{Observable, Order, Scope, Value};

use crate::verdict::{EdgeKind, ExecutionGraph, GraphEdge, GraphEvent};

/// The words of one model for orders and scopes.
struct Words {
    /// Whether the model is scoped C11 (else PTX).
    c: bool,
}

impl Words {
    fn order(&self, o: Order) -> &'static str {
        match (o, self.c) {
            (Order::Weak, false) => "weak",
            (Order::Weak, true) => "na",
            (Order::Volatile, _) => "volatile",
            (Order::Relaxed, false) => "relaxed",
            (Order::Relaxed, true) => "rlx",
            (Order::Acquire, _) => "acq",
            (Order::Release, _) => "rel",
            (Order::AcqRel, _) => "acq_rel",
            (Order::SeqCst, _) => "sc",
        }
    }

    fn scope(&self, s: Scope) -> &'static str {
        match (s, self.c) {
            (Scope::Thread, _) => "thread",
            (Scope::Warp, _) => "warp",
            (Scope::Cta, false) => "cta",
            (Scope::Cta, true) => "block",
            (Scope::Cluster, _) => "cluster",
            (Scope::Gpu, false) => "gpu",
            (Scope::Gpu, true) => "device",
            (Scope::Sys, false) => "sys",
            (Scope::Sys, true) => "system",
        }
    }

    /// `W.rel.gpu`; weak and volatile accesses have no scope to show (PTX: a weak access has
    /// none; a volatile one is relaxed at system scope, which its word says).
    fn access(&self, what: &str, o: Order, s: Scope) -> String {
        match o {
            Order::Weak | Order::Volatile => format!("{what}.{}", self.order(o)),
            _ => format!("{what}.{}.{}", self.order(o), self.scope(s)),
        }
    }
}

/// The label of graph event `e`, with `write` the write half of its RMW (merged into it).
fn label(g: &Graph, words: &Words, e: usize, write: Option<usize>) -> String {
    let loc_name = |l| g.program.location(l).name.clone();
    match g.events[e].kind {
        EventKind::Init { loc, value } => format!("{}={value}", loc_name(loc)),
        EventKind::Read {
            loc,
            value,
            order,
            scope,
            reduction,
        } => match write.map(|w| g.events[w].kind) {
            Some(EventKind::Write {
                value: new,
                order: worder,
                ..
            }) => {
                // An RMW's order is its read's and its write's together.
                let order = match (order.is_acquire(), worder.is_release()) {
                    (true, true) if order == Order::SeqCst => Order::SeqCst,
                    (true, true) => Order::AcqRel,
                    (false, true) => Order::Release,
                    _ => order,
                };
                let what = if reduction { "RED" } else { "RMW" };
                format!(
                    "{} {} {value}->{new}",
                    words.access(what, order, scope),
                    loc_name(loc)
                )
            }
            _ => format!(
                "{} {}={value}",
                words.access("R", order, scope),
                loc_name(loc)
            ),
        },
        EventKind::Write {
            loc,
            value,
            order,
            scope,
        } => format!(
            "{} {}={value}",
            words.access("W", order, scope),
            loc_name(loc)
        ),
        EventKind::Fence { order, scope, .. } => {
            let order = match order {
                scopecheck_ir::FenceOrder::Acquire => Order::Acquire,
                scopecheck_ir::FenceOrder::Release => Order::Release,
                scopecheck_ir::FenceOrder::AcqRel => Order::AcqRel,
                scopecheck_ir::FenceOrder::Sc => Order::SeqCst,
            };
            words.access("F", order, scope)
        }
        EventKind::Arrive { barrier, .. } | EventKind::Wait { barrier, .. } => {
            let waits = write.is_some() || matches!(g.events[e].kind, EventKind::Wait { .. });
            match barrier {
                BarrierName::Cta(id) if waits => format!("bar.sync {id}"),
                BarrierName::Cta(id) => format!("bar.arrive {id}"),
                BarrierName::Warp { op, .. } => match op {
                    WarpKind::Sync => "syncwarp".to_string(),
                    WarpKind::Shfl(_) => "shfl".to_string(),
                    WarpKind::Vote(_) => "vote".to_string(),
                    WarpKind::ActiveMask => "activemask".to_string(),
                },
            }
        }
    }
}

/// Whether graph event `b` is the second half of the instruction instance that `a` starts: the
/// write of `a`'s RMW, or the wait after a barrier arrival at the same instruction.
fn second_half(g: &Graph, a: usize, b: usize) -> bool {
    if g.rmw.contains(a, b) {
        return true;
    }
    let (ea, eb) = (&g.events[a], &g.events[b]);
    matches!(
        (ea.kind, eb.kind),
        (EventKind::Arrive { .. }, EventKind::Wait { .. })
    ) && ea.instr == eb.instr
}

/// Captures `g`, a consistent execution with coherence order `co`, whose final state `state`
/// does (`satisfies`) or does not satisfy the proposition; `race` is marked when given.
pub(crate) fn capture(
    g: &Graph,
    model: &dyn Model,
    co: &Relation,
    state: Vec<(Observable, Value)>,
    satisfies: bool,
    race: Option<&Race>,
) -> ExecutionGraph {
    let words = Words {
        c: model.name() != "ptx",
    };
    let n = g.len();
    // The node of each graph event (usize::MAX: none yet).
    let mut node = vec![usize::MAX; n];
    let mut events = Vec::new();
    for (e, ev) in g.events.iter().enumerate() {
        if ev.thread.is_none() {
            node[e] = events.len();
            events.push(GraphEvent {
                thread: None,
                po_index: 0,
                source: None,
                label: label(g, &words, e, None),
                loc: ev.kind.loc(),
                value: ev.kind.value(),
                racing: false,
            });
        }
    }
    let mut po = Vec::new();
    for (t, evs) in g.thread_events.iter().enumerate() {
        let thread = g.program.thread(scopecheck_ir::ThreadId(t as u32));
        let (mut k, mut pos) = (0, 0);
        let mut last: Option<usize> = None;
        while k < evs.len() {
            let e = evs[k];
            let second = evs.get(k + 1).copied().filter(|&b| second_half(g, e, b));
            let ev = &g.events[e];
            let here = events.len();
            node[e] = here;
            if let Some(b) = second {
                node[b] = here;
            }
            let value = second
                .and_then(|b| g.events[b].kind.value())
                .or(ev.kind.value());
            events.push(GraphEvent {
                thread: ev.thread,
                po_index: pos,
                source: ev.instr.map(|i| {
                    let instr = &thread.code[i];
                    (instr.span.line, instr.text.clone(), instr.span)
                }),
                label: label(g, &words, e, second),
                loc: ev.kind.loc(),
                value,
                racing: false,
            });
            if let Some(prev) = last {
                po.push((prev, here));
            }
            last = Some(here);
            pos += 1;
            k += if second.is_some() { 2 } else { 1 };
        }
    }
    let mut edges: Vec<GraphEdge> = Vec::new();
    let mut edge = |kind, a: usize, b: usize, label: &str| {
        if a != b && a != usize::MAX && b != usize::MAX {
            edges.push(GraphEdge {
                kind,
                from: a,
                to: b,
                label: label.to_string(),
            });
        }
    };
    for (a, b) in po {
        edge(EdgeKind::Po, a, b, "");
    }
    for (r, w) in g.rf.iter().enumerate() {
        if let Some(w) = w {
            edge(EdgeKind::Rf, node[*w], node[r], "");
        }
    }
    // Coherence's immediate successors: the transitive reduction of its closure.
    let co = co.closure();
    for (a, b) in co.pairs() {
        if !co.successors(a).any(|c| c != b && co.contains(c, b)) {
            edge(EdgeKind::Co, node[a], node[b], "");
        }
    }
    for (name, rel) in model.explain(g, &co) {
        for (a, b) in rel.pairs() {
            edge(EdgeKind::Sync, node[a], node[b], name);
        }
    }
    // Threads meeting at a barrier synchronize each way: one undirected edge per pair.
    for (a, b) in g.barrier_sync.pairs() {
        let (x, y) = (node[a].min(node[b]), node[a].max(node[b]));
        edge(EdgeKind::Barrier, x, y, "");
    }
    // Launch order relates every event of a thread to every event of its successor: drawn from
    // the last event of one to the first of the other.
    for (t, th) in g.program.threads.iter().enumerate() {
        for before in &th.after {
            let (Some(&a), Some(&b)) = (
                g.thread_events[before.0 as usize].last(),
                g.thread_events[t].first(),
            ) else {
                continue;
            };
            edge(EdgeKind::Launch, node[a], node[b], "");
        }
    }
    if let Some(r) = race {
        let (a, b) = (
            node[r.first].min(node[r.second]),
            node[r.first].max(node[r.second]),
        );
        let what = match r.kind {
            RaceKind::Data => "data race",
            RaceKind::Heterogeneous => "heterogeneous race",
        };
        edge(EdgeKind::Race, a, b, what);
        for x in [a, b] {
            if let Some(ev) = events.get_mut(x) {
                ev.racing = true;
            }
        }
    }
    edges.sort();
    edges.dedup();
    ExecutionGraph {
        events,
        edges,
        state,
        satisfies,
    }
}
