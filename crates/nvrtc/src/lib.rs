//! NVRTC, NVIDIA's runtime compiler, found and loaded at run time (`dlopen`): it compiles CUDA
//! C++ device code to PTX as a library call, with no GPU, no driver and no `nvcc`. It is the
//! front-end `nvcc` uses, so templates, classes, libcu++, CUB and cooperative groups compile
//! as in the user's build (../shared/docs/NVRTC.md).
//!
//! The library (`libnvrtc.so.12`, else `libnvrtc.so.13`) is looked for in `SCOPECHECK_NVRTC`
//! (the library or its folder), `CUDA_HOME`,
//! `/usr/local/cuda`, the pip target folder the README's test command installs into
//! (`$XDG_CACHE_HOME/scopecheck/nvrtc` or `~/.cache/scopecheck/nvrtc`) and Python's usual
//! site-packages folders. When it is absent, [`NotFound`] says where it looked and which pip
//! command installs it.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};

/// The pip command that installs NVRTC and the headers device code includes.
pub const PIP_INSTALL: &str = "pip install --target ~/.cache/scopecheck/nvrtc 'nvidia-cuda-nvrtc-cu12==12.9.*' 'nvidia-cuda-cccl-cu12==12.9.*' 'nvidia-cuda-runtime-cu12==12.9.*'";

/// NVRTC was not found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("NVRTC (libnvrtc.so.12 or libnvrtc.so.13) was not found; looked in {}. Install it with: {PIP_INSTALL} (or set SCOPECHECK_NVRTC to the library)", .searched.join(", "))]
pub struct NotFound {
    pub searched: Vec<String>,
}

/// What went wrong loading or calling NVRTC.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvrtcError {
    #[error(transparent)]
    NotFound(#[from] NotFound),
    #[error("{path}: cannot load NVRTC: {reason}")]
    Load { path: String, reason: String },
    #[error("NVRTC call {call} failed: {reason}")]
    Call { call: &'static str, reason: String },
    /// The source does not compile: NVRTC's log, and its diagnostics by line.
    #[error("NVRTC could not compile the device code:\n{log}")]
    Compile {
        log: String,
        diagnostics: Vec<Diagnostic>,
    },
}

/// One error or warning of NVRTC's log: `name.cu(12): error: ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: u32,
    pub error: bool,
    pub message: String,
}

/// The PTX NVRTC produced, and its log (warnings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub ptx: String,
    pub log: String,
    /// Each name expression asked for (`sum<4>`, `fill`) with the mangled name of the
    /// `.entry` it became (`_Z3sumILi4EEvPKiPiS2_`).
    pub lowered: Vec<(String, String)>,
    /// The options NVRTC was given, in order: what the PTX is the compilation of.
    pub options: Vec<String>,
}

type Program = *mut std::ffi::c_void;
type CreateProgram = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileProgram = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type GetSize = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type GetText = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type DestroyProgram = unsafe extern "C" fn(*mut Program) -> c_int;
type GetErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type AddNameExpression = unsafe extern "C" fn(Program, *const c_char) -> c_int;
type GetLoweredName = unsafe extern "C" fn(Program, *const c_char, *mut *const c_char) -> c_int;
type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;

/// A loaded NVRTC library, with the include folders found beside it.
pub struct Nvrtc {
    lib: libloading::Library,
    /// The library file.
    pub path: PathBuf,
    /// Folders with libcu++/CUB (`cuda/atomic`) and the CUDA runtime headers, passed as `-I`.
    pub include_dirs: Vec<PathBuf>,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("include_dirs", &self.include_dirs)
            .finish()
    }
}

/// The names of the NVRTC library looked for in a folder, in order.
const LIBRARIES: [&str; 2] = ["libnvrtc.so.12", "libnvrtc.so.13"];

/// The folders that may hold NVRTC, most specific first, with the include folders that go
/// with each.
fn candidates() -> Vec<(PathBuf, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = env("SCOPECHECK_NVRTC") {
        let dir = if p.is_file() {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            p.clone()
        };
        // The library of a pip install (`nvidia/cuda_nvrtc/lib`) or of a toolkit (`lib64`):
        // the headers of whichever it is.
        let mut includes = pip_includes(&dir.join("../.."));
        includes.extend(toolkit_includes(&dir.join("..")));
        out.push((p, includes));
    }
    for root in [
        env("CUDA_HOME"),
        env("CUDA_PATH"),
        Some("/usr/local/cuda".into()),
    ]
    .into_iter()
    .flatten()
    {
        out.push((root.join("lib64"), toolkit_includes(&root)));
    }
    let mut pip_roots: Vec<PathBuf> = Vec::new();
    if let Some(c) = env("XDG_CACHE_HOME") {
        pip_roots.push(c.join("scopecheck/nvrtc"));
    }
    if let Some(h) = env("HOME") {
        pip_roots.push(h.join(".cache/scopecheck/nvrtc"));
        pip_roots.extend(site_packages(&h.join(".local/lib")));
    }
    for prefix in ["/usr/local/lib", "/usr/lib"] {
        pip_roots.extend(site_packages(Path::new(prefix)));
    }
    for root in pip_roots {
        let nvidia = root.join("nvidia");
        out.push((nvidia.join("cuda_nvrtc/lib"), pip_includes(&nvidia)));
    }
    out
}

/// `python3.*/site-packages` and `dist-packages` folders under `lib`.
fn site_packages(lib: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(lib) else {
        return vec![];
    };
    let mut out: Vec<PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
        })
        .flat_map(|p| [p.join("site-packages"), p.join("dist-packages")])
        .collect();
    out.sort();
    out
}

/// The header folders of the CUDA toolkit at `root`: `include`, and `include/cccl`, where
/// CUDA 13 moved libcu++ (`<cuda/atomic>`), CUB and Thrust.
fn toolkit_includes(root: &Path) -> Vec<PathBuf> {
    ["include", "include/cccl"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect()
}

/// The header folders of the pip packages under `nvidia`.
fn pip_includes(nvidia: &Path) -> Vec<PathBuf> {
    ["cuda_cccl/include", "cuda_runtime/include"]
        .iter()
        .map(|d| nvidia.join(d))
        .filter(|d| d.is_dir())
        .collect()
}

/// The library file to load among `places` (a library, or a folder holding one) and its
/// include folders: CUDA 12's library in every place first (the pip packages' and the tests'),
/// then CUDA 13's (a CUDA 13 toolkit has no other; the API is the same).
fn choose(places: &[(PathBuf, Vec<PathBuf>)]) -> Option<(PathBuf, Vec<PathBuf>)> {
    LIBRARIES.iter().find_map(|lib| {
        places.iter().find_map(|(place, includes)| {
            let file = if place.is_file() {
                place.clone()
            } else {
                place.join(lib)
            };
            file.is_file().then(|| (file, includes.clone()))
        })
    })
}

impl Nvrtc {
    /// Finds and loads NVRTC (see the crate documentation for where it looks).
    pub fn find() -> Result<Nvrtc, NvrtcError> {
        let places = candidates();
        match choose(&places) {
            Some((file, includes)) => {
                let mut n = Nvrtc::load(&file)?;
                n.include_dirs = includes.into_iter().filter(|d| d.is_dir()).collect();
                Ok(n)
            }
            None => Err(NotFound {
                searched: places
                    .iter()
                    .map(|(p, _)| p.display().to_string())
                    .collect(),
            }
            .into()),
        }
    }

    /// Loads the NVRTC library at `path`.
    pub fn load(path: &Path) -> Result<Nvrtc, NvrtcError> {
        // SAFETY: loading NVRTC runs its initializers, which have no preconditions.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| NvrtcError::Load {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let n = Nvrtc {
            lib,
            path: path.to_path_buf(),
            include_dirs: vec![],
        };
        // Every entry point is looked up now, so that a wrong library fails here, named.
        for name in SYMBOLS {
            n.symbol::<GetErrorString>(name)?;
        }
        Ok(n)
    }

    fn symbol<T: Copy>(&self, name: &'static str) -> Result<T, NvrtcError> {
        // SAFETY: each caller names the C signature NVRTC's header gives for `name`.
        unsafe { self.lib.get::<T>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| NvrtcError::Load {
                path: self.path.display().to_string(),
                reason: format!("no symbol {name}: {e}"),
            })
    }

    fn check(&self, call: &'static str, code: c_int) -> Result<(), NvrtcError> {
        if code == 0 {
            return Ok(());
        }
        let describe: GetErrorString = self.symbol("nvrtcGetErrorString")?;
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string for any code.
        let reason = unsafe { CStr::from_ptr(describe(code)) }
            .to_string_lossy()
            .into_owned();
        Err(NvrtcError::Call { call, reason })
    }

    /// Compiles `source` (named `name` in diagnostics) for `arch` (`compute_90`), with the
    /// include folders found and `extra` options; returns the PTX.
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        extra: &[String],
    ) -> Result<Compiled, NvrtcError> {
        self.compile_names(source, name, arch, extra, &[])
    }

    /// As [`Nvrtc::compile`], and instantiates each kernel name expression of `names` (a
    /// template kernel is compiled only when something instantiates it, and the host code
    /// that does is not given to NVRTC), reporting the mangled name each became.
    pub fn compile_names(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        extra: &[String],
        names: &[String],
    ) -> Result<Compiled, NvrtcError> {
        self.compile_with_headers(source, name, arch, extra, names, &[])
    }

    /// As [`Nvrtc::compile_names`], with `headers`: (include name, text) pairs NVRTC reads for
    /// `#include "name"` instead of looking on disk (a user's header with its host code
    /// blanked).
    pub fn compile_with_headers(
        &self,
        source: &str,
        name: &str,
        arch: &str,
        extra: &[String],
        names: &[String],
        headers: &[(String, String)],
    ) -> Result<Compiled, NvrtcError> {
        let nul = |s: &str| {
            CString::new(s).map_err(|_| NvrtcError::Call {
                call: "nvrtcCreateProgram",
                reason: "the source holds a NUL byte".into(),
            })
        };
        let (src, file) = (nul(source)?, nul(name)?);
        let header_texts: Vec<CString> = headers
            .iter()
            .map(|(_, t)| nul(t))
            .collect::<Result<_, _>>()?;
        let header_names: Vec<CString> = headers
            .iter()
            .map(|(n, _)| nul(n))
            .collect::<Result<_, _>>()?;
        let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|t| t.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|t| t.as_ptr()).collect();
        // `-G` (unoptimized, with full debug information) carries the line table itself.
        let debug = extra.iter().any(|o| o == "-G" || o == "--device-debug");
        let mut options: Vec<String> = vec![format!("--gpu-architecture={arch}")];
        if !debug {
            options.push("-lineinfo".into());
        }
        // C++17 unless the caller's options name a dialect (`-std=c++14`).
        if !extra.iter().any(|o| o.starts_with("-std=")) {
            options.push("-std=c++17".into());
        }
        options.extend(
            self.include_dirs
                .iter()
                .map(|d| format!("-I{}", d.display())),
        );
        options.extend(extra.iter().cloned());
        let given = options;
        let options: Vec<CString> = given.iter().map(|o| nul(o)).collect::<Result<_, _>>()?;
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();

        let create: CreateProgram = self.symbol("nvrtcCreateProgram")?;
        let compile: CompileProgram = self.symbol("nvrtcCompileProgram")?;
        let log_size: GetSize = self.symbol("nvrtcGetProgramLogSize")?;
        let get_log: GetText = self.symbol("nvrtcGetProgramLog")?;
        let ptx_size: GetSize = self.symbol("nvrtcGetPTXSize")?;
        let get_ptx: GetText = self.symbol("nvrtcGetPTX")?;
        let destroy: DestroyProgram = self.symbol("nvrtcDestroyProgram")?;
        let add_name: AddNameExpression = self.symbol("nvrtcAddNameExpression")?;
        let lowered_name: GetLoweredName = self.symbol("nvrtcGetLoweredName")?;
        let names: Vec<CString> = names.iter().map(|n| nul(n)).collect::<Result<_, _>>()?;

        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: the strings outlive the calls; NVRTC copies what it keeps. `prog` is
        // destroyed on every path below.
        unsafe {
            self.check(
                "nvrtcCreateProgram",
                create(
                    &mut prog,
                    src.as_ptr(),
                    file.as_ptr(),
                    headers.len() as c_int,
                    if headers.is_empty() {
                        std::ptr::null()
                    } else {
                        text_ptrs.as_ptr()
                    },
                    if headers.is_empty() {
                        std::ptr::null()
                    } else {
                        name_ptrs.as_ptr()
                    },
                ),
            )?;
            for n in &names {
                if let Err(e) = self.check("nvrtcAddNameExpression", add_name(prog, n.as_ptr())) {
                    destroy(&mut prog);
                    return Err(e);
                }
            }
            let compiled = compile(prog, option_ptrs.len() as c_int, option_ptrs.as_ptr());
            let log = read_text(prog, log_size, get_log);
            let result = if compiled != 0 {
                let log = log.unwrap_or_default();
                let diagnostics = diagnostics(&log, name);
                Err(NvrtcError::Compile { log, diagnostics })
            } else {
                // The lowered names live as long as the program: copied out now.
                let lowered = names
                    .iter()
                    .filter_map(|n| {
                        let mut out: *const c_char = std::ptr::null();
                        (lowered_name(prog, n.as_ptr(), &mut out) == 0 && !out.is_null()).then(
                            || {
                                (
                                    n.to_string_lossy().into_owned(),
                                    CStr::from_ptr(out).to_string_lossy().into_owned(),
                                )
                            },
                        )
                    })
                    .collect();
                match read_text(prog, ptx_size, get_ptx) {
                    Some(ptx) => Ok(Compiled {
                        ptx,
                        log: log.unwrap_or_default(),
                        lowered,
                        options: given,
                    }),
                    None => Err(NvrtcError::Call {
                        call: "nvrtcGetPTX",
                        reason: "no PTX".into(),
                    }),
                }
            };
            destroy(&mut prog);
            result
        }
    }
}

impl Nvrtc {
    /// The library's version (`nvrtcVersion`): `(12, 9)` for CUDA 12.9's NVRTC.
    pub fn version(&self) -> Result<(i32, i32), NvrtcError> {
        let version: Version = self.symbol("nvrtcVersion")?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints through the pointers it is given.
        self.check("nvrtcVersion", unsafe { version(&mut major, &mut minor) })?;
        Ok((major, minor))
    }
}

const SYMBOLS: [&str; 11] = [
    "nvrtcVersion",
    "nvrtcAddNameExpression",
    "nvrtcGetLoweredName",
    "nvrtcCreateProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetPTXSize",
    "nvrtcGetPTX",
    "nvrtcDestroyProgram",
    "nvrtcGetErrorString",
];

/// A text NVRTC hands out through a size call and a copy call (the log, the PTX).
///
/// # Safety
/// `prog` is a live NVRTC program and the two functions are NVRTC's pair for one text.
unsafe fn read_text(prog: Program, size: GetSize, get: GetText) -> Option<String> {
    let mut n = 0usize;
    if size(prog, &mut n) != 0 || n == 0 {
        return None;
    }
    let mut buf = vec![0u8; n];
    if get(prog, buf.as_mut_ptr().cast()) != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// The `name(LINE): error: message` lines of an NVRTC log.
pub fn diagnostics(log: &str, name: &str) -> Vec<Diagnostic> {
    log.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix('(')?;
            let (line, rest) = rest.split_once(')')?;
            let rest = rest.trim_start_matches(':').trim_start();
            let (error, message) = if let Some(m) = rest.strip_prefix("error:") {
                (true, m)
            } else if let Some(m) = rest.strip_prefix("warning:") {
                (false, m)
            } else {
                return None;
            };
            Some(Diagnostic {
                line: line.trim().parse().ok()?,
                error,
                message: message.trim().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_12s_library_is_taken_anywhere_before_cuda_13s() {
        // A CUDA 13 toolkit first in the search, a pip CUDA 12 install after it: the pip one
        // is loaded (the verdicts of the tests are NVRTC 12.9's); with it gone, the toolkit's.
        let root = std::env::temp_dir().join(format!("scopecheck-libs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (tk, pip) = (root.join("cuda/lib64"), root.join("pip/lib"));
        std::fs::create_dir_all(&tk).unwrap();
        std::fs::create_dir_all(&pip).unwrap();
        std::fs::write(tk.join("libnvrtc.so.13"), b"").unwrap();
        std::fs::write(pip.join("libnvrtc.so.12"), b"").unwrap();
        let places = vec![(tk.clone(), vec![]), (pip.clone(), vec![])];
        assert_eq!(choose(&places).unwrap().0, pip.join("libnvrtc.so.12"));
        std::fs::remove_file(pip.join("libnvrtc.so.12")).unwrap();
        assert_eq!(choose(&places).unwrap().0, tk.join("libnvrtc.so.13"));
        std::fs::remove_file(tk.join("libnvrtc.so.13")).unwrap();
        assert_eq!(choose(&places), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_toolkits_headers_include_cuda_13s_cccl_folder() {
        // CUDA 13 keeps <cuda/atomic> under include/cccl; CUDA 12 under include. Both folders
        // are given to NVRTC when they exist, and only those.
        let root = std::env::temp_dir().join(format!("scopecheck-tk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("include/cccl/cuda")).unwrap();
        std::fs::create_dir_all(root.join("lib64")).unwrap();
        assert_eq!(
            toolkit_includes(&root),
            vec![root.join("include"), root.join("include/cccl")]
        );
        std::fs::remove_dir_all(root.join("include/cccl")).unwrap();
        assert_eq!(toolkit_includes(&root), vec![root.join("include")]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn log_lines_become_diagnostics() {
        let log = "k.cu(3): error: identifier \"y\" is undefined\n\nk.cu(7): warning: variable \"z\" was declared but never referenced\n1 error detected in the compilation of \"k.cu\".\n";
        let d = diagnostics(log, "k.cu");
        assert_eq!(
            d,
            vec![
                Diagnostic {
                    line: 3,
                    error: true,
                    message: "identifier \"y\" is undefined".into()
                },
                Diagnostic {
                    line: 7,
                    error: false,
                    message: "variable \"z\" was declared but never referenced".into()
                },
            ]
        );
    }

    #[test]
    fn a_missing_library_says_how_to_install_it() {
        let e = Nvrtc::load(Path::new("/nonexistent/libnvrtc.so.12")).unwrap_err();
        assert!(matches!(e, NvrtcError::Load { .. }), "{e}");
        let nf = NvrtcError::from(NotFound {
            searched: vec!["/a".into(), "/b".into()],
        });
        let text = nf.to_string();
        assert!(
            text.contains("/a, /b") && text.contains("pip install"),
            "{text}"
        );
    }
}
