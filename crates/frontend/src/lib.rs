//! Loading a test file: the one entry point, [`load`], from a path to a [`Program`] with the
//! front-end's warnings, whatever the file is. It owns
//! - which front-end reads a file ([`Kind`], by extension; a litmus test's header then picks
//!   its dialect inside `scopecheck-litmus`),
//! - reading it safely ([`read`]: size limit, regular files only, UTF-8 located),
//! - the CUDA and OpenCL front-end's options for the file (its folder for `#include "..."`, the
//!   kernel of a kernel-only file, [`list::expand_kernels`]),
//! - a `.ptx` module with its `--harness`, and NVRTC's PTX view of a `.cu` file: beside the
//!   program the front-end read, or alone when the front-end refuses the file,
//! - a deadline for all of that ([`deadline`]).
//!
//! Errors are [`Failure`]s: a [`Diagnostic`] (its `file` set) with the file's text when it
//! was read, for the snippet. Rendering them is the caller's (the command line's reports).
//!
//! A new kind of input is a new [`Kind`] (its extension, whether a directory search takes it)
//! and its arm in [`load`]'s dispatch (`read_parse`).

pub mod deadline;
pub mod host;
pub mod list;
pub mod read;
mod views;

use std::path::Path;
use std::time::Instant;

use scopecheck_cuda::CudaOptions;
use scopecheck_ir::{Diagnostic, Failure, Program};
use scopecheck_litmus::OptionWord;

pub use deadline::{within, LOADING_TIMED_OUT, WORKER_STACK};
pub use host::{Harness, HostMode, NativeHost};
pub use list::{collect, expand_kernels, Input, Listed};
pub use read::{read_source, read_text, DEFAULT_MAX_FILE_SIZE};
pub use views::Compiler;

/// The kinds of file scopecheck reads, each by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A litmus test (`.litmus`): C or PTX dialect, by its header; also any file named
    /// directly whose extension is none of the others.
    Litmus,
    /// A CUDA source (`.cu`): a harness with `main()`, or kernels alone.
    Cuda,
    /// An OpenCL C source (`.cl`), read by the CUDA front-end.
    OpenCl,
    /// A PTX module (`nvcc -ptx`), checked with the harness `--harness` names; a directory
    /// search takes it only when there is a harness.
    Ptx,
}

impl Kind {
    /// Every kind, in the order a directory search names them.
    pub const ALL: [Kind; 4] = [Kind::Litmus, Kind::Cuda, Kind::OpenCl, Kind::Ptx];

    pub fn extension(self) -> &'static str {
        match self {
            Kind::Litmus => "litmus",
            Kind::Cuda => "cu",
            Kind::OpenCl => "cl",
            Kind::Ptx => "ptx",
        }
    }

    /// The kind of a file a directory search finds at `path`; `None`: not a test file.
    pub fn searched(path: &Path) -> Option<Kind> {
        let ext = path.extension()?;
        Kind::ALL.into_iter().find(|k| ext == k.extension())
    }

    /// The kind a file named directly is read as: by its extension, a litmus test otherwise.
    pub fn of(path: &Path) -> Kind {
        Kind::searched(path).unwrap_or(Kind::Litmus)
    }
}

/// How to load a file.
#[derive(Clone, Debug)]
pub struct Options {
    /// The CUDA and OpenCL front-end's options (its `--harness` included); the file's own
    /// folder and kernel are added per file.
    pub cuda: CudaOptions,
    /// A `.cu` file the language-level front-end refuses (templates, classes, ...) is loaded
    /// as its PTX view alone ([`Loaded::ptx_only`]), when NVRTC can compile it.
    pub ptx_fallback: bool,
    /// Also build a `.cu` file's PTX view ([`Loaded::ptx_view`]), for a PTX verdict.
    pub ptx_view: bool,
    /// No language view checks the source in this run (`--model ptx`): the PTX view beside
    /// the program also compiles the file unoptimized where the optimizer removed accesses
    /// ([`Compiler::unoptimized`]). A file loaded as its PTX view alone always does.
    pub unoptimized: bool,
    /// Reading, preprocessing, parsing and lowering end by then, or the file is an error
    /// ([`LOADING_TIMED_OUT`]). The PTX view beside a program is built after, unbounded.
    pub deadline: Option<Instant>,
    /// The largest file read, the file or its `--harness` (bytes; `--max-file-size`).
    pub max_file_size: u64,
    /// How a `.cu` file's `main()` runs ([`host`]); with [`HostMode::Native`] a file the
    /// native path runs loads as [`Load::Native`].
    pub host: HostMode,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cuda: CudaOptions::default(),
            ptx_fallback: false,
            ptx_view: false,
            unoptimized: false,
            deadline: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            host: HostMode::default(),
        }
    }
}

/// A file loaded: a program to check, or a host program to run ([`HostMode::Native`]).
#[derive(Debug)]
pub enum Load {
    Read(Box<Loaded>),
    Native(Box<NativeHost>),
}

impl Load {
    /// The program read; a host program built to run natively is an error here, for the
    /// commands that check programs alone (they load with [`HostMode::Interpreted`], which
    /// never gives one).
    pub fn read(self, file: &str) -> Result<Loaded, Box<Failure>> {
        match self {
            Load::Read(l) => Ok(*l),
            Load::Native(_) => Err(Failure::internal(
                file,
                None,
                "this command checks programs; the native host path was not asked for",
            )),
        }
    }
}

/// A file loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The file's text, for diagnostics with code snippets.
    pub source: String,
    /// The program: named after the file (a `.cu`, `.cl` or `.ptx` file) or its header (a
    /// litmus test), and for a kernel-only file's kernel `FILE:KERNEL`.
    pub program: Program,
    /// With [`Options::ptx_view`], a `.cu` file's kernels as NVRTC compiled them (`None` when
    /// that could not be made: a warning says why).
    pub ptx_view: Option<Program>,
    /// What the front-end changed or doubts (a device scope narrowed on shared memory).
    pub warnings: Vec<Diagnostic>,
    /// Whether `program` is the PTX view itself: the front-end refused the file.
    pub ptx_only: bool,
    /// Which compilation the PTX view (`ptx_view`, or `program` when `ptx_only` or a `.ptx`
    /// module) is; `None` without one.
    pub compiler: Option<Compiler>,
    /// The words of a litmus test's `(* options: ... *)` comments.
    pub option_words: Vec<OptionWord>,
    /// With [`HostMode::Native`], a `.cu` file whose host program the interpreted harness
    /// reads instead, and why; `None` otherwise.
    pub harness: Option<Harness>,
}

/// Loads `input`: reads it, and preprocesses, parses and lowers it with the front-end its
/// [`Kind`] names; builds the PTX view as `options` ask. With [`HostMode::Native`], a `.cu`
/// file's host program is built to run ([`Load::Native`]), unless it needs the interpreted
/// harness ([`Loaded::harness`] says why).
pub fn load(input: &Input, options: &Options) -> Result<Load, Box<Failure>> {
    if let Some(problem) = &input.problem {
        return Err(Failure::io(&input.file, problem.clone()));
    }
    // This file's kernel (a kernel-only file) and folder (`#include "..."`).
    let cuda = list::file_options(&options.cuda, input);
    let mut harness = None;
    if options.host == HostMode::Native {
        let owned = (Input::clone(input), cuda.clone(), options.max_file_size);
        let chosen = deadline::load_within(&input.file, options.deadline, move || {
            host::choose(&owned.0, &owned.1, owned.2)
        })?;
        match chosen {
            Some(host::Chosen::Native(n)) => return Ok(Load::Native(n)),
            Some(host::Chosen::Interpreted(h)) => harness = Some(h),
            None => {}
        }
    }
    let mut loaded = read_program(input, options, &cuda)?;
    loaded.harness = harness;
    Ok(Load::Read(Box::new(loaded)))
}

/// [`load`] of a program to check: read by its front-end, with the PTX view when asked.
fn read_program(
    input: &Input,
    options: &Options,
    cuda: &CudaOptions,
) -> Result<Loaded, Box<Failure>> {
    let owned = (Input::clone(input), cuda.clone(), options.clone());
    let mut loaded = deadline::load_within(&input.file, options.deadline, move || {
        let (input, cuda, options) = owned;
        read_or_view(&input, &cuda, &options)
    })?;
    if let Some(k) = &input.kernel {
        // One report per kernel: the test is named after the file and the kernel.
        loaded.program.name = format!("{}:{}", loaded.program.name, k.name);
    }
    if options.ptx_view && !loaded.ptx_only && Kind::of(&input.path) == Kind::Cuda {
        if let Some((view, compiler)) = views::nvrtc_view(
            input,
            &loaded.source,
            &loaded.program,
            cuda,
            options.unoptimized,
            &mut loaded.warnings,
        ) {
            loaded.ptx_view = Some(view);
            loaded.compiler = Some(compiler);
        }
    }
    Ok(loaded)
}

/// Reads and parses `input` (`cuda`: the front-end's options for this file): through its
/// front-end, or, for a `.cu` file it refuses (templates, classes, ...) with
/// [`Options::ptx_fallback`], as NVRTC compiles it.
fn read_or_view(
    input: &Input,
    cuda: &CudaOptions,
    options: &Options,
) -> Result<Loaded, Box<Failure>> {
    match read_parse(input, cuda, options.max_file_size) {
        Ok(loaded) => Ok(loaded),
        // Kernels beyond the language-level front-end (templates, classes, ...): the file is
        // checked as NVRTC compiles it, when its harness can be read.
        Err(mut f) if options.ptx_fallback && Kind::of(&input.path) == Kind::Cuda => {
            match views::ptx_only(input, cuda, options.max_file_size) {
                Ok((source, program, warnings, compiler)) => Ok(Loaded {
                    ptx_only: true,
                    compiler: Some(compiler),
                    ..loaded(source, program, warnings)
                }),
                Err(why) => {
                    // The PTX view's reason, unless it is the same failure (a preprocessor
                    // error).
                    let message = &mut f.diagnostic.message;
                    if let Some(why) = why.filter(|w| !w.contains(message.as_str())) {
                        *message = format!("{message}; and no PTX view could be made: {why}");
                    }
                    Err(f)
                }
            }
        }
        Err(f) => Err(f),
    }
}

/// A program read, without a PTX view or option words.
fn loaded(source: String, program: Program, warnings: Vec<Diagnostic>) -> Loaded {
    Loaded {
        source,
        program,
        ptx_view: None,
        warnings,
        ptx_only: false,
        compiler: None,
        option_words: Vec::new(),
        harness: None,
    }
}

/// The dispatch: `input` read by the front-end of its [`Kind`]; no file read over `limit`
/// bytes.
fn read_parse(input: &Input, cuda: &CudaOptions, limit: u64) -> Result<Loaded, Box<Failure>> {
    let source = read::read_source(&input.file, &input.path, limit)?;
    let kind = Kind::of(&input.path);
    let parsed = match kind {
        Kind::Ptx => {
            let (source, program, warnings, compiler) =
                views::read_ptx(input, source, cuda, limit)?;
            return Ok(Loaded {
                compiler: Some(compiler),
                ..loaded(source, program, warnings)
            });
        }
        Kind::Litmus => {
            return match scopecheck_litmus::parse_test(&source) {
                Ok(t) => Ok(Loaded {
                    option_words: t.options,
                    ..loaded(source, t.program, t.warnings)
                }),
                Err(e) => Err(Failure::in_source(&input.file, source, e)),
            };
        }
        Kind::OpenCl => scopecheck_cuda::parse_opencl_with(&source, cuda),
        Kind::Cuda => scopecheck_cuda::parse_cuda_with(&source, cuda),
    };
    match parsed {
        Ok((mut program, warnings)) => {
            // A `.cu` file's test is named after the file, as `seed1` for seed1.cu.
            if let Some(stem) = input.path.file_stem() {
                program.name = stem.to_string_lossy().into_owned();
            }
            Ok(loaded(source, program, warnings))
        }
        Err(e) => Err(Failure::in_source(&input.file, source, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(path: &str) -> Input {
        Input::new(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(path),
        )
    }

    #[test]
    fn the_extension_picks_the_front_end() {
        // A directory search takes the four test extensions only; a file named directly with
        // any other extension is read as a litmus test, as the command line always did.
        assert_eq!(Kind::searched(Path::new("a/b.cu")), Some(Kind::Cuda));
        assert_eq!(Kind::searched(Path::new("b.cl")), Some(Kind::OpenCl));
        assert_eq!(Kind::searched(Path::new("b.ptx")), Some(Kind::Ptx));
        assert_eq!(Kind::searched(Path::new("b.txt")), None);
        assert_eq!(Kind::of(Path::new("b.txt")), Kind::Litmus);
        assert_eq!(Kind::of(Path::new("noext")), Kind::Litmus);
    }

    #[test]
    fn a_litmus_test_and_a_cuda_file_load() {
        // The PTX litmus test is named by its header; the .cu file by its stem.
        let l = load(
            &example("examples/ptx/MP+fence.sc.cta.litmus"),
            &Options::default(),
        )
        .and_then(|l| l.read("MP"))
        .expect("the example loads");
        assert_eq!(l.program.name, "MP+fence.sc.cta");
        assert!(!l.ptx_only && l.ptx_view.is_none());
        let c = load(
            &example("examples/cuda/block-counter.cu"),
            &Options::default(),
        )
        .and_then(|l| l.read("block-counter"))
        .expect("the example loads");
        assert_eq!(c.program.name, "block-counter");
    }

    #[test]
    fn errors_name_the_file_and_keep_its_text() {
        // A parse error is in the file, with the text for the snippet; a missing file has
        // neither text nor position; a problem known before reading is reported as it is.
        let dir = std::env::temp_dir().join(format!("scopecheck-frontend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let bad = dir.join("bad.litmus");
        let src = "PTX bad\n{ x=0; }\n P0 ;\n ld.foo r0, x ;\nexists (x == 0)\n";
        std::fs::write(&bad, src).expect("written");
        let e =
            load(&Input::new(&bad), &Options::default()).expect_err("`ld.foo` is no instruction");
        assert_eq!(
            e.diagnostic.file.as_deref(),
            Some(bad.display().to_string().as_str())
        );
        assert_eq!(e.diagnostic.line(), 4);
        assert_eq!(e.text.as_deref(), Some(src));
        let missing = load(&Input::new(dir.join("none.litmus")), &Options::default())
            .expect_err("no such file");
        assert!(missing.text.is_none() && missing.diagnostic.position().is_none());
        let known = Input {
            problem: Some("told before".into()),
            ..Input::new(&bad)
        };
        let e = load(&known, &Options::default()).expect_err("a problem");
        assert_eq!(e.diagnostic.message, "told before");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn each_load_has_its_own_size_limit() {
        // The limit is an option of the load, not of the process: the same 41-byte file is
        // over a limit of 20 bytes in one load and within the default in the next.
        let dir = std::env::temp_dir().join(format!("scopecheck-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("small.litmus");
        let src = "PTX small\n{ x=0; }\n P0 ;\nexists (x == 0)\n";
        assert_eq!(src.len(), 41);
        std::fs::write(&file, src).expect("written");
        let tight = Options {
            max_file_size: 20,
            ..Options::default()
        };
        let e = load(&Input::new(&file), &tight).expect_err("41 bytes are over 20");
        assert_eq!(
            e.diagnostic.message,
            "this file is 41 bytes, more than the limit of 20 bytes (--max-file-size raises it)"
        );
        let l = load(&Input::new(&file), &Options::default())
            .and_then(|l| l.read("small"))
            .expect("within 16 MiB");
        assert_eq!(l.program.name, "small");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
