//! Finding the CUDA driver and opening a device without ever letting a missing driver panic.
//!
//! `cudarc`'s dynamic loader panics when it finds no `libcuda`, and again at the first call of a
//! function the library lacks (`Missing symbol cuInit`). So [`probe`] first opens the library
//! itself, under the names that loader tries, and checks that it has every driver function the
//! runner calls ([`REQUIRED_SYMBOLS`]); only then is `cudarc` touched. A panic that still escapes
//! `cudarc` ([`guarded`]) is caught, kept quiet, and reported as an error with its message.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream, DriverError};

use crate::RunError;

/// The names under which the driver library is looked for (the loader of `cudarc` tries these
/// among others; any one found means it will find one too).
pub const LIBCUDA_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

/// The driver functions `run`, `caps` and `cost` reach through `cudarc`, under the names it
/// loads them by (every CUDA 12 driver has them all).
pub const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxSynchronize",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocManaged",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemHostGetDevicePointer_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemsetD8Async",
    "cuMemGetInfo_v2",
    "cuStreamSynchronize",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventDestroy_v2",
    "cuGetErrorName",
    "cuGetErrorString",
];

/// Whether the CUDA driver library can be loaded here and has every function the runner calls.
pub fn probe() -> Result<(), RunError> {
    for name in LIBCUDA_NAMES {
        // SAFETY: loading the driver library runs its initialisers, which is what any CUDA
        // program does; no symbol is called here.
        if let Ok(lib) = unsafe { libloading::Library::new(name) } {
            return check_symbols(&lib, name);
        }
    }
    Err(RunError::NoDriver(LIBCUDA_NAMES.join(", ")))
}

/// Refuses a driver library that lacks a function of [`REQUIRED_SYMBOLS`] (an old or a stub
/// `libcuda`), naming the first one missing.
pub fn check_symbols(lib: &libloading::Library, name: &str) -> Result<(), RunError> {
    for sym in REQUIRED_SYMBOLS {
        // SAFETY: only the symbol's address is looked up; it is never called here.
        let found = unsafe { lib.get::<unsafe extern "C" fn()>(sym.as_bytes()) }.is_ok();
        if !found {
            return Err(RunError::Driver {
                what: "loading the CUDA driver".into(),
                message: format!(
                    "{name} has no function {sym}; it is not a CUDA 12 driver (or a stub of \
                     one): install the NVIDIA driver, 525 or later"
                ),
            });
        }
    }
    Ok(())
}

/// Runs `f`, turning a panic inside it (one escaping `cudarc`) into an error that says what was
/// being done, without the panic's own message on stderr.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, RunError>) -> Result<T, RunError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    r.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the driver library could not be used".into());
        Err(RunError::Driver {
            what: what.into(),
            message,
        })
    })
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
        guarded("loading the CUDA driver", || Self::open_unguarded(ordinal))
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

/// The machine code the driver's JIT compiler makes of `ptx` for this GPU (a cubin image, by
/// `cuLinkCreate`/`cuLinkAddData`/`cuLinkComplete` with default options, as a module load
/// compiles it). Two programs whose images are equal execute the same instructions here: a
/// mutant whose image equals its original's cannot behave differently on this GPU.
pub fn machine_code(dev: &Device, ptx: &str) -> Result<Vec<u8>, RunError> {
    guarded("compiling PTX to machine code", || {
        machine_code_unguarded(dev, ptx)
    })
}

fn machine_code_unguarded(dev: &Device, ptx: &str) -> Result<Vec<u8>, RunError> {
    use std::ptr::null_mut;
    let err = |what: &str, r: sys::CUresult| RunError::Driver {
        what: format!("compiling PTX to machine code ({what})"),
        message: format!("{r:?}"),
    };
    dev.ctx
        .bind_to_thread()
        .map_err(driver_err("making the GPU's context current"))?;
    let mut src = ptx.as_bytes().to_vec();
    src.push(0);
    let mut state: sys::CUlinkState = null_mut();
    // SAFETY: no options are passed; `state` is written by the call and destroyed below on
    // every path after it was created.
    let r = unsafe { sys::cuLinkCreate_v2(0, null_mut(), null_mut(), &mut state) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(err("cuLinkCreate", r));
    }
    let name = c"scopecheck.ptx";
    // SAFETY: `src` is a NUL-terminated PTX text alive for the call; the name is a C string.
    let r = unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            src.as_mut_ptr().cast(),
            src.len(),
            name.as_ptr(),
            0,
            null_mut(),
            null_mut(),
        )
    };
    let out = if r != sys::CUresult::CUDA_SUCCESS {
        Err(err("cuLinkAddData", r))
    } else {
        let mut cubin: *mut std::ffi::c_void = null_mut();
        let mut size = 0usize;
        // SAFETY: the image the call returns belongs to `state` and is copied before the
        // state is destroyed.
        let r = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
        if r != sys::CUresult::CUDA_SUCCESS || cubin.is_null() {
            Err(err("cuLinkComplete", r))
        } else {
            Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
        }
    };
    // SAFETY: `state` was created above and is not used after this.
    unsafe { sys::cuLinkDestroy(state) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_without_the_driver_functions_is_refused_by_name() {
        // The C library is no CUDA driver: the first function looked for is missing.
        let lib = unsafe { libloading::Library::new("libc.so.6") }.expect("libc");
        let e = check_symbols(&lib, "libc.so.6").unwrap_err().to_string();
        assert!(e.contains("libc.so.6 has no function cuInit"), "{e}");
    }

    #[test]
    fn a_panic_inside_the_guard_is_an_error_with_its_message() {
        let r: Result<(), RunError> = guarded("opening the GPU", || panic!("Missing symbol cuX"));
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("opening the GPU") && e.contains("Missing symbol cuX"),
            "{e}"
        );
    }

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
