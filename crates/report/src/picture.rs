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
