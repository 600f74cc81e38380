//! `scopecheck caps`: the device attributes that decide what each scope can promise, in words or
//! as a TOML platform profile.

use crate::output::{errln, out};
use clap::Args;
use scopecheck_gpu::caps;
use scopecheck_gpu::driver::Device;

#[derive(Args)]
pub struct CapsArgs {
    /// Print a TOML platform profile instead of words.
    #[arg(long)]
    toml: bool,
    /// The GPU to describe.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
}

/// Runs `caps`; returns whether the device could be read.
pub fn run(args: &CapsArgs) -> bool {
    let found = Device::open(args.device).and_then(|d| caps::query(&d));
    match found {
        Ok(c) => {
            out!("{}", if args.toml { c.toml() } else { c.text() });
            true
        }
        Err(e) => {
            errln!("error: {e}");
            false
        }
    }
}
