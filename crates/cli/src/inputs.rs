//! Turning the paths on the command line into the list of test files to check, and reading
//! those files. Both are hardened against what a CI checkout or a careless glob can hold:
//! symlink cycles, one file reachable by several names, FIFOs, sockets and devices, huge files
//! and bytes that are not UTF-8.

use std::collections::HashSet;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;
use scopecheck_ir::Span;

use crate::output::errln;
use crate::render::Failure;

/// The extension of litmus tests, searched for in directories.
pub const LITMUS_EXTENSION: &str = "litmus";
/// The extension of CUDA sources (read by scopecheck-cuda), searched for in directories.
pub const CUDA_EXTENSION: &str = "cu";
/// The extension of OpenCL C sources (read by scopecheck-cuda), searched for in directories.
pub const OPENCL_EXTENSION: &str = "cl";
/// A PTX module (`nvcc -ptx`), checked with the harness `--harness` names; a directory search
/// takes it only when there is a harness.
pub const PTX_EXTENSION: &str = "ptx";

/// What a directory search finds, for messages.
const SEARCHED: &str = ".litmus, .cu, .cl, or with --harness .ptx";

/// The default `--max-file-size`: far above any test, far below what hurts.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 16 << 20;

/// The size limit of every file read. Process-wide because it is set once from the command
/// line before anything is read, and threading it through every reader (tests, harnesses,
/// platform and cost files) would change every signature for one number.
static MAX_FILE_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_SIZE);

/// The options about reading inputs that every subcommand reading test files shares.
#[derive(Args, Clone, Debug)]
pub struct InputFlags {
    /// The largest file read (bytes, or with a binary suffix: `512K`, `64M`, `1G`); a larger
    /// file is an error.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = parse_size)]
    max_file_size: u64,
}

impl InputFlags {
    /// Makes the flags hold for every read from now on.
    pub fn apply(&self) {
        MAX_FILE_SIZE.store(self.max_file_size, Ordering::Relaxed);
    }
}

/// A size: a positive number of bytes, optionally with `K`, `M` or `G` (powers of 1024, `KiB`,
/// `MiB`, `GiB` and a trailing `B` also read).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("`{s}` is not a size (e.g. 1048576, 512K, 64M, 1G)")),
    };
    match number.parse::<u64>() {
        Ok(0) => Err(format!("`{s}`: the size must be more than zero")),
        Ok(n) => n
            .checked_mul(1 << shift)
            .ok_or_else(|| format!("`{s}` is too large")),
        Err(_) => Err(format!("`{s}` is not a size (e.g. 1048576, 512K, 64M, 1G)")),
    }
}

/// A size as people read it: `16 MiB`, `1500 bytes`.
fn show_size(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.trailing_zeros() >= shift {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// One test file to check, or a path that yielded none.
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

/// What a path that is neither a regular file nor a directory is, for messages.
fn kind(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "something other than a regular file"
    }
}

/// The files named by `paths`, in order: a file as given, a directory searched recursively,
/// entries in sorted order, for `*.litmus`, `*.cu`, `*.cl` files and, when `harness` is given,
/// `*.ptx` files (without one a `.ptx` file found is skipped with a warning, since it cannot be
/// checked; the harness itself is not a test). Each file is listed once, under the first name
/// it was found by, however many names lead to it; symbolic links to directories are followed
/// and each directory is searched once, so cycles end. FIFOs, sockets and devices are never
/// opened: named directly they are an error, found in a directory they are skipped with a
/// warning on stderr. A directory holding no test, or one that cannot be listed, yields one
/// `Input` with a problem, so that it counts as an error.
pub fn collect(paths: &[PathBuf], harness: Option<&Path>) -> Vec<Input> {
    let mut walk = Walk {
        harness: harness
            .and_then(|h| std::fs::metadata(h).ok())
            .map(|m| id(&m)),
        ptx: harness.is_some(),
        files: HashSet::new(),
        dirs: HashSet::new(),
        out: Vec::new(),
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
    walk.out
}

/// Why `path` could not even be looked at; a dangling symbolic link says so.
fn unreadable(path: &Path, e: &std::io::Error) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && e.kind() == std::io::ErrorKind::NotFound => {
            "cannot read this file: a symbolic link to a file that does not exist".into()
        }
        _ => format!("cannot read this file: {e}"),
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
            let is_test = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                [
                    LITMUS_EXTENSION,
                    CUDA_EXTENSION,
                    OPENCL_EXTENSION,
                    PTX_EXTENSION,
                ]
                .contains(&e)
            });
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
            if path.extension().is_some_and(|e| e == PTX_EXTENSION) && !self.ptx {
                errln!(
                    "warning: skipping {}: a .ptx file is checked only with --harness FILE.cu",
                    path.display()
                );
                continue;
            }
            self.found += 1;
            if !meta.is_file() {
                errln!(
                    "warning: skipping {}: {}, not a regular file",
                    path.display(),
                    kind(&meta)
                );
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

/// The message of a file whose loading its `--timeout` cut.
pub const LOADING_TIMED_OUT: &str = "the --timeout was reached while loading the file \
    (reading, preprocessing, parsing, lowering, or NVRTC's compile for the PTX view): \
    nothing was checked";

/// Each `.cu` or `.cl` input without a harness (no `main()`), as one input per kernel to check
/// (`scopecheck_cuda::plan_kernels`); a kernel that cannot be checked (a template without its
/// arguments, a `--kernel` not in the file) is an input with that problem, reported under the
/// file's name. Files with a harness, or that cannot be read or parsed, stay as they are:
/// checking them reports what is wrong.
pub fn expand_kernels(
    inputs: Vec<Input>,
    cuda: &scopecheck_cuda::CudaOptions,
    timeout: Option<std::time::Duration>,
) -> Vec<Input> {
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let ext = input.path.extension().and_then(|e| e.to_str());
        let opencl = ext == Some(OPENCL_EXTENSION);
        if input.problem.is_some() || !(opencl || ext == Some(CUDA_EXTENSION)) {
            out.push(input);
            continue;
        }
        let Ok(source) = read_source(&input.file, &input.path) else {
            out.push(input);
            continue;
        };
        // Preprocessing and parsing the file may take longer than its --timeout allows.
        let began = std::time::Instant::now();
        let cuda_owned = file_options(cuda, &input);
        let planned = crate::check::within(timeout.map(|t| began + t), move || {
            scopecheck_cuda::plan_kernels(&source, opencl, &cuda_owned)
        });
        let spent = began.elapsed();
        let planned = match planned {
            None => {
                out.push(Input {
                    problem: Some(LOADING_TIMED_OUT.into()),
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
                    problem: Some(format!("{}:{}: {}", e.span.line, e.span.column, e.message)),
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

/// Reads a test file (or a harness) whose reports name it `file`: its text, or the failure
/// to report, with the position of the first byte that is not UTF-8.
pub fn read_source(file: &str, path: &Path) -> Result<String, Box<Failure>> {
    let bytes = read_bytes(path).map_err(|e| Failure::io(file, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let (span, message) = not_utf8(&bytes, offset);
        Failure::located(
            file,
            message,
            String::from_utf8_lossy(&bytes).into_owned(),
            span,
        )
    })
}

/// Reads a text file given by a flag (a platform or cost table): its text, or why not, in one
/// line naming the file.
pub fn read_text(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let bytes = read_bytes(path).map_err(|e| format!("{shown}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        format!("{shown}: {}", not_utf8(e.as_bytes(), offset).1)
    })
}

/// Where the bytes stop being UTF-8 (`offset`, from `Utf8Error::valid_up_to`), as a span of
/// the lossy text (whose prefix up to `offset` is the same bytes) and a message.
fn not_utf8(bytes: &[u8], offset: usize) -> (Span, String) {
    // Valid UTF-8 up to the offset, so this cannot fail.
    let prefix = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line = prefix.matches('\n').count() + 1;
    let column = prefix[prefix.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let span = Span {
        offset,
        // The replacement character the lossy text has there.
        len: '\u{FFFD}'.len_utf8(),
        line: line as u32,
        column: column as u32,
    };
    let message = format!(
        "not UTF-8 text: invalid byte 0x{:02X} at byte offset {offset} (line {line}, column {column})",
        bytes[offset]
    );
    (span, message)
}

/// A file's bytes, at most `--max-file-size` of them. Only a regular file is opened: a FIFO
/// would block the open and the read, a device like /dev/zero would never end.
fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    check_regular(&meta)?;
    let limit = MAX_FILE_SIZE.load(Ordering::Relaxed);
    if meta.len() > limit {
        return Err(too_large(Some(meta.len()), limit));
    }
    // Non-blocking, and checked again once open: the path may have been replaced by a FIFO
    // since it was looked at. On a regular file the flag changes nothing.
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read this file: {e}"))?;
    let opened = file
        .metadata()
        .map_err(|e| format!("cannot read this file: {e}"))?;
    check_regular(&opened)?;
    let mut bytes = Vec::with_capacity(opened.len().min(limit) as usize);
    // One byte more than the limit tells a file that grew past it (or whose size the system
    // does not know, as in /proc) from one that fits.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read this file: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

fn check_regular(meta: &Metadata) -> Result<(), String> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(format!(
            "cannot read this file: it is {}, and only regular files are read",
            kind(meta)
        ))
    }
}

fn too_large(size: Option<u64>, limit: u64) -> String {
    let size = size.map_or_else(|| "larger".into(), |n| format!("{} bytes,", n));
    format!(
        "this file is {size} more than the limit of {} (--max-file-size raises it)",
        show_size(limit)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        for bad in [
            "0",
            "0M",
            "",
            "M",
            "1.5M",
            "12T",
            "-1",
            "99999999999999999999G",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(show_size(16 << 20), "16 MiB");
        assert_eq!(show_size(1500), "1500 bytes");
    }

    #[test]
    fn the_first_invalid_byte_is_located() {
        let bytes = b"ab\ncd\xffe";
        let (span, message) = not_utf8(bytes, 5);
        assert_eq!((span.line, span.column, span.offset), (2, 3, 5));
        assert!(
            message.contains("0xFF at byte offset 5 (line 2, column 3)"),
            "{message}"
        );
    }
}
