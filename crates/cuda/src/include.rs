//! `#include` for the preprocessor (`preprocess.rs`): where headers are looked for, which
//! names are the system's and CUDA's (known to the front-end without being read), and how a
//! header read joins the file.
//!
//! A header found is preprocessed with the file's macros (what it defines holds after the
//! `#include`), and its text, comments removed, is put on the line of the `#include` itself:
//! every line of the file keeps its number, and what the header declares answers for the
//! `#include` line (as the PTX view's code inlined from a header does).

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How deeply headers may include headers.
pub const MAX_INCLUDE_DEPTH: usize = 40;

/// The largest header read.
const MAX_HEADER_BYTES: u64 = 4 << 20;

/// Where headers are looked for: `#include "x.h"` in the including file's folder, then in
/// `dirs` (`-I`, in order); `#include <x.h>` in `dirs` only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncludePath {
    /// The folder of the file being checked (`None`: quoted headers are looked for in `dirs`
    /// only).
    pub file_dir: Option<PathBuf>,
    pub dirs: Vec<PathBuf>,
}

/// A header read: the name its `#include` wrote, where it was found, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
}

/// What one preprocessing run shares between the file and its headers.
#[derive(Debug, Default)]
pub(crate) struct IncludeState {
    pub path: IncludePath,
    /// Headers that said `#pragma once` and were read.
    pub once: RefCell<HashSet<PathBuf>>,
    /// Every header read, in order.
    pub headers: RefCell<Vec<Header>>,
}

impl IncludeState {
    /// The header `name` (`angled`: written `<name>`) included from a file in `dir`.
    pub fn resolve(&self, name: &str, angled: bool, dir: Option<&Path>) -> Option<PathBuf> {
        let here = if angled { None } else { dir };
        here.into_iter()
            .chain(self.path.dirs.iter().map(PathBuf::as_path))
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    }
}

/// Reads a header: its text, or why not.
pub(crate) fn read_header(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_HEADER_BYTES {
        return Err(format!("larger than {} MiB", MAX_HEADER_BYTES >> 20));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

/// Whether `<name>` is a header of the C or C++ standard library, the system, CUDA (runtime,
/// libcu++, CUB, Thrust, cooperative groups, the math libraries) or OpenCL: the front-end knows
/// what it declares, and NVRTC finds the device ones itself.
pub(crate) fn is_system_header(name: &str) -> bool {
    const C_HEADERS: &[&str] = &[
        "assert.h",
        "complex.h",
        "ctype.h",
        "errno.h",
        "fenv.h",
        "float.h",
        "inttypes.h",
        "iso646.h",
        "limits.h",
        "locale.h",
        "math.h",
        "setjmp.h",
        "signal.h",
        "stdalign.h",
        "stdarg.h",
        "stdatomic.h",
        "stdbool.h",
        "stddef.h",
        "stdint.h",
        "stdio.h",
        "stdlib.h",
        "string.h",
        "tgmath.h",
        "threads.h",
        "time.h",
        "uchar.h",
        "wchar.h",
        "wctype.h",
        "unistd.h",
        "pthread.h",
        "omp.h",
        "malloc.h",
        "memory.h",
        "strings.h",
        "fcntl.h",
        "dirent.h",
        "dlfcn.h",
        "sched.h",
        "semaphore.h",
        "getopt.h",
        "immintrin.h",
        "x86intrin.h",
        "mma.h",
        "vector_types.h",
        "vector_functions.h",
        "driver_types.h",
        "device_launch_parameters.h",
        "device_functions.h",
        "device_atomic_functions.h",
        "math_constants.h",
        "math_functions.h",
        "texture_fetch_functions.h",
        "surface_functions.h",
        "host_defines.h",
        "nvrtc.h",
        "nvToolsExt.h",
        "cooperative_groups.h",
        "builtin_types.h",
        "channel_descriptor.h",
    ];
    const PREFIXES: &[&str] = &[
        "cuda",
        "cu",
        "cub/",
        "thrust/",
        "nv/",
        "crt/",
        "sm_",
        "cooperative_groups/",
        "sys/",
        "bits/",
        "CL/",
        "OpenCL/",
        "nvtx3/",
        "npp",
        "nvjpeg",
        "mma",
    ];
    // The C++ library's headers have no extension (`<vector>`, `<cstdio>`, `<atomic>`).
    let no_extension = !name.contains('.') && !name.contains('/');
    no_extension || C_HEADERS.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The lines of a preprocessed header as one line: comments removed (a `//` comment would
/// swallow the rest), lines joined by spaces.
pub(crate) fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    let mut in_block = false;
    for line in lines {
        let b = line.as_bytes();
        let mut i = 0;
        let mut start = 0;
        let mut piece = String::new();
        while i < b.len() {
            if in_block {
                if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    in_block = false;
                    i += 2;
                    start = i;
                    piece.push(' ');
                } else {
                    i += 1;
                }
                continue;
            }
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    piece.push_str(&line[start..i]);
                    start = b.len();
                    break;
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    piece.push_str(&line[start..i]);
                    in_block = true;
                    i += 2;
                }
                q @ (b'"' | b'\'') => {
                    i += 1;
                    while i < b.len() && b[i] != q {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                _ => i += 1,
            }
        }
        if !in_block && start < b.len() {
            piece.push_str(&line[start.min(b.len())..]);
        }
        let piece = piece.trim_end_matches('\r').trim();
        if !piece.is_empty() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_and_lines_join() {
        let lines: Vec<String> = [
            "int a; // one",
            "/* two",
            " lines */ int b = '/'; const char *s = \"//x\";",
            "",
            "int c; /* x */ int d;",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            join_lines(&lines),
            "int a; int b = '/'; const char *s = \"//x\"; int c;   int d;"
        );
    }

    #[test]
    fn system_headers_are_known() {
        for h in [
            "cstdio",
            "vector",
            "cuda_runtime.h",
            "cuda/atomic",
            "cub/cub.cuh",
            "stdio.h",
            "CL/cl.h",
            "cooperative_groups.h",
            "curand_kernel.h",
        ] {
            assert!(is_system_header(h), "{h}");
        }
        for h in ["helper_cuda.h", "common/book.h", "kernels.cuh", "my.h"] {
            assert!(!is_system_header(h), "{h}");
        }
    }
}
