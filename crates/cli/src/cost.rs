//! `scopecheck cost`: microbenchmarks of loads, stores, RMWs and fences for each order and scope
//! on device, shared and host-mapped memory, and flag round trips.

use crate::output::{errln, out};
use clap::Args;
use scopecheck_gpu::cost;
use scopecheck_gpu::driver::Device;

#[derive(Args)]
pub struct CostArgs {
    /// Print a TOML cost file (for the checker to price its suggestions) instead of tables.
    #[arg(long)]
    toml: bool,
    /// The GPU to measure.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
}

/// Runs `cost`; returns whether every benchmark ran.
pub fn run(args: &CostArgs) -> bool {
    match Device::open(args.device).and_then(|d| cost::measure(&d)) {
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
