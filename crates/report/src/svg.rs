//! An execution as SVG, laid out by hand on a grid (no Graphviz needed): a column per thread
//! under the boxes of the GPU hierarchy, a row per program-order position, the initial writes
//! in a row on top, edges as cubic curves coloured as in the DOT picture, with arrowheads and
//! small labels, a title above and a legend below.
//!
//! The layout is a function of the graph alone, in its sorted order: the output is
//! deterministic.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scopecheck_ir::Program;
use scopecheck_model::{EdgeKind, ExecutionGraph, Verdict};

use crate::picture::{self, Group};

/// Text for SVG character data and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

const MARGIN: f64 = 20.0;
const NODE_H: f64 = 34.0;
const ROW_H: f64 = 64.0;
/// The height of one box's heading band.
const BAND: f64 = 20.0;
/// Roughly the width of one character of the 11px label font.
const CHAR_W: f64 = 6.2;
/// Source lines longer than this are cut (the DOT picture has them whole).
const SOURCE_CHARS: usize = 34;

fn cut(s: &str) -> String {
    if s.chars().count() <= SOURCE_CHARS {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(SOURCE_CHARS - 1).collect();
        t.push('…');
        t
    }
}

/// Where each event is drawn: its box's centre.
struct Layout {
    centre: Vec<(f64, f64)>,
    node_w: f64,
    /// The initial writes' width (their labels are short).
    init_w: f64,
}

impl Layout {
    fn width(&self, ev: &scopecheck_model::GraphEvent) -> f64 {
        if ev.thread.is_none() {
            self.init_w
        } else {
            self.node_w
        }
    }
}

/// Renders `graph`, an execution of `program` under the verdict's model, as SVG. `role` names
/// what it shows (`witness`, `counterexample`), for the title.
pub fn svg(program: &Program, verdict: &Verdict, graph: &ExecutionGraph, role: &str) -> String {
    let groups = picture::hierarchy(program);
    let mut columns = Vec::new();
    for g in &groups {
        g.columns(&mut columns);
    }
    let depth = groups.iter().map(Group::depth).max().unwrap_or(0);
    let title = picture::title_lines(program, verdict, graph, role);

    let (node_w, init_w) = node_widths(graph);
    // Boxes nest: each level inside leaves this much room on each side of its columns.
    let inset = 6.0;
    let col_w = node_w + 2.0 * inset * depth as f64 + 24.0;

    let title_h = 18.0 * title.len() as f64 + 22.0;
    let inits: Vec<usize> = (0..graph.events.len())
        .filter(|&e| graph.events[e].thread.is_none())
        .collect();
    let init_y = MARGIN + title_h + NODE_H / 2.0;
    let boxes_top = if inits.is_empty() {
        MARGIN + title_h
    } else {
        init_y + NODE_H / 2.0 + 30.0
    };
    // A band per box level, then one for the thread names.
    let rows_top = boxes_top + BAND * (depth as f64 + 1.0) + 8.0;
    let row_of = picture::rows(graph);
    let rows = (0..graph.events.len())
        .filter(|&e| graph.events[e].thread.is_some())
        .map(|e| row_of[e] + 1)
        .max()
        .unwrap_or(0);
    let rows_bottom = rows_top + ROW_H * rows as f64;

    let col_of: BTreeMap<usize, usize> = columns.iter().enumerate().map(|(c, &t)| (t, c)).collect();
    let col_x = |c: usize| MARGIN + col_w * c as f64 + col_w / 2.0;
    let init_step = init_w + 20.0;
    let mut centre = vec![(0.0, 0.0); graph.events.len()];
    for (k, &e) in inits.iter().enumerate() {
        centre[e] = (MARGIN + init_w / 2.0 + init_step * k as f64, init_y);
    }
    for (e, ev) in graph.events.iter().enumerate() {
        if let Some(t) = ev.thread {
            let c = col_of.get(&(t.0 as usize)).copied().unwrap_or(0);
            centre[e] = (col_x(c), rows_top + ROW_H * row_of[e] as f64 + NODE_H / 2.0);
        }
    }
    let layout = Layout {
        centre,
        node_w,
        init_w,
    };

    let legend = picture::legend(graph);
    let legend_top = rows_bottom + 24.0;
    let legend_h = if legend.is_empty() {
        0.0
    } else {
        20.0 * legend.len() as f64 + 24.0
    };
    let width_cols = MARGIN * 2.0 + col_w * columns.len() as f64;
    let width_inits = MARGIN * 2.0 + init_step * inits.len() as f64;
    let width_title =
        MARGIN * 2.0 + title.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * 7.0;
    let width = width_cols
        .max(width_inits)
        .max(width_title)
        .max(360.0)
        .ceil();
    let height = (legend_top + legend_h + MARGIN).ceil();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"Helvetica, Arial, sans-serif\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&title[0]));
    markers(&mut out);
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"white\"/>"
    );
    for (k, line) in title.iter().enumerate() {
        let weight = if k == 0 { " font-weight=\"bold\"" } else { "" };
        let _ = writeln!(
            out,
            "<text class=\"title\" x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"13\"{weight}>{}</text>",
            MARGIN + 14.0 + 18.0 * k as f64,
            escape(line)
        );
    }
    if !inits.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"10\" fill=\"gray\">initial writes</text>",
            init_y - NODE_H / 2.0 - 4.0
        );
    }
    // Boxes, outermost first, so that inner ones are drawn over them.
    let mut first_col = 0;
    for g in &groups {
        first_col = draw_group(
            g,
            0,
            depth,
            first_col,
            &BoxGeometry {
                col_w,
                inset,
                top: boxes_top,
                bottom: rows_bottom,
            },
            &mut out,
        );
    }
    for (c, &t) in columns.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text class=\"thread\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
            col_x(c),
            boxes_top + BAND * depth as f64 + 14.0,
            escape(&program.threads[t].name)
        );
    }
    edges(graph, &layout, &mut out);
    for (e, ev) in graph.events.iter().enumerate() {
        event(ev, e, &layout, &mut out);
    }
    draw_legend(&legend, legend_top, &mut out);
    let _ = writeln!(out, "</svg>");
    out
}

/// The width of a thread's event box (the widest label or source line) and of an initial
/// write's, within bounds.
fn node_widths(graph: &ExecutionGraph) -> (f64, f64) {
    let widest = graph
        .events
        .iter()
        .map(|e| {
            let source = picture::source_line(e).map_or(0, |s| cut(&s).chars().count());
            e.label.chars().count().max(source)
        })
        .max()
        .unwrap_or(0);
    let node_w = (widest as f64 * CHAR_W + 16.0).clamp(110.0, 320.0);
    let widest_init = graph
        .events
        .iter()
        .filter(|e| e.thread.is_none())
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0);
    let init_w = (widest_init as f64 * CHAR_W + 24.0).clamp(70.0, 320.0);
    (node_w, init_w)
}

/// The legend under the rows, from `top`: a line of each kind of edge the graph has, with what
/// it means.
fn draw_legend(legend: &[(EdgeKind, String)], top: f64, out: &mut String) {
    if legend.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"11\" font-weight=\"bold\">legend</text>",
        top + 12.0
    );
    for (k, (kind, what)) in legend.iter().enumerate() {
        let y = top + 30.0 + 20.0 * k as f64;
        let (x1, x2) = (MARGIN, MARGIN + 40.0);
        let _ = writeln!(
            out,
            "<path class=\"legend\" d=\"M{x1:.1},{y:.1} L{x2:.1},{y:.1}\" {}/>",
            stroke(*kind)
        );
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{}\">{}</text>",
            x2 + 10.0,
            y + 4.0,
            picture::colour(*kind),
            escape(what)
        );
    }
}

/// The geometry boxes share: column width, the inset per nesting level, the top of the outer
/// boxes and the bottom of the last row.
struct BoxGeometry {
    col_w: f64,
    inset: f64,
    top: f64,
    bottom: f64,
}

/// Draws box `g` at nesting `level` over the columns from `first`; returns the column after
/// its last.
fn draw_group(
    g: &Group,
    level: usize,
    depth: usize,
    first: usize,
    geo: &BoxGeometry,
    out: &mut String,
) -> usize {
    let mut cols = Vec::new();
    g.columns(&mut cols);
    let n = cols.len();
    let inset = geo.inset * (level as f64 + 1.0);
    let x = MARGIN + geo.col_w * first as f64 + inset;
    let w = geo.col_w * n as f64 - 2.0 * inset;
    let y = geo.top + BAND * level as f64;
    let h = geo.bottom - y + geo.inset * (depth - level) as f64;
    let _ = writeln!(
        out,
        "<g class=\"box\" id=\"{}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"6\" fill=\"{}\" stroke=\"gray\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"dimgray\">{}</text></g>",
        escape(&g.id),
        if level & 1 == 0 { "#f7f7f7" } else { "#eeeeee" },
        x + 6.0,
        y + 14.0,
        escape(&g.label)
    );
    let mut next = first + g.threads.len();
    for c in &g.children {
        next = draw_group(c, level + 1, depth, next, geo, out);
    }
    first + n
}

/// The stroke attributes of an edge kind.
fn stroke(kind: EdgeKind) -> String {
    let colour = picture::colour(kind);
    let (width, dash) = match kind {
        EdgeKind::Sync | EdgeKind::Race => (2.5, ""),
        EdgeKind::Barrier | EdgeKind::Launch => (1.2, " stroke-dasharray=\"5,3\""),
        EdgeKind::Po | EdgeKind::Rf | EdgeKind::Co => (1.2, ""),
    };
    format!("fill=\"none\" stroke=\"{colour}\" stroke-width=\"{width}\"{dash}")
}

/// Arrowheads, one per colour of a directed edge kind.
fn markers(out: &mut String) {
    let _ = writeln!(out, "<defs>");
    for kind in [
        EdgeKind::Po,
        EdgeKind::Rf,
        EdgeKind::Co,
        EdgeKind::Sync,
        EdgeKind::Launch,
    ] {
        let _ = writeln!(
            out,
            "<marker id=\"arrow-{}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>",
            kind.name(),
            picture::colour(kind)
        );
    }
    let _ = writeln!(out, "</defs>");
}

/// The edges as cubic curves, from the side of one box to the side of the other; edges between
/// the same two events bend apart.
fn edges(graph: &ExecutionGraph, l: &Layout, out: &mut String) {
    let mut seen: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let half_h = NODE_H / 2.0;
    for e in &graph.edges {
        let pair = (e.from.min(e.to), e.from.max(e.to));
        let k = *seen.entry(pair).and_modify(|k| *k += 1).or_insert(0) as f64;
        let (ax, ay) = l.centre[e.from];
        let (bx, by) = l.centre[e.to];
        let half_a = l.width(&graph.events[e.from]) / 2.0;
        let half_w = l.width(&graph.events[e.to]) / 2.0;
        let dx = bx - ax;
        let (p0, p1, p2, p3) = if graph.events[e.from].thread.is_none() {
            // From the initial writes' row down to an event: into its top when it is first in
            // its thread, else into its left side, past the events above.
            let a = (ax, ay + half_h);
            if graph.events[e.to].po_index == 0 {
                let b = (bx - dx.signum() * half_w * 0.5, by - half_h);
                let mid = (by - ay) / 2.0;
                (a, (a.0, a.1 + mid), (b.0, b.1 - mid + 12.0 * k), b)
            } else {
                // Down the gap left of the target's column, then in from the left.
                let b = (bx - half_w, by + 6.0 * k);
                let gap = b.0 - 14.0 - 4.0 * k;
                (a, (gap, a.1 + 60.0), (gap, b.1), b)
            }
        } else if dx.abs() < 1.0 {
            if e.kind == EdgeKind::Po {
                // Straight down the column.
                let down = if by >= ay { 1.0 } else { -1.0 };
                let a = (ax, ay + down * half_h);
                let b = (bx, by - down * half_h);
                (a, a, b, b)
            } else {
                // Same column: bow out to the right, further for each further edge.
                let a = (ax + half_a, ay);
                let b = (bx + half_w, by);
                let bow = 40.0 + 16.0 * k + (by - ay).abs() * 0.15;
                (a, (a.0 + bow, a.1), (b.0 + bow, b.1), b)
            }
        } else {
            // Side to side, an S-curve; further edges between the pair bend up or down.
            let s = dx.signum();
            let a = (ax + s * half_a, ay);
            let b = (bx - s * half_w, by);
            let bend = match k as usize {
                0 => 0.0,
                k if k % 2 == 1 => -24.0 * k.div_ceil(2) as f64,
                k => 24.0 * (k / 2) as f64,
            };
            let (a, b) = ((a.0, a.1 + bend / 4.0), (b.0, b.1 + bend / 4.0));
            let mid = (b.0 - a.0) / 2.0;
            (a, (a.0 + mid, a.1 + bend), (b.0 - mid, b.1 + bend), b)
        };
        let arrow = match e.kind {
            EdgeKind::Barrier | EdgeKind::Race => String::new(),
            kind => format!(" marker-end=\"url(#arrow-{})\"", kind.name()),
        };
        let _ = writeln!(
            out,
            "<path class=\"edge {}\" d=\"M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" {}{arrow}/>",
            e.kind.name(),
            p0.0,
            p0.1,
            p1.0,
            p1.1,
            p2.0,
            p2.1,
            p3.0,
            p3.1,
            stroke(e.kind)
        );
        let label = picture::edge_label(e.kind, &e.label);
        if !label.is_empty() {
            // The curve's midpoint, B(1/2).
            let mx = (p0.0 + 3.0 * p1.0 + 3.0 * p2.0 + p3.0) / 8.0;
            let my = (p0.1 + 3.0 * p1.1 + 3.0 * p2.1 + p3.1) / 8.0;
            let _ = writeln!(
                out,
                "<text class=\"edge-label\" x=\"{mx:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"middle\" fill=\"{}\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
                my - 3.0,
                picture::colour(e.kind),
                escape(&label)
            );
        }
    }
}

/// One event: a rounded box with its label and source line; the racing pair with a red
/// double border.
fn event(ev: &scopecheck_model::GraphEvent, e: usize, l: &Layout, out: &mut String) {
    let (cx, cy) = l.centre[e];
    let w = l.width(ev);
    let (x, y) = (cx - w / 2.0, cy - NODE_H / 2.0);
    let _ = write!(out, "<g class=\"event\" id=\"e{e}\">");
    if ev.racing {
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"7\" fill=\"none\" stroke=\"red\" stroke-width=\"1.5\"/>",
            x - 3.0,
            y - 3.0,
            w + 6.0,
            NODE_H + 6.0
        );
    }
    let border = if ev.racing { "red" } else { "black" };
    let fill = if ev.thread.is_none() {
        "#fffbe6"
    } else {
        "white"
    };
    let _ = write!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{NODE_H:.1}\" rx=\"5\" fill=\"{fill}\" stroke=\"{border}\" stroke-width=\"1.2\"/>"
    );
    let source = picture::source_line(ev).map(|s| cut(&s));
    let label_y = if source.is_some() { cy - 2.0 } else { cy + 4.0 };
    let _ = write!(
        out,
        "<text x=\"{cx:.1}\" y=\"{label_y:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
        escape(&ev.label)
    );
    if let Some(s) = source {
        let _ = write!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"middle\" fill=\"dimgray\">{}</text>",
            cy + 11.0,
            escape(&s)
        );
    }
    let _ = writeln!(out, "</g>");
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaping_leaves_no_markup() {
        // XML's five predefined entities; a control character (not allowed in XML 1.0)
        // becomes a space.
        assert_eq!(escape(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(escape("x\u{1}y"), "x y");
    }
}
