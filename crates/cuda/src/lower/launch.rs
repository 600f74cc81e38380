//! Kernel launches from the harness: `k<<<grid, block, smem, stream>>>(args)` and
//! `cudaLaunchCooperativeKernel` make one thread per (block, thread) of the launch, with its
//! parameters bound to the host's arguments and `after` edges from what the launch is ordered
//! after (host code so far, the stream's earlier work, the events it waits for).

use scopecheck_ir::{DevicePlacement, Diagnostic, MemorySpace, Operand, Placement, ThreadId};
use tree_sitter::Node;

use super::harness::strip;
use super::{err, field, Binding, Dims, FnKind, Lw, Stream, R};
use crate::span_of;

/// A kernel launch: the kernel (its name and its definition), the grid and block dimensions,
/// the stream, and whether it is cooperative (`cudaLaunchCooperativeKernel`).
pub(super) struct Launch<'a, 't> {
    pub(super) kname: &'a str,
    pub(super) kernel: Node<'t>,
    pub(super) grid: [i64; 3],
    pub(super) block: [i64; 3],
    pub(super) stream: Stream,
    pub(super) cooperative: bool,
}

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// `k<<<B, T[, smem[, stream]]>>>(args)`: one thread per (block, thread).
    pub(super) fn launch(&mut self, e: Node<'t>) -> R<Operand> {
        if !self.host() {
            return err(
                e,
                "not supported: launching a kernel from device code (dynamic parallelism)",
            );
        }
        if self.spawned {
            return err(e, "not supported: a kernel launch in a `std::thread`'s function (launch from the harness)");
        }
        if self.nesting > 0 {
            return err(e, "not supported: a launch inside a loop or `if` of scopecheck_main (write each launch out)");
        }
        let f = field(e, "function")?;
        let expression = self.text(f).trim().to_string();
        let mut kname = expression.clone();
        let harness_only = self.cx.options.kernels == crate::KernelSource::Ptx;
        if harness_only {
            // `k<int>`: the PTX view finds the instantiation by the kernel's name.
            if let Some(k) = kname.find('<') {
                kname.truncate(k);
                kname = kname.trim().to_string();
            }
        }
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
            .ok_or_else(|| Diagnostic::error("internal: no launch configuration").at(span_of(e)))?;
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
        let smem = match cfg.get(2) {
            Some(s) => self.const_operand(*s)?,
            None => 0,
        };
        self.cx.launch_smem = smem;
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
        let args = self.args(e)?;
        let frame = self.launch_frame(kernel, &kname, &args, e, false)?;
        self.launch_expression = expression;
        self.spawn(
            Launch {
                kname: &kname,
                kernel,
                grid,
                block,
                stream,
                cooperative: false,
            },
            frame,
            e,
        )
    }

    /// The parameter bindings of a launch of `kernel` with the host expressions `args`.
    ///
    /// `host_thread`: the callee is a host function run by a `std::thread` (host arrays may be
    /// passed), not a kernel.
    pub(super) fn launch_frame(
        &mut self,
        kernel: Node<'t>,
        kname: &str,
        args: &[Node<'t>],
        e: Node<'t>,
        host_thread: bool,
    ) -> R<Vec<(String, Binding)>> {
        let harness_only = self.cx.options.kernels == crate::KernelSource::Ptx && !host_thread;
        let callee = if host_thread { "thread" } else { "kernel" };
        // Arguments, evaluated in the host's context.
        let params = self.params_of(kernel)?;
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
        for (p, a) in params.iter().zip(args) {
            let (ty, name) = match self.cx.param(*p) {
                Ok(param) => param,
                // A parameter type beyond this front-end (a template parameter, a class):
                // the PTX view only needs the argument's value, a pointer or a number.
                Err(_) if harness_only => {
                    let b = match self.fixed_pointer(*a) {
                        Ok(ptr) => Binding::Ptr(ptr),
                        Err(_) => match self.value(*a, None)? {
                            Operand::Imm(v) => Binding::Const(v, scopecheck_ir::IntType::S64),
                            Operand::Reg(_) => {
                                return err(*a, format!("not supported: a {callee} argument computed at run time by the host (pass a constant or a pointer)"))
                            }
                        },
                    };
                    frame.push((String::new(), b));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let Some(name) = name else {
                continue;
            };
            let pname = self.text(name).to_string();
            if let (Some(sid), false) = (ty.strukt, ty.pointer) {
                self.bind_struct_param(&pname, sid, strip(*a), true, &mut frame)?;
                continue;
            }
            if ty.pointer {
                self.cx.not_in_memory(ty.strukt, *p)?;
            }
            // A parameter is initialised as a variable of its type is: converted.
            let b = if ty.pointer {
                let ptr = self.fixed_pointer(*a).map_err(|mut e| {
                    if host_thread {
                        e.message.push_str(" (a thread's pointer arguments must point to memory: an allocation such as cudaMallocManaged or cudaHostAlloc, a host array, or a `__device__` variable)");
                    }
                    e
                })?;
                if !host_thread && self.cx.arrays[ptr.arr].space == MemorySpace::HostPageable {
                    return err(*a, "a host array cannot be passed to a kernel: copy it to device memory with cudaMemcpy");
                }
                Binding::Ptr(self.retype(ptr, ty.ptr_ty(), *a)?)
            } else {
                match self.value_as(*a, ty.int, None)? {
                    Operand::Imm(v) => Binding::Const(ty.int.wrap(v), ty.int),
                    Operand::Reg(_) => {
                        return err(*a, format!("not supported: a {callee} argument computed at run time by the host (pass a constant or a pointer)"))
                    }
                }
            };
            frame.push((pname, b));
        }
        Ok(frame)
    }

    /// Whether work on stream `a` and work on stream `b` are ordered by the streams alone: the
    /// same stream, or one of them the legacy default stream, which waits for and is waited for
    /// by every stream except those created `cudaStreamNonBlocking`.
    pub(super) fn ordered_streams(&self, a: Stream, b: Stream) -> bool {
        let blocking = |s: Stream| s.is_none_or(|k| !self.cx.non_blocking.contains(&k));
        a == b || (a.is_none() && blocking(b)) || (b.is_none() && blocking(a))
    }

    /// `cudaLaunchCooperativeKernel(kernel, grid, block, args, shared_bytes, stream)`: a launch
    /// whose blocks are resident together, so its kernel may `this_grid().sync()`. `args` is
    /// an array of the arguments' addresses (`void *args[] = {&a, &b};`).
    pub(super) fn cooperative_launch(&mut self, args: &[Node<'t>], e: Node<'t>) -> R<()> {
        if self.nesting > 0 {
            return err(e, "not supported: a launch inside a loop or `if` of scopecheck_main (write each launch out)");
        }
        let f = strip(args[0]);
        let kname = self.text(f).trim().to_string();
        let Some(func) = self.cx.funcs.get(&kname) else {
            return err(f, format!("unknown kernel `{kname}`"));
        };
        if func.kind != FnKind::Global {
            return err(f, format!("`{kname}` is not a `__global__` kernel"));
        }
        let kernel = func.node;
        let grid = self.dims_of(args[1])?;
        let block = self.dims_of(args[2])?;
        for (d, n) in [(grid, args[1]), (block, args[2])] {
            if d.iter().any(|v| *v < 1) {
                return err(n, "launch sizes must be at least 1");
            }
        }
        let smem = match args.get(4) {
            Some(s) => self.const_operand(*s)?,
            None => 0,
        };
        self.cx.launch_smem = smem;
        let stream = match args.get(5) {
            Some(s) => self.stream_arg(*s)?,
            None => None,
        };
        self.check_limit(grid, block, e)?;
        let list = strip(args[3]);
        let elems =
            match self.build.lookup(self.text(list)) {
                Some(Binding::ArgList(k)) => self.cx.arg_lists[k].clone(),
                _ => return err(
                    list,
                    "expected the array of the arguments' addresses (`void *args[] = {&a, &b};`)",
                ),
            };
        // Each element is the address of a host variable holding the argument.
        let mut values = Vec::with_capacity(elems.len());
        for el in elems {
            let el = strip(el);
            let target = (el.kind() == "pointer_expression" && self.op(el) == "&")
                .then(|| el.child_by_field_name("argument"))
                .flatten();
            match target {
                Some(t) => values.push(t),
                None => {
                    return err(
                        el,
                        "expected the address of a variable holding the argument (`&d_data`)",
                    )
                }
            }
        }
        let frame = self.launch_frame(kernel, &kname, &values, e, false)?;
        self.launch_expression = kname.clone();
        self.spawn(
            Launch {
                kname: &kname,
                kernel,
                grid,
                block,
                stream,
                cooperative: true,
            },
            frame,
            e,
        )?;
        Ok(())
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

    /// Makes the threads of `launch` with the parameter bindings `frame`.
    pub(super) fn spawn(
        &mut self,
        launch: Launch<'_, 't>,
        frame: Vec<(String, Binding)>,
        e: Node<'t>,
    ) -> R<Operand> {
        let Launch {
            kname,
            kernel,
            grid,
            block,
            stream,
            cooperative,
        } = launch;
        let blocks = (grid[0] * grid[1] * grid[2]) as usize;
        let per_block = (block[0] * block[1] * block[2]) as usize;
        let total = blocks * per_block;
        self.cx.launch_cooperative = cooperative;
        self.cx.launch_threads = total as i64;
        self.cx.grid_sync = None;
        // Host code so far happens before the kernel.
        self.flush_host();
        let mut before: Vec<ThreadId> = self.launches.host_after.clone();
        before.extend(self.launches.host_done.iter().copied());
        for (s, ids) in &self.launches.stream_waits {
            if *s == stream {
                before.extend(ids.iter().copied());
            }
        }
        for (s, ids) in &self.launches.done {
            if self.ordered_streams(*s, stream) {
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
        // Reading only the harness, a kernel may be a declaration: its body is not needed.
        let body = match kernel.child_by_field_name("body") {
            Some(b) => Some(b),
            None if self.cx.options.kernels == crate::KernelSource::Ptx => None,
            None => Some(field(kernel, "body")?),
        };
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
                let mut k =
                    Lw::with_frame(&mut *self.cx, Some(cta), dims, 0, frame.iter().cloned());
                if let (crate::KernelSource::Source, Some(body)) = (k.cx.options.kernels, body) {
                    let outer = k.cx.enter_body(e, body, "this launch")?;
                    let r = k.stmt(body);
                    k.cx.leave_body(outer);
                    r?;
                }
                let placement = Placement::Device(DevicePlacement {
                    gpu: 0,
                    cluster: cta,
                    cta,
                    warp: Some((t / 32) as u32),
                });
                ids.push(k.push_thread(
                    format!("{lname}.b{b}.t{t}"),
                    placement,
                    span_of(e),
                    after.clone(),
                ));
            }
        }
        let one = |b: &Binding| match b {
            Binding::Ptr(p) => {
                let arr = &self.cx.arrays[p.arr];
                match arr.elems.get(p.idx as usize) {
                    Some(&loc) => Ok(crate::LaunchArg::Pointer(loc)),
                    None => err(e, "internal: a pointer argument past its allocation"),
                }
            }
            Binding::Const(v, _) => Ok(crate::LaunchArg::Value(*v)),
            // A shared-memory pointer (OpenCL `__local`), ...: the language-level view
            // passes it, the PTX view cannot yet.
            _ => Ok(crate::LaunchArg::Other),
        };
        let mut args = Vec::new();
        let mut k = 0;
        while k < frame.len() {
            if let Binding::ValStruct(sid) = frame[k].1 {
                // The fields follow their struct in the frame, laid out as C lays them out:
                // each at the next multiple of its size (pointers 8 bytes).
                let mut fields = Vec::new();
                let mut at = 0i64;
                for (j, (_, fty)) in self.cx.structs[sid].fields.iter().enumerate() {
                    let size = if fty.pointer {
                        8
                    } else {
                        i64::from(fty.int.bits / 8).max(1)
                    };
                    at = (at + size - 1) / size * size;
                    fields.push((at, one(&frame[k + 1 + j].1)?));
                    at += size;
                }
                k += 1 + fields.len();
                args.push(crate::LaunchArg::Struct(fields));
                continue;
            }
            args.push(one(&frame[k].1)?);
            k += 1;
        }
        let dims = |d: [i64; 3]| d.map(|v| v as u32);
        self.cx.launches.push(crate::KernelLaunch {
            kernel: kname.to_string(),
            expression: std::mem::take(&mut self.launch_expression),
            grid: dims(grid),
            block: dims(block),
            shared_bytes: u32::try_from(std::mem::take(&mut self.cx.launch_smem)).unwrap_or(0),
            args,
            threads: ids.clone(),
            span: span_of(e),
        });
        self.launches.done.push((stream, ids));
        Ok(Operand::Imm(0))
    }
}
