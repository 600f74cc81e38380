//! Turning paths into the list of test files to check: directories searched recursively,
//! symlink cycles, one file reachable by several names, FIFOs, sockets and devices; and a
//! kernel-only file (no `main()`) made one input per kernel.

use std::collections::HashSet;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use scopecheck_ir::Diagnostic;

use crate::read::{check_regular, kind, read_source, unreadable};
use crate::Kind;

/// What a directory search finds, for messages.
const SEARCHED: &str = ".litmus, .cu, .cl, or with --harness .ptx";

/// One test file to check, or a path that yielded none.
#[derive(Clone, Debug)]
pub struct Input {
    /// The path as given, or as found under a given directory; reports name the file by it.
    pub file: String,
    pub path: PathBuf,
    /// Why this path cannot be checked, when that is known before reading it.
    pub problem: Option<String>,
    /// For a kernel-only file (no `main()`): the kernel this input checks, and its launch.
    pub kernel: Option<scopecheck_cuda::KernelChoice>,
    /// The time already spent reading the file for its kernels (`expand_kernels`): its
    /// `--timeout` covers that too.
    pub spent: std::time::Duration,
}

/// A file's identity: the same file reached by two names (symlinks, hard links, `a/../a`)
/// has one.
type Id = (u64, u64);

fn id(m: &Metadata) -> Id {
    (m.dev(), m.ino())
}

impl Input {
    /// The file at `path`, named by it, with nothing known about it yet.
    pub fn new(path: impl Into<PathBuf>) -> Input {
        let path = path.into();
        Input {
            file: path.display().to_string(),
            path,
            problem: None,
            kernel: None,
            spent: Default::default(),
        }
    }
}

/// What [`collect`] found: the inputs, and a warning for each path it skipped.
pub struct Listed {
    pub inputs: Vec<Input>,
    pub skipped: Vec<Diagnostic>,
}

/// The files named by `paths`, in order: a file as given, a directory searched recursively,
/// entries in sorted order, for `*.litmus`, `*.cu`, `*.cl` files and, when `harness` is given,
/// `*.ptx` files (without one a `.ptx` file found is skipped with a warning, since it cannot be
/// checked; the harness itself is not a test). Each file is listed once, under the first name
/// it was found by, however many names lead to it; symbolic links to directories are followed
/// and each directory is searched once, so cycles end. FIFOs, sockets and devices are never
/// opened: named directly they are an error, found in a directory they are skipped with a
/// warning ([`Listed::skipped`]). A directory holding no test, or one that cannot be listed, yields one
/// `Input` with a problem, so that it counts as an error.
pub fn collect(paths: &[PathBuf], harness: Option<&Path>) -> Listed {
    let mut walk = Walk {
        harness: harness
            .and_then(|h| std::fs::metadata(h).ok())
            .map(|m| id(&m)),
        ptx: harness.is_some(),
        files: HashSet::new(),
        dirs: HashSet::new(),
        out: Vec::new(),
        skipped: Vec::new(),
        found: 0,
    };
    for path in paths {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                walk.push(path.clone(), Some(unreadable(path, &e)));
                continue;
            }
        };
        if meta.is_dir() {
            // Named again, or already searched as part of a directory named before.
            if walk.dirs.contains(&id(&meta)) {
                continue;
            }
            walk.found = 0;
            walk.dir(path, &meta);
            if walk.found == 0 {
                let problem = format!("no test file ({SEARCHED}) found under this directory");
                walk.push(path.clone(), Some(problem));
            }
        } else if let Err(problem) = check_regular(&meta) {
            walk.push(path.clone(), Some(problem));
        } else if walk.files.insert(id(&meta)) {
            walk.push(path.clone(), None);
        }
    }
    Listed {
        inputs: walk.out,
        skipped: walk.skipped,
    }
}

/// The state of one `collect`.
struct Walk {
    harness: Option<Id>,
    /// Whether `.ptx` files are tests (there is a harness).
    ptx: bool,
    files: HashSet<Id>,
    dirs: HashSet<Id>,
    out: Vec<Input>,
    skipped: Vec<Diagnostic>,
    /// Test files seen under the directory being searched, duplicates included, so that a
    /// directory whose files were all listed before is not "without tests".
    found: usize,
}

impl Walk {
    fn push(&mut self, path: PathBuf, problem: Option<String>) {
        self.out.push(Input {
            file: path.display().to_string(),
            path,
            problem,
            kernel: None,
            spent: Default::default(),
        });
    }

    fn dir(&mut self, dir: &Path, meta: &Metadata) {
        // A directory seen before is a cycle (a symlink to an ancestor) or a second way in.
        if !self.dirs.insert(id(meta)) {
            return;
        }
        let mut entries = Vec::new();
        let listed = std::fs::read_dir(dir).and_then(|rd| {
            for entry in rd {
                entries.push(entry?.path());
            }
            Ok(())
        });
        if let Err(e) = listed {
            self.push(
                dir.to_path_buf(),
                Some(format!("cannot list this directory: {e}")),
            );
            // It counts as found: its own error is reported, not "no test file".
            self.found += 1;
            return;
        }
        // Sorted, and searched depth first, the list comes out in path order, and which of
        // several names of one file is kept does not depend on the order the system lists them.
        entries.sort();
        for path in entries {
            let found = Kind::searched(&path);
            let is_test = found.is_some();
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    // A dangling link or a loop of links: an error only where a test was meant.
                    if is_test {
                        self.found += 1;
                        self.push(path.clone(), Some(unreadable(&path, &e)));
                    }
                    continue;
                }
            };
            if meta.is_dir() {
                self.dir(&path, &meta);
                continue;
            }
            if !is_test {
                continue;
            }
            if found == Some(Kind::Ptx) && !self.ptx {
                self.skipped.push(Diagnostic::warning(format!(
                    "skipping {}: a .ptx file is checked only with --harness FILE.cu",
                    path.display()
                )));
                continue;
            }
            self.found += 1;
            if !meta.is_file() {
                self.skipped.push(Diagnostic::warning(format!(
                    "skipping {}: {}, not a regular file",
                    path.display(),
                    kind(&meta)
                )));
                continue;
            }
            if self.harness == Some(id(&meta)) {
                continue;
            }
            if self.files.insert(id(&meta)) {
                self.push(path, None);
            }
        }
    }
}

/// The front-end's options for `input`: its kernel (of a kernel-only file) and its folder,
/// where `#include "..."` looks first.
pub fn file_options(
    cuda: &scopecheck_cuda::CudaOptions,
    input: &Input,
) -> scopecheck_cuda::CudaOptions {
    let mut o = cuda.clone();
    o.kernel = input.kernel.clone();
    o.compile.include.file_dir = Some(match input.path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    });
    o
}

/// Each `.cu` or `.cl` input without a harness (no `main()`), as one input per kernel to check
/// (`scopecheck_cuda::plan_kernels`); a kernel that cannot be checked (a template without its
/// arguments, a `--kernel` not in the file) is an input with that problem, reported under the
/// file's name. Files with a harness, or that cannot be read (over `max_file_size` bytes) or
/// parsed, stay as they are: checking them reports what is wrong.
pub fn expand_kernels(
    inputs: Vec<Input>,
    cuda: &scopecheck_cuda::CudaOptions,
    timeout: Option<std::time::Duration>,
    max_file_size: u64,
) -> Vec<Input> {
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let kind = Kind::of(&input.path);
        let opencl = kind == Kind::OpenCl;
        if input.problem.is_some() || !(opencl || kind == Kind::Cuda) {
            out.push(input);
            continue;
        }
        let Ok(source) = read_source(&input.file, &input.path, max_file_size) else {
            out.push(input);
            continue;
        };
        // Preprocessing and parsing the file may take longer than its --timeout allows.
        let began = std::time::Instant::now();
        let cuda_owned = file_options(cuda, &input);
        let planned = crate::deadline::within(timeout.map(|t| began + t), move || {
            scopecheck_cuda::plan_kernels(&source, opencl, &cuda_owned)
        });
        let spent = began.elapsed();
        let planned = match planned {
            None => {
                out.push(Input {
                    problem: Some(crate::deadline::LOADING_TIMED_OUT.into()),
                    spent,
                    ..input
                });
                continue;
            }
            Some(p) => p,
        };
        let planned = match planned {
            Ok(Some(p)) => p,
            Ok(None) => {
                out.push(Input { spent, ..input });
                continue;
            }
            Err(e) => {
                out.push(Input {
                    problem: Some(format!("{}:{}: {}", e.line(), e.column(), e.message)),
                    spent,
                    ..input
                });
                continue;
            }
        };
        for p in planned {
            let (problem, kernel) = match p {
                Ok(choice) => (None, Some(choice)),
                Err((name, why)) if name.is_empty() => (Some(why), None),
                Err((name, why)) => (Some(format!("kernel `{name}`: {why}")), None),
            };
            out.push(Input {
                file: input.file.clone(),
                path: input.path.clone(),
                problem,
                kernel,
                spent,
            });
        }
    }
    out
}
