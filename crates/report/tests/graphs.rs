//! Pictures of executions (`check --graph`): golden DOT files of four small tests, and checks
//! of the SVG's shape. Each test also asserts, beside the golden file, the few facts of the
//! picture that the model's definition decides, so that a golden file accepted by mistake
//! cannot hide a wrong graph.

use std::path::Path;

use scopecheck_ir::Program;
use scopecheck_model::{check, CheckOptions, EdgeKind, ExecutionGraph, Verdict};
use scopecheck_report::{dot, pictures, svg};

fn load(rel: &str) -> (Program, Verdict) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    let source = std::fs::read_to_string(&path).expect("test file");
    let program = scopecheck_litmus::parse(&source).expect("parses");
    let verdict = check(
        &program,
        &CheckOptions {
            graphs: true,
            // These tests look at the pictured events themselves (RMW labels, cluster boxes):
            // with the commuting-atomics reduction (docs/explore.md) blind relaxed adds are
            // explored as writes in one order, so the full search is what is pictured here.
            commute: false,
            ..CheckOptions::default()
        },
    )
    .expect("checks");
    (program, verdict)
}

/// The labels of the events at the two ends of each edge of `kind`.
fn edges(g: &ExecutionGraph, kind: EdgeKind) -> Vec<(String, String)> {
    g.edges
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| (g.events[e.from].label.clone(), g.events[e.to].label.clone()))
        .collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn ptx_message_passing_witness_reads_stale_data() {
    let (program, verdict) = load("examples/ptx/MP+fence.sc.cta.litmus");
    let g = verdict.witness_graph.as_ref().expect("a witness graph");
    // The witness satisfies `P1:r0=1 /\ P1:r1=0`: the flag read reads P0's flag write, the
    // data read the initial write.
    assert!(g.satisfies);
    let rf = edges(g, EdgeKind::Rf);
    assert!(rf.contains(&pair("W.relaxed.gpu flag=1", "R.relaxed.gpu flag=1")));
    assert!(rf.contains(&pair("data=0", "R.weak data=0")));
    // The .cta fences of two CTAs are not morally strong: no release/acquire synchronization.
    assert!(edges(g, EdgeKind::Sync).is_empty());
    // `exists` that holds is a right program: a witness, no counterexample.
    let roles: Vec<&str> = pictures(&program, &verdict)
        .iter()
        .map(|p| p.role)
        .collect();
    assert_eq!(roles, ["witness"]);
    insta::assert_snapshot!(
        "MP+fence.sc.cta.ptx.witness",
        dot(&program, &verdict, g, "witness")
    );
}

#[test]
fn c_data_race_counterexample_marks_the_racing_pair() {
    let (program, verdict) = load("tests/litmus/c/MP+host-device+rel.sys+rlx.litmus");
    let g = verdict.race_graph.as_ref().expect("a race graph");
    // The relaxed flag load does not acquire: nothing orders the payload write before the
    // payload read, a data race between the two plain accesses, and no sw edge.
    let racing: Vec<&str> = g
        .events
        .iter()
        .filter(|e| e.racing)
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(racing.len(), 2);
    assert_eq!(racing[0], "W.na data=42");
    assert!(racing[1].starts_with("R.na data="), "{racing:?}");
    assert_eq!(edges(g, EdgeKind::Race).len(), 1);
    assert!(edges(g, EdgeKind::Sync).is_empty());
    // A racy program under scoped C11 is wrong: its counterexample is the race graph.
    let pics = pictures(&program, &verdict);
    let roles: Vec<&str> = pics.iter().map(|p| p.role).collect();
    assert_eq!(roles, ["witness", "counterexample"]);
    assert_eq!(pics[1].dot, dot(&program, &verdict, g, "counterexample"));
    let text = dot(&program, &verdict, g, "counterexample");
    // The host thread sits in a box of its own, the device thread in its CTA's.
    assert!(text.contains("subgraph cluster_host {"));
    assert!(text.contains("subgraph cluster_cta_0_0_0 {"));
    insta::assert_snapshot!("MP+host-device+rel.sys+rlx.src11.counterexample", text);
}

#[test]
fn barrier_edges_join_the_threads_meeting_at_a_barrier() {
    let (program, verdict) = load("tests/litmus/c/MP+barrier.wg.litmus");
    let g = verdict.witness_graph.as_ref().expect("a witness graph");
    // Both work-items meet at one barrier round: one undirected barrier edge between their
    // barrier events, and the read after it reads the write before it.
    assert_eq!(
        edges(g, EdgeKind::Barrier),
        [pair("bar.sync 0", "bar.sync 0")]
    );
    assert_eq!(edges(g, EdgeKind::Rf), [pair("W.na data=1", "R.na data=1")]);
    let text = dot(&program, &verdict, g, "witness");
    // The barrier events share a row, so the edge between them is labelled with `xlabel`
    // (a labelled flat edge between clusters can break Graphviz's ranking).
    assert!(text.contains("xlabel=\"bar\""), "{text}");
    assert!(!text.contains(" label=\"bar\""), "{text}");
    insta::assert_snapshot!("MP+barrier.wg.src11.witness", text);
}

#[test]
fn ctas_of_one_cluster_sit_in_a_cluster_box() {
    let (program, verdict) = load("tests/litmus/ptx/Atom+add.clusters.litmus");
    let g = verdict.witness_graph.as_ref().expect("a witness graph");
    // Each RMW is one event; Atomicity orders them in coherence after the initial write,
    // and the later one reads the earlier one's write.
    let labels: Vec<&str> = g.events.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(labels.len(), 3);
    assert_eq!(
        edges(g, EdgeKind::Co).len(),
        2,
        "co is shown as immediate successors only"
    );
    assert!(labels.contains(&"RMW.relaxed.cluster x 0->1"), "{labels:?}");
    assert!(labels.contains(&"RMW.relaxed.cluster x 1->2"), "{labels:?}");
    let text = dot(&program, &verdict, g, "witness");
    // Two CTAs in cluster 0: a cluster box around the two CTA boxes.
    let cluster = text
        .find("subgraph cluster_cluster_0_0 {")
        .expect("cluster box");
    let cta0 = text.find("subgraph cluster_cta_0_0_0 {").expect("CTA box");
    let cta1 = text.find("subgraph cluster_cta_0_0_1 {").expect("CTA box");
    assert!(cluster < cta0 && cta0 < cta1);
    insta::assert_snapshot!("Atom+add.clusters.ptx.witness", text);
}

/// Whether `svg`'s tags balance: every opened element is closed in order (self-closing ones
/// aside), nothing is closed that was not open, and no `<` is left unescaped in text.
fn balanced(svg: &str) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let after = &rest[i + 1..];
        let j = after.find('>').ok_or("a tag is not closed")?;
        let tag = &after[..j];
        if tag.contains('<') {
            return Err(format!("`<` inside a tag: {tag}"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name => {}
                o => return Err(format!("</{name}> closes {o:?}")),
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("").to_string();
            open.push(name);
        }
        rest = &after[j + 1..];
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("left open: {open:?}"))
    }
}

#[test]
fn svg_is_balanced_and_has_one_element_per_event() {
    for rel in [
        "examples/ptx/MP+fence.sc.cta.litmus",
        "tests/litmus/c/MP+host-device+rel.sys+rlx.litmus",
        "tests/litmus/c/MP+barrier.wg.litmus",
        "tests/litmus/ptx/Atom+add.clusters.litmus",
    ] {
        let (program, verdict) = load(rel);
        for g in verdict.witness_graph.iter().chain(&verdict.race_graph) {
            let text = svg(&program, &verdict, g, "witness");
            // An SVG document: one root element in the SVG namespace.
            assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(text.trim_end().ends_with("</svg>"));
            balanced(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
            // One `g` element of class `event` per event of the graph.
            assert_eq!(
                text.matches("<g class=\"event\"").count(),
                g.events.len(),
                "{rel}"
            );
            // One path per edge, besides the legend's.
            assert_eq!(
                text.matches("<path class=\"edge ").count(),
                g.edges.len(),
                "{rel}"
            );
        }
    }
}

#[test]
fn the_balance_check_finds_broken_svg() {
    // The checker above must be able to fail: an unclosed element, a wrong close.
    assert!(balanced("<svg><g></svg>").is_err());
    assert!(balanced("<svg><g/></g></svg>").is_err());
    assert!(balanced("<svg><g/><text>a</text></svg>").is_ok());
}

#[test]
fn docs_graphs_are_up_to_date() {
    // docs/graphs.md promises that the committed pictures are what scopecheck draws now
    // (regenerate them with the command given there).
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/graphs");
    let mut compared = 0;
    for (rel, name) in [
        ("examples/ptx/MP+fence.sc.cta.litmus", "MP+fence.sc.cta"),
        ("examples/c/MP+host-device.sys.litmus", "MP+host-device.sys"),
        ("examples/c/MP+rel.dev+acq.wg.litmus", "MP+rel.dev+acq.wg"),
    ] {
        let (program, verdict) = load(rel);
        for p in pictures(&program, &verdict) {
            for (ext, text) in [("dot", &p.dot), ("svg", &p.svg)] {
                let file = docs.join(format!("{name}.{}.{}.{ext}", verdict.model, p.role));
                let committed = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                assert_eq!(&committed, text, "{} is stale", file.display());
                compared += 1;
            }
        }
    }
    // Two witnesses and one race's witness and counterexample, each as DOT and SVG.
    assert_eq!(compared, 8);
}

#[test]
fn sync_edges_are_the_models_synchronization() {
    // PTX: the release write and the acquire read that reads it are morally strong (both
    // .gpu, one GPU): a release pattern synchronizes with an acquire pattern. The first
    // iteration's read of the initial value synchronizes with nothing.
    let (_, verdict) = load("tests/litmus/ptx/MP+rel.gpu+spin.acq.gpu.litmus");
    let g = verdict.witness_graph.as_ref().expect("a witness graph");
    assert_eq!(
        edges(g, EdgeKind::Sync),
        [pair("W.rel.gpu flag=1", "R.acq.gpu flag=1")]
    );
    assert!(g
        .edges
        .iter()
        .all(|e| e.kind != EdgeKind::Sync || e.label == "sw"));
    // Scoped C11: the system-scope release store synchronizes with the host's acquire load
    // that reads it (the await loop's exiting iteration).
    let (_, verdict) = load("examples/c/MP+host-device.sys.litmus");
    let g = verdict.witness_graph.as_ref().expect("a witness graph");
    assert_eq!(
        edges(g, EdgeKind::Sync),
        [pair("W.rel.system flag=1", "R.acq.system flag=1")]
    );
}

#[test]
fn graphs_are_captured_only_when_asked_for() {
    // Capturing is off by default: the verdict then carries no pictures.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ptx/MP+fence.sc.cta.litmus");
    let program = scopecheck_litmus::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let verdict = check(&program, &CheckOptions::default()).unwrap();
    assert!(verdict.witness_graph.is_none() && verdict.race_graph.is_none());
}
