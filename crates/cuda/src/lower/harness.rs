//! The harness `scopecheck_main()`, run at compile time: allocations, streams, launches and
//! synchronizations shape the program's threads and their `after` edges.

use std::collections::BTreeSet;

use scopecheck_ir::{
    DevicePlacement, MemorySpace, Observable, Operand, Placement, Thread, ThreadId,
};
use tree_sitter::Node;

use super::{err, field, Binding, Dims, FnKind, Lw, Ptr, Stream, R};
use crate::{span_of, CudaError};

impl<'c, 's, 't> Lw<'c, 's, 't> {
    pub(super) fn host_main(&mut self, body: Node<'t>) -> R<()> {
        self.block(body)
    }

    /// Everything `ids` stand for: themselves and what they start after.
    fn closure(&self, ids: impl IntoIterator<Item = ThreadId>) -> Vec<ThreadId> {
        let mut set = BTreeSet::new();
        for id in ids {
            set.insert(id);
            set.extend(self.cx.threads[id.0 as usize].after.iter().copied());
        }
        set.into_iter().collect()
    }

    /// Ends the current host segment: its code becomes a host thread (when there is any).
    pub(super) fn flush_host(&mut self) {
        self.resolve();
        if self.code.is_empty() {
            return;
        }
        let id = ThreadId(self.cx.threads.len() as u32);
        let name = if self.launches.segments == 0 {
            "host".to_string()
        } else {
            format!("host#{}", self.launches.segments + 1)
        };
        self.launches.segments += 1;
        let after = self.closure(
            self.launches
                .host_after
                .iter()
                .chain(&self.launches.host_done)
                .copied(),
        );
        for (r, span) in std::mem::take(&mut self.asserts) {
            self.cx.asserts.push((Observable::Reg(id, r), span));
        }
        self.cx.threads.push(Thread {
            name,
            placement: Placement::Host,
            span: None,
            registers: std::mem::take(&mut self.registers),
            init_regs: std::mem::take(&mut self.init_regs),
            code: std::mem::take(&mut self.code),
            after,
        });
        self.launches.host_done.push(id);
        self.reg_types.clear();
        self.labels = vec![None];
        self.end_label = 0;
        self.temps = 0;
        self.seg += 1;
    }

    /// A synchronization: the host code that follows starts after `synced` (and all host code
    /// so far).
    pub(super) fn synchronize(&mut self, synced: Vec<ThreadId>, n: Node<'t>) -> R<()> {
        if self.nesting > 0 {
            return err(
                n,
                "not supported: a synchronization inside a loop or `if` of scopecheck_main",
            );
        }
        self.flush_host();
        let mut after = std::mem::take(&mut self.launches.host_after);
        after.extend(self.launches.host_done.iter().copied());
        after.extend(synced);
        self.launches.host_after = self.closure(after);
        Ok(())
    }

    pub(super) fn stream_arg(&mut self, a: Node<'t>) -> R<Stream> {
        let a = strip(a);
        if a.kind() == "identifier" {
            let name = self.text(a);
            return match self.lookup(name) {
                Some(Binding::Stream(Some(s))) => Ok(Some(s)),
                Some(Binding::Stream(None)) => err(
                    a,
                    format!("the stream `{name}` is used before cudaStreamCreate(&{name})"),
                ),
                _ if matches!(name, "cudaStreamLegacy" | "cudaStreamDefault") => Ok(None),
                _ => err(a, format!("`{name}` is not a stream")),
            };
        }
        match self.value(a, None)? {
            Operand::Imm(0) => Ok(None),
            _ => err(
                a,
                "expected a stream: a `cudaStream_t` made by cudaStreamCreate, or 0",
            ),
        }
    }

    /// `&name` (possibly cast): the name of the variable an out-parameter writes.
    fn out_name(&self, a: Node<'t>) -> R<Node<'t>> {
        let a = strip(a);
        if a.kind() == "pointer_expression" && self.op(a) == "&" {
            let v = strip(field(a, "argument")?);
            if v.kind() == "identifier" {
                return Ok(v);
            }
        }
        err(a, "expected `&variable`")
    }

    /// Handles the CUDA runtime calls of the harness; false when `name` is none of them.
    pub(super) fn harness_call(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<bool> {
        let space = match name {
            "cudaMalloc" => Some(MemorySpace::Global),
            "cudaMallocManaged" => Some(MemorySpace::Managed),
            "cudaHostAlloc" | "cudaMallocHost" => Some(MemorySpace::HostMapped),
            _ => None,
        };
        if let Some(space) = space {
            let (lo, hi) = match name {
                "cudaMalloc" | "cudaMallocHost" => (2, 2),
                "cudaMallocManaged" => (2, 3),
                _ => (3, 3),
            };
            self.arity(name, args, (lo, hi), "`&pointer, bytes` (and flags)", e)?;
            if name == "cudaHostAlloc" {
                let flags = self.word(args[2]);
                if !flags.contains("cudaHostAllocMapped") {
                    self.cx.warn(args[2], "pinned memory without cudaHostAllocMapped: treated as mapped (the device reaches it through unified addressing)");
                }
            }
            let v = self.out_name(args[0])?;
            let vname = self.text(v).to_string();
            let (access, elem, strukt, ty) = match self.lookup(&vname) {
                Some(Binding::PtrUnset(a, s, st, ty)) => (a, s, st, ty),
                Some(Binding::Ptr(p)) => (
                    p.access,
                    p.strukt
                        .map_or(p.ty.bytes() as i64, |sid| self.cx.structs[sid].size),
                    p.strukt,
                    p.ty,
                ),
                _ => return err(v, format!("`{vname}` is not a pointer variable")),
            };
            let bytes = self.const_operand(args[1])?;
            if bytes <= 0 || bytes % elem != 0 {
                return err(
                    args[1],
                    format!("{bytes} bytes is not a whole number of {elem}-byte elements"),
                );
            }
            let len = (bytes / elem) as usize;
            if len > crate::MAX_ARRAY_ELEMENTS {
                return err(
                    args[1],
                    format!(
                        "{len} elements: at most {} per allocation (each element is a location)",
                        crate::MAX_ARRAY_ELEMENTS
                    ),
                );
            }
            let arr =
                self.cx
                    .new_array(&vname, len, strukt, ty, space, &[], Some(span_of(e)), true);
            self.rebind(
                &vname,
                Binding::Ptr(Ptr {
                    arr,
                    idx: 0,
                    index: None,
                    access,
                    strukt,
                    ty,
                }),
            );
            return Ok(true);
        }
        match name {
            "cudaHostGetDevicePointer" => {
                self.arity(name, args, (2, 3), "`&device_pointer, host_pointer, 0`", e)?;
                let v = self.out_name(args[0])?;
                let vname = self.text(v).to_string();
                let t = match self.lookup(&vname) {
                    Some(Binding::PtrUnset(a, _, st, ty)) => (a, st, ty),
                    Some(Binding::Ptr(p)) => (p.access, p.strukt, p.ty),
                    _ => return err(v, format!("`{vname}` is not a pointer variable")),
                };
                let p = self.fixed_pointer(strip(args[1]))?;
                let p = self.retype(p, t, args[1])?;
                if self.cx.arrays[p.arr].space != MemorySpace::HostMapped {
                    return err(args[1], "cudaHostGetDevicePointer needs memory from cudaHostAlloc(..., cudaHostAllocMapped)");
                }
                self.rebind(&vname, Binding::Ptr(p));
            }
            "cudaStreamCreate" | "cudaStreamCreateWithFlags" => {
                let v = self.out_name(args.first().copied().unwrap_or(e))?;
                let vname = self.text(v).to_string();
                if !matches!(self.lookup(&vname), Some(Binding::Stream(_))) {
                    return err(v, format!("`{vname}` is not a `cudaStream_t`"));
                }
                let s = self.cx.next_stream;
                self.cx.next_stream += 1;
                self.rebind(&vname, Binding::Stream(Some(s)));
            }
            "cudaDeviceSynchronize" | "cudaThreadSynchronize" => {
                self.arity(name, args, (0, 0), "no arguments", e)?;
                let all: Vec<ThreadId> = self
                    .launches
                    .done
                    .iter()
                    .flat_map(|(_, t)| t.iter().copied())
                    .collect();
                self.synchronize(all, e)?;
            }
            "cudaStreamSynchronize" => {
                self.arity(name, args, (1, 1), "a stream", e)?;
                let s = self.stream_arg(args[0])?;
                let on: Vec<ThreadId> = self
                    .launches
                    .done
                    .iter()
                    .filter(|(st, _)| *st == s)
                    .flat_map(|(_, t)| t.iter().copied())
                    .collect();
                self.synchronize(on, e)?;
            }
            "cudaFree" | "cudaFreeHost" | "cudaStreamDestroy" | "cudaSetDevice"
            | "cudaGetLastError" | "cudaDeviceReset" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `k<<<B, T[, smem[, stream]]>>>(args)`: one thread per (block, thread).
    pub(super) fn launch(&mut self, e: Node<'t>) -> R<Operand> {
        if !self.host() {
            return err(
                e,
                "not supported: launching a kernel from device code (dynamic parallelism)",
            );
        }
        if self.nesting > 0 {
            return err(e, "not supported: a launch inside a loop or `if` of scopecheck_main (write each launch out)");
        }
        let f = field(e, "function")?;
        let kname = self.text(f).to_string();
        let Some(func) = self.cx.funcs.get(&kname) else {
            return err(f, format!("unknown kernel `{kname}`"));
        };
        if func.kind != FnKind::Global {
            return err(f, format!("`{kname}` is not a `__global__` kernel"));
        }
        let kernel = func.node;
        let mut c = e.walk();
        let config = e
            .children(&mut c)
            .find(|k| k.kind() == "kernel_call_syntax")
            .ok_or_else(|| CudaError::new(span_of(e), "internal: no launch configuration"))?;
        let mut c = config.walk();
        let cfg: Vec<Node> = config
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect();
        if cfg.len() < 2 || cfg.len() > 4 {
            return err(
                config,
                "a launch takes `<<<blocks, threads[, shared_bytes[, stream]]>>>`",
            );
        }
        let grid = self.dims_of(cfg[0])?;
        let block = self.dims_of(cfg[1])?;
        if let Some(smem) = cfg.get(2) {
            self.const_operand(*smem)?;
        }
        let stream = match cfg.get(3) {
            Some(s) => self.stream_arg(*s)?,
            None => None,
        };
        for (d, n) in [(grid, cfg[0]), (block, cfg[1])] {
            if d.iter().any(|v| *v < 1) {
                return err(n, "launch sizes must be at least 1");
            }
        }
        self.check_limit(grid, block, config)?;
        // Arguments, evaluated in the host's context.
        let decl = field(kernel, "declarator")?;
        let params = field(decl, "parameters")?;
        let mut c = params.walk();
        let params: Vec<Node> = params
            .named_children(&mut c)
            .filter(|p| p.kind() == "parameter_declaration")
            .filter(|p| self.text(*p).trim() != "void")
            .collect();
        let args = self.args(e)?;
        if params.len() != args.len() {
            return err(
                e,
                format!(
                    "{} argument(s) given, `{kname}` takes {}",
                    args.len(),
                    params.len()
                ),
            );
        }
        let mut frame = Vec::new();
        for (p, a) in params.iter().zip(&args) {
            let ty = self.cx.ty(*p, p.child_by_field_name("declarator"))?;
            let pname = match p.child_by_field_name("declarator") {
                Some(d) => self.text(self.cx.declarator_shape(d)?.0).to_string(),
                None => continue,
            };
            // A parameter is initialised as a variable of its type is: converted.
            let b = if ty.pointer {
                let ptr = self.fixed_pointer(*a)?;
                Binding::Ptr(self.retype(ptr, ty.ptr_ty(), *a)?)
            } else {
                match self.value(*a, None)? {
                    Operand::Imm(v) => Binding::Const(ty.int.wrap(v), ty.int),
                    Operand::Reg(_) => {
                        return err(*a, "not supported: a kernel argument computed at run time by the host (pass a constant or a pointer)")
                    }
                }
            };
            frame.push((pname, b));
        }
        self.spawn(&kname, kernel, grid, block, stream, frame, e)
    }

    /// Refuses a launch that would make more device threads than the limit.
    pub(super) fn check_limit(&self, grid: [i64; 3], block: [i64; 3], n: Node<'t>) -> R<()> {
        let blocks = (grid[0] * grid[1] * grid[2]) as usize;
        let per_block = (block[0] * block[1] * block[2]) as usize;
        let total = blocks.saturating_mul(per_block);
        let max = self.cx.options.max_threads;
        if self.cx.device_threads + total > max {
            return err(
                n,
                format!(
                    "this launch makes {total} thread(s), {} in all with the earlier launches: more than the limit of {max} (every execution of every thread is explored, which grows exponentially); shrink the launch, or raise the limit with `--max-threads N` (the default is {})",
                    self.cx.device_threads + total,
                    crate::DEFAULT_MAX_THREADS,
                ),
            );
        }
        Ok(())
    }

    /// Makes the threads of a launch of `kernel` with the parameter bindings `frame`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn spawn(
        &mut self,
        kname: &str,
        kernel: Node<'t>,
        grid: [i64; 3],
        block: [i64; 3],
        stream: Stream,
        frame: Vec<(String, Binding)>,
        e: Node<'t>,
    ) -> R<Operand> {
        let blocks = (grid[0] * grid[1] * grid[2]) as usize;
        let per_block = (block[0] * block[1] * block[2]) as usize;
        let total = blocks * per_block;
        // Host code so far happens before the kernel.
        self.flush_host();
        let mut before: Vec<ThreadId> = self.launches.host_after.clone();
        before.extend(self.launches.host_done.iter().copied());
        for (s, ids) in &self.launches.done {
            // Legacy default stream: it waits for everything, and everything waits for it.
            if *s == stream || s.is_none() || stream.is_none() {
                before.extend(ids.iter().copied());
            }
        }
        let after = self.closure(before);
        let earlier = self
            .cx
            .threads
            .iter()
            .filter(|t| {
                t.name.starts_with(&format!("{kname}.")) || t.name.starts_with(&format!("{kname}#"))
            })
            .count();
        let lname = if earlier == 0 {
            kname.to_string()
        } else {
            let n = self.launches.done.len() + 1;
            format!("{kname}#{n}")
        };
        let body = field(kernel, "body")?;
        let first_cta = self.cx.next_cta;
        self.cx.next_cta += blocks as u32;
        self.cx.device_threads += total;
        let mut ids = Vec::new();
        for b in 0..blocks {
            for t in 0..per_block {
                let idx = |i: usize, d: [i64; 3]| {
                    let i = i as i64;
                    [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])]
                };
                let dims = Dims {
                    thread: idx(t, block),
                    block: idx(b, grid),
                    block_dim: block,
                    grid_dim: grid,
                };
                let cta = first_cta + b as u32;
                let mut k = Lw::new(&mut *self.cx, Some(cta), dims, 0);
                k.scopes = vec![frame.clone()];
                k.stmt(body)?;
                k.resolve();
                let id = ThreadId(k.cx.threads.len() as u32);
                let asserts = std::mem::take(&mut k.asserts);
                let thread = Thread {
                    name: format!("{lname}.b{b}.t{t}"),
                    placement: Placement::Device(DevicePlacement {
                        gpu: 0,
                        cluster: cta,
                        cta,
                        warp: Some((t / 32) as u32),
                    }),
                    span: Some(span_of(e)),
                    registers: std::mem::take(&mut k.registers),
                    init_regs: std::mem::take(&mut k.init_regs),
                    code: std::mem::take(&mut k.code),
                    after: after.clone(),
                };
                drop(k);
                for (r, span) in asserts {
                    self.cx.asserts.push((Observable::Reg(id, r), span));
                }
                self.cx.threads.push(thread);
                ids.push(id);
            }
        }
        self.launches.done.push((stream, ids));
        Ok(Operand::Imm(0))
    }
}

/// Strips casts and parentheses.
fn strip(mut n: Node) -> Node {
    loop {
        match n.kind() {
            "cast_expression" => match n.child_by_field_name("value") {
                Some(v) => n = v,
                None => return n,
            },
            "parenthesized_expression" => match n.named_child(0) {
                Some(v) => n = v,
                None => return n,
            },
            _ => return n,
        }
    }
}
