//! Turning the paths on the command line into the list of test files to check.

use std::path::{Path, PathBuf};

/// The extension of the files a directory is searched for.
pub const LITMUS_EXTENSION: &str = "litmus";
/// The extension of CUDA sources (read by scopecheck-cuda), also searched for.
pub const CUDA_EXTENSION: &str = "cu";
/// The extension of OpenCL C sources (read by scopecheck-cuda), also searched for.
pub const OPENCL_EXTENSION: &str = "cl";
/// A PTX module (`nvcc -ptx`), checked with the harness `--harness` names; only when named.
pub const PTX_EXTENSION: &str = "ptx";

/// One test file to check, or a path that yielded none.
pub struct Input {
    /// The path as given, or as found under a given directory; reports name the file by it.
    pub file: String,
    pub path: PathBuf,
    /// Why this path cannot be checked, when that is known before reading it.
    pub problem: Option<String>,
}

/// The files named by `paths`, in order: a file as given, a directory searched recursively for
/// `*.litmus` and `*.cu` files in sorted order. A directory holding none, or one that cannot be listed,
/// yields one `Input` with a problem, so that it counts as an error.
pub fn collect(paths: &[PathBuf]) -> Vec<Input> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(input(path.clone(), None));
            continue;
        }
        let mut found = Vec::new();
        if let Err(e) = walk(path, &mut found) {
            out.push(input(
                path.clone(),
                Some(format!("cannot list this directory: {e}")),
            ));
            continue;
        }
        if found.is_empty() {
            let problem = format!("no .{LITMUS_EXTENSION} file found under this directory (and no .{CUDA_EXTENSION} file)");
            out.push(input(path.clone(), Some(problem)));
        }
        found.sort();
        out.extend(found.into_iter().map(|p| input(p, None)));
    }
    out
}

fn input(path: PathBuf, problem: Option<String>) -> Input {
    Input {
        file: path.display().to_string(),
        path,
        problem,
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, found)?;
        } else if path
            .extension()
            .is_some_and(|e| e == LITMUS_EXTENSION || e == CUDA_EXTENSION || e == OPENCL_EXTENSION)
        {
            found.push(path);
        }
    }
    Ok(())
}
