//! Which compilation a PTX-view verdict is about: the compiler and its version, the target
//! and the options that chose what the code is (dialect, macros, headers, optimization). A
//! PTX verdict is about the code one compiler made with one set of options; the report says
//! which (docs/kernels.md, "Honest about the compiler").

/// A compilation of a file's device code, as the reports show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compilation {
    /// `NVRTC`, or `none` for a `.ptx` module checked as given.
    pub compiler: String,
    /// The compiler's version (`12.9`), when known.
    pub version: Option<String>,
    /// NVRTC's `--gpu-architecture` (`compute_90`); empty for a module as given.
    pub arch: String,
    /// The options given to the compiler, less those every compilation gets and that the
    /// docs list (nvcc's Linux macros, NVRTC's own header folders, the file's folder).
    pub options: Vec<String>,
    /// Whether the optimizer ran (NVRTC's default), or the code is `-G`'s, unoptimized.
    pub optimized: bool,
}

impl Compilation {
    /// The compilation `nvrtc` made for `arch` with the options `given` (all of them, as
    /// NVRTC got them), for a file read with `options`.
    pub fn of(
        nvrtc: &scopecheck_nvrtc::Nvrtc,
        arch: &str,
        given: &[String],
        options: &crate::CudaOptions,
    ) -> Compilation {
        // What every compilation gets (the docs list it) is left out: the line would be
        // mostly nvcc's Linux macros and the install's folders otherwise.
        let implicit: Vec<String> = options
            .compile
            .implicit_nvrtc_options()
            .into_iter()
            .chain(
                nvrtc
                    .include_dirs
                    .iter()
                    .map(|d| format!("-I{}", d.display())),
            )
            .collect();
        let debug = given.iter().any(|o| o == "-G");
        Compilation {
            compiler: "NVRTC".into(),
            version: nvrtc
                .version()
                .ok()
                .map(|(major, minor)| format!("{major}.{minor}")),
            arch: arch.to_string(),
            options: given
                .iter()
                .filter(|o| !implicit.contains(o))
                .cloned()
                .collect(),
            optimized: !debug,
        }
    }

    /// A `.ptx` module checked as given (`--harness`): no compilation of scopecheck's.
    pub fn module() -> Compilation {
        Compilation {
            compiler: "none".into(),
            version: None,
            arch: String::new(),
            options: Vec::new(),
            optimized: true,
        }
    }

    /// One line for the text report: `NVRTC 12.9, --gpu-architecture=compute_90 -lineinfo
    /// -std=c++17 (optimized, NVRTC's default)`.
    pub fn describe(&self) -> String {
        if self.compiler == "none" {
            return "the .ptx module as given (not compiled by scopecheck)".into();
        }
        let version = self
            .version
            .as_deref()
            .map_or_else(|| " (version unknown)".to_string(), |v| format!(" {v}"));
        format!(
            "{}{version}, {} ({}), with nvcc's Linux macros",
            self.compiler,
            self.options.join(" "),
            if self.optimized {
                "optimized, NVRTC's default"
            } else {
                "unoptimized"
            }
        )
    }
}
