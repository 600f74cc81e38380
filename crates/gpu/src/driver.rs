//! Finding the CUDA driver and opening a device without ever letting a missing driver panic.
//!
//! `cudarc`'s dynamic loader panics when it finds no `libcuda`, so [`probe`] first opens the
//! library itself, under the names that loader tries, and only then is `cudarc` touched. Any
//! panic that still escapes `cudarc` while opening the device is caught and reported as an error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream, DriverError};

use crate::RunError;

/// The names under which the driver library is looked for (the loader of `cudarc` tries these
/// among others; any one found means it will find one too).
pub const LIBCUDA_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

/// Whether the CUDA driver library can be loaded here.
pub fn probe() -> Result<(), RunError> {
    for name in LIBCUDA_NAMES {
        // SAFETY: loading the driver library runs its initialisers, which is what any CUDA
        // program does; no symbol is called here.
        if unsafe { libloading::Library::new(name) }.is_ok() {
            return Ok(());
        }
    }
    Err(RunError::NoDriver(LIBCUDA_NAMES.join(", ")))
}

/// A driver error as a [`RunError`] saying what was being done.
pub fn driver_err(what: &str) -> impl Fn(DriverError) -> RunError + '_ {
    move |e| RunError::Driver {
        what: what.to_string(),
        message: format!("{e:?}"),
    }
}

/// An opened GPU: its context, one stream, and the attributes the runner sizes launches by.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ordinal: usize,
    pub name: String,
    pub sms: u32,
    pub max_threads_per_sm: u32,
}

impl Device {
    /// Opens GPU `ordinal` after probing for the driver.
    pub fn open(ordinal: usize) -> Result<Device, RunError> {
        probe()?;
        match catch_unwind(AssertUnwindSafe(|| Self::open_unguarded(ordinal))) {
            Ok(r) => r,
            Err(_) => Err(RunError::Driver {
                what: "loading the CUDA driver".into(),
                message: "the driver library could not be used".into(),
            }),
        }
    }

    fn open_unguarded(ordinal: usize) -> Result<Device, RunError> {
        let count = CudaContext::device_count().map_err(driver_err("counting GPUs"))?;
        if count <= 0 || ordinal >= count as usize {
            return Err(RunError::NoDevice);
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_err("opening the GPU"))?;
        // One stream and no cross-stream use: the per-allocation events cudarc records for
        // multi-stream safety only cost time per launch.
        // SAFETY: every buffer of this context is used on `stream` alone.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let name = ctx.name().map_err(driver_err("reading the GPU's name"))?;
        let attr = |a| {
            ctx.attribute(a)
                .map(|v| v.max(0) as u32)
                .map_err(driver_err("reading a device attribute"))
        };
        let sms = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let max_threads_per_sm =
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
        Ok(Device {
            ctx,
            stream,
            ordinal,
            name,
            sms,
            max_threads_per_sm,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_without_a_driver_is_an_error_not_a_panic() {
        // On a machine with a GPU this opens it; elsewhere it must say why, not panic.
        match Device::open(0) {
            Ok(d) => assert!(d.sms > 0),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("driver") || msg.contains("GPU"), "{msg}");
            }
        }
    }
}
