//! The options about kernel-only files (a `.cu` or `.cl` file without `main()`): which
//! kernels, at which launch, with which buffers and scalar arguments (docs/kernels.md).

use clap::Args;
use scopecheck_cuda::{BufferInit, LaunchOptions};

#[derive(Args, Clone, Debug, Default)]
pub struct KernelFlags {
    /// For a file without `main()`: check only this kernel (repeatable); a template kernel
    /// with its arguments, `--kernel 'reduce<float,256>'`. Default: every kernel of the file.
    #[arg(long = "kernel", value_name = "NAME")]
    kernels: Vec<String>,
    /// For a file without `main()`: the blocks of each kernel's launch (`4`, or dim3 `2,2`).
    /// Default: the file's launch comment (`//--gridDim=4`), else 2.
    #[arg(long, value_name = "N|X,Y[,Z]", value_parser = scopecheck_cuda::parse_dims, conflicts_with = "num_groups")]
    grid: Option<[u32; 3]>,
    /// For a file without `main()`: the threads per block (`64`, or dim3 `8,8`). Default: the
    /// file's launch comment (`//--blockDim=64`), else 4.
    #[arg(long, value_name = "N|X,Y[,Z]", value_parser = scopecheck_cuda::parse_dims, conflicts_with = "local_size")]
    block: Option<[u32; 3]>,
    /// OpenCL's name of --block: work-items per work-group (`//--local_size=64` in the file).
    #[arg(long, value_name = "N", value_parser = scopecheck_cuda::parse_dims)]
    local_size: Option<[u32; 3]>,
    /// OpenCL's name of --grid: work-groups (`//--num_groups=4` in the file).
    #[arg(long, value_name = "N", value_parser = scopecheck_cuda::parse_dims)]
    num_groups: Option<[u32; 3]>,
    /// For a file without `main()`: the value of a kernel's scalar parameter (repeatable).
    /// Default: the buffers' length, so that a bound check `i < n` admits the threads whose
    /// element exists.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_arg)]
    args: Vec<(String, String)>,
    /// For a file without `main()`: the elements of each pointer parameter's buffer (fresh
    /// global memory). Default: one per thread of the launch, at most 64.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    buffer: Option<usize>,
    /// For a file without `main()`: what the buffers hold when the kernel starts: `zero`
    /// (default), a number (every element), or `index` (element i holds i).
    #[arg(long, value_name = "zero|N|index", value_parser = parse_init)]
    init: Option<BufferInit>,
}

impl KernelFlags {
    pub fn launch_options(&self) -> LaunchOptions {
        LaunchOptions {
            kernels: self.kernels.clone(),
            grid: self.grid.or(self.num_groups),
            block: self.block.or(self.local_size),
            args: self.args.clone(),
            buffer: self.buffer,
            init: self.init.unwrap_or_default(),
        }
    }
}

/// `name=value`: a C identifier and an integer or floating constant (`-3`, `0x10`, `1.5f`).
fn parse_arg(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=VALUE"))?;
    let (name, value) = (name.trim(), value.trim());
    let ident = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(format!("`{name}` is not a parameter name"));
    }
    let digits = value.strip_prefix('-').unwrap_or(value);
    let number = digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '+' || c == '-');
    if !number {
        return Err(format!(
            "`{value}` is not a number (a scalar parameter takes an integer or floating constant)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

fn parse_init(s: &str) -> Result<BufferInit, String> {
    match s.trim() {
        "zero" | "0" => Ok(BufferInit::Zero),
        "index" => Ok(BufferInit::Index),
        v => v
            .parse::<i64>()
            .map(BufferInit::Value)
            .map_err(|_| format!("`{s}`: expected zero, index or an integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_and_init_parse_as_written() {
        assert_eq!(parse_arg("n=128"), Ok(("n".into(), "128".into())));
        assert_eq!(
            parse_arg("alpha=-1.5f"),
            Ok(("alpha".into(), "-1.5f".into()))
        );
        assert!(parse_arg("n").is_err());
        assert!(parse_arg("1n=2").is_err());
        assert!(parse_arg("n=abc").is_err());
        assert!(parse_arg("n=1;x").is_err());
        assert_eq!(parse_init("index"), Ok(BufferInit::Index));
        assert_eq!(parse_init("7"), Ok(BufferInit::Value(7)));
        assert_eq!(parse_init("zero"), Ok(BufferInit::Zero));
        assert!(parse_init("ones").is_err());
    }
}

/// What a user's nvcc command line gives that changes what the compiler reads, applied to both
/// views (the language-level front-end's preprocessor and NVRTC).
#[derive(Args, Clone, Debug, Default)]
pub struct CompileFlags {
    /// Add DIR to the folders `#include` searches (after the file's own folder for
    /// `#include "..."`); repeatable.
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    include_dirs: Vec<std::path::PathBuf>,
    /// Define a macro, as `#define NAME VALUE` (VALUE 1 when not given); repeatable.
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]", value_parser = parse_define)]
    defines: Vec<(String, String)>,
    /// Undefine a macro (also one scopecheck predefines); repeatable.
    #[arg(short = 'U', long = "undefine", value_name = "NAME")]
    undefines: Vec<String>,
    /// Read FILE before the file's first line, as nvcc's `-include FILE` does; repeatable.
    #[arg(long = "include", value_name = "FILE")]
    pre_includes: Vec<std::path::PathBuf>,
    /// The C++ dialect (nvcc's `-std=`): c++11, c++14, c++17 (default), c++20.
    #[arg(long = "std", value_name = "DIALECT", value_parser = parse_std)]
    std: Option<String>,
    /// The GPU architecture compiled for (nvcc's `-arch`): sm_70 and later; default sm_90.
    #[arg(long = "arch", value_name = "sm_NN", value_parser = scopecheck_cuda::parse_arch)]
    arch: Option<u32>,
}

impl CompileFlags {
    pub fn compile_options(&self) -> scopecheck_cuda::CompileOptions {
        scopecheck_cuda::CompileOptions {
            include: scopecheck_cuda::IncludePath {
                file_dir: None,
                dirs: self.include_dirs.clone(),
            },
            defines: self.defines.clone(),
            undefines: self.undefines.clone(),
            pre_includes: self.pre_includes.clone(),
            std: self.std.clone(),
            arch: self.arch,
        }
    }
}

/// `NAME`, `NAME=VALUE` or `NAME(a,b)=VALUE`, as `-D` reads it.
fn parse_define(s: &str) -> Result<(String, String), String> {
    let (name, value) = s.split_once('=').unwrap_or((s, "1"));
    let base = name.split('(').next().unwrap_or(name);
    let ident = !base.is_empty()
        && !base.starts_with(|c: char| c.is_ascii_digit())
        && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(format!("`{name}` is not a macro name"));
    }
    Ok((name.to_string(), value.to_string()))
}

fn parse_std(s: &str) -> Result<String, String> {
    scopecheck_cuda::cplusplus(s).map(|_| s.to_string())
}

/// nvcc's single-dash long options as this command line reads them: `-include FILE` ->
/// `--include FILE`, `-std=c++17` -> `--std=c++17`, `-arch=sm_90` / `-arch sm_90` ->
/// `--arch ...`; other arguments as they are.
pub fn nvcc_spellings(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    args.map(|a| {
        let Some(s) = a.to_str() else { return a };
        for long in ["include", "std", "arch"] {
            if s == format!("-{long}") || s.starts_with(&format!("-{long}=")) {
                return format!("-{s}").into();
            }
        }
        a
    })
    .collect()
}

#[cfg(test)]
mod compile_tests {
    use super::*;

    #[test]
    fn defines_and_nvcc_spellings() {
        assert_eq!(
            parse_define("BLOCK=128"),
            Ok(("BLOCK".into(), "128".into()))
        );
        assert_eq!(parse_define("DEBUG"), Ok(("DEBUG".into(), "1".into())));
        assert_eq!(
            parse_define("SQ(x)=((x)*(x))"),
            Ok(("SQ(x)".into(), "((x)*(x))".into()))
        );
        assert!(parse_define("1X=2").is_err());
        let args = [
            "scopecheck",
            "check",
            "-include",
            "a.h",
            "-std=c++14",
            "-arch=sm_80",
            "-Iinc",
            "-DX",
        ];
        let out = nvcc_spellings(args.iter().map(|a| a.into()));
        let out: Vec<&str> = out.iter().map(|a| a.to_str().unwrap_or("")).collect();
        assert_eq!(
            out,
            [
                "scopecheck",
                "check",
                "--include",
                "a.h",
                "--std=c++14",
                "--arch=sm_80",
                "-Iinc",
                "-DX"
            ]
        );
    }
}
