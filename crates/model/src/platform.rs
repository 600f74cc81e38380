//! Platforms: what the machine a program runs on lets system scope promise.
//!
//! CUDA reports the capabilities as device attributes; libcu++ states the rule: a CPU and a GPU
//! may operate on the same atomic concurrently only in managed memory with
//! `concurrentManagedAccess = 1`, or in host memory with `hostNativeAtomicSupported = 1`. A
//! device reaches pageable host memory only with `pageableMemoryAccess = 1`. And device writes
//! to host memory are coherent with the CPU's caches on x86 over PCIe, but not on many ARM
//! servers unless the interconnect provides it (NVLink-C2C on Grace Hopper).

use scopecheck_explore::{Event, Graph};
use scopecheck_ir::{MemorySpace, Placement, Program};

use scopecheck_ir::Diagnostic;

/// The capabilities that decide what host-device programs may rely on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Platform {
    pub name: String,
    /// `hostNativeAtomicSupported`: device and host RMWs on one word of host memory are atomic
    /// with each other.
    pub host_native_atomics: bool,
    /// `concurrentManagedAccess`: host and device may touch managed memory at the same time.
    pub concurrent_managed_access: bool,
    /// `pageableMemoryAccess`: the device may access ordinary pageable host memory.
    pub pageable_memory_access: bool,
    /// Device accesses to host memory are coherent with the host's caches.
    pub coherent_host_memory: bool,
}

impl Platform {
    /// A machine that supports everything: the default, so that a test's verdict depends on
    /// the memory model alone unless a platform is asked for.
    pub fn ideal() -> Platform {
        Platform {
            name: "ideal".into(),
            host_native_atomics: true,
            concurrent_managed_access: true,
            pageable_memory_access: true,
            coherent_host_memory: true,
        }
    }

    /// The built-in profiles' names.
    pub const BUILTIN: [&'static str; 4] = ["ideal", "h200-pcie", "gh200", "arm-noncoherent"];

    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Option<Platform> {
        let p = |host_native_atomics,
                 concurrent_managed_access,
                 pageable_memory_access,
                 coherent_host_memory| Platform {
            name: name.into(),
            host_native_atomics,
            concurrent_managed_access,
            pageable_memory_access,
            coherent_host_memory,
        };
        match name {
            "ideal" => Some(Platform::ideal()),
            // An H200 on PCIe with an x86 host, as measured (shared/docs/H200.md).
            "h200-pcie" => Some(p(false, true, false, true)),
            // Grace Hopper: NVLink-C2C, native host atomics, pageable access, coherent.
            "gh200" => Some(p(true, true, true, true)),
            // An ARM server whose PCIe DMA is not coherent with the CPU caches.
            "arm-noncoherent" => Some(p(false, false, false, false)),
            _ => None,
        }
    }

    /// The capabilities this platform lacks, by their CUDA names.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if !self.host_native_atomics {
            v.push("hostNativeAtomicSupported");
        }
        if !self.concurrent_managed_access {
            v.push("concurrentManagedAccess");
        }
        if !self.pageable_memory_access {
            v.push("pageableMemoryAccess");
        }
        if !self.coherent_host_memory {
            v.push("coherent host memory");
        }
        v
    }

    /// The same platform with one capability (by its name in [`Platform::missing`]) granted.
    pub fn with(&self, capability: &str) -> Platform {
        let mut p = self.clone();
        match capability {
            "hostNativeAtomicSupported" => p.host_native_atomics = true,
            "concurrentManagedAccess" => p.concurrent_managed_access = true,
            "pageableMemoryAccess" => p.pageable_memory_access = true,
            _ => p.coherent_host_memory = true,
        }
        p
    }
}

fn host_memory(space: MemorySpace) -> bool {
    matches!(
        space,
        MemorySpace::HostMapped | MemorySpace::Managed | MemorySpace::HostPageable
    )
}

fn on_host(g: &Graph, e: usize) -> Option<bool> {
    g.placement(e).map(|p| matches!(p, Placement::Host))
}

/// Whether `a` and `b` are a host access and a device access of one location in host memory.
fn host_and_device(g: &Graph, a: usize, b: usize) -> bool {
    let (ea, eb): (&Event, &Event) = (&g.events[a], &g.events[b]);
    let Some(loc) = ea.kind.loc() else {
        return false;
    };
    eb.kind.loc() == Some(loc)
        && host_memory(g.program.location(loc).space)
        && matches!((on_host(g, a), on_host(g, b)), (Some(x), Some(y)) if x != y)
}

impl Platform {
    /// Whether the platform keeps host and device accesses `a`, `b` of host memory out of each
    /// other's scope: without coherence they neither synchronize nor are atomic together.
    pub fn separates(&self, g: &Graph, a: usize, b: usize) -> bool {
        !self.coherent_host_memory && host_and_device(g, a, b)
    }

    /// Whether [`Platform::splits_atomicity`] may hold for some RMW on `loc`: whether another
    /// write may come between an RMW's read and its write there.
    pub fn may_split_rmws(
        &self,
        program: &scopecheck_ir::Program,
        loc: scopecheck_ir::LocId,
    ) -> bool {
        host_memory(program.location(loc).space)
            && (!self.host_native_atomics || !self.coherent_host_memory)
    }

    /// Whether an RMW event and a write event are not atomic with respect to each other: a
    /// device and a host access to one word of host memory without host-native atomics.
    pub fn splits_atomicity(&self, g: &Graph, rmw: usize, write: usize) -> bool {
        let space = g.events[rmw]
            .kind
            .loc()
            .map(|l| g.program.location(l).space);
        (!self.host_native_atomics
            && space == Some(MemorySpace::HostMapped)
            && host_and_device(g, rmw, write))
            || self.separates(g, rmw, write)
    }
}

/// Whether lacking `capability` changes what the models allow (the others make a program that
/// relies on them an error instead).
pub fn affects_models(capability: &str) -> bool {
    matches!(
        capability,
        "hostNativeAtomicSupported" | "coherent host memory"
    )
}

/// What a program may not do on `platform` at all: a device touching pageable host memory
/// without `pageableMemoryAccess`, host and device touching one managed location at once without
/// `concurrentManagedAccess` (litmus threads all run at once).
pub fn check_program(program: &Program, platform: &Platform) -> Result<(), Diagnostic> {
    for t in &program.threads {
        let host = t.placement == Placement::Host;
        for i in &t.code {
            let Some(loc) = i.kind.named_loc() else {
                continue;
            };
            let l = program.location(loc);
            if !host && l.space == MemorySpace::HostPageable && !platform.pageable_memory_access {
                return Err(Diagnostic::error(
                    format!(
                        "{} accesses pageable host memory `{}` from the device, but {} has pageableMemoryAccess = 0: pin it (host-mapped) or use managed memory",
                        t.name, l.name, platform.name
                    ),
                )
                .at(i.span));
            }
            if host && l.space == MemorySpace::Managed && !platform.concurrent_managed_access {
                let device_too = program.threads.iter().any(|o| {
                    o.placement != Placement::Host
                        && o.code.iter().any(|j| j.kind.named_loc() == Some(loc))
                });
                if device_too {
                    return Err(Diagnostic::error(
                        format!(
                            "host thread {} and device threads use managed memory `{}` at the same time, but {} has concurrentManagedAccess = 0",
                            t.name, l.name, platform.name
                        ),
                    )
                    .at(i.span));
                }
            }
        }
    }
    Ok(())
}
