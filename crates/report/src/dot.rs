//! An execution as Graphviz DOT: one `digraph`, threads as columns in the boxes of the GPU
//! hierarchy (`subgraph cluster_*`), one row per program-order position (`rank=same`), initial
//! writes on top under a title node, and a legend of the edge kinds drawn.
//!
//! The output is deterministic: events, edges and boxes come in the graph's own sorted order.

use std::fmt::Write as _;

use scopecheck_ir::Program;
use scopecheck_model::{EdgeKind, ExecutionGraph, Verdict};

use crate::picture::{self, Group};

/// A DOT double-quoted string: backslashes and quotes escaped, newlines as `\n` (centred
/// lines), so that no text of the test can end the string or inject attributes.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// How an edge kind looks: line style and direction (colours come from `picture`).
fn style(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Po | EdgeKind::Rf | EdgeKind::Co => "style=solid",
        EdgeKind::Sync => "style=bold, penwidth=2",
        EdgeKind::Barrier => "style=dashed, dir=none",
        EdgeKind::Launch => "style=dashed",
        EdgeKind::Race => "style=bold, penwidth=2, dir=none",
    }
}

/// Whether an edge kind shapes the layout: program order keeps columns straight and launch
/// order puts a launched thread below; the others would pull rows out of line.
fn layout(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Po => ", weight=10",
        EdgeKind::Launch => "",
        _ => ", constraint=false",
    }
}

/// Renders `graph`, an execution of `program` under the verdict's model, as DOT. `role` names
/// what it shows (`witness`, `counterexample`), for the title.
pub fn dot(program: &Program, verdict: &Verdict, graph: &ExecutionGraph, role: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&program.name));
    let _ = writeln!(
        out,
        "  graph [fontname=\"Helvetica\", newrank=true, nodesep=0.4, ranksep=0.5];"
    );
    let _ = writeln!(
        out,
        "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=9];");
    let title = picture::title_lines(program, verdict, graph, role).join("\n");
    let _ = writeln!(
        out,
        "  title [shape=plaintext, fontsize=12, label={}];",
        quote(&title)
    );
    // Initial writes on one row under the title.
    let inits: Vec<usize> = (0..graph.events.len())
        .filter(|&e| graph.events[e].thread.is_none())
        .collect();
    if !inits.is_empty() {
        let _ = writeln!(out, "  subgraph cluster_init {{");
        let _ = writeln!(out, "    label=\"initial writes\"; style=dotted;");
        for &e in &inits {
            let _ = writeln!(out, "    {};", node(graph, e));
        }
        let _ = writeln!(out, "  }}");
        let row: Vec<String> = inits.iter().map(|e| format!("e{e}")).collect();
        let _ = writeln!(out, "  {{ rank=same; {}; }}", row.join("; "));
        for e in &row {
            let _ = writeln!(out, "  title -> {e} [style=invis];");
        }
    }
    for g in picture::hierarchy(program) {
        group(program, graph, &g, 1, &mut out);
    }
    // Rows across threads (`picture::rows`); the first under the initial writes.
    let row_of = picture::rows(graph);
    let rows = row_of.iter().map(|r| r + 1).max().unwrap_or(0);
    for row in 0..rows {
        let at: Vec<String> = (0..graph.events.len())
            .filter(|&e| graph.events[e].thread.is_some() && row_of[e] == row)
            .map(|e| format!("e{e}"))
            .collect();
        if at.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {{ rank=same; {}; }}", at.join("; "));
        if row == 0 {
            let top = inits
                .first()
                .map_or("title".to_string(), |e| format!("e{e}"));
            for e in &at {
                let _ = writeln!(out, "  {top} -> {e} [style=invis];");
            }
        }
    }
    for e in &graph.edges {
        let label = picture::edge_label(e.kind, &e.label);
        let colour = picture::colour(e.kind);
        // An edge within one row (a barrier, a read of a write on the same row) takes an
        // `xlabel`: Graphviz lays out a labelled flat edge between clusters with a helper rank
        // that can break the rows ("trouble in init_rank").
        let same_row = graph.events[e.from].thread.is_some()
            && graph.events[e.to].thread.is_some()
            && row_of[e.from] == row_of[e.to];
        let attr = if same_row { "xlabel" } else { "label" };
        let label = if label.is_empty() {
            String::new()
        } else {
            format!(", {attr}={}, fontcolor={}", quote(&label), quote(colour))
        };
        let _ = writeln!(
            out,
            "  e{} -> e{} [color={}, {}{}{label}];",
            e.from,
            e.to,
            quote(colour),
            style(e.kind),
            layout(e.kind)
        );
    }
    legend(graph, &mut out);
    let _ = writeln!(out, "}}");
    out
}

/// One event's node statement: its label and source line; the racing pair with a red double
/// border.
fn node(graph: &ExecutionGraph, e: usize) -> String {
    let ev = &graph.events[e];
    let mut label = ev.label.clone();
    if let Some(line) = picture::source_line(ev) {
        label.push('\n');
        label.push_str(&line);
    }
    let race = if ev.racing {
        ", color=red, peripheries=2, penwidth=1.5"
    } else {
        ""
    };
    format!("e{e} [label={}{race}]", quote(&label))
}

/// A box of the hierarchy with its threads' columns (each a box of its own) and inner boxes.
fn group(program: &Program, graph: &ExecutionGraph, g: &Group, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let _ = writeln!(out, "{pad}subgraph cluster_{} {{", g.id);
    let _ = writeln!(
        out,
        "{pad}  label={}; style=rounded; color=gray50;",
        quote(&g.label)
    );
    for &t in &g.threads {
        let _ = writeln!(out, "{pad}  subgraph cluster_t{t} {{");
        let _ = writeln!(
            out,
            "{pad}    label={}; style=dashed; color=gray70;",
            quote(&program.threads[t].name)
        );
        for e in 0..graph.events.len() {
            if graph.events[e].thread.map(|x| x.0 as usize) == Some(t) {
                let _ = writeln!(out, "{pad}    {};", node(graph, e));
            }
        }
        let _ = writeln!(out, "{pad}  }}");
    }
    for c in &g.children {
        group(program, graph, c, depth + 1, out);
    }
    let _ = writeln!(out, "{pad}}}");
}

/// Text for a Graphviz HTML-like label.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The legend, below the threads: a table with a line drawn in each edge kind's colour and
/// style (thin, bold, dashed) and what the kind means.
fn legend(graph: &ExecutionGraph, out: &mut String) {
    let items = picture::legend(graph);
    if items.is_empty() {
        return;
    }
    let mut rows = String::new();
    for (k, what) in &items {
        let line = match k {
            EdgeKind::Sync | EdgeKind::Race => "\u{2501}\u{2501}\u{2501}",
            EdgeKind::Barrier | EdgeKind::Launch => "\u{254c}\u{254c}\u{254c}",
            EdgeKind::Po | EdgeKind::Rf | EdgeKind::Co => "\u{2500}\u{2500}\u{2500}",
        };
        let _ = write!(
            rows,
            "<tr><td align=\"left\"><font color=\"{}\">{line} {}</font></td></tr>",
            picture::colour(*k),
            html(what)
        );
    }
    let _ = writeln!(
        out,
        "  legend [shape=plaintext, fontsize=9, label=<<table border=\"0\" cellspacing=\"1\"><tr><td align=\"left\"><b>legend</b></td></tr>{rows}</table>>];"
    );
    // Below every thread's last event.
    let mut last: std::collections::BTreeMap<u32, usize> = Default::default();
    for (e, ev) in graph.events.iter().enumerate() {
        if let Some(t) = ev.thread {
            last.insert(t.0, e);
        }
    }
    for e in last.values() {
        let _ = writeln!(out, "  e{e} -> legend [style=invis];");
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_keeps_text_inside_the_string() {
        // DOT's double-quoted strings end at an unescaped `"`; `\` starts an escape, so both
        // are escaped, and a newline becomes the centred-line escape `\n`.
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote("x\ny"), r#""x\ny""#);
        assert_eq!(quote("P1:r0=1 /\\ P1:r1=0"), r#""P1:r0=1 /\\ P1:r1=0""#);
    }
}
