//! The NVRTC view of the shipped CUDA examples: each file's device part (host code blanked,
//! lines kept) compiles with NVRTC for sm_90, its PTX parses, and every kernel of every launch
//! lowers from that PTX, each instruction answering for a line of the `.cu` file. Fails, does
//! not skip, without NVRTC (the README's test command installs it). The verdicts of the view
//! are checked in tests/cuda.rs (`--model ptx`).

use std::path::Path;

#[test]
fn every_cuda_example_has_a_ptx_view() {
    let nvrtc = scopecheck_nvrtc::Nvrtc::find().unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cuda");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/cuda")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).expect("readable");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let device = scopecheck_cuda::device_source(&source).expect("the grammar reads it");
        assert_eq!(device.lines().count(), source.lines().count(), "{name}");
        let options = Default::default();
        match scopecheck_cuda::ptx_view(&source, &name, &options, &nvrtc, "compute_90", false) {
            Ok(view) => {
                let lines = source.lines().count() as u32;
                for t in &view.program.threads {
                    for i in &t.code {
                        if i.span.line == 0 || i.span.line > lines {
                            failures.push(format!(
                                "{name}: {} `{}` at line {}",
                                t.name, i.text, i.span.line
                            ));
                        }
                    }
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(files.len() >= 20, "{} examples", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
