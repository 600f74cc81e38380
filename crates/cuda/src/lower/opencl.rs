//! OpenCL C: the work-item functions, the OpenCL 2.0 atomics, fences and barriers (lowered as
//! in the C litmus dialect, docs/litmus-c.md), and the OpenCL host calls of the harness
//! (`clCreateBuffer`, `clSVMAlloc`, `clCreateKernel`, `clSetKernelArg`,
//! `clEnqueueNDRangeKernel`, `clFinish`, `clEnqueueReadBuffer` / `clEnqueueWriteBuffer`).

use scopecheck_ir::{
    Address, BarrierKind, Diagnostic, FenceSpaces, InstrKind, IntType, MemorySpace, Operand, Order,
    RegId, RmwKind, RmwOp, Scope, ThreadId,
};
use tree_sitter::Node;

use super::launch::Launch;
use super::ArrayShape;
use super::{err, field, Access, Binding, FnKind, Lw, Ptr, SharedDecl, Ty, R};
use crate::span_of;
use scopecheck_litmus::vocab::cl_scope;

/// The work-item functions, folded to constants in each thread.
pub(super) const WORK_ITEM_FNS: &[&str] = &[
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "get_local_size",
    "get_num_groups",
    "get_global_size",
    "get_work_dim",
    "get_global_offset",
];

/// What `clSetKernelArg` gave an argument.
#[derive(Clone, Copy)]
pub(super) enum ClArg<'t> {
    Bind(Binding),
    /// `clSetKernelArg(k, i, bytes, NULL)`: local memory of `bytes` per work-group.
    Local(i64, Node<'t>),
}

/// A `cl_kernel`: the kernel function and its arguments so far.
pub(super) struct ClKernel<'t> {
    name: String,
    node: Node<'t>,
    args: Vec<Option<ClArg<'t>>>,
}

const CL_RMW: &[(&str, RmwOp)] = &[
    ("exchange", RmwOp::Exch),
    ("fetch_add", RmwOp::Add),
    ("fetch_sub", RmwOp::Sub),
    ("fetch_and", RmwOp::And),
    ("fetch_or", RmwOp::Or),
    ("fetch_xor", RmwOp::Xor),
    ("fetch_min", RmwOp::Min),
    ("fetch_max", RmwOp::Max),
];

/// OpenCL 1.x atomics (relaxed, device scope).
const CL_LEGACY: &[(&str, RmwOp)] = &[
    ("add", RmwOp::Add),
    ("sub", RmwOp::Sub),
    ("xchg", RmwOp::Exch),
    ("min", RmwOp::Min),
    ("max", RmwOp::Max),
    ("and", RmwOp::And),
    ("or", RmwOp::Or),
    ("xor", RmwOp::Xor),
];

/// Strips casts, parentheses and one `&`: the variable an out-argument names.
fn addressed(n: Node) -> Option<Node> {
    let mut n = n;
    loop {
        match n.kind() {
            "cast_expression" => n = n.child_by_field_name("value")?,
            "parenthesized_expression" => n = n.named_child(0)?,
            "pointer_expression" => {
                let a = n.child_by_field_name("argument")?;
                let mut a = a;
                while a.kind() == "parenthesized_expression" {
                    a = a.named_child(0)?;
                }
                return (a.kind() == "identifier").then_some(a);
            }
            _ => return None,
        }
    }
}

fn is_null(n: Node, src: &str) -> bool {
    let mut n = n;
    while matches!(n.kind(), "cast_expression" | "parenthesized_expression") {
        match n.child_by_field_name("value").or_else(|| n.named_child(0)) {
            Some(v) => n = v,
            None => return false,
        }
    }
    matches!(n.kind(), "null" | "nullptr")
        || matches!(&src[n.byte_range()], "NULL" | "0" | "nullptr")
}

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// The memory order argument `i`, seq_cst when absent.
    fn cl_order(&self, args: &[Node<'t>], i: usize) -> R<Order> {
        match args.get(i) {
            Some(o) => self.order_arg(*o),
            None => Ok(Order::SeqCst),
        }
    }

    /// The scope argument `i`, the pointer's default (device) when absent.
    fn cl_scope_arg(&mut self, args: &[Node<'t>], i: usize, p: Ptr) -> R<Scope> {
        let default = match p.access {
            Access::Atomic(s) => s,
            _ => Scope::Gpu,
        };
        match args.get(i) {
            Some(s) => {
                let w = self.word(*s);
                let scope = cl_scope(&w).ok_or_else(|| {
                    Diagnostic::error(format!("expected memory_scope_work_item / sub_group / work_group / device / all_svm_devices, found `{w}`")).at(span_of(*s))
                })?;
                Ok(self.scope(scope, Some(*s)))
            }
            None => Ok(self.scope(default, None)),
        }
    }

    fn cl_flags(&self, n: Node<'t>) -> R<FenceSpaces> {
        let mut spaces = FenceSpaces {
            global: false,
            shared: false,
        };
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            if k.kind() == "identifier" {
                match self.text(k) {
                    "CLK_GLOBAL_MEM_FENCE" => spaces.global = true,
                    "CLK_LOCAL_MEM_FENCE" => spaces.shared = true,
                    "CLK_IMAGE_MEM_FENCE" => {}
                    w => {
                        return err(
                            k,
                            format!(
                                "expected CLK_GLOBAL_MEM_FENCE / CLK_LOCAL_MEM_FENCE, found `{w}`"
                            ),
                        )
                    }
                }
            }
            let mut c = k.walk();
            stack.extend(k.named_children(&mut c));
        }
        Ok(spaces)
    }

    /// The OpenCL device-side calls; `None` when `name` is none of them.
    pub(super) fn cl_device_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Operand>> {
        if WORK_ITEM_FNS.contains(&name) {
            return self.work_item_fn(name, args, e).map(Some);
        }
        let explicit = name.ends_with("_explicit");
        let base = name.strip_suffix("_explicit").unwrap_or(name);
        let Some(op) = base.strip_prefix("atomic_") else {
            return match name {
                "barrier" | "work_group_barrier" => {
                    self.device_only(name, e)?;
                    let max = if name == "barrier" { 1 } else { 2 };
                    self.arity(name, args, (1, max), "fence flags[, scope]", e)?;
                    let spaces = self.cl_flags(args[0])?;
                    self.emit(
                        InstrKind::Barrier {
                            id: Operand::Imm(0),
                            kind: BarrierKind::Sync,
                            count: None,
                            spaces,
                        },
                        e,
                    );
                    Ok(Some(Operand::Imm(0)))
                }
                _ => Ok(None),
            };
        };
        let v = match op {
            "load" => {
                self.arity(
                    name,
                    args,
                    if explicit { (2, 3) } else { (1, 1) },
                    "pointer[, order[, scope]]",
                    e,
                )?;
                let p = self.pointer(args[0])?;
                let order = self.cl_order(args, 1)?;
                self.check_order(order, true, false, e)?;
                let scope = self.cl_scope_arg(args, 2, p)?;
                let addr = self.address(p, args[0])?;
                self.load_ord(addr, order, scope, hint, e)
            }
            "store" | "init" => {
                let (lo, hi) = if explicit { (3, 4) } else { (2, 2) };
                self.arity(name, args, (lo, hi), "pointer, value[, order[, scope]]", e)?;
                let p = self.pointer(args[0])?;
                let v = self.value(args[1], None)?;
                let addr = self.address(p, args[0])?;
                if op == "init" {
                    self.store_ord(addr, v, Order::Weak, Scope::Sys, e);
                } else {
                    let order = self.cl_order(args, 2)?;
                    self.check_order(order, false, true, e)?;
                    let scope = self.cl_scope_arg(args, 3, p)?;
                    self.store_ord(addr, v, order, scope, e);
                }
                Operand::Imm(0)
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                let (lo, hi) = if explicit { (5, 6) } else { (3, 3) };
                self.arity(
                    name,
                    args,
                    (lo, hi),
                    "pointer, &expected, desired[, success, failure[, scope]]",
                    e,
                )?;
                let p = self.pointer(args[0])?;
                let Some(ev) = addressed(args[1]) else {
                    return err(args[1], "the expected value must be `&local` (it receives the current value on failure)");
                };
                let Some(expected) = self.reg_of(self.text(ev), ev)? else {
                    return err(args[1], "the expected value must be `&local` (it receives the current value on failure)");
                };
                let new = self.value(args[2], None)?;
                let order = self.cl_order(args, 3)?;
                if let Some(f) = args.get(4) {
                    self.order_arg(*f)?;
                }
                let scope = self.cl_scope_arg(args, 5, p)?;
                let addr = self.address(p, args[0])?;
                self.compare_exchange(addr, expected, new, (order, scope), hint, e)
            }
            "work_item_fence" => self.cl_work_item_fence(name, args, e)?,
            "thread_fence" => self.cl_thread_fence(name, args, e)?,
            _ => return self.cl_rmw(name, op, explicit, args, hint, e),
        };
        Ok(Some(v))
    }

    /// `get_global_id(d)` and the other work-item functions: constants of this thread.
    fn work_item_fn(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<Operand> {
        self.device_only(name, e)?;
        if name == "get_work_dim" {
            return Ok(Operand::Imm(1));
        }
        self.arity(name, args, (1, 1), "a dimension (0, 1 or 2)", e)?;
        let d = self.const_operand(args[0])?;
        let Some(k) = usize::try_from(d).ok().filter(|k| *k < 3) else {
            return err(args[0], "the dimension must be 0, 1 or 2");
        };
        let dims = self.dims;
        Ok(Operand::Imm(match name {
            "get_global_id" => dims.block[k] * dims.block_dim[k] + dims.thread[k],
            "get_local_id" => dims.thread[k],
            "get_group_id" => dims.block[k],
            "get_local_size" => dims.block_dim[k],
            "get_num_groups" => dims.grid_dim[k],
            "get_global_size" => dims.grid_dim[k] * dims.block_dim[k],
            _ => 0,
        }))
    }

    /// `atomic_work_item_fence(flags, order, scope)`.
    fn cl_work_item_fence(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<Operand> {
        self.device_only(name, e)?;
        self.arity(name, args, (3, 3), "flags, order, scope", e)?;
        let spaces = self.cl_flags(args[0])?;
        if !spaces.global && !spaces.shared {
            return err(
                args[0],
                "a fence on no memory: name CLK_GLOBAL_MEM_FENCE and/or CLK_LOCAL_MEM_FENCE",
            );
        }
        let order = self.fence_order(args[1])?;
        let w = self.word(args[2]);
        let mut scope = cl_scope(&w).ok_or_else(|| {
            Diagnostic::error(format!("expected a memory_scope_*, found `{w}`"))
                .at(span_of(args[2]))
        })?;
        if !spaces.global && scope > Scope::Cta {
            self.cx.warn(e, format!("a fence on local memory alone orders nothing beyond the work-group: scope {scope} treated as cta"));
            scope = Scope::Cta;
        }
        self.emit(
            InstrKind::Fence {
                order,
                scope,
                spaces,
            },
            e,
        );
        Ok(Operand::Imm(0))
    }

    /// `atomic_thread_fence(order[, scope])`.
    fn cl_thread_fence(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<Operand> {
        self.arity(name, args, (1, 2), "order[, scope]", e)?;
        let order = self.fence_order(args[0])?;
        let scope = match args.get(1) {
            Some(s) => {
                let w = self.word(*s);
                let sc = cl_scope(&w).ok_or_else(|| {
                    Diagnostic::error(format!("expected a memory_scope_*, found `{w}`"))
                        .at(span_of(*s))
                })?;
                self.scope(sc, Some(*s))
            }
            None => self.scope(Scope::Gpu, None),
        };
        self.emit(
            InstrKind::Fence {
                order,
                scope,
                spaces: FenceSpaces::ALL,
            },
            e,
        );
        Ok(Operand::Imm(0))
    }

    /// The read-modify-writes: `atomic_fetch_add[_explicit]` and the others of C11, and the
    /// OpenCL 1.x `atomic_add`, `atomic_inc`, `atomic_cmpxchg`; `None` when `op` is none of
    /// them.
    fn cl_rmw(
        &mut self,
        name: &str,
        op: &str,
        explicit: bool,
        args: &[Node<'t>],
        hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Operand>> {
        if let Some((_, rop)) = CL_RMW.iter().find(|(n, _)| *n == op) {
            let (lo, hi) = if explicit { (3, 4) } else { (2, 2) };
            self.arity(name, args, (lo, hi), "pointer, value[, order[, scope]]", e)?;
            let p = self.pointer(args[0])?;
            let v = self.value(args[1], None)?;
            let order = self.cl_order(args, 2)?;
            let scope = self.cl_scope_arg(args, 3, p)?;
            let addr = self.address(p, args[0])?;
            return Ok(Some(self.rmw(
                addr,
                RmwKind::Op(*rop, v),
                order,
                scope,
                hint,
                e,
            )));
        }
        if explicit {
            return Ok(None);
        }
        // OpenCL 1.x: atomic_add(p, v), atomic_inc(p), atomic_cmpxchg(p, c, v).
        let kind = if let Some((_, rop)) = CL_LEGACY.iter().find(|(n, _)| *n == op) {
            self.arity(name, args, (2, 2), "pointer, value", e)?;
            RmwKind::Op(*rop, self.value(args[1], None)?)
        } else if op == "inc" || op == "dec" {
            self.arity(name, args, (1, 1), "a pointer", e)?;
            let rop = if op == "inc" { RmwOp::Add } else { RmwOp::Sub };
            RmwKind::Op(rop, Operand::Imm(1))
        } else if op == "cmpxchg" {
            self.arity(name, args, (3, 3), "pointer, compare, value", e)?;
            let expected = self.value(args[1], None)?;
            let new = self.value(args[2], None)?;
            RmwKind::Cas { expected, new }
        } else {
            return Ok(None);
        };
        let p = self.pointer(args[0])?;
        let addr = self.address(p, args[0])?;
        let scope = self.scope(Scope::Gpu, None);
        Ok(Some(self.rmw(addr, kind, Order::Relaxed, scope, hint, e)))
    }

    /// `cl_kernel k = clCreateKernel(program, "name", &err);`
    pub(super) fn cl_create_kernel(
        &mut self,
        init: Option<Node<'t>>,
        decl: Node<'t>,
    ) -> R<Binding> {
        let call = init.filter(|i| i.kind() == "call_expression");
        let Some(call) = call.filter(|c| {
            c.child_by_field_name("function")
                .is_some_and(|f| self.text(f) == "clCreateKernel")
        }) else {
            return err(
                decl,
                "a `cl_kernel` is made by `clCreateKernel(program, \"name\", &err)`",
            );
        };
        let args = self.args(call)?;
        self.arity(
            "clCreateKernel",
            &args,
            (2, 3),
            "program, \"kernel name\"[, &err]",
            call,
        )?;
        let lit = args[1];
        if lit.kind() != "string_literal" {
            return err(lit, "the kernel's name must be a string literal");
        }
        let kname = self.text(lit).trim_matches('"').to_string();
        let Some(func) = self.cx.funcs.get(&kname) else {
            return err(lit, format!("no `__kernel` named `{kname}` in this file"));
        };
        if func.kind != FnKind::Global {
            return err(lit, format!("`{kname}` is not a `__kernel`"));
        }
        let node = func.node;
        self.cx.cl_kernels.push(ClKernel {
            name: kname,
            node,
            args: Vec::new(),
        });
        Ok(Binding::ClKernel(self.cx.cl_kernels.len() - 1))
    }

    /// `cl_command_queue q = clCreateCommandQueue(...)`: an in-order queue is a stream.
    pub(super) fn cl_create_queue(&mut self, init: Option<Node<'t>>, decl: Node<'t>) -> R<Binding> {
        let Some(call) = init.filter(|c| {
            c.kind() == "call_expression"
                && c.child_by_field_name("function").is_some_and(|f| {
                    matches!(
                        self.text(f),
                        "clCreateCommandQueue" | "clCreateCommandQueueWithProperties"
                    )
                })
        }) else {
            return err(
                decl,
                "a queue is made by `clCreateCommandQueue(context, device, 0, &err)`",
            );
        };
        if self.text(call).contains("OUT_OF_ORDER") {
            return err(
                call,
                "not supported: out-of-order queues (each in-order queue is one stream)",
            );
        }
        let s = self.cx.next_stream;
        self.cx.next_stream += 1;
        Ok(Binding::Stream(Some(s)))
    }

    /// `cl_mem b = clCreateBuffer(ctx, flags, bytes, NULL, &err)` or
    /// `int *p = (int *)clSVMAlloc(ctx, flags, bytes, 0)`: an allocation named after the
    /// variable; `None` when `init` is neither.
    pub(super) fn cl_alloc(&mut self, name: &str, ty: Ty, init: Node<'t>) -> R<Option<Ptr>> {
        let mut call = init;
        while matches!(call.kind(), "cast_expression" | "parenthesized_expression") {
            call = match call.child_by_field_name("value") {
                Some(v) => v,
                None => match call.named_child(0) {
                    Some(v) => v,
                    None => return Ok(None),
                },
            };
        }
        if call.kind() != "call_expression" {
            return Ok(None);
        }
        let f = self.text(field(call, "function")?);
        let args = self.args(call)?;
        let (space, bytes, elem, elem_ty) = match f {
            "clCreateBuffer" => {
                self.arity(
                    f,
                    &args,
                    (4, 5),
                    "context, flags, bytes, host_ptr[, &err]",
                    call,
                )?;
                let flags = self.word(args[1]);
                let space = if flags.contains("CL_MEM_ALLOC_HOST_PTR")
                    || flags.contains("CL_MEM_USE_HOST_PTR")
                {
                    MemorySpace::HostMapped
                } else {
                    MemorySpace::Global
                };
                if !is_null(args[3], self.cx.src) {
                    self.cx.warn(
                        args[3],
                        "the host pointer's contents are not copied: the buffer starts at 0",
                    );
                }
                // A buffer is untyped: 4-byte elements, `int` until a kernel's parameter
                // type sees them as another 4-byte type.
                (space, args[2], 4, IntType::S32)
            }
            "clSVMAlloc" => {
                self.arity(f, &args, (3, 4), "context, flags, bytes, alignment", call)?;
                // Fine- and coarse-grained SVM are both shared virtual memory: managed.
                (MemorySpace::Managed, args[2], ty.size, ty.int)
            }
            _ => return Ok(None),
        };
        let n = self.const_operand(bytes)?;
        if n <= 0 || n % elem != 0 {
            return err(
                bytes,
                format!("{n} bytes is not a whole number of {elem}-byte elements"),
            );
        }
        let len = (n / elem) as usize;
        if len > crate::MAX_ARRAY_ELEMENTS {
            return err(
                bytes,
                format!(
                    "{len} elements: at most {} per allocation",
                    crate::MAX_ARRAY_ELEMENTS
                ),
            );
        }
        let strukt = if f == "clSVMAlloc" { ty.strukt } else { None };
        let arr = self.cx.new_array(
            name,
            ArrayShape {
                len,
                strukt,
                ty: elem_ty,
                space,
            },
            &[],
            Some(span_of(call)),
            true,
        )?;
        Ok(Some(Ptr {
            arr,
            idx: 0,
            index: None,
            access: ty.access,
            strukt,
            ty: elem_ty,
        }))
    }

    fn cl_kernel_arg(&self, n: Node<'t>) -> R<usize> {
        match self.build.lookup(self.text(n)) {
            Some(Binding::ClKernel(k)) => Ok(k),
            _ => err(n, "expected a `cl_kernel` made by clCreateKernel"),
        }
    }

    fn cl_queue_launches(&mut self, q: Node<'t>) -> R<Vec<ThreadId>> {
        let s = self.stream_arg(q)?;
        Ok(self
            .launches
            .done
            .iter()
            .filter(|(st, _)| *st == s)
            .flat_map(|(_, t)| t.iter().copied())
            .collect())
    }

    /// The element of buffer `buf` at byte `offset`.
    fn cl_element(
        &mut self,
        buf: Node<'t>,
        offset: Node<'t>,
        size: Node<'t>,
    ) -> R<(Address, IntType)> {
        let p = self.fixed_pointer(buf)?;
        let off = self.const_operand(offset)?;
        let bytes = self.const_operand(size)?;
        if off % 4 != 0 || bytes != 4 {
            return err(
                size,
                "not supported: a transfer other than one 4-byte element at a multiple of 4 bytes",
            );
        }
        let arr = &self.cx.arrays[p.arr];
        let Some(loc) = arr.elems.get((p.idx + off / 4) as usize) else {
            return err(offset, format!("offset {off} is outside `{}`", arr.name));
        };
        Ok((Address::loc(*loc), p.ty))
    }

    /// The OpenCL host calls; `None` when `name` is none of them.
    pub(super) fn cl_host_call(
        &mut self,
        name: &str,
        args: &[Node<'t>],
        _hint: Option<RegId>,
        e: Node<'t>,
    ) -> R<Option<Operand>> {
        match name {
            "clGetPlatformIDs"
            | "clGetDeviceIDs"
            | "clCreateContext"
            | "clCreateContextFromType"
            | "clCreateProgramWithSource"
            | "clBuildProgram"
            | "clReleaseMemObject"
            | "clReleaseKernel"
            | "clReleaseProgram"
            | "clReleaseCommandQueue"
            | "clReleaseContext"
            | "clSVMFree"
            | "clFlush"
            | "clGetDeviceInfo" => {}
            "clSetKernelArg" | "clSetKernelArgSVMPointer" => {
                self.cl_set_kernel_arg(name, args, e)?
            }
            "clEnqueueNDRangeKernel" => self.cl_enqueue_kernel(name, args, e)?,
            "clFinish" => {
                self.arity(name, args, (1, 1), "a queue", e)?;
                let on = self.cl_queue_launches(args[0])?;
                self.synchronize(on, e)?;
            }
            "clEnqueueReadBuffer" | "clEnqueueWriteBuffer" => self.cl_transfer(name, args, e)?,
            _ => return Ok(None),
        }
        Ok(Some(Operand::Imm(0)))
    }

    /// `clSetKernelArg(kernel, index, size, &value)` (or the SVM pointer form): remembers the
    /// argument for the kernel's next launch.
    fn cl_set_kernel_arg(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<()> {
        let svm = name == "clSetKernelArgSVMPointer";
        self.arity(
            name,
            args,
            if svm { (3, 3) } else { (4, 4) },
            "kernel, index, size, &value",
            e,
        )?;
        let k = self.cl_kernel_arg(args[0])?;
        let i = self.const_operand(args[1])?;
        let Some(i) = usize::try_from(i).ok().filter(|i| *i < 64) else {
            return err(args[1], "an argument index from 0");
        };
        let arg = if svm {
            ClArg::Bind(Binding::Ptr(self.fixed_pointer(args[2])?))
        } else if is_null(args[3], self.cx.src) {
            ClArg::Local(self.const_operand(args[2])?, e)
        } else {
            let Some(v) = addressed(args[3]) else {
                return err(
                    args[3],
                    "expected `&variable` (a cl_mem buffer or a constant) or NULL (local memory)",
                );
            };
            let vname = self.text(v);
            match self.build.lookup(vname) {
                    Some(b @ (Binding::Ptr(_) | Binding::Const(..))) => ClArg::Bind(b),
                    Some(Binding::Reg(..)) => {
                        return err(v, "not supported: a kernel argument computed at run time by the host (pass a constant or a buffer)")
                    }
                    _ => return err(v, format!("`{vname}` is not a buffer or a constant")),
                }
        };
        let ks = &mut self.cx.cl_kernels[k];
        if ks.args.len() <= i {
            ks.args.resize(i + 1, None);
        }
        ks.args[i] = Some(arg);
        Ok(())
    }

    /// `clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, ...)`: a launch of
    /// global / local work-groups of local work-items.
    fn cl_enqueue_kernel(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<()> {
        self.arity(
            name,
            args,
            (6, 9),
            "queue, kernel, 1, NULL, &global, &local, ...",
            e,
        )?;
        if self.nesting > 0 {
            return err(e, "not supported: a launch inside a loop or `if` of scopecheck_main (write each launch out)");
        }
        let stream = self.stream_arg(args[0])?;
        let k = self.cl_kernel_arg(args[1])?;
        if self.const_operand(args[2])? != 1 {
            return err(args[2], "not supported: work dimensions other than 1");
        }
        if !is_null(args[3], self.cx.src) {
            return err(args[3], "not supported: a global work offset");
        }
        let size = |me: &mut Self, n: Node<'t>| -> R<i64> {
            match addressed(n) {
                Some(v) => me.const_operand(v),
                None => err(n, "expected `&size` (a constant size_t)"),
            }
        };
        let global = size(self, args[4])?;
        let local = if is_null(args[5], self.cx.src) {
            global
        } else {
            size(self, args[5])?
        };
        if global < 1 || local < 1 || global % local != 0 {
            return err(
                args[4],
                format!("the global size {global} is not a multiple of the local size {local}"),
            );
        }
        let grid = [global / local, 1, 1];
        let block = [local, 1, 1];
        self.check_limit(grid, block, e)?;
        let (kname, kernel) = {
            let ks = &self.cx.cl_kernels[k];
            (ks.name.clone(), ks.node)
        };
        let frame = self.cl_kernel_frame(k, &kname, kernel, e)?;
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
        )?;
        Ok(())
    }

    /// The parameter bindings of a launch of `kernel` (`cl_kernels[k]`, named `kname`) from
    /// the arguments set for it.
    fn cl_kernel_frame(
        &mut self,
        k: usize,
        kname: &str,
        kernel: Node<'t>,
        e: Node<'t>,
    ) -> R<Vec<(String, Binding)>> {
        let decl = field(kernel, "declarator")?;
        let params = field(decl, "parameters")?;
        let mut c = params.walk();
        let params: Vec<Node> = params
            .named_children(&mut c)
            .filter(|p| p.kind() == "parameter_declaration")
            .filter(|p| self.text(*p).trim() != "void")
            .collect();
        let mut frame = Vec::new();
        for (i, p) in params.iter().enumerate() {
            let (ty, name) = self.cx.param(*p)?;
            let Some(name) = name else {
                continue;
            };
            let pname = self.text(name).to_string();
            let Some(arg) = self.cx.cl_kernels[k].args.get(i).copied().flatten() else {
                return err(e, format!("argument {i} (`{pname}`) of `{kname}` is not set: clSetKernelArg(kernel, {i}, ...)"));
            };
            let b = match arg {
                    ClArg::Bind(Binding::Ptr(ptr)) if ty.pointer => {
                        Binding::Ptr(self.retype(ptr, ty.ptr_ty(), e)?)
                    }
                    // A value argument is converted to the parameter's type.
                    ClArg::Bind(Binding::Const(v, _)) if !ty.pointer => {
                        Binding::Const(ty.int.wrap(v), ty.int)
                    }
                    ClArg::Local(bytes, at) if ty.pointer && ty.shared => {
                        if bytes <= 0 || bytes % ty.size != 0 {
                            return err(at, format!("{bytes} bytes of local memory is not a whole number of {}-byte elements", ty.size));
                        }
                        let len = (bytes / ty.size) as usize;
                        if len > crate::MAX_ARRAY_ELEMENTS {
                            return err(at, "too much local memory");
                        }
                        self.cx.shared_decls.push(SharedDecl {
                            name: pname.clone(),
                            len,
                            row: None,
                            ty,
                            node: at,
                        });
                        Binding::SharedPtr(self.cx.shared_decls.len() - 1)
                    }
                    _ => return err(e, format!("argument {i} (`{pname}`) of `{kname}` does not fit its parameter (a buffer for a `__global` pointer, NULL with a size for a `__local` one, a constant for a value)")),
                };
            frame.push((pname, b));
        }
        Ok(frame)
    }

    /// `clEnqueueReadBuffer` and `clEnqueueWriteBuffer`, blocking: a copy between a buffer
    /// element and a host local.
    fn cl_transfer(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<()> {
        self.arity(
            name,
            args,
            (6, 9),
            "queue, buffer, CL_TRUE, offset, bytes, &variable, ...",
            e,
        )?;
        if self.word(args[2]) != "CL_TRUE" {
            return err(
                args[2],
                "not supported: a non-blocking transfer (use CL_TRUE)",
            );
        }
        let Some(v) = addressed(args[5]) else {
            return err(args[5], "expected `&variable` (a host local)");
        };
        let vname = self.text(v).to_string();
        if name == "clEnqueueReadBuffer" {
            // A blocking read waits for the queue's kernels, then copies.
            let on = self.cl_queue_launches(args[0])?;
            self.synchronize(on, e)?;
            let addr = self.cl_element(args[1], args[3], args[4])?;
            // The variable keeps its declared type; the bytes read are the buffer's.
            let ty = match self.build.lookup(&vname) {
                Some(Binding::Reg(_, _, ty) | Binding::Const(_, ty)) => ty,
                Some(_) => addr.1,
                None => return err(v, format!("unknown name `{vname}`")),
            };
            let r = self.build.new_reg(&vname, ty);
            let got = self.load_ord(addr, Order::Weak, Scope::Sys, Some(r), e);
            self.mov(r, got, e);
            let seg = self.seg;
            self.build.rebind(&vname, Binding::Reg(r, seg, ty));
        } else {
            let addr = self.cl_element(args[1], args[3], args[4])?;
            let value = self.value(v, None)?;
            self.store_ord(addr, value, Order::Weak, Scope::Sys, e);
        }
        Ok(())
    }
}
