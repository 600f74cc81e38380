//! The device attributes that decide what each scope can promise on this machine, in words and
//! as a TOML platform profile.
//!
//! `.sys` scope promises atomicity and ordering with host threads only where the platform gives
//! it: without host-native atomics a device RMW and a host RMW on one word of host memory are
//! not atomic with each other; without concurrent managed access a host thread may not touch
//! managed memory while a kernel runs; without pageable memory access the device cannot see
//! ordinary host memory at all. The profile records these facts for the checker.

use std::fmt::Write;

use cudarc::driver::sys::CUdevice_attribute as A;
use scopecheck_model::Platform;

use crate::driver::{driver_err, Device};
use crate::RunError;

/// One attribute: its key in the profile, the driver attribute, and what it means for scopes.
pub struct Attribute {
    pub key: &'static str,
    pub attr: A,
    /// What a non-zero value means (for yes/no attributes) or what the number is.
    pub meaning: &'static str,
    /// Whether the value is a yes/no flag.
    pub flag: bool,
}

/// The attributes `caps` reports, in order.
pub const ATTRIBUTES: &[Attribute] = &[
    Attribute {
        key: "host_native_atomics",
        attr: A::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED,
        meaning: "device and host RMWs on one word of host memory are atomic with each other (hostNativeAtomicSupported)",
        flag: true,
    },
    Attribute {
        key: "concurrent_managed_access",
        attr: A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
        meaning: "host threads may access managed memory while kernels run (concurrentManagedAccess)",
        flag: true,
    },
    Attribute {
        key: "pageable_memory_access",
        attr: A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
        meaning: "the device can access ordinary pageable host memory (pageableMemoryAccess)",
        flag: true,
    },
    Attribute {
        key: "pageable_memory_uses_host_page_tables",
        attr: A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
        meaning: "the device reaches pageable memory through the host's page tables (pageableMemoryAccessUsesHostPageTables)",
        flag: true,
    },
    Attribute {
        key: "can_map_host_memory",
        attr: A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY,
        meaning: "pinned host memory can be mapped into the device's address space (canMapHostMemory)",
        flag: true,
    },
    Attribute {
        key: "host_pointer_for_registered_memory",
        attr: A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
        meaning: "registered host memory has the same address on host and device (canUseHostPointerForRegisteredMem)",
        flag: true,
    },
    Attribute {
        key: "direct_managed_access_from_host",
        attr: A::CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
        meaning: "the host accesses managed memory directly, without migrating pages (directManagedMemAccessFromHost)",
        flag: true,
    },
    Attribute {
        key: "managed_memory",
        attr: A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
        meaning: "managed (unified) memory can be allocated (managedMemory)",
        flag: true,
    },
    Attribute {
        key: "unified_addressing",
        attr: A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
        meaning: "host and device share one virtual address space (unifiedAddressing)",
        flag: true,
    },
    Attribute {
        key: "cluster_launch",
        attr: A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,
        meaning: "kernels can be launched in clusters of CTAs, so .cluster scope can be wider than .cta (clusterLaunch)",
        flag: true,
    },
    Attribute {
        key: "cooperative_launch",
        attr: A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
        meaning: "all blocks of a grid can be guaranteed co-resident (cooperativeLaunch)",
        flag: true,
    },
    Attribute {
        key: "integrated",
        attr: A::CU_DEVICE_ATTRIBUTE_INTEGRATED,
        meaning: "the GPU shares memory with the host (integrated)",
        flag: true,
    },
    Attribute {
        key: "sm_count",
        attr: A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        meaning: "streaming multiprocessors",
        flag: false,
    },
    Attribute {
        key: "max_threads_per_sm",
        attr: A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        meaning: "threads resident on one SM at most",
        flag: false,
    },
    Attribute {
        key: "l2_bytes",
        attr: A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        meaning: "bytes of L2 cache (the point of coherence of .gpu scope)",
        flag: false,
    },
    Attribute {
        key: "shared_bytes_per_sm",
        attr: A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        meaning: "bytes of shared memory per SM",
        flag: false,
    },
    Attribute {
        key: "sm_clock_khz",
        attr: A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        meaning: "peak SM clock in kHz",
        flag: false,
    },
];

/// What `caps` found on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caps {
    pub name: String,
    pub ordinal: usize,
    pub compute_capability: (i32, i32),
    pub total_memory: usize,
    pub driver_version: i32,
    /// (key, value) for every entry of [`ATTRIBUTES`].
    pub values: Vec<(&'static str, i64)>,
}

/// The platform of device `dev` (see [`Caps::platform`]).
pub fn platform_from_device(dev: &Device) -> Result<Platform, RunError> {
    Ok(query(dev)?.platform())
}

/// Reads the capabilities of `dev`.
pub fn query(dev: &Device) -> Result<Caps, RunError> {
    let err = driver_err("reading a device attribute");
    let mut values = Vec::new();
    for a in ATTRIBUTES {
        values.push((a.key, dev.ctx.attribute(a.attr).map_err(&err)? as i64));
    }
    let mut version = 0;
    // SAFETY: the driver was probed and initialised when `dev` was opened; the call writes one
    // integer.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    Ok(Caps {
        name: dev.name.clone(),
        ordinal: dev.ordinal,
        compute_capability: dev.ctx.compute_capability().map_err(&err)?,
        total_memory: dev.ctx.total_mem().map_err(&err)?,
        driver_version: version,
        values,
    })
}

impl Caps {
    pub fn get(&self, key: &str) -> Option<i64> {
        self.values.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    fn flag(&self, key: &str) -> bool {
        self.get(key).unwrap_or(0) != 0
    }

    /// The platform the model assumes for programs run on this device: its own capabilities,
    /// so that what the hardware may do for lack of one (a device RMW and a host RMW on one
    /// word of host memory that are not atomic together) is what the model allows, not a
    /// disagreement. No attribute says whether the device's writes to host memory are coherent
    /// with the host's caches; they are on x86 hosts over PCIe and over NVLink-C2C, so coherence
    /// is assumed (`--platform arm-noncoherent` says otherwise).
    pub fn platform(&self) -> Platform {
        Platform {
            name: format!("GPU {} ({})", self.ordinal, self.name),
            host_native_atomics: self.flag("host_native_atomics"),
            concurrent_managed_access: self.flag("concurrent_managed_access"),
            pageable_memory_access: self.flag("pageable_memory_access"),
            coherent_host_memory: true,
        }
    }

    /// What each scope can promise here, one sentence per scope.
    pub fn scope_promises(&self) -> Vec<(&'static str, String)> {
        let (major, _) = self.compute_capability;
        let cluster = if self.flag("cluster_launch") {
            "clusters of CTAs exist (compute capability 9.0+): .cluster covers the CTAs of one cluster, distributed shared memory included".to_string()
        } else {
            "no cluster launch: .cluster scope means the same as .cta".to_string()
        };
        let sys = match (
            self.flag("host_native_atomics"),
            self.flag("can_map_host_memory"),
        ) {
            (true, _) => "host threads are in reach: device and host RMWs on host memory are atomic with each other".to_string(),
            (false, true) => "host-mapped memory is ordered by .sys fences and release/acquire, but device and host RMWs on one word are NOT atomic with each other (no host-native atomics): use one side's RMWs only, or a mailbox".to_string(),
            (false, false) => "no mapped host memory: .sys reaches peer GPUs only".to_string(),
        };
        let managed = if self.flag("concurrent_managed_access") {
            "managed memory may be touched by host and device at once (page faults migrate pages)"
                .to_string()
        } else {
            "managed memory must not be touched by the host while a kernel runs".to_string()
        };
        vec![
            (
                "cta",
                "threads of one block: shared memory and L1; the cheapest scope".to_string(),
            ),
            ("cluster", cluster),
            (
                "gpu",
                format!(
                    "all threads of this device (compute capability {major}.x), ordered at the L2"
                ),
            ),
            ("sys", sys),
            ("managed", managed),
        ]
    }

    /// The capabilities in words.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "GPU {}: {}, compute capability {}.{}, {} MiB, driver API {}.{}",
            self.ordinal,
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_memory >> 20,
            self.driver_version / 1000,
            self.driver_version % 1000 / 10
        );
        for a in ATTRIBUTES {
            let v = self.get(a.key).unwrap_or(0);
            if a.flag {
                let yes = if v != 0 { "yes" } else { "no " };
                let _ = writeln!(s, "  {yes}  {}", a.meaning);
            } else {
                let _ = writeln!(s, "  {v:>12}  {}", a.meaning);
            }
        }
        let _ = writeln!(s, "What each scope can promise here:");
        for (scope, promise) in self.scope_promises() {
            let _ = writeln!(s, "  {scope:<8} {promise}");
        }
        s
    }

    /// The capabilities as a TOML platform profile.
    pub fn toml(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# scopecheck platform profile, written by `scopecheck caps --toml`"
        );
        let _ = writeln!(s, "[platform]");
        let _ = writeln!(s, "name = {}", toml_str(&self.name));
        let _ = writeln!(
            s,
            "compute_capability = \"{}.{}\"",
            self.compute_capability.0, self.compute_capability.1
        );
        let _ = writeln!(s, "memory_bytes = {}", self.total_memory);
        let _ = writeln!(s, "driver_version = {}", self.driver_version);
        for a in ATTRIBUTES {
            let v = self.get(a.key).unwrap_or(0);
            if a.flag {
                let _ = writeln!(s, "{} = {}", a.key, v != 0);
            } else {
                let _ = writeln!(s, "{} = {v}", a.key);
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "[scopes]");
        for (scope, promise) in self.scope_promises() {
            let _ = writeln!(s, "{scope} = {}", toml_str(&promise));
        }
        s
    }
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200_like() -> Caps {
        Caps {
            name: "NVIDIA H200".into(),
            ordinal: 0,
            compute_capability: (9, 0),
            total_memory: 150_000_000_000,
            driver_version: 13000,
            values: ATTRIBUTES
                .iter()
                .map(|a| {
                    let v = match a.key {
                        "host_native_atomics" | "pageable_memory_access" => 0,
                        "sm_count" => 132,
                        "l2_bytes" => 62_914_560,
                        _ => 1,
                    };
                    (a.key, v)
                })
                .collect(),
        }
    }

    #[test]
    fn profile_says_what_sys_scope_cannot_promise_without_host_atomics() {
        let c = h200_like();
        let t = c.toml();
        assert!(t.contains("host_native_atomics = false"), "{t}");
        assert!(t.contains("sm_count = 132"));
        assert!(t.contains("NOT atomic"));
        assert!(c.text().contains("no   device and host RMWs"));
    }

    #[test]
    fn the_platform_of_a_device_is_its_capabilities() {
        let p = h200_like().platform();
        // As measured on the H200 (shared/docs/H200.md): no host-native atomics, no pageable
        // access, concurrent managed access; the built-in h200-pcie profile says the same.
        assert!(!p.host_native_atomics && !p.pageable_memory_access);
        assert!(p.concurrent_managed_access && p.coherent_host_memory);
        let builtin = Platform::builtin("h200-pcie").unwrap();
        assert_eq!(p.missing(), builtin.missing());
        assert_eq!(p.name, "GPU 0 (NVIDIA H200)");
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
