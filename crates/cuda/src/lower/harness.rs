//! The harness `scopecheck_main()` (or `int main()`), run at compile time: allocations,
//! streams, launches, synchronizations and the runtime's copies shape the program's threads and
//! their `after` edges; `assert(e)` and `if (bad) return 1;` make the condition.

use std::collections::BTreeSet;

use scopecheck_ir::{
    BinOp, IntType, MemorySpace, Observable, Operand, Order, Placement, Scope, Thread, ThreadId,
    Value,
};
use tree_sitter::Node;

use super::ArrayShape;
use super::{err, field, Binding, Lw, Ptr, Stream, Val, R};
use crate::span_of;

/// One side of a cudaMemcpy.
#[derive(Clone, Copy)]
enum Side<'t> {
    /// `&x` for a host scalar local: its name and type.
    Local(Node<'t>, IntType),
    Mem(Ptr),
}

/// Host calls that do nothing the memory model sees: accepted, their arguments checked for
/// unknown names but not evaluated.
const IGNORED: &[&str] = &[
    "printf",
    "fprintf",
    "puts",
    "fputs",
    "fflush",
    "perror",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaFree",
    "cudaFreeHost",
    "cudaHostUnregister",
    "cudaStreamDestroy",
    "cudaEventDestroy",
    "cudaSetDeviceFlags",
    "cudaDeviceReset",
];

impl<'c, 's, 't> Lw<'c, 's, 't> {
    pub(super) fn host_main(&mut self, body: Node<'t>) -> R<()> {
        self.block(body)
    }

    /// The value of `return K;` / `exit(K)`: a constant (`EXIT_SUCCESS`, `EXIT_FAILURE`).
    fn exit_code(&mut self, v: Node<'t>) -> R<Value> {
        match self.word(strip(v)).as_str() {
            "EXIT_SUCCESS" => Ok(0),
            "EXIT_FAILURE" => Ok(1),
            _ => match self.value(v, None)? {
                Operand::Imm(k) => Ok(k),
                Operand::Reg(_) => err(
                    v,
                    "not supported: an exit status computed at run time (write a constant)",
                ),
            },
        }
    }

    /// A `return` of the harness itself: its last statement may be `return 0;` (the normal
    /// end) or `return e;` with `e` computed at run time (the requirement `e == 0`, the exit
    /// status of success); any other is refused (a failing one belongs in `if (bad) return 1;`).
    pub(super) fn harness_return(&mut self, s: Node<'t>, value: Option<Node<'t>>) -> R<()> {
        if self.final_return == Some(s.id()) {
            let Some(v) = value else { return Ok(()) };
            let code = match self.word(strip(v)).as_str() {
                "EXIT_SUCCESS" | "EXIT_FAILURE" => self.exit_code(v)?,
                _ => {
                    let status = self.val(v, None)?;
                    match status.op {
                        Operand::Imm(k) => k,
                        // `return ok ? 0 : 1;`: the program succeeds when the status is 0.
                        Operand::Reg(_) => {
                            let r = self.requirement_register(s);
                            let ok =
                                self.binary(BinOp::Eq, status, Val::imm(0, IntType::S32), None, v);
                            self.and_into_requirement(r, ok.op, s);
                            return Ok(());
                        }
                    }
                }
            };
            if code == 0 {
                return Ok(());
            }
            return err(
                s,
                format!("not supported: `return {code};` at the end of the harness (it would always fail); check a condition instead: `if (bad) return 1;`"),
            );
        }
        err(
            s,
            "not supported: `return` here in the harness (only `if (bad) return 1;` with a non-zero status, and `return 0;` as its last statement)",
        )
    }

    /// Whether `s` ends the harness with a failure: `return K;` (K non-zero), `exit(K)`,
    /// `abort()`, or a block of printf / cleanup calls ending so.
    pub(super) fn fails(&mut self, s: Node<'t>) -> R<bool> {
        match s.kind() {
            "return_statement" => match s.named_child(0).filter(|v| v.kind() != "comment") {
                Some(v) => Ok(self.exit_code(v)? != 0),
                None => Ok(false),
            },
            "expression_statement" => {
                let Some(call) = s.named_child(0).filter(|c| c.kind() == "call_expression") else {
                    return Ok(false);
                };
                let f = field(call, "function")?;
                let args = self.args(call)?;
                match self.word(f).as_str() {
                    "abort" => {
                        self.arity("abort", &args, (0, 0), "no arguments", call)?;
                        Ok(true)
                    }
                    "exit" => {
                        self.arity("exit", &args, (1, 1), "a status", call)?;
                        Ok(self.exit_code(args[0])? != 0)
                    }
                    _ => Ok(false),
                }
            }
            "compound_statement" => {
                let mut c = s.walk();
                let kids: Vec<Node> = s
                    .named_children(&mut c)
                    .filter(|k| k.kind() != "comment")
                    .collect();
                let Some((last, before)) = kids.split_last() else {
                    return Ok(false);
                };
                if !self.fails(*last)? {
                    return Ok(false);
                }
                for k in before {
                    let call = Some(*k)
                        .filter(|k| k.kind() == "expression_statement")
                        .and_then(|k| k.named_child(0))
                        .filter(|c| c.kind() == "call_expression");
                    let name = match call {
                        Some(call) => self.word(field(call, "function")?),
                        None => String::new(),
                    };
                    let Some(call) = call.filter(|_| IGNORED.contains(&name.as_str())) else {
                        return err(*k, "not supported: code before the failing `return` / `exit` of the harness (only printf and cleanup calls such as cudaFree)");
                    };
                    let args = self.args(call)?;
                    self.check_names(&args)?;
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// How many elements of type `ty` the byte count `bytes` (a constant) covers: a whole
    /// number of them, at least one.
    fn element_count(&mut self, bytes: Node<'t>, ty: IntType) -> R<i64> {
        let elem = i64::from(ty.bits / 8);
        let n = self.const_operand(bytes)?;
        if n <= 0 || n % elem != 0 {
            return err(
                bytes,
                format!("{n} bytes is not a whole number of {elem}-byte elements"),
            );
        }
        Ok(n / elem)
    }

    /// `if (c) return 1;`: the requirement `!c` at this point of the harness, as `assert(!c)`.
    pub(super) fn require_not(&mut self, c: Node<'t>, s: Node<'t>) -> R<()> {
        let v = self.val(c, None)?;
        let ok = self.binary(BinOp::Eq, v, Val::imm(0, IntType::S32), None, c);
        if ok.op == Operand::Imm(1) {
            return Ok(());
        }
        let r = self.requirement_register(s);
        self.and_into_requirement(r, ok.op, s);
        Ok(())
    }

    /// The arguments of an ignored call (printf, cudaFree, ...) are not evaluated (no event),
    /// but every name in them must be known.
    pub(super) fn check_names(&self, args: &[Node<'t>]) -> R<()> {
        let mut stack: Vec<Node> = args.to_vec();
        while let Some(n) = stack.pop() {
            match n.kind() {
                "identifier" => {
                    let name = self.text(n);
                    let known = self.build.lookup(name).is_some()
                        || self.cx.globals.contains_key(name)
                        || self.cx.shared_by_name.contains_key(name)
                        || matches!(
                            name,
                            "stderr" | "stdout" | "NULL" | "argc" | "argv" | "cudaSuccess"
                        );
                    if !known {
                        return err(n, format!("unknown name `{name}`"));
                    }
                }
                "call_expression" => {
                    // The function's name is not a variable.
                    if let Some(a) = n.child_by_field_name("arguments") {
                        stack.push(a);
                    }
                }
                _ => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
            }
        }
        Ok(())
    }

    /// `sizeof(x)` / `sizeof x` of a host local: its type's size (an array's: all its
    /// elements'); `None` when `e` names no local.
    pub(super) fn local_size(&self, e: Node<'t>) -> Option<Value> {
        let v = strip(e.child_by_field_name("value")?);
        // `sizeof(*p)`, `sizeof(p[0])`: the size of what the pointer variable `p` points at.
        let pointee = match v.kind() {
            "pointer_expression" if self.op(v) == "*" => v.child_by_field_name("argument"),
            "subscript_expression" => v.child_by_field_name("argument"),
            _ => None,
        };
        if let Some(p) = pointee.map(strip).filter(|p| p.kind() == "identifier") {
            return match self.build.lookup(self.text(p))? {
                Binding::Ptr(ptr) => Some(match ptr.strukt {
                    Some(sid) => self.cx.structs[sid].size,
                    None => i64::from(ptr.ty.bits / 8),
                }),
                Binding::PtrUnset(_, size, _, _) => Some(size),
                _ => None,
            };
        }
        if v.kind() != "identifier" {
            return None;
        }
        match self.build.lookup(self.text(v))? {
            Binding::Reg(_, _, ty) | Binding::Const(_, ty) => Some(i64::from(ty.bits / 8)),
            Binding::HostArr(p) => {
                let len = self.cx.arrays[p.arr].elems.len() as i64;
                Some(len * i64::from(p.ty.bits / 8))
            }
            _ => None,
        }
    }

    /// Every launch so far.
    fn all_launched(&self) -> Vec<ThreadId> {
        self.launches
            .done
            .iter()
            .flat_map(|(_, t)| t.iter().copied())
            .collect()
    }

    /// Whether some launch may still run: the current host code does not start after it.
    fn pending(&self) -> bool {
        self.all_launched()
            .iter()
            .any(|id| !self.launches.host_after.contains(id))
    }

    /// Element `k` of the memory `p` points at, for the runtime's copies (which reach device
    /// memory from the host).
    fn copy_elem(&self, p: Ptr, k: i64, n: Node<'t>) -> R<(scopecheck_ir::Address, IntType)> {
        let arr = &self.cx.arrays[p.arr];
        let Some(loc) = usize::try_from(p.idx + k)
            .ok()
            .and_then(|i| arr.elems.get(i))
        else {
            return err(
                n,
                format!(
                    "the copy goes past the end of `{}` ({} element{})",
                    arr.name,
                    arr.elems.len(),
                    if arr.elems.len() == 1 { "" } else { "s" }
                ),
            );
        };
        let held = self.cx.locations[loc.0 as usize].ty;
        if held.bits != p.ty.bits {
            return err(
                n,
                format!("not supported: a {}-bit view of `{}`, which holds a {held} (mixed-size accesses)", p.ty.bits, arr.name),
            );
        }
        Ok((scopecheck_ir::Address::loc(*loc), p.ty))
    }

    /// One side of a cudaMemcpy: `&local` (a host scalar) or memory.
    fn copy_side(&mut self, a: Node<'t>) -> R<Side<'t>> {
        let s = strip(a);
        if s.kind() == "pointer_expression" && self.op(s) == "&" {
            let v = strip(field(s, "argument")?);
            if v.kind() == "identifier" {
                if let Some(Binding::Reg(_, _, ty) | Binding::Const(_, ty)) =
                    self.build.lookup(self.text(v))
                {
                    return Ok(Side::Local(v, ty));
                }
            }
        }
        let p = self.fixed_pointer(s)?;
        if let Some(sid) = p.strukt {
            return err(
                a,
                format!(
                    "not supported yet: copying `struct {}` memory (copy scalars)",
                    self.cx.structs[sid].name
                ),
            );
        }
        Ok(Side::Mem(p))
    }

    fn space_of(&self, side: Side<'t>) -> Option<MemorySpace> {
        match side {
            Side::Local(..) => None,
            Side::Mem(p) => Some(self.cx.arrays[p.arr].space),
        }
    }

    /// Host memory: a local, a host array, managed or mapped memory.
    fn host_ok(&self, side: Side<'t>) -> bool {
        matches!(
            self.space_of(side),
            None | Some(MemorySpace::HostPageable | MemorySpace::Managed | MemorySpace::HostMapped)
        )
    }

    /// Memory the device reaches: an allocation or a `__device__` global.
    fn device_ok(&self, side: Side<'t>) -> bool {
        matches!(
            self.space_of(side),
            Some(MemorySpace::Global | MemorySpace::Managed | MemorySpace::HostMapped)
        )
    }

    /// Only the host reaches it: a local or a host array.
    fn host_only(&self, side: Side<'t>) -> bool {
        matches!(self.space_of(side), None | Some(MemorySpace::HostPageable))
    }

    /// `cudaMemcpy(dst, src, bytes, kind)`: element by element. A copy with a host side waits
    /// for the kernels launched so far (the legacy default stream) and then runs in host code:
    /// loads of the source, stores to the destination (a local gets the value in a register
    /// of this host segment). A copy between device memories is ordered on the default stream
    /// without blocking the host: while kernels may still run it is its own host thread
    /// `memcpy` (later launches and synchronizations wait for it), otherwise host code.
    /// `on`: the stream of a cudaMemcpyAsync (see `copy`).
    fn memcpy(&mut self, args: &[Node<'t>], on: Option<Stream>, e: Node<'t>) -> R<()> {
        let kind = self.word(args[3]);
        let kind = kind.rsplit("::").next().unwrap_or("").to_string();
        let dst = self.copy_side(args[0])?;
        let src = self.copy_side(args[1])?;
        self.copy(dst, src, [args[0], args[1], args[2], args[3]], &kind, on, e)
    }

    /// `cudaMemcpyToSymbol(symbol, src, bytes[, offset[, kind]])` and
    /// `cudaMemcpyFromSymbol(dst, symbol, bytes[, offset[, kind]])`: a cudaMemcpy to or from
    /// a `__device__` variable named directly (host to device, device to host by default).
    fn memcpy_symbol(&mut self, to: bool, args: &[Node<'t>], e: Node<'t>) -> R<()> {
        let (sym, other) = if to {
            (args[0], args[1])
        } else {
            (args[1], args[0])
        };
        if let Some(&offset) = args.get(3) {
            if self.const_operand(offset)? != 0 {
                return err(offset, "not supported yet: a symbol copy at an offset");
            }
        }
        let Some(p) = self.place(strip(sym))? else {
            let name = self.text(strip(sym)).to_string();
            if self.cx.opaque_globals.iter().any(|(g, _)| *g == name) {
                return self.unknown(&name, sym);
            }
            return err(sym, "expected a `__device__` variable");
        };
        if self.cx.arrays[p.arr].space != MemorySpace::Global {
            return err(sym, "expected a `__device__` variable (a symbol)");
        }
        let other_side = self.copy_side(other)?;
        let kind = match args.get(4) {
            Some(&k) => self.word(k).rsplit("::").next().unwrap_or("").to_string(),
            None if to => "cudaMemcpyHostToDevice".to_string(),
            None => "cudaMemcpyDeviceToHost".to_string(),
        };
        let kind_node = args.get(4).copied().unwrap_or(e);
        let (dst, src) = if to {
            (Side::Mem(p), other_side)
        } else {
            (other_side, Side::Mem(p))
        };
        let nodes = if to {
            [sym, other, args[2], kind_node]
        } else {
            [other, sym, args[2], kind_node]
        };
        self.copy(dst, src, nodes, &kind, None, e)
    }

    /// A copy from `src` to `dst` of the bytes `nodes[2]` says, of `kind`; `nodes` are the
    /// destination, source, byte count and kind as written, for messages.
    /// `on`: the stream of a cudaMemcpyAsync, which runs as a host thread `memcpy` ordered
    /// on that stream like a launch, without blocking the host.
    fn copy(
        &mut self,
        dst: Side<'t>,
        src: Side<'t>,
        nodes: [Node<'t>; 4],
        kind: &str,
        on: Option<Stream>,
        e: Node<'t>,
    ) -> R<()> {
        if on.is_some() {
            if let Side::Local(v, _) = dst {
                return err(v, "not supported yet: cudaMemcpyAsync to a host local (copy to a host array or pinned memory)");
            }
            if let Side::Local(v, _) = src {
                return err(v, "not supported yet: cudaMemcpyAsync from a host local (copy from a host array or pinned memory)");
            }
        }
        let args = nodes;
        let (src_ok, dst_ok, what) = match kind {
            "cudaMemcpyHostToDevice" => (self.host_ok(src), self.device_ok(dst), "host to device"),
            "cudaMemcpyDeviceToHost" => (self.device_ok(src), self.host_ok(dst), "device to host"),
            "cudaMemcpyDeviceToDevice" => {
                (self.device_ok(src), self.device_ok(dst), "device to device")
            }
            "cudaMemcpyDefault" => (true, true, ""),
            _ => return err(args[3], "expected cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice or cudaMemcpyDefault"),
        };
        for (ok, side, n, end) in [
            (src_ok, src, args[1], "source"),
            (dst_ok, dst, args[0], "destination"),
        ] {
            if !ok {
                let is = if self.host_only(side) {
                    "host memory"
                } else {
                    "device memory"
                };
                return err(n, format!("the {end} of a {what} copy is {is}"));
            }
        }
        let size = |side: Side<'t>| match side {
            Side::Local(_, ty) => ty,
            Side::Mem(p) => p.ty,
        };
        let (dty, sty) = (size(dst), size(src));
        if dty.bits != sty.bits {
            return err(
                e,
                format!("not supported: a copy between elements of different sizes (`{sty}` to `{dty}`)"),
            );
        }
        let n = self.element_count(args[2], dty)?;
        for side in [dst, src] {
            if let (Side::Local(v, _), true) = (side, n != 1) {
                return err(
                    args[2],
                    format!(
                        "{} bytes: more than the local `{}` holds",
                        n * i64::from(dty.bits / 8),
                        self.text(v)
                    ),
                );
            }
            if let Side::Mem(p) = side {
                self.copy_elem(p, n - 1, args[2])?;
            }
        }
        let host_side = kind != "cudaMemcpyDeviceToDevice"
            && (kind != "cudaMemcpyDefault" || self.host_only(src) || self.host_only(dst));
        let copy = |me: &mut Self| -> R<()> {
            for k in 0..n {
                let v = match src {
                    Side::Local(v, _) => me.val(v, None)?,
                    Side::Mem(p) => {
                        let at = me.copy_elem(p, k, args[1])?;
                        let op = me.load_ord(at, Order::Weak, Scope::Sys, None, e);
                        Val { op, ty: p.ty }
                    }
                };
                match dst {
                    Side::Local(name, ty) => {
                        let name = me.text(name);
                        let r = me.build.new_reg(name, ty);
                        me.mov_val(r, v, e);
                        let seg = me.seg;
                        me.build.rebind(name, Binding::Reg(r, seg, ty));
                    }
                    Side::Mem(p) => {
                        let at = me.copy_elem(p, k, args[0])?;
                        let v = me.convert(v, p.ty, None, e);
                        me.store_ord(at, v.op, Order::Weak, Scope::Sys, e);
                    }
                }
            }
            Ok(())
        };
        if on.is_none() && !self.pending() {
            return copy(self);
        }
        if on.is_none() && host_side {
            let all = self.all_launched();
            self.synchronize(all, e)?;
            return copy(self);
        }
        self.stream_op("memcpy", on.unwrap_or(None), e, copy)
    }

    /// `cudaMemset(p, byte, bytes)`: plain stores of `byte` replicated over each element.
    /// Ordered on the default stream: while kernels may still run it is its own host thread
    /// `memset` that starts after them (later launches and synchronizations wait for it);
    /// otherwise host code. `cudaMemsetAsync(p, byte, bytes, stream)` (`on` given) is always
    /// such a thread, ordered on its stream as a launch there is.
    fn memset(&mut self, args: &[Node<'t>], on: Option<Stream>, e: Node<'t>) -> R<()> {
        let side = self.copy_side(args[0])?;
        let Side::Mem(p) = side else {
            return err(args[0], "cudaMemset needs device memory, not a local");
        };
        if !self.device_ok(side) {
            return err(args[0], "cudaMemset needs device memory (cudaMalloc, cudaMallocManaged or cudaHostAlloc), not host memory");
        }
        let byte = self.const_operand(args[1])? & 0xff;
        let n = self.element_count(args[2], p.ty)?;
        self.copy_elem(p, n - 1, args[2])?;
        let mut v: u64 = 0;
        for _ in 0..p.ty.bits / 8 {
            v = (v << 8) | byte as u64;
        }
        let v = p.ty.wrap(v as Value);
        let set = |me: &mut Self| -> R<()> {
            for k in 0..n {
                let at = me.copy_elem(p, k, args[0])?;
                me.store_ord(at, Operand::Imm(v), Order::Weak, Scope::Sys, e);
            }
            Ok(())
        };
        match on {
            Some(stream) => self.stream_op("memset", stream, e, set),
            None if self.pending() => self.stream_op("memset", None, e, set),
            None => set(self),
        }
    }

    /// A runtime operation on the legacy default stream while kernels may still run: a host
    /// thread of its own that starts after every launch and all host code so far; later
    /// launches and synchronizations wait for it (it is recorded as a default-stream launch),
    /// host code that follows does not.
    fn stream_op(
        &mut self,
        name: &str,
        stream: Stream,
        e: Node<'t>,
        f: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        if self.nesting > 0 {
            return err(
                e,
                "not supported: this call inside a loop or `if` of the harness while kernels may still run",
            );
        }
        self.flush_host();
        let saved = (
            std::mem::take(&mut self.build.registers),
            std::mem::take(&mut self.build.reg_types),
            std::mem::take(&mut self.init_regs),
            std::mem::take(&mut self.build.code),
            self.build.temps,
        );
        self.build.temps = 0;
        let r = f(self);
        let (registers, reg_types, init_regs, code, temps) = saved;
        let op_code = std::mem::replace(&mut self.build.code, code);
        let op_regs = std::mem::replace(&mut self.build.registers, registers);
        self.build.reg_types = reg_types;
        let op_init = std::mem::replace(&mut self.init_regs, init_regs);
        self.build.temps = temps;
        r?;
        // After the host code so far and the earlier work of its stream, as a launch there.
        let mut before = self.launches.host_after.clone();
        before.extend(self.launches.host_done.iter().copied());
        for (s, ids) in self.launches.done.iter().chain(&self.launches.stream_waits) {
            if self.ordered_streams(*s, stream) {
                before.extend(ids.iter().copied());
            }
        }
        let after = self.closure(before);
        let id = ThreadId(self.cx.threads.len() as u32);
        let earlier = self
            .cx
            .threads
            .iter()
            .filter(|t| t.name == name || t.name.starts_with(&format!("{name}#")))
            .count();
        let tname = if earlier == 0 {
            name.to_string()
        } else {
            format!("{name}#{}", earlier + 1)
        };
        self.cx.threads.push(Thread {
            name: tname,
            placement: Placement::Host,
            span: Some(span_of(e)),
            registers: op_regs,
            init_regs: op_init,
            code: op_code,
            after,
        });
        self.launches.done.push((stream, vec![id]));
        Ok(())
    }

    /// Everything `ids` stand for: themselves and what they start after.
    pub(super) fn closure(&self, ids: impl IntoIterator<Item = ThreadId>) -> Vec<ThreadId> {
        let mut set = BTreeSet::new();
        for id in ids {
            set.insert(id);
            set.extend(self.cx.threads[id.0 as usize].after.iter().copied());
        }
        set.into_iter().collect()
    }

    /// Ends the current host segment: its code becomes a host thread (when there is any).
    pub(super) fn flush_host(&mut self) {
        self.build.resolve();
        if self.build.code.is_empty() {
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
            registers: std::mem::take(&mut self.build.registers),
            init_regs: std::mem::take(&mut self.init_regs),
            code: std::mem::take(&mut self.build.code),
            after,
        });
        self.launches.host_done.push(id);
        self.build.reg_types.clear();
        self.build.labels = vec![None];
        self.build.end_label = 0;
        self.build.temps = 0;
        self.seg += 1;
    }

    /// A synchronization: the host code that follows starts after `synced` (and all host code
    /// so far).
    pub(super) fn synchronize(&mut self, synced: Vec<ThreadId>, n: Node<'t>) -> R<()> {
        if self.spawned {
            return err(n, "not supported: a synchronization in a `std::thread`'s function (synchronize in the harness)");
        }
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
            return match self.build.lookup(name) {
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

    /// An event argument: its index in `Ctx::events`.
    fn event_index(&mut self, a: Node<'t>) -> R<usize> {
        let a = strip(a);
        let name = self.text(a).to_string();
        match self.build.lookup(&name) {
            Some(Binding::Event(Some(k))) => Ok(k),
            Some(Binding::Event(None)) => err(
                a,
                format!("the event `{name}` is used before cudaEventCreate(&{name})"),
            ),
            _ => err(a, format!("`{name}` is not a `cudaEvent_t`")),
        }
    }

    /// `&name` (possibly cast): the name of the variable an out-parameter writes.
    /// The variable `&v` names, and its name: an identifier, or `p.f` of a struct held by
    /// value (`cudaMalloc(&p.data, n)`).
    fn out_var(&self, a: Node<'t>) -> R<(Node<'t>, String)> {
        let a = strip(a);
        if a.kind() == "pointer_expression" && self.op(a) == "&" {
            let v = strip(field(a, "argument")?);
            if v.kind() == "identifier" {
                return Ok((v, self.text(v).to_string()));
            }
            if let Some(key) = self.flat_field(v) {
                return Ok((v, key));
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
            self.allocation(name, space, args, e)?;
            return Ok(true);
        }
        if self.stream_call(name, args, e)? || self.copy_call(name, args, e)? {
            return Ok(true);
        }
        match name {
            "cudaHostGetDevicePointer" => {
                self.arity(name, args, (2, 3), "`&device_pointer, host_pointer, 0`", e)?;
                let (v, vname) = self.out_var(args[0])?;
                let t = match self.build.lookup(&vname) {
                    Some(Binding::PtrUnset(a, _, st, ty)) => (a, st, ty),
                    Some(Binding::Ptr(p)) => (p.access, p.strukt, p.ty),
                    _ => return err(v, format!("`{vname}` is not a pointer variable")),
                };
                let p = self.fixed_pointer(strip(args[1]))?;
                let p = self.retype(p, t, args[1])?;
                if self.cx.arrays[p.arr].space != MemorySpace::HostMapped {
                    return err(args[1], "cudaHostGetDevicePointer needs memory from cudaHostAlloc(..., cudaHostAllocMapped)");
                }
                self.build.rebind(&vname, Binding::Ptr(p));
            }
            "cudaHostRegister" => {
                // Page-locks and maps ordinary host memory: from here on it is pinned mapped
                // memory, which cudaHostGetDevicePointer (or the pointer itself, under unified
                // addressing) lets kernels access.
                self.arity(name, args, (3, 3), "`host_pointer, bytes, flags`", e)?;
                let p = self.fixed_pointer(strip(args[0]))?;
                if self.cx.arrays[p.arr].space != MemorySpace::HostPageable {
                    return err(
                        args[0],
                        "cudaHostRegister needs ordinary host memory (a host array)",
                    );
                }
                let n = self.element_count(args[1], p.ty)?;
                if p.idx != 0 || n != self.cx.arrays[p.arr].elems.len() as i64 {
                    return err(
                        args[1],
                        format!(
                            "not supported: registering part of `{}` (register the whole array from its start)",
                            self.cx.arrays[p.arr].name
                        ),
                    );
                }
                let flag = self.word(strip(args[2]));
                let known = [
                    "cudaHostRegisterDefault",
                    "cudaHostRegisterMapped",
                    "cudaHostRegisterPortable",
                ];
                if !known.contains(&flag.as_str()) && self.const_operand(args[2])? & !3 != 0 {
                    return err(
                        args[2],
                        "not supported: cudaHostRegister flags other than cudaHostRegisterDefault, Mapped and Portable",
                    );
                }
                self.cx.arrays[p.arr].space = MemorySpace::HostMapped;
                // Its locations too: they are what the model and the runner see, and a
                // location left pageable would be refused on a GPU without
                // pageableMemoryAccess although the device reaches it through the mapping.
                for &l in &self.cx.arrays[p.arr].elems {
                    self.cx.locations[l.0 as usize].space = MemorySpace::HostMapped;
                }
            }
            "cudaLaunchCooperativeKernel" => {
                self.arity(
                    name,
                    args,
                    (4, 6),
                    "`kernel, grid, block, args[, shared_bytes[, stream]]`",
                    e,
                )?;
                self.cooperative_launch(args, e)?;
            }
            "cudaSetDevice" => {
                self.arity(name, args, (1, 1), "a device number", e)?;
                if self.const_operand(args[0])? != 0 {
                    return err(args[0], "not supported: a device other than 0 (one GPU)");
                }
            }
            n if IGNORED.contains(&n) => self.check_names(args)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `cudaMalloc`, `cudaMallocManaged`, `cudaHostAlloc`, `cudaMallocHost`: a new array in
    /// `space` for the pointer variable `args[0]` names.
    fn allocation(
        &mut self,
        name: &str,
        space: MemorySpace,
        args: &[Node<'t>],
        e: Node<'t>,
    ) -> R<()> {
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
        let (v, vname) = self.out_var(args[0])?;
        let (access, elem, strukt, ty) = match self.build.lookup(&vname) {
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
        self.cx.not_in_memory(strukt, args[0])?;
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
        let arr = self.cx.new_array(
            &vname,
            ArrayShape {
                len,
                strukt,
                ty,
                space,
            },
            &[],
            Some(span_of(e)),
            true,
        )?;
        self.build.rebind(
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
        Ok(())
    }

    /// Streams and events: creating them, recording, waiting, synchronizing; false when
    /// `name` is none of these calls.
    fn stream_call(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<bool> {
        match name {
            "cudaStreamCreate" | "cudaStreamCreateWithFlags" => {
                let (v, vname) = self.out_var(args.first().copied().unwrap_or(e))?;
                if !matches!(self.build.lookup(&vname), Some(Binding::Stream(_))) {
                    return err(v, format!("`{vname}` is not a `cudaStream_t`"));
                }
                let s = self.cx.next_stream;
                self.cx.next_stream += 1;
                if name == "cudaStreamCreateWithFlags" {
                    self.arity(name, args, (2, 2), "`&stream, flags`", e)?;
                    let flag = self.word(strip(args[1]));
                    let non_blocking = flag == "cudaStreamNonBlocking"
                        || (flag != "cudaStreamDefault" && self.const_operand(args[1])? & 1 != 0);
                    if non_blocking {
                        self.cx.non_blocking.push(s);
                    }
                }
                self.build.rebind(&vname, Binding::Stream(Some(s)));
            }
            "cudaEventCreate" | "cudaEventCreateWithFlags" => {
                self.arity(name, args, (1, 2), "`&event[, flags]`", e)?;
                let (v, vname) = self.out_var(args[0])?;
                if !matches!(self.build.lookup(&vname), Some(Binding::Event(_))) {
                    return err(v, format!("`{vname}` is not a `cudaEvent_t`"));
                }
                self.cx.events.push(Vec::new());
                let k = self.cx.events.len() - 1;
                self.build.rebind(&vname, Binding::Event(Some(k)));
            }
            "cudaEventRecord" => {
                // The event covers what was launched on its stream so far (on the legacy
                // default stream: everything), and what that waited for.
                self.arity(name, args, (1, 2), "`event[, stream]`", e)?;
                let k = self.event_index(args[0])?;
                let stream = match args.get(1) {
                    Some(s) => self.stream_arg(*s)?,
                    None => None,
                };
                let ids: Vec<ThreadId> = self
                    .launches
                    .done
                    .iter()
                    .filter(|(s, _)| self.ordered_streams(*s, stream))
                    .flat_map(|(_, t)| t.iter().copied())
                    .collect();
                self.cx.events[k] = self.closure(ids);
            }
            "cudaEventSynchronize" => {
                self.arity(name, args, (1, 1), "an event", e)?;
                let k = self.event_index(args[0])?;
                self.synchronize(self.cx.events[k].clone(), e)?;
            }
            "cudaStreamWaitEvent" => {
                self.arity(name, args, (2, 3), "`stream, event[, flags]`", e)?;
                let stream = self.stream_arg(args[0])?;
                let k = self.event_index(args[1])?;
                let ids = self.cx.events[k].clone();
                self.launches.stream_waits.push((stream, ids));
            }
            "cudaEventQuery" | "cudaEventElapsedTime" => {
                return err(
                    e,
                    format!("not supported: `{name}` (its result depends on timing; synchronize with cudaEventSynchronize)"),
                );
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The runtime's copies and sets of memory; false when `name` is none of them.
    fn copy_call(&mut self, name: &str, args: &[Node<'t>], e: Node<'t>) -> R<bool> {
        match name {
            "cudaMemset" => {
                self.arity(name, args, (3, 3), "`pointer, byte, bytes`", e)?;
                self.memset(args, None, e)?;
            }
            "cudaMemsetAsync" => {
                self.arity(name, args, (3, 4), "`pointer, byte, bytes[, stream]`", e)?;
                let stream = match args.get(3) {
                    Some(s) => self.stream_arg(*s)?,
                    None => None,
                };
                self.memset(args, Some(stream), e)?;
            }
            "cudaMemcpy" => {
                self.arity(name, args, (4, 4), "`destination, source, bytes, kind`", e)?;
                self.memcpy(args, None, e)?;
            }
            "cudaMemcpyToSymbol" | "cudaMemcpyFromSymbol" => {
                self.arity(
                    name,
                    args,
                    (3, 5),
                    "`symbol or destination, source or symbol, bytes[, offset[, kind]]`",
                    e,
                )?;
                self.memcpy_symbol(name == "cudaMemcpyToSymbol", args, e)?;
            }
            "cudaMemcpyAsync" => {
                self.arity(
                    name,
                    args,
                    (4, 5),
                    "`destination, source, bytes, kind[, stream]`",
                    e,
                )?;
                let stream = match args.get(4) {
                    Some(s) => self.stream_arg(*s)?,
                    None => None,
                };
                self.memcpy(args, Some(stream), e)?;
            }
            "cudaMemcpy2D" | "cudaMemcpyPeer" => {
                return err(
                    e,
                    format!("not supported yet: `{name}` (use cudaMemcpy / cudaMemset on an allocation)"),
                );
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Strips casts and parentheses.
pub(super) fn strip(mut n: Node) -> Node {
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
