//! The preprocessing and compilation options a user's build gives (`-I`, `-D`, `-U`,
//! `-include`, `-std`, `--arch`), applied alike to the language-level front-end's
//! preprocessor and to NVRTC, with the macros nvcc predefines on Linux: both views see the same
//! `#if` branches and the same headers.

use std::path::PathBuf;

use crate::include::IncludePath;

/// The CUDA version whose macros are predefined: the NVRTC `scripts/test` installs (12.9).
pub const CUDA_VERSION: (u32, u32) = (12, 9);

/// What a user's build passes to nvcc that changes what the compiler reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// `-I` folders, and the checked file's own folder (for `#include "..."`).
    pub include: IncludePath,
    /// `-D NAME[=VALUE]` (`1` when no value is given), in order.
    pub defines: Vec<(String, String)>,
    /// `-U NAME`, applied after every `-D` and predefined macro.
    pub undefines: Vec<String>,
    /// `-include FILE`: read before the file's first line.
    pub pre_includes: Vec<PathBuf>,
    /// `-std=c++17` (the dialect: `c++11`, `c++14`, `c++17`, `c++20`); default c++17.
    pub std: Option<String>,
    /// `--arch`: the compute capability as a number (`90` for sm_90); default 90.
    pub arch: Option<u32>,
}

/// The `__cplusplus` of a dialect, or why it is not one.
pub fn cplusplus(std: &str) -> Result<&'static str, String> {
    match std.trim_start_matches("gnu++").trim_start_matches("c++") {
        "11" | "0x" => Ok("201103L"),
        "14" | "1y" => Ok("201402L"),
        "17" | "1z" => Ok("201703L"),
        "20" | "2a" => Ok("202002L"),
        _ => Err(format!(
            "`{std}` is not a C++ dialect NVRTC compiles (c++11, c++14, c++17, c++20)"
        )),
    }
}

/// An `--arch` as a compute capability: `sm_90`, `compute_80`, `90`, `sm_90a`.
pub fn parse_arch(s: &str) -> Result<u32, String> {
    let t = s
        .trim()
        .trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .trim_end_matches('a');
    match t.parse::<u32>() {
        Ok(n) if (70..=120).contains(&n) => Ok(n),
        Ok(_) => Err(format!("`{s}`: the PTX model holds from sm_70 (Volta) on")),
        Err(_) => Err(format!("`{s}` is not an architecture (e.g. sm_90)")),
    }
}

/// Macros nvcc predefines on Linux for the device pass besides `__CUDACC__` and
/// `__CUDA_ARCH__`: the host platform's (the host compiler's) and CUDA's version.
fn linux_predefined() -> Vec<(String, String)> {
    let (major, minor) = CUDA_VERSION;
    let version = (major * 1000 + minor * 10).to_string();
    let mut m: Vec<(String, String)> = [
        "__linux__",
        "__linux",
        "__gnu_linux__",
        "__unix__",
        "__unix",
        "__x86_64__",
        "__x86_64",
        "__LP64__",
        "_LP64",
    ]
    .iter()
    .map(|n| (n.to_string(), "1".to_string()))
    .collect();
    m.push(("__CUDACC_VER_MAJOR__".into(), major.to_string()));
    m.push(("__CUDACC_VER_MINOR__".into(), minor.to_string()));
    m.push(("CUDART_VERSION".into(), version.clone()));
    m.push(("__CUDART_API_VERSION".into(), version.clone()));
    m.push(("CUDA_VERSION".into(), version));
    m
}

impl CompileOptions {
    /// The compute capability (90 unless `--arch` says otherwise).
    pub fn arch(&self) -> u32 {
        self.arch.unwrap_or(90)
    }

    /// NVRTC's `--gpu-architecture` value: `compute_90`.
    pub fn nvrtc_arch(&self) -> String {
        format!("compute_{}", self.arch())
    }

    /// The macros the language-level front-end's preprocessor starts with: `base` (the
    /// language's own), then nvcc's on Linux (CUDA only), then `-D`, less `-U`.
    pub fn macros(&self, opencl: bool, base: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut m: Vec<(String, String)> = base
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        if !opencl {
            for (n, v) in &mut m {
                if n == "__CUDA_ARCH__" {
                    *v = (self.arch() * 10).to_string();
                }
                if n == "__cplusplus" {
                    if let Some(c) = self.std.as_deref().and_then(|s| cplusplus(s).ok()) {
                        *v = c.to_string();
                    }
                }
            }
            m.extend(linux_predefined());
        }
        for (n, v) in &self.defines {
            m.retain(|(k, _)| macro_name(k) != macro_name(n));
            m.push((n.clone(), v.clone()));
        }
        m.retain(|(k, _)| !self.undefines.iter().any(|u| u == macro_name(k)));
        m
    }

    /// The options NVRTC gets so that it reads the file as the language-level front-end does:
    /// nvcc's Linux macros (NVRTC defines `__CUDACC__` and `__CUDA_ARCH__` itself), `-D`,
    /// `-U`, the include folders, `-include` and `-std`.
    pub fn nvrtc_options(&self) -> Vec<String> {
        let mut o = self.implicit_nvrtc_options();
        o.extend(self.defines.iter().map(|(n, v)| format!("-D{n}={v}")));
        o.extend(self.undefines.iter().map(|n| format!("-U{n}")));
        o.extend(
            self.include
                .dirs
                .iter()
                .map(|d| format!("-I{}", d.display())),
        );
        o.extend(
            self.pre_includes
                .iter()
                .map(|p| format!("--pre-include={}", p.display())),
        );
        if let Some(s) = &self.std {
            o.push(format!("-std={s}"));
        }
        o
    }

    /// The options of [`CompileOptions::nvrtc_options`] every compilation gets, whatever the
    /// user asked: nvcc's Linux macros (less those the user defines) and the file's folder.
    pub fn implicit_nvrtc_options(&self) -> Vec<String> {
        let mut o: Vec<String> = vec!["-D__NVCC__=1".into()];
        let user: Vec<&str> = self.defines.iter().map(|(n, _)| macro_name(n)).collect();
        for (n, v) in linux_predefined() {
            // NVRTC's builtin header defines this one itself.
            if !user.contains(&n.as_str()) && n != "__CUDART_API_VERSION" {
                o.push(format!("-D{n}={v}"));
            }
        }
        o.extend(
            self.include
                .file_dir
                .iter()
                .map(|d| format!("-I{}", d.display())),
        );
        o
    }
}

/// The name of a macro definition: `MAX` of `MAX(a, b)`.
fn macro_name(n: &str) -> &str {
    n.split('(').next().unwrap_or(n).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_override_and_undefines_remove() {
        let o = CompileOptions {
            defines: vec![
                ("BLOCK".into(), "128".into()),
                ("__linux__".into(), "2".into()),
            ],
            undefines: vec!["CUDA_VERSION".into()],
            std: Some("c++14".into()),
            arch: Some(80),
            ..Default::default()
        };
        let m = o.macros(
            false,
            &[("__CUDA_ARCH__", "900"), ("__cplusplus", "201703L")],
        );
        let get = |n: &str| m.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("__CUDA_ARCH__"), Some("800"));
        assert_eq!(get("__cplusplus"), Some("201402L"));
        assert_eq!(get("BLOCK"), Some("128"));
        assert_eq!(get("__linux__"), Some("2"));
        assert_eq!(get("CUDART_VERSION"), Some("12090"));
        assert_eq!(get("CUDA_VERSION"), None);
        let n = o.nvrtc_options();
        assert!(n.contains(&"-DBLOCK=128".to_string()), "{n:?}");
        assert!(n.contains(&"-D__linux__=2".to_string()), "{n:?}");
        assert!(!n.contains(&"-D__linux__=1".to_string()), "{n:?}");
        assert!(n.contains(&"-UCUDA_VERSION".to_string()), "{n:?}");
        assert!(n.contains(&"-std=c++14".to_string()), "{n:?}");
        // OpenCL gets none of nvcc's (its -D still applies).
        let cl = CompileOptions::default().macros(true, &[]);
        assert!(cl
            .iter()
            .all(|(k, _)| k != "__linux__" && k != "CUDART_VERSION"));
    }

    #[test]
    fn dialects_and_architectures_parse() {
        assert_eq!(cplusplus("c++20"), Ok("202002L"));
        assert!(cplusplus("c++98").is_err());
        assert_eq!(parse_arch("sm_90"), Ok(90));
        assert_eq!(parse_arch("compute_80"), Ok(80));
        assert_eq!(parse_arch("sm_90a"), Ok(90));
        assert!(parse_arch("sm_60").is_err());
        assert!(parse_arch("x").is_err());
    }
}
