//! SARIF logs of real checks: each is validated against the OASIS SARIF 2.1.0 schema
//! (tests/data/sarif-schema-2.1.0.json, see tests/data/README.md) and its results pinned: rule
//! ids, levels, and the regions of every location, reasoned from the test's text.

use std::path::Path;

use scopecheck_model::{check, CheckOptions, ModelKind};
use scopecheck_report::sarif::{CheckedVerdict, SarifLog};
use serde_json::{json, Value};

/// The schema, compiled once per test (cheap next to checking).
fn validator() -> jsonschema::Validator {
    let text = include_str!("data/sarif-schema-2.1.0.json");
    let mut schema: Value = serde_json::from_str(text).expect("the schema is JSON");
    // The schema's pattern for `language` (of a run and of a tool component) has a lone `]`,
    // a literal only in ECMAScript's legacy (Annex B) syntax, so the `regex` format the
    // meta-schema asserts rejects the schema itself. Escaping it keeps the meaning; nothing
    // else is touched (the file stays as published), and scopecheck writes no `language`.
    for def in ["run", "toolComponent"] {
        let pattern = &mut schema["definitions"][def]["properties"]["language"]["pattern"];
        assert_eq!(pattern, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$", "{def}");
        *pattern = json!("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$");
    }
    // Formats too: `uri` for the base directory, `uri-reference` for artifact URIs.
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

/// Panics with every schema violation of `log`.
fn assert_valid(log: &Value) {
    let v = validator();
    let errors: Vec<String> = v
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid SARIF 2.1.0 log: {errors:#?}\n{log:#}"
    );
}

/// Checks litmus test `src` (named `file`) under each of `models` and returns its SARIF log,
/// validated.
fn log_with(file: &str, src: &str, models: &[Option<ModelKind>], opts: CheckOptions) -> Value {
    let t = scopecheck_litmus::parse_test(src).expect("the test parses");
    let verdicts: Vec<_> = models
        .iter()
        .map(|m| {
            let opts = CheckOptions {
                model: *m,
                ..opts.clone()
            };
            check(&t.program, &opts).expect("the test checks")
        })
        .collect();
    let warnings: Vec<scopecheck_ir::Diagnostic> = t.warnings.clone();
    let checked: Vec<_> = verdicts
        .iter()
        .map(|verdict| CheckedVerdict {
            program: &t.program,
            verdict,
        })
        .collect();
    let mut log = SarifLog::new();
    log.add_checked(file, src, &warnings, &checked);
    let json = log.to_json("0.1.0", None, Some(Path::new("/work/project")));
    assert_valid(&json);
    json
}

fn log_of(file: &str, src: &str) -> Value {
    log_with(file, src, &[None], CheckOptions::default())
}

/// A region as `(startLine, startColumn, endLine, endColumn)`.
fn region(location: &Value) -> (u64, u64, u64, u64) {
    let r = &location["physicalLocation"]["region"];
    let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("no {k} in {r}"));
    (
        n("startLine"),
        n("startColumn"),
        n("endLine"),
        n("endColumn"),
    )
}

/// Each result as `(ruleId, level, region of locations[0], regions of relatedLocations)`.
type Summary = (
    String,
    String,
    (u64, u64, u64, u64),
    Vec<(u64, u64, u64, u64)>,
);

fn summary(log: &Value) -> Vec<Summary> {
    results(log)
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                region(&r["locations"][0]),
                r["relatedLocations"]
                    .as_array()
                    .map_or(vec![], |a| a.iter().map(region).collect()),
            )
        })
        .collect()
}

fn results(log: &Value) -> Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap().clone()
}

/// The ids of the run's rules, in order.
fn rule_ids(log: &Value) -> Vec<String> {
    log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

const RACY_C: &str = "OPENCL MP+rlx
{ data=0; flag=0; }

P0@wg 0, dev 0 (global int* data, global atomic_int* flag) {
  *data = 1;
  atomic_store_explicit(flag, 1, memory_order_relaxed, memory_scope_device);
}

P1@wg 1, dev 0 (global int* data, global atomic_int* flag) {
  int r0 = atomic_load_explicit(flag, memory_order_relaxed, memory_scope_device);
  int r1 = -1;
  if (r0 == 1) {
    r1 = *data;
  }
}

exists (1:r0=1 /\\ 1:r1=0)
";

#[test]
fn a_racy_c_test_has_both_accesses() {
    let log = log_of("tests/MP+rlx.litmus", RACY_C);
    // The relaxed flag orders nothing, so P0's plain write of `data` (line 5, `*data = 1;`
    // from column 3, 10 characters) races with P1's plain read (line 13, `*data` from column
    // 10, 5 characters). The `exists` condition asks a question: no requirement fails. No
    // release or acquire, no fence: no lint.
    assert_eq!(
        summary(&log),
        [(
            s("data-race"),
            s("error"),
            (5, 3, 5, 13),
            vec![(13, 10, 13, 15)]
        )]
    );
    let r = &results(&log)[0];
    // The message names both accesses and links the second to its related location (id 1).
    assert_eq!(
        r["message"]["text"],
        "data race on `data`: P0 writes data (line 5) and [P1 reads data](1) (line 13)"
    );
    assert_eq!(r["relatedLocations"][0]["id"], 1);
    assert_eq!(r["locations"][0]["message"]["text"], "P0 writes data");
    // One model checked (the C test's default, scoped C11), named in the properties only.
    assert_eq!(r["properties"]["models"], json!(["src11"]));
    assert_eq!(rule_ids(&log), ["data-race"]);
    assert_eq!(r["ruleIndex"], 0);
    // A relative file name is a relative URI under %SRCROOT%, which the run maps to the
    // directory given; `+` may stand in a URI path as it is.
    let artifact = &r["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "tests/MP+rlx.litmus");
    assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
    assert_eq!(
        log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///work/project/"
    );
}

const MP_CTA_FENCES: &str = "PTX MP+fence.sc.cta
{ data=0; flag=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0          ;
 st.weak data, 1        | ld.relaxed.gpu r0, flag ;
 fence.sc.cta           | fence.sc.cta            ;
 st.relaxed.gpu flag, 1 | ld.weak r1, data        ;
~exists (P1:r0 == 1 /\\ P1:r1 == 0)
";

#[test]
fn a_failing_ptx_requirement_is_at_its_condition_with_the_witness_reads() {
    let log = log_of("MP+fence.sc.cta.litmus", MP_CTA_FENCES);
    assert_eq!(
        summary(&log),
        [
            // The .cta fences do not reach the other CTA, so the stale read is allowed and
            // `~exists` fails: at the condition (line 7, all 34 characters), with the witness
            // reads as related locations: P1's flag load (line 4, column 27, 23 characters)
            // and its data load (line 6, column 27, 16 characters).
            (
                s("requirement-fails"),
                s("error"),
                (7, 1, 7, 35),
                vec![(4, 27, 4, 50), (6, 27, 6, 43)]
            ),
            // Under PTX the weak data accesses are not morally strong and nothing orders them:
            // a data race, from P0's store (line 4, column 2, 15 characters) to P1's load.
            (
                s("data-race"),
                s("error"),
                (4, 2, 4, 17),
                vec![(6, 27, 6, 43)]
            ),
            // Each `fence.sc.cta` (line 5, columns 2 and 27, 12 characters) leaves out the
            // other thread, which shares `data` and `flag`.
            (
                s("fence-scope-excludes-sharer"),
                s("warning"),
                (5, 2, 5, 14),
                vec![]
            ),
            (
                s("fence-scope-excludes-sharer"),
                s("warning"),
                (5, 27, 5, 39),
                vec![]
            ),
        ]
    );
    let r = results(&log);
    assert_eq!(
        r[0]["message"]["text"],
        "the condition can fail: ~exists (P1:r0=1 /\\ P1:r1=0); one execution that breaks it: [P1 reads flag=1 from P0 line 6](1) (line 4); [P1 reads data=0 from the initial value](2) (line 6)"
    );
    // The rules in catalog order, each result indexing its own.
    assert_eq!(
        rule_ids(&log),
        [
            "requirement-fails",
            "data-race",
            "fence-scope-excludes-sharer"
        ]
    );
    let indices: Vec<u64> = r.iter().map(|x| x["ruleIndex"].as_u64().unwrap()).collect();
    assert_eq!(indices, [0, 1, 2, 2]);
    let rules = &log["runs"][0]["tool"]["driver"]["rules"];
    assert_eq!(rules[2]["defaultConfiguration"]["level"], "warning");
    assert_eq!(rules[0]["defaultConfiguration"]["level"], "error");
}

const AWAIT_NEVER_WRITTEN: &str = "PTX Await+never-written
{ flag=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0             ;
 st.relaxed.gpu flag, 2 | L: ld.relaxed.gpu r0, flag ;
                        | bne r0, 1, L               ;
exists (P1:r0 == 1)
";

#[test]
fn a_hang_is_at_the_spinning_loop() {
    let log = log_of("await.litmus", AWAIT_NEVER_WRITTEN);
    // Nobody writes 1, so P1 spins forever at its backward branch (line 5, `bne r0, 1, L`
    // from column 27, 12 characters) under every scheduler: a hang, and nothing else.
    assert_eq!(
        summary(&log),
        [(s("hang"), s("error"), (5, 27, 5, 39), vec![])]
    );
    assert_eq!(
        results(&log)[0]["message"]["text"],
        "a thread can wait forever (under fair): P1 waits forever here (line 5); every thread is scheduled and none can release it"
    );
}

const RELEASE_UNACQUIRED: &str = "PTX Lint
{ f=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.release.gpu f, 1 | ld.relaxed.gpu r0, f ;
exists (P1:r0 == 1)
";

#[test]
fn a_lint_has_its_own_rule_id() {
    let log = log_of("lint.litmus", RELEASE_UNACQUIRED);
    // P1 reads `f` relaxed with no fence after: P0's release (line 4, column 2, 19
    // characters) orders nothing for it. Both accesses are atomic: no race.
    assert_eq!(
        summary(&log),
        [(
            s("release-without-acquire"),
            s("warning"),
            (4, 2, 4, 21),
            vec![]
        )]
    );
    let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
    assert_eq!(rule["id"], "release-without-acquire");
    assert_eq!(
        rule["shortDescription"]["text"],
        "A release that nobody acquires"
    );
}

const CLEAN: &str = "PTX MP+rel+acq
{ data=0; flag=0; }
 P0@cta 0,gpu 0         | P1@cta 1,gpu 0          ;
 st.relaxed.gpu data, 1 | ld.acquire.gpu r0, flag ;
 st.release.gpu flag, 1 | ld.relaxed.gpu r1, data ;
~exists (P1:r0 == 1 /\\ P1:r1 == 0)
";

#[test]
fn a_clean_file_gives_a_valid_log_without_results() {
    let log = log_of("clean.litmus", CLEAN);
    // Release/acquire at gpu scope between two CTAs of one GPU: the requirement holds; the
    // payload is accessed relaxed at gpu scope, morally strong, so no race (weak accesses
    // would race where P1 reads the flag before it is set); no hang, no lint. The log still names the tool, with no rules.
    assert_eq!(summary(&log), []);
    assert_eq!(rule_ids(&log), Vec::<String>::new());
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "scopecheck");
    assert_eq!(driver["version"], "0.1.0");
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["columnKind"], "unicodeCodePoints");
}

#[test]
fn an_incomplete_check_is_visible() {
    let opts = CheckOptions {
        max_executions: Some(1),
        ..CheckOptions::default()
    };
    let log = log_with("clean.litmus", CLEAN, &[None], opts);
    // One execution of four cannot show that no execution breaks `~exists`: the result is
    // Unknown, a warning at the condition (line 6, 34 characters), not silence.
    assert_eq!(
        summary(&log),
        [(s("unknown"), s("warning"), (6, 1, 6, 35), vec![])]
    );
    let text = results(&log)[0]["message"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("the check is incomplete and its result Unknown: "),
        "{text}"
    );
}

#[test]
fn findings_both_models_make_are_one_result_naming_both() {
    let both = [Some(ModelKind::Src11), Some(ModelKind::Ptx)];
    let log = log_with(
        "tests/MP+rlx.litmus",
        RACY_C,
        &both,
        CheckOptions::default(),
    );
    // Scoped C11 and PTX (the C test compiled with the CUDA mapping) both find the race on
    // `data` between the same two accesses: one result, both models in its properties and
    // its message.
    assert_eq!(
        summary(&log),
        [(
            s("data-race"),
            s("error"),
            (5, 3, 5, 13),
            vec![(13, 10, 13, 15)]
        )]
    );
    let r = &results(&log)[0];
    assert_eq!(r["properties"]["models"], json!(["src11", "ptx"]));
    assert!(
        r["message"]["text"]
            .as_str()
            .unwrap()
            .ends_with("(line 13) (under src11 and ptx)"),
        "{}",
        r["message"]["text"]
    );
}

const SHARED_DEVICE_SCOPE: &str = "CUDA MP+shared
{ __shared__ int buf = 0; __shared__ int flag = 0; }

P0@block 0, gpu 0 (__shared__ int* buf, __shared__ int* flag) {
  *buf = 5;
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  f.store(1, cuda::std::memory_order_release);
}

P1@block 0, gpu 0 (__shared__ int* buf, __shared__ int* flag) {
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  while (f.load(cuda::std::memory_order_acquire) == 0) {}
  int r0 = *buf;
}

forall (1:r0=5)
";

#[test]
fn front_end_warnings_are_results() {
    let log = log_of("shared.litmus", SHARED_DEVICE_SCOPE);
    // A device-scope atomic_ref on shared memory is narrowed to the block, at each
    // operation: P0's store (line 7 from column 3, `f.store(...)`, 43 characters) and P1's
    // load (line 12 from column 10, `f.load(...)`, 39 characters). The program is right once
    // narrowed: nothing else.
    assert_eq!(
        summary(&log),
        [
            (s("frontend-warning"), s("warning"), (7, 3, 7, 46), vec![]),
            (
                s("frontend-warning"),
                s("warning"),
                (12, 10, 12, 49),
                vec![]
            ),
        ]
    );
    assert_eq!(
        results(&log)[0]["message"]["text"],
        "atomic on `flag` (local/shared memory) with scope gpu: treated as block (cta) scope"
    );
}

#[test]
fn an_input_error_is_at_its_line_and_column() {
    let src = "PTX bad\n{ x=0; }\n P0 ;\n ld.foo r0, x ;\nexists (x == 0)\n";
    let e = scopecheck_litmus::parse_test(src).expect_err("`ld.foo` is no instruction");
    let mut log = SarifLog::new();
    // The message alone: the notes (what the parser expected) are another test's matter.
    let error = scopecheck_ir::Diagnostic::error(e.message.clone())
        .at(e.span.expect("a parse error has a span"))
        .in_file("bad.litmus");
    log.add_input_error(&error, Some(src));
    // A file without a position (unreadable) has its artifact only.
    let missing =
        scopecheck_ir::Diagnostic::error("No such file or directory").in_file("missing.litmus");
    log.add_input_error(&missing, None);
    let json = log.to_json("0.1.0", None, None);
    assert_valid(&json);
    let r = results(&json);
    // The parser points at the unknown part of the opcode, `.foo` (line 4, columns 4 to 7).
    assert_eq!(r[0]["ruleId"], "input-error");
    assert_eq!(r[0]["level"], "error");
    assert_eq!(region(&r[0]["locations"][0]), (4, 4, 4, 8));
    assert_eq!(r[0]["message"]["text"], e.message.as_str());
    assert_eq!(
        r[1]["locations"][0]["physicalLocation"],
        json!({ "artifactLocation": { "uri": "missing.litmus", "uriBaseId": "%SRCROOT%" } })
    );
    // Without a base directory the run has no originalUriBaseIds.
    assert!(json["runs"][0].get("originalUriBaseIds").is_none());
    assert_eq!(rule_ids(&json), ["input-error"]);
}

#[test]
fn the_schema_rejects_a_broken_log() {
    // The validation above can fail: a level SARIF does not have is caught.
    let mut log = log_of("tests/MP+rlx.litmus", RACY_C);
    log["runs"][0]["results"][0]["level"] = json!("fatal");
    assert!(!validator().is_valid(&log));
    // And so is a result without a message.
    let mut log = log_of("tests/MP+rlx.litmus", RACY_C);
    log["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("message");
    assert!(!validator().is_valid(&log));
}

/// `tune --sarif`: message passing inside one CTA with a .sys release and acquire. Both
/// threads are in CTA 0, so .cta scope keeps the release/acquire pair morally strong and the
/// requirement holds: tune's maximal set narrows both flag accesses, and each change is one
/// `tune-weakening` note at its line, the other change its related location.
#[test]
fn tune_weakenings_are_notes_at_their_lines() {
    let src = "PTX MP+sys+one-cta
{ data=0; flag=0; }
 P0@cta 0,gpu 0          | P1@cta 0,gpu 0          ;
 st.weak data, 1         | ld.acquire.sys r0, flag ;
 st.release.sys flag, 1  | ld.weak r1, data        ;
~exists (P1:r0 == 1 /\\ P1:r1 == 0)
";
    let t = scopecheck_litmus::parse_test(src).expect("the test parses");
    let table = scopecheck_model::suggest::CostTable { cycles: vec![] };
    let tuning = scopecheck_model::tune::tune(
        &t.program,
        &[CheckOptions::default()],
        &table,
        scopecheck_model::tune::DEFAULT_MAX_CHECKS,
    )
    .expect("tune runs");
    let found = scopecheck_report::tune::tune_sarif(
        "mp.litmus",
        &tuning,
        scopecheck_report::tune::Dialect::Ptx,
        src,
    );
    let mut log = SarifLog::new();
    for r in found {
        log.push(r);
    }
    let json = log.to_json("0.1.0", None, Some(Path::new("/work/project")));
    assert_valid(&json);
    assert_eq!(rule_ids(&json), ["tune-weakening"]);
    let rs = results(&json);
    // Line 5 holds the release (P0), line 4 the acquire (P1): one note each, each relating
    // the other.
    let mut lines: Vec<u64> = rs.iter().map(|r| region(&r["locations"][0]).0).collect();
    lines.sort();
    assert_eq!(lines, [4, 5], "{json}");
    for r in &rs {
        assert_eq!(r["level"], "note");
        assert_eq!(r["relatedLocations"].as_array().map(|a| a.len()), Some(1));
        assert!(
            r["message"]["text"].as_str().unwrap_or("").contains(".cta"),
            "{r}"
        );
    }
}
