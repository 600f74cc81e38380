//! Assembles the kernel of every test of `tests/litmus/ptx` with `ptxas -arch=sm_90` when ptxas
//! is found: on the PATH, or in the PyPI package nvidia-cuda-nvcc installed with
//! `pip install --target DIR`, DIR given by `SCOPECHECK_PTXAS`. Without it the test passes
//! with a note: CI installs nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use scopecheck_gpu::{generate, GenError, GenOptions};

/// Where the nvidia-cuda-nvcc wheel puts ptxas under its install folder.
const PIP_PTXAS: &str = "nvidia/cu13/bin/ptxas";

fn find_ptxas() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SCOPECHECK_PTXAS") {
        let p = Path::new(&dir).join(PIP_PTXAS);
        if p.is_file() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/litmus/ptx");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the litmus corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_generated_kernel_assembles_for_sm_90() {
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found (PATH, or SCOPECHECK_PTXAS=<pip --target dir>); skipped");
        return;
    };
    let out = std::env::temp_dir().join(format!("scopecheck-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let (mut assembled, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for file in corpus() {
        let src = std::fs::read_to_string(&file).unwrap();
        let Ok(program) = scopecheck_litmus::parse(&src) else {
            println!("not parsed, skipped: {}", file.display());
            continue;
        };
        let kernel = match generate(&program, &GenOptions::default()) {
            Ok(k) => k,
            Err(GenError::Unsupported(why)) => {
                println!("refused {}: {why}", file.display());
                refused += 1;
                continue;
            }
            Err(e) => panic!("{}: {e}", file.display()),
        };
        let ptx = out.join("kernel.ptx");
        std::fs::write(&ptx, &kernel.ptx).unwrap();
        let o = Command::new(&ptxas)
            .args(["-arch=sm_90", "-o"])
            .arg(out.join("kernel.cubin"))
            .arg(&ptx)
            .output()
            .expect("ptxas runs");
        if o.status.success() {
            assembled += 1;
        } else {
            failures.push(format!(
                "{}:\n{}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    println!("assembled {assembled}, refused {refused}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(assembled > 0);
}

#[test]
fn the_cost_benchmarks_assemble_for_sm_90() {
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found; skipped");
        return;
    };
    let out = std::env::temp_dir().join(format!("scopecheck-cost-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let ptx = out.join("cost.ptx");
    std::fs::write(&ptx, scopecheck_gpu::cost::module_ptx()).unwrap();
    let o = Command::new(&ptxas)
        .args(["-arch=sm_90", "-o"])
        .arg(out.join("cost.cubin"))
        .arg(&ptx)
        .output()
        .expect("ptxas runs");
    let _ = std::fs::remove_dir_all(&out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
