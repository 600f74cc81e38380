//! Building the host part with the system C++ compiler, found at run time (like NVRTC):
//! `$SCOPECHECK_CXX`, else `c++`, `g++`, `clang++` on the `PATH`. The runtime (the headers and
//! `runtime.cpp` of `runtime/`, shipped in this crate) is written into the cache folder and
//! compiled once per its content; a host binary is built once per file content, options and
//! compiler, under `$XDG_CACHE_HOME/scopecheck/host` (`~/.cache/...`), so that a second check
//! of an unchanged file does not recompile.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use scopecheck_cuda::CudaOptions;

use crate::HostError;

/// The runtime's files, as shipped.
const RUNTIME: &[(&str, &str)] = &[
    ("cuda_runtime.h", include_str!("runtime/cuda_runtime.h")),
    ("cuda.h", include_str!("runtime/cuda.h")),
    (
        "device_launch_parameters.h",
        include_str!("runtime/device_launch_parameters.h"),
    ),
    (
        "cooperative_groups.h",
        include_str!("runtime/cooperative_groups.h"),
    ),
    ("cuda/atomic", include_str!("runtime/cuda/atomic")),
    ("cuda/std/atomic", include_str!("runtime/cuda/std/atomic")),
    ("runtime.cpp", include_str!("runtime/runtime.cpp")),
];

/// nvcc's macros as its host pass sees them (no `__CUDA_ARCH__`: that is the device pass's).
const HOST_PREDEFINED: &[&str] = &[
    "-D__CUDACC__",
    "-D__NVCC__",
    "-D__CUDACC_VER_MAJOR__=12",
    "-D__CUDACC_VER_MINOR__=9",
    "-DCUDART_VERSION=12090",
    "-D__CUDART_API_VERSION=12090",
    "-DCUDA_VERSION=12090",
];

/// A host binary ready to run.
#[derive(Clone, Debug)]
pub struct Built {
    pub binary: PathBuf,
    /// Whether it came from the cache.
    pub cached: bool,
    pub compiler: String,
}

/// The C++ compiler to use, if there is one.
pub fn find_compiler() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("SCOPECHECK_CXX").filter(|c| !c.is_empty()) {
        return Some(PathBuf::from(c));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["c++", "g++", "clang++"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("scopecheck").join("host")
}

fn digest(parts: &[&str]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// A name part no other writer uses at the same time: this process, and a count within it
/// (two checks in one process, as tests run, build the same runtime at once).
fn unique() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

fn io(what: &str, p: &Path, e: std::io::Error) -> HostError {
    HostError::Io(format!("{what} {}: {e}", p.display()))
}

/// Writes `bytes` to `path` through a temporary name, so that a concurrent check never reads
/// half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), HostError> {
    let tmp = path.with_extension(format!("tmp{}", unique()));
    std::fs::write(&tmp, bytes).map_err(|e| io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io("cannot write", path, e))
}

fn run_compiler(compiler: &Path, args: &[String]) -> Result<(), HostError> {
    let out = Command::new(compiler)
        .args(args)
        .output()
        .map_err(|e| io("cannot run", compiler, e))?;
    if out.status.success() {
        return Ok(());
    }
    let mut messages = String::from_utf8_lossy(&out.stderr).into_owned();
    messages.push_str(&String::from_utf8_lossy(&out.stdout));
    Err(HostError::Compile {
        compiler: compiler.display().to_string(),
        messages,
    })
}

/// The runtime folder (headers and the compiled library) for `compiler`.
fn runtime(compiler: &Path, root: &Path) -> Result<PathBuf, HostError> {
    let all: Vec<&str> = RUNTIME.iter().flat_map(|(n, t)| [*n, *t]).collect();
    let mut key = all.clone();
    let c = compiler.display().to_string();
    key.push(&c);
    let dir = root.join(format!("runtime-{}", digest(&key)));
    let lib = dir.join("runtime.o");
    if lib.is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
    for (name, text) in RUNTIME {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("cannot create", parent, e))?;
        }
        write_atomically(&path, text.as_bytes())?;
    }
    let tmp = dir.join(format!("runtime.o.tmp{}", unique()));
    run_compiler(
        compiler,
        &[
            "-std=c++17".into(),
            "-O1".into(),
            "-c".into(),
            "-I".into(),
            dir.display().to_string(),
            dir.join("runtime.cpp").display().to_string(),
            "-o".into(),
            tmp.display().to_string(),
        ],
    )?;
    std::fs::rename(&tmp, &lib).map_err(|e| io("cannot write", &lib, e))?;
    Ok(dir)
}

/// Builds (or finds in the cache) the host binary of `host`, the host part of `path`.
pub fn build(path: &Path, host: &str, cuda: &CudaOptions) -> Result<Built, HostError> {
    let compiler = find_compiler().ok_or(HostError::NoCompiler)?;
    let root = cache_root();
    let rt = runtime(&compiler, &root)?;
    let c = &cuda.compile;
    let mut flags: Vec<String> = HOST_PREDEFINED.iter().map(|s| s.to_string()).collect();
    flags.push(format!("-std={}", c.std.as_deref().unwrap_or("c++17")));
    for (n, v) in &c.defines {
        flags.push(format!("-D{n}={v}"));
    }
    for n in &c.undefines {
        flags.push(format!("-U{n}"));
    }
    // Our runtime's headers first, then the file's folder and the user's -I folders.
    flags.push("-I".into());
    flags.push(rt.display().to_string());
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."));
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    flags.push("-I".into());
    flags.push(dir.display().to_string());
    for d in &c.include.dirs {
        flags.push("-I".into());
        flags.push(d.display().to_string());
    }
    // nvcc includes the runtime header before every file.
    flags.push("-include".into());
    flags.push(rt.join("cuda_runtime.h").display().to_string());
    for p in &c.pre_includes {
        flags.push("-include".into());
        flags.push(p.display().to_string());
    }
    // Headers the file includes may change without the file changing: their text is part of
    // the key through the preprocessor's own listing when it can be had; otherwise the
    // folder's and file's names are.
    let headers = header_texts(path, cuda);
    let mut key: Vec<&str> = vec![host];
    key.extend(flags.iter().map(String::as_str));
    let shown = path.display().to_string();
    key.push(&shown);
    key.push(&headers);
    let name = digest(&key);
    // Named after the file, so that what the program prints of its own name (`assert`'s
    // message) reads as in a real build.
    let stem = path
        .file_stem()
        .map_or("host".into(), |s| s.to_string_lossy().into_owned());
    let folder = root.join(format!("host-{name}"));
    std::fs::create_dir_all(&folder).map_err(|e| io("cannot create", &folder, e))?;
    let binary = folder.join(&stem);
    let compiler_name = compiler.display().to_string();
    if binary.is_file() {
        return Ok(Built {
            binary,
            cached: true,
            compiler: compiler_name,
        });
    }
    let src = folder.join(format!("{stem}.host.cpp"));
    // `#line` makes the compiler's messages and `__FILE__` name the user's file.
    let text = format!(
        "#line 1 \"{}\"\n{host}",
        shown.replace('\\', "\\\\").replace('"', "\\\"")
    );
    write_atomically(&src, text.as_bytes())?;
    let tmp = folder.join(format!("{stem}.tmp{}", unique()));
    let mut args = flags;
    args.extend([
        "-O0".into(),
        "-x".into(),
        "c++".into(),
        src.display().to_string(),
        "-x".into(),
        "none".into(),
        rt.join("runtime.o").display().to_string(),
        "-o".into(),
        tmp.display().to_string(),
        "-lpthread".into(),
    ]);
    run_compiler(&compiler, &args)?;
    std::fs::rename(&tmp, &binary).map_err(|e| io("cannot write", &binary, e))?;
    Ok(Built {
        binary,
        cached: false,
        compiler: compiler_name,
    })
}

/// The text of the headers the file reads through scopecheck's preprocessor (quoted ones
/// found on the include path), for the cache key.
fn header_texts(path: &Path, cuda: &CudaOptions) -> String {
    let Ok(source) = std::fs::read_to_string(path) else {
        return String::new();
    };
    match scopecheck_cuda::run_preprocessor(&source, false, cuda) {
        Ok((_, headers)) => headers.iter().map(|h| h.text.as_str()).collect(),
        Err(_) => String::new(),
    }
}
