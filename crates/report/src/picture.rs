//! What the DOT and SVG pictures of an execution share: the boxes of the GPU hierarchy the
//! threads sit in, the title's lines, the edges' colours.

use std::collections::BTreeMap;

use scopecheck_ir::{Placement, Program, Quantifier};
use scopecheck_model::{EdgeKind, ExecutionGraph, Verdict};

/// A box of the hierarchy: a GPU, a cluster, a CTA, a warp, or the host; threads (indices)
/// sit in the innermost box, in thread order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// A name usable as an identifier (`cta_0_0_1`).
    pub id: String,
    pub label: String,
    pub children: Vec<Group>,
    pub threads: Vec<usize>,
}

impl Group {
    /// The threads of the box and of the boxes within, in column order.
    pub fn columns(&self, out: &mut Vec<usize>) {
        out.extend(&self.threads);
        for c in &self.children {
            c.columns(out);
        }
    }

    /// How deep boxes nest below and including this one.
    pub fn depth(&self) -> usize {
        1 + self.children.iter().map(Group::depth).max().unwrap_or(0)
    }
}

/// The boxes the program's threads sit in: the host apart; on the device a box per CTA, inside
/// a box per cluster when some cluster has more than one CTA, inside a box per GPU when there
/// is more than one; warps boxed when a CTA has threads in two named warps or more.
pub(crate) fn hierarchy(program: &Program) -> Vec<Group> {
    type Warps = BTreeMap<Option<u32>, Vec<usize>>;
    let mut device: BTreeMap<u32, BTreeMap<u32, BTreeMap<u32, Warps>>> = BTreeMap::new();
    let mut host = Vec::new();
    for (t, th) in program.threads.iter().enumerate() {
        match th.placement {
            Placement::Host => host.push(t),
            Placement::Device(d) => device
                .entry(d.gpu)
                .or_default()
                .entry(d.cluster)
                .or_default()
                .entry(d.cta)
                .or_default()
                .entry(d.warp)
                .or_default()
                .push(t),
        }
    }
    let gpus = device.len() > 1;
    let clusters = device
        .values()
        .flat_map(|c| c.values())
        .any(|c| c.len() > 1);
    let mut out = Vec::new();
    for (gpu, cls) in &device {
        let mut in_gpu = Vec::new();
        for (cluster, ctas) in cls {
            let mut in_cluster = Vec::new();
            for (cta, warps) in ctas {
                let named = warps.keys().filter(|w| w.is_some()).count();
                let mut g = Group {
                    id: format!("cta_{gpu}_{cluster}_{cta}"),
                    label: if gpus {
                        format!("GPU {gpu} CTA {cta}")
                    } else {
                        format!("CTA {cta}")
                    },
                    children: vec![],
                    threads: vec![],
                };
                for (warp, threads) in warps {
                    match warp {
                        Some(w) if named > 1 => g.children.push(Group {
                            id: format!("warp_{gpu}_{cluster}_{cta}_{w}"),
                            label: format!("warp {w}"),
                            children: vec![],
                            threads: threads.clone(),
                        }),
                        _ => g.threads.extend(threads),
                    }
                }
                g.threads.sort_unstable();
                in_cluster.push(g);
            }
            if clusters {
                in_gpu.push(Group {
                    id: format!("cluster_{gpu}_{cluster}"),
                    label: format!("cluster {cluster}"),
                    children: in_cluster,
                    threads: vec![],
                });
            } else {
                in_gpu.extend(in_cluster);
            }
        }
        if gpus {
            out.push(Group {
                id: format!("gpu_{gpu}"),
                label: format!("GPU {gpu}"),
                children: in_gpu,
                threads: vec![],
            });
        } else {
            out.extend(in_gpu);
        }
    }
    if !host.is_empty() {
        out.push(Group {
            id: "host".into(),
            label: "host".into(),
            children: vec![],
            threads: host,
        });
    }
    out
}

/// The title: the test, the model and what the picture is; the condition; this execution's
/// final state and what it says of the condition; the race, when one is marked.
pub(crate) fn title_lines(
    program: &Program,
    verdict: &Verdict,
    graph: &ExecutionGraph,
    role: &str,
) -> Vec<String> {
    let mut lines = vec![
        format!("{} under {}: {role}", program.name, verdict.model),
        crate::condition_text(program),
    ];
    let state: Vec<String> = graph
        .state
        .iter()
        .map(|(o, v)| {
            format!(
                "{}={}",
                program.observable_name(*o),
                program.observable_display(*o, *v)
            )
        })
        .collect();
    let says = match (verdict.quantifier, graph.satisfies) {
        (Quantifier::Exists, true) => {
            "the proposition holds: this execution satisfies the condition"
        }
        (Quantifier::Exists, false) => "the proposition does not hold in this execution",
        (Quantifier::NotExists, true) => {
            "the proposition holds: this execution violates the condition"
        }
        (Quantifier::NotExists, false) => {
            "the proposition does not hold: this execution satisfies the condition"
        }
        (Quantifier::Forall, true) => {
            "the proposition holds: this execution satisfies the condition"
        }
        (Quantifier::Forall, false) => {
            "the proposition does not hold: this execution violates the condition"
        }
    };
    if state.is_empty() {
        lines.push(says.to_string());
    } else {
        lines.push(format!("final state {}; {says}", state.join(" ")));
    }
    if let Some(race) = graph.edges.iter().find(|e| e.kind == EdgeKind::Race) {
        let loc = graph.events[race.from]
            .loc
            .map(|l| program.location(l).name.clone())
            .unwrap_or_default();
        lines.push(format!("{} on {loc} (the events drawn in red)", race.label));
    }
    lines
}

/// The colour of an edge kind, the same in DOT and SVG.
pub(crate) fn colour(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Po => "black",
        EdgeKind::Rf => "red",
        EdgeKind::Co => "blue",
        EdgeKind::Sync => "darkgreen",
        // Written as hex: SVG knows no `gray40`.
        EdgeKind::Barrier | EdgeKind::Launch => "#666666",
        EdgeKind::Race => "crimson",
    }
}

/// The label drawn on an edge: its own (a synchronization's name, a race's kind), else the
/// kind's name; program order goes unlabelled.
pub(crate) fn edge_label(kind: EdgeKind, label: &str) -> String {
    match kind {
        EdgeKind::Po => String::new(),
        _ if !label.is_empty() => label.to_string(),
        EdgeKind::Barrier => "bar".into(),
        _ => kind.name().to_string(),
    }
}

/// The edge kinds the graph has, in legend order, with what each means.
pub(crate) fn legend(graph: &ExecutionGraph) -> Vec<(EdgeKind, String)> {
    EdgeKind::ALL
        .iter()
        .filter(|k| graph.edges.iter().any(|e| e.kind == **k))
        .map(|&k| {
            let what = match k {
                EdgeKind::Po => "po: program order".to_string(),
                EdgeKind::Rf => "rf: reads-from".to_string(),
                EdgeKind::Co => "co: coherence".to_string(),
                EdgeKind::Sync => {
                    let mut names: Vec<&str> = graph
                        .edges
                        .iter()
                        .filter(|e| e.kind == k)
                        .map(|e| e.label.as_str())
                        .collect();
                    names.sort_unstable();
                    names.dedup();
                    format!("{}: synchronization", names.join(", "))
                }
                EdgeKind::Barrier => "bar: barrier synchronization".to_string(),
                EdgeKind::Launch => "launch: launch order".to_string(),
                EdgeKind::Race => "race: the racing pair".to_string(),
            };
            (k, what)
        })
        .collect()
}

/// An event's second line: where it comes from.
pub(crate) fn source_line(ev: &scopecheck_model::GraphEvent) -> Option<String> {
    ev.source.as_ref().map(|(line, text, _)| {
        let text = text.trim();
        if text.is_empty() {
            format!("line {line}")
        } else {
            format!("line {line}: {text}")
        }
    })
}

/// The row each event is drawn in (initial writes: 0, drawn above the rows): its position in
/// program order, pushed down so that threads meeting at a barrier meet on one row and a
/// thread launched after another starts below the other's last event. Where those demands
/// contradict each other (barriers met in opposite orders), program order alone.
pub(crate) fn rows(graph: &ExecutionGraph) -> Vec<usize> {
    let po_rows: Vec<usize> = graph.events.iter().map(|e| e.po_index).collect();
    let mut row = po_rows.clone();
    // Rows only grow, and a consistent set of demands settles within one pass per event.
    for _ in 0..=graph.events.len() {
        let mut changed = false;
        for e in &graph.edges {
            let (a, b) = (e.from, e.to);
            if graph.events[a].thread.is_none() || graph.events[b].thread.is_none() {
                continue;
            }
            match e.kind {
                EdgeKind::Po | EdgeKind::Launch if row[b] < row[a] + 1 => {
                    row[b] = row[a] + 1;
                    changed = true;
                }
                EdgeKind::Barrier if row[a] != row[b] => {
                    let m = row[a].max(row[b]);
                    row[a] = m;
                    row[b] = m;
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            return row;
        }
    }
    po_rows
}

#[cfg(test)]
mod tests {
    use super::rows;
    use scopecheck_ir::ThreadId;
    use scopecheck_model::{EdgeKind, ExecutionGraph, GraphEdge, GraphEvent};

    /// Events of threads given as (thread, position in program order).
    fn graph(events: &[(u32, usize)], edges: &[(EdgeKind, usize, usize)]) -> ExecutionGraph {
        ExecutionGraph {
            events: events
                .iter()
                .map(|&(t, k)| GraphEvent {
                    thread: Some(ThreadId(t)),
                    po_index: k,
                    source: None,
                    label: String::new(),
                    loc: None,
                    value: None,
                    racing: false,
                })
                .collect(),
            edges: edges
                .iter()
                .map(|&(kind, from, to)| GraphEdge {
                    kind,
                    from,
                    to,
                    label: String::new(),
                })
                .collect(),
            state: vec![],
            satisfies: true,
        }
    }

    #[test]
    fn barrier_partners_share_a_row_and_launched_threads_start_below() {
        // T0: a, bar; T1: bar. T1's barrier moves down to T0's row 1.
        let g = graph(
            &[(0, 0), (0, 1), (1, 0)],
            &[(EdgeKind::Po, 0, 1), (EdgeKind::Barrier, 1, 2)],
        );
        assert_eq!(rows(&g), [0, 1, 1]);
        // T1 launched after T0 (two events) ends: its first event goes to row 2, its next
        // below it.
        let g = graph(
            &[(0, 0), (0, 1), (1, 0), (1, 1)],
            &[
                (EdgeKind::Po, 0, 1),
                (EdgeKind::Po, 2, 3),
                (EdgeKind::Launch, 1, 2),
            ],
        );
        assert_eq!(rows(&g), [0, 1, 2, 3]);
    }

    #[test]
    fn contradicting_barriers_fall_back_to_program_order() {
        // T0: b0, b1; T1: b1', b0' with b0-b0' and b1-b1' meeting: no rows satisfy both
        // (each pair would have to sit below the other), so program-order positions are used.
        let g = graph(
            &[(0, 0), (0, 1), (1, 0), (1, 1)],
            &[
                (EdgeKind::Po, 0, 1),
                (EdgeKind::Po, 2, 3),
                (EdgeKind::Barrier, 0, 3),
                (EdgeKind::Barrier, 1, 2),
            ],
        );
        assert_eq!(rows(&g), [0, 1, 0, 1]);
    }
}
