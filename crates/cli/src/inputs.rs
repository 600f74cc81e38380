//! The command line's side of reading inputs: the flags every subcommand reading test files
//! shares, and the directory search's warnings printed. Reading and loading the files is
//! `scopecheck_frontend`'s.

use std::path::{Path, PathBuf};

use clap::Args;
use scopecheck_frontend::Input;

use crate::options::CheckFlags;
use crate::output::errln;

/// The options about reading inputs that every subcommand reading test files shares.
#[derive(Args, Clone, Debug)]
pub struct InputFlags {
    /// The largest file read (bytes, or with a binary suffix: `512K`, `64M`, `1G`); a larger
    /// file is an error.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = parse_size)]
    max_file_size: u64,
}

impl InputFlags {
    /// Applies these flags to `flags`: what reads a file (the loader, the platform and cost
    /// files) takes the limit from them.
    pub fn apply(&self, flags: &mut CheckFlags) {
        flags.max_file_size = self.max_file_size;
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

/// The test files `paths` name (`scopecheck_frontend::collect`); the paths the search
/// skipped are warned of on stderr.
pub fn collect(paths: &[PathBuf], harness: Option<&Path>) -> Vec<Input> {
    let listed = scopecheck_frontend::collect(paths, harness);
    for w in &listed.skipped {
        errln!("warning: {}", w.message);
    }
    listed.inputs
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
    }
}
