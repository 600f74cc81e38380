//! Running scopecheck litmus tests on NVIDIA GPUs.
//!
//! - [`codegen`]: one PTX module per test, every test thread a role any hardware thread can take;
//! - [`layout`]: where roles, locations and results go, and the per-launch thread randomisation;
//! - [`driver`]: finding the CUDA driver without letting a missing one panic;
//! - [`host`]: `@host` threads as CPU threads on pinned host and managed memory;
//! - [`runner`]: launches, histograms, the watchdog;
//! - [`width`]: which registers and locations the kernel holds in 64 bits, and what it cannot
//!   hold faithfully;
//! - [`compare`]: what the hardware did against what the model allows;
//! - [`caps`] and [`cost`]: the device attributes that decide what each scope can promise, and
//!   microbenchmarks of each order and scope.
//!
//! The GPU paths build and are tested everywhere; where no driver or device is found they return
//! [`RunError::NoDriver`] or [`RunError::NoDevice`] instead of touching CUDA.

pub mod caps;
pub mod codegen;
pub mod compare;
pub mod cost;
pub mod driver;
pub mod host;
pub mod layout;
pub mod runner;
pub mod width;

pub use codegen::{generate, Kernel};
pub use layout::{GenOptions, Layout};

/// Why a test cannot be turned into a kernel.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GenError {
    /// The test asks for something the runner does not do (yet).
    #[error("cannot run this test on the GPU: {0}")]
    Unsupported(String),
    /// The kernel-shape options are out of range.
    #[error("bad runner option: {0}")]
    Options(String),
}

/// Why a run on the GPU failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error("no CUDA driver found (looked for {0}); the GPU commands need an NVIDIA driver")]
    NoDriver(String),
    #[error("the CUDA driver reports no GPU")]
    NoDevice,
    #[error("CUDA driver error while {what}: {message}")]
    Driver { what: String, message: String },
    #[error(transparent)]
    Gen(#[from] GenError),
    #[error("the model could not check this test: {0}")]
    Model(String),
    #[error("launch {launch} exceeded its time budget of {budget:?}; the run was stopped")]
    Watchdog {
        launch: u64,
        budget: std::time::Duration,
    },
    #[error(
        "the host threads did not finish launch {launch} within {budget:?}; the run was stopped"
    )]
    HostStall {
        launch: u64,
        budget: std::time::Duration,
    },
    #[error("bad option: {0}")]
    Options(String),
}
