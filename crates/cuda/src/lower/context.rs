//! The file-wide context of the lowering ([`Ctx`]): C types, structs and typedefs,
//! namespace-scope declarations (arrays, `__device__`/`__shared__` objects, constants), constant
//! expressions and `sizeof`, and the program the threads make together.

use scopecheck_ir::{
    Arch, Arithmetic, CmpOp, Condition, Diagnostic, IntType, LocId, Location, MemorySpace,
    Observable, Program, Prop, Quantifier, Scope, Span, Term, Value,
};
use tree_sitter::Node;

use super::{
    cvt_c, err, field, first_line, fold_binary, fold_unary, number, only_child, qualifiers,
    scalar_type, Access, Array, Binding, Ctx, Folded, SharedDecl, StructDef, Ty, R,
};
use crate::{span_of, MAX_DECLARED_ELEMENTS};
use scopecheck_litmus::vocab::thread_scope;

/// What an array holds: `len` elements of type `ty`, or of the struct `strukt` (one location
/// per field, each of its field's type), in `space`.
#[derive(Clone, Copy, Debug)]
pub(super) struct ArrayShape {
    pub(super) len: usize,
    pub(super) strukt: Option<usize>,
    pub(super) ty: IntType,
    pub(super) space: MemorySpace,
}
impl<'s, 't> Ctx<'s, 't> {
    pub(super) fn text(&self, n: Node<'t>) -> &'s str {
        &self.src[n.byte_range()]
    }

    /// Warns once per source position and message: a kernel's body is lowered once per
    /// thread of the launch, and what it says about a statement is said once.
    pub(super) fn warn(&mut self, n: Node, message: impl Into<String>) {
        let w = Diagnostic::warning(message).at(span_of(n));
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A new array of `shape`; the initial values are converted to the types.
    pub(super) fn new_array(
        &mut self,
        name: &str,
        shape: ArrayShape,
        init: &[Value],
        span: Option<Span>,
        harness: bool,
    ) -> R<usize> {
        let ArrayShape {
            len,
            strukt,
            ty,
            space,
        } = shape;
        // A struct element is one location per field: `s.a`, `s[1].flag`.
        let fields: Vec<(String, IntType)> = match strukt {
            Some(sid) => self.structs[sid]
                .fields
                .iter()
                .map(|(f, t)| (format!(".{f}"), t.int))
                .collect(),
            None => vec![(String::new(), ty)],
        };
        let nf = fields.len();
        // Checked before anything is allocated.
        let at = span.unwrap_or_default();
        if self.arrays.len() >= crate::MAX_ALLOCATIONS {
            return Err(Diagnostic::error(format!(
                "too many allocations: more than {} arrays, allocations and variables in memory",
                crate::MAX_ALLOCATIONS
            ))
            .at(at));
        }
        let len = len.saturating_mul(nf);
        if self.locations.len().saturating_add(len) > crate::MAX_LOCATIONS {
            return Err(Diagnostic::error(format!(
                    "too many memory locations: with `{name}`'s {len} the program would have more than {} (each element, and each field of a struct element, is one)",
                    crate::MAX_LOCATIONS
                )).at(at));
        }
        let mut elems = Vec::with_capacity(len);
        for i in 0..len {
            let (el, (f, fty)) = (i / nf, &fields[i % nf]);
            let base = if len == nf {
                format!("{name}{f}")
            } else {
                format!("{name}[{el}]{f}")
            };
            let mut n = base.clone();
            if self.location_names.contains(&n) {
                let k = self.next_suffix.entry(base.clone()).or_insert(2);
                loop {
                    n = format!("{base}#{k}");
                    *k += 1;
                    if !self.location_names.contains(&n) {
                        break;
                    }
                }
            }
            self.location_names.insert(n.clone());
            self.locations.push(Location {
                name: n,
                space,
                init: fty.wrap(init.get(i).copied().unwrap_or(0)),
                ty: *fty,
                span,
            });
            elems.push(LocId((self.locations.len() - 1) as u32));
        }
        self.arrays.push(Array {
            name: name.to_string(),
            elems,
            space,
            harness,
            row: None,
        });
        Ok(self.arrays.len() - 1)
    }

    /// The type of a declaration or parameter node (its `type` field and qualifiers), with the
    /// pointer / array shape of `declarator`.
    pub(super) fn ty(&self, decl: Node<'t>, declarator: Option<Node>) -> R<Ty> {
        let quals = qualifiers(decl);
        let tnode = decl
            .child_by_field_name("type")
            .ok_or_else(|| Diagnostic::error("a declaration without a type").at(span_of(decl)))?;
        let mut ty = Ty {
            access: if quals.contains(&"volatile") {
                Access::Volatile
            } else {
                Access::Plain
            },
            constant: quals.contains(&"const") || quals.contains(&"constexpr"),
            shared: quals.contains(&"__shared__") || self.cl_has(decl, "local"),
            ..Ty::int()
        };
        self.base_type(tnode, &mut ty)?;
        let mut d = declarator;
        while let Some(n) = d {
            match n.kind() {
                "pointer_declarator" | "abstract_pointer_declarator" => {
                    if ty.pointer {
                        return err(n, "not supported: pointers to pointers");
                    }
                    ty.pointer = true;
                    // `int *volatile p` qualifies the pointer, `volatile int *p` the pointee.
                    d = n.child_by_field_name("declarator");
                }
                "init_declarator" | "array_declarator" | "parenthesized_declarator" => {
                    d = n.child_by_field_name("declarator");
                }
                "reference_declarator" => {
                    return err(n, "not supported: references (pass a pointer)");
                }
                _ => d = None,
            }
        }
        Ok(ty)
    }

    pub(super) fn base_type(&self, t: Node<'t>, ty: &mut Ty) -> R<()> {
        let text: String = self.text(t).split_whitespace().collect();
        match t.kind() {
            "primitive_type" | "sized_type_specifier" => {
                if text == "longdouble" {
                    return err(t, "not supported: `long double` (float and double are)");
                }
                // Other spellings (`signed short int` and the like): taken as `int`, as before
                // types had widths.
                let (int, size) = scalar_type(&text).unwrap_or((IntType::S32, 4));
                ty.int = int;
                ty.size = size;
                Ok(())
            }
            "struct_specifier" => {
                if t.child_by_field_name("body").is_some() {
                    return err(t, "not supported: a struct defined inside a declaration; define it on its own (`struct S { int a; int flag; };`)");
                }
                let name = t
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or("");
                let Some(&sid) = self.struct_by_name.get(name) else {
                    return err(t, format!("unknown struct `{name}`"));
                };
                ty.strukt = Some(sid);
                ty.size = self.structs[sid].size;
                Ok(())
            }
            "type_identifier" if self.struct_by_name.contains_key(&text) => {
                let sid = self.struct_by_name[&text];
                ty.strukt = Some(sid);
                ty.size = self.structs[sid].size;
                Ok(())
            }
            "type_identifier" => {
                if let Some((int, size)) = scalar_type(&text) {
                    ty.int = int;
                    ty.size = size;
                    return Ok(());
                }
                // OpenCL C atomics: device scope by default.
                let atomic = match text.as_str() {
                    "atomic_int" => Some((IntType::S32, 4)),
                    "atomic_float" => Some((IntType::F32, 4)),
                    "atomic_double" => Some((IntType::F64, 8)),
                    "atomic_uint" => Some((IntType::U32, 4)),
                    "atomic_long" | "atomic_intptr_t" | "atomic_ptrdiff_t" => {
                        Some((IntType::S64, 8))
                    }
                    "atomic_ulong" | "atomic_size_t" | "atomic_uintptr_t" => {
                        Some((IntType::U64, 8))
                    }
                    _ => None,
                };
                if let Some((int, size)) = atomic {
                    ty.access = Access::Atomic(Scope::Gpu);
                    ty.int = int;
                    ty.size = size;
                    return Ok(());
                }
                match text.as_str() {
                    "dim3" => ty.dim3 = true,
                    "cudaStream_t" => ty.stream = true,
                    "cudaEvent_t" => ty.event = true,
                    // OpenCL host types.
                    "cl_mem" => ty.pointer = true,
                    "cl_kernel" => ty.cl_kernel = true,
                    "cl_command_queue" => ty.stream = true,
                    "cl_context" | "cl_program" | "cl_device_id" | "cl_platform_id"
                    | "cl_event" => {}
                    _ => return err(t, format!("not supported: the type `{text}`")),
                }
                Ok(())
            }
            "qualified_identifier" | "template_type" => self.atomic_type(t, &text, ty),
            _ => err(t, format!("not supported: the type `{text}`")),
        }
    }

    /// `cuda::atomic<T[, S]>`, `cuda::atomic_ref<T[, S]>`, `cuda::std::atomic<T>`,
    /// `std::atomic<T>`, `std::atomic_ref<T>`.
    pub(super) fn atomic_type(&self, t: Node<'t>, text: &str, ty: &mut Ty) -> R<()> {
        let open = text.find('<').unwrap_or(text.len());
        let head = &text[..open];
        let (is_ref, default) = match head {
            "cuda::atomic" | "cuda::std::atomic" | "std::atomic" => (false, Scope::Sys),
            "cuda::atomic_ref" | "cuda::std::atomic_ref" | "std::atomic_ref" => (true, Scope::Sys),
            _ => return err(t, format!("not supported: the type `{text}`")),
        };
        // The template arguments, from the tree.
        let mut args = Vec::new();
        let mut stack = vec![t];
        while let Some(n) = stack.pop() {
            if n.kind() == "template_argument_list" {
                let mut c = n.walk();
                args = n
                    .named_children(&mut c)
                    .map(|a| self.text(a).split_whitespace().collect::<String>())
                    .collect();
                break;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let scope = match args.get(1) {
            Some(s) => thread_scope(s)
                .ok_or_else(|| Diagnostic::error(format!("unknown thread scope `{s}`; expected cuda::thread_scope_thread / block / cluster / device / system")).at(span_of(t)))?,
            None => default,
        };
        if head.starts_with("std::") && args.len() > 1 {
            return err(t, "std::atomic takes no scope");
        }
        ty.access = Access::Atomic(scope);
        ty.atomic_ref = is_ref;
        let (int, size) = args
            .first()
            .and_then(|a| scalar_type(a))
            .unwrap_or((IntType::S32, 4));
        ty.int = int;
        ty.size = size;
        Ok(())
    }

    /// Whether the OpenCL qualifier `word` qualifies declaration `n`: blanked words right
    /// before it, or inside it before its type.
    pub(super) fn cl_has(&self, n: Node, word: &str) -> bool {
        if !self.opencl {
            return false;
        }
        let type_start = n
            .child_by_field_name("type")
            .map_or(n.start_byte(), |t| t.start_byte());
        if self
            .cl_quals
            .iter()
            .any(|q| q.word == word && q.start >= n.start_byte() && q.end <= type_start)
        {
            return true;
        }
        let b = self.src.as_bytes();
        let mut pos = n.start_byte();
        loop {
            while pos > 0 && b[pos - 1].is_ascii_whitespace() {
                pos -= 1;
            }
            match self.cl_quals.iter().find(|q| q.end == pos) {
                Some(q) if q.word == word => return true,
                Some(q) => pos = q.start,
                None => return false,
            }
        }
    }

    /// `struct S { int a; volatile int flag; };` (or the body of `typedef struct { ... } S;`):
    /// scalar fields, one location each.
    pub(super) fn struct_def(&mut self, s: Node<'t>, alias: Option<&str>) -> R<()> {
        let name = match (s.child_by_field_name("name"), alias) {
            (_, Some(a)) => a.to_string(),
            (Some(n), None) => self.text(n).to_string(),
            (None, None) => {
                return err(
                    s,
                    "not supported: an anonymous struct without a typedef name",
                )
            }
        };
        let Some(body) = s.child_by_field_name("body") else {
            return err(
                s,
                format!("not supported: a declaration of `struct {name}` without its fields"),
            );
        };
        if self.struct_by_name.contains_key(&name) {
            return err(s, format!("`struct {name}` is defined twice"));
        }
        let mut fields: Vec<(String, Ty)> = Vec::new();
        let mut c = body.walk();
        for fd in body.named_children(&mut c) {
            if fd.kind() == "comment" {
                continue;
            }
            // Reading only the harness, a method is the PTX view's business.
            if self.options.kernels == crate::KernelSource::Ptx
                && matches!(fd.kind(), "function_definition" | "template_declaration")
            {
                continue;
            }
            if fd.kind() != "field_declaration" {
                return err(
                    fd,
                    format!(
                        "not supported: `{}` in a struct (fields are scalars)",
                        first_line(self.text(fd))
                    ),
                );
            }
            let mut c2 = fd.walk();
            let decls: Vec<Node> = fd.children_by_field_name("declarator", &mut c2).collect();
            for d in decls {
                let ty = self.ty(fd, Some(d))?;
                // A pointer field makes the struct one held by value only (`by_value`).
                if ty.dim3 || ty.stream || ty.atomic_ref || ty.strukt.is_some() {
                    return err(d, "not supported: a field of this type (fields are scalars or pointers: int, unsigned, long, float, bool, volatile or atomic, or a pointer to one)");
                }
                let (fname, len, init) = self.declarator_shape(d)?;
                if len > 1 || d.kind() == "array_declarator" {
                    return err(d, "not supported: an array field (fields are scalars)");
                }
                if init.is_some() {
                    return err(d, "not supported: a default member initialiser");
                }
                let fname = self.text(fname).to_string();
                if fields.iter().any(|(f, _)| *f == fname) {
                    return err(d, format!("the field `{fname}` is declared twice"));
                }
                fields.push((fname, ty));
            }
        }
        if fields.is_empty() {
            return err(s, "not supported: a struct without fields");
        }
        let size = fields.iter().map(|(_, t)| t.size).sum();
        self.structs.push(StructDef {
            name: name.clone(),
            fields,
            size,
        });
        self.struct_by_name.insert(name, self.structs.len() - 1);
        Ok(())
    }

    /// `typedef struct [S] { ... } T;`
    pub(super) fn typedef(&mut self, d: Node<'t>) -> R<()> {
        let t = field(d, "type")?;
        let alias = d
            .child_by_field_name("declarator")
            .filter(|a| a.kind() == "type_identifier");
        match (t.kind(), alias) {
            ("struct_specifier", Some(a)) if t.child_by_field_name("body").is_some() => {
                let alias = self.text(a).to_string();
                self.struct_def(t, Some(&alias))?;
                // `struct S` names it too.
                if let Some(n) = t.child_by_field_name("name") {
                    let sid = self.structs.len() - 1;
                    self.struct_by_name.insert(self.text(n).to_string(), sid);
                }
                Ok(())
            }
            _ => err(
                d,
                "not supported: this typedef (only `typedef struct { ... } Name;`)",
            ),
        }
    }

    /// A top-level declaration: `__device__` / `__managed__` / `__shared__` globals.
    pub(super) fn global_decl(&mut self, d: Node<'t>) -> R<()> {
        let quals = qualifiers(d);
        let space = if quals.contains(&"__shared__") {
            MemorySpace::Shared
        } else if quals.contains(&"__managed__") {
            MemorySpace::Managed
        } else if quals.contains(&"__device__")
            || quals.contains(&"__constant__")
            || self.cl_has(d, "global")
            || self.cl_has(d, "constant")
        {
            MemorySpace::Global
        } else if self.cl_has(d, "local") {
            MemorySpace::Shared
        } else if quals.contains(&"constexpr") || quals.contains(&"const") {
            // A compile-time constant (`constexpr int N = 4;`): host and device code use it
            // as its value.
            let mut c = d.walk();
            let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
            for decl in decls {
                let ty = self.ty(d, Some(decl))?;
                let (name_node, len, init) = self.declarator_shape(decl)?;
                let (Some(init), 1, false) = (init, len, ty.pointer) else {
                    return err(
                        decl,
                        "not supported: a constant that is not one initialised integer",
                    );
                };
                let v = self.const_value(init, ty.int)?;
                let name = self.text(name_node).to_string();
                self.constants.push((name, Binding::Const(v, ty.int)));
            }
            return Ok(());
        } else {
            return err(
                d,
                "not supported: a host global variable; declare it `__device__` or `__managed__`, or allocate it in scopecheck_main",
            );
        };
        let mut c = d.walk();
        let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
        for decl in decls {
            let ty = self.ty(d, Some(decl))?;
            if ty.pointer || ty.dim3 || ty.stream || ty.atomic_ref {
                return err(
                    decl,
                    "not supported: a global of this type (globals are scalars or arrays of them)",
                );
            }
            self.not_in_memory(ty.strukt, decl)?;
            let (name_node, len, init) = self.declarator_shape(decl)?;
            let name = self.text(name_node).to_string();
            if self.globals.contains_key(&name) || self.shared_by_name.contains_key(&name) {
                return err(name_node, format!("`{name}` is declared twice"));
            }
            if space == MemorySpace::Shared {
                if init.is_some() {
                    return err(decl, "a `__shared__` variable cannot have an initialiser");
                }
                self.shared_decls.push(SharedDecl {
                    name: name.clone(),
                    len,
                    row: self.row_len(decl)?,
                    ty,
                    node: name_node,
                });
                self.shared_by_name
                    .insert(name, self.shared_decls.len() - 1);
                continue;
            }
            let per = ty.strukt.map_or(1, |sid| self.structs[sid].fields.len());
            let values = match init {
                Some(v) => {
                    let tys: Vec<IntType> = match ty.strukt {
                        Some(sid) => self.structs[sid].fields.iter().map(|f| f.1.int).collect(),
                        None => vec![ty.int],
                    };
                    self.const_init(v, len * per, &tys)?
                }
                None => Vec::new(),
            };
            let arr = self.new_array(
                &name,
                ArrayShape {
                    len,
                    strukt: ty.strukt,
                    ty: ty.int,
                    space,
                },
                &values,
                Some(span_of(name_node)),
                false,
            )?;
            self.arrays[arr].row = self.row_len(decl)?;
            self.globals.insert(name, (arr, ty));
        }
        Ok(())
    }

    /// The name, element count and initialiser of a declarator.
    pub(super) fn declarator_shape(
        &self,
        decl: Node<'t>,
    ) -> R<(Node<'t>, usize, Option<Node<'t>>)> {
        let mut len = 1usize;
        let mut init = None;
        let mut dims = 0;
        let mut d = decl;
        loop {
            match d.kind() {
                "identifier" | "field_identifier" => return Ok((d, len, init)),
                "init_declarator" => {
                    init = d.child_by_field_name("value");
                }
                "array_declarator" => {
                    dims += 1;
                    if dims > 2 {
                        return err(
                            decl,
                            "not supported: an array of more than two dimensions (arrays have one, `int a[N]`, or two, `int t[H][W]`)",
                        );
                    }
                    let size = d.child_by_field_name("size").ok_or_else(|| {
                        Diagnostic::error("not supported: an array without a size (only `extern __shared__ T a[]` takes its size from the launch)").at(span_of(d))
                    })?;
                    let n = self.const_expr(size)?;
                    if n <= 0 || n as usize > MAX_DECLARED_ELEMENTS {
                        return err(
                            size,
                            format!("array size {n} outside 1..={MAX_DECLARED_ELEMENTS}"),
                        );
                    }
                    len = len
                        .checked_mul(n as usize)
                        .filter(|l| *l <= MAX_DECLARED_ELEMENTS)
                        .ok_or_else(|| {
                            Diagnostic::error(format!(
                                "array too large: more than {MAX_DECLARED_ELEMENTS} elements"
                            ))
                            .at(span_of(d))
                        })?;
                }
                "pointer_declarator" | "parenthesized_declarator" => {}
                k => return err(d, format!("not supported: declarator `{k}`")),
            }
            d = d
                .child_by_field_name("declarator")
                .ok_or_else(|| Diagnostic::error("a declarator without a name").at(span_of(d)))?;
        }
    }

    /// A parameter's type and name. A parameter declared as an array (`int a[]`, `int a[4]`)
    /// is a pointer to its element, as C adjusts it; one declared as a two-dimensional array
    /// (`int a[][4]`, a pointer to rows) is refused at it.
    pub(super) fn param(&self, p: Node<'t>) -> R<(Ty, Option<Node<'t>>)> {
        let decl = p.child_by_field_name("declarator");
        let mut ty = self.ty(p, decl)?;
        let (mut arrays, mut name, mut d) = (0, None, decl);
        while let Some(n) = d {
            match n.kind() {
                "array_declarator" => arrays += 1,
                "identifier" => name = Some(n),
                _ => {}
            }
            d = n.child_by_field_name("declarator");
        }
        match arrays {
            0 => {}
            1 if !ty.pointer => ty.pointer = true,
            1 => return err(p, "not supported: pointers to pointers"),
            _ => {
                return err(
                    p,
                    "not supported: a parameter declared as a two-dimensional array (a pointer to rows): declare it `int *a` and index it `a[i * W + j]`",
                )
            }
        }
        Ok((ty, name))
    }

    /// The length of a row of a two-dimensional array declarator (`W` of `int t[H][W]`: the
    /// elements are laid out row after row, `t[i][j]` is element `i * W + j`), `None` for
    /// anything else. The declarator is read by [`Ctx::declarator_shape`] too, which refuses
    /// a third dimension and sizes that are not constants.
    pub(super) fn row_len(&self, decl: Node<'t>) -> R<Option<usize>> {
        let mut d = Some(decl);
        let mut sizes = Vec::new();
        while let Some(n) = d {
            if n.kind() == "array_declarator" {
                sizes.push(n.child_by_field_name("size"));
            }
            d = n.child_by_field_name("declarator");
        }
        // The outer declarator is the last dimension: `int t[H][W]` is `(t[H])[W]`.
        match sizes.as_slice() {
            [Some(w), _] => Ok(Some(self.const_expr(*w)? as usize)),
            _ => Ok(None),
        }
    }

    /// The initial values of `len` elements, element `k` of type `tys[k % tys.len()]` (the
    /// fields of a struct, in order).
    pub(super) fn const_init(&mut self, v: Node<'t>, len: usize, tys: &[IntType]) -> R<Vec<Value>> {
        let ty = |k: usize| {
            tys.get(k % tys.len().max(1))
                .copied()
                .unwrap_or(IntType::S32)
        };
        if v.kind() == "initializer_list" {
            // Nested lists (arrays of structs) are read flat, in order.
            let mut flat = Vec::new();
            let mut stack = vec![v];
            while let Some(n) = stack.pop() {
                if n.kind() == "initializer_list" {
                    let mut c = n.walk();
                    let kids: Vec<Node> = n.named_children(&mut c).collect();
                    stack.extend(kids.into_iter().rev());
                } else if n.kind() != "comment" {
                    let v = self.const_value(n, ty(flat.len()))?;
                    flat.push(v);
                }
            }
            if flat.len() > len {
                return err(v, "more initialisers than elements");
            }
            return Ok(flat);
        }
        Ok(vec![self.const_value(v, ty(0))?])
    }

    /// A compile-time constant converted to `to`, as C initialises a variable of that type
    /// (an integer to a float, a float to an integer truncated; one that type cannot hold is
    /// an error).
    pub(super) fn const_value(&mut self, n: Node<'t>, to: IntType) -> R<Value> {
        let (v, from) = self.const_typed(n)?;
        if !(from.float || to.float) {
            return Ok(to.wrap(v));
        }
        cvt_c(from, to)
            .eval(to, Arithmetic::C, v, 0)
            .map_err(|why| {
                Diagnostic::error(format!("`{}` as a {to}: {why}", self.text(n))).at(span_of(n))
            })
    }

    /// A number literal: its value, its C type, and whether it was a float constant that is
    /// not a whole number.
    pub(super) fn literal(&self, n: Node<'t>) -> R<(Value, IntType, bool)> {
        number(self.text(n)).ok_or_else(|| {
            Diagnostic::error(format!("not supported: the number `{}`", self.text(n)))
                .at(span_of(n))
        })
    }

    /// Constant expressions without names (array sizes, global initialisers).
    pub(super) fn const_expr(&self, n: Node<'t>) -> R<Value> {
        Ok(self.const_typed(n)?.0)
    }

    /// A constant expression folded in C's types; an undefined one is an error.
    pub(super) fn const_typed(&self, n: Node<'t>) -> R<(Value, IntType)> {
        match n.kind() {
            "number_literal" => {
                let (v, ty, _) = self.literal(n)?;
                Ok((v, ty))
            }
            // `bool` promotes to `int`.
            "true" => Ok((1, IntType::S32)),
            "false" | "null" | "nullptr" => Ok((0, IntType::S32)),
            "identifier" => match self.constants.iter().rev().find(|(k, _)| k == self.text(n)) {
                Some((_, Binding::Const(v, ty))) => Ok((*v, *ty)),
                _ => err(n, format!("`{}` is not a constant", self.text(n))),
            },
            "parenthesized_expression" => self.const_typed(only_child(n)?),
            "unary_expression" => {
                let op = self.operator(n);
                let (a, ta) = self.const_typed(field(n, "argument")?)?;
                let folded = fold_unary(op, a, ta).ok_or_else(|| {
                    Diagnostic::error(format!("not supported: operator `{op}`")).at(span_of(n))
                })?;
                Self::defined(folded, n)
            }
            // A chain `a + b + c ...` by a loop (`nesting::chain_of`), left to right.
            "binary_expression" => {
                let (first, ops) = crate::nesting::chain_of(n);
                let (mut a, mut ta) = self.const_typed(first)?;
                for o in ops {
                    let (b, tb) = self.const_typed(field(o, "right")?)?;
                    let folded = fold_binary(self.operator(o), a, ta, b, tb).ok_or_else(|| {
                        Diagnostic::error(format!("cannot fold `{}`", self.text(o))).at(span_of(o))
                    })?;
                    (a, ta) = Self::defined(folded, o)?;
                }
                Ok((a, ta))
            }
            "sizeof_expression" => Ok((self.sizeof(n)?, IntType::U64)),
            _ => err(
                n,
                format!("expected a constant here, found `{}`", self.text(n)),
            ),
        }
    }

    /// The operator of a unary or binary expression (`""` if none).
    pub(super) fn operator(&self, n: Node<'t>) -> &'s str {
        n.child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("")
    }

    /// A folded constant, or the error of an undefined one at `n`.
    pub(super) fn defined(folded: Folded, n: Node<'t>) -> R<(Value, IntType)> {
        folded.map_err(|why| {
            Diagnostic::error(format!("this constant expression is undefined: {why}"))
                .at(span_of(n))
        })
    }

    pub(super) fn sizeof(&self, n: Node<'t>) -> R<Value> {
        if let Some(t) = n.child_by_field_name("type") {
            let mut ty = Ty::int();
            let inner = t.child_by_field_name("type").unwrap_or(t);
            self.base_type(inner, &mut ty)?;
            if t.child_by_field_name("declarator").is_some() {
                return Ok(8);
            }
            return Ok(ty.size);
        }
        // `sizeof(S)` for a struct `S` parses as the size of an expression.
        if let Some(v) = n.child_by_field_name("value") {
            let mut v = v;
            while v.kind() == "parenthesized_expression" {
                v = only_child(v)?;
            }
            if let Some(&sid) = self.struct_by_name.get(self.text(v)) {
                return Ok(self.structs[sid].size);
            }
            // `sizeof(std::atomic<int>)` parses as a template expression.
            if matches!(v.kind(), "qualified_identifier" | "template_function") {
                let text: String = self.text(v).split_whitespace().collect();
                let mut ty = Ty::int();
                if self.atomic_type(v, &text, &mut ty).is_ok() {
                    return Ok(ty.size);
                }
            }
        }
        err(
            n,
            "not supported: `sizeof` of an expression; write `sizeof(int)`",
        )
    }

    pub(super) fn finish(
        self,
    ) -> Result<(Program, Vec<Diagnostic>, Vec<crate::KernelLaunch>), Diagnostic> {
        // One conjunct per asserting thread; a long chain is a balanced tree (Prop::chain).
        let atoms = self
            .asserts
            .iter()
            .map(|(o, _)| Prop::Cmp(Term::Observable(*o), CmpOp::Ne, Term::Const(0)))
            .collect();
        let prop = Prop::chain(atoms, true);
        let extra: Vec<Observable> = self
            .arrays
            .iter()
            .filter(|a| a.harness)
            .flat_map(|a| a.elems.iter().map(|l| Observable::Loc(*l)))
            .collect();
        // Every array of more than one location is an allocation of consecutive locations.
        let arrays = self
            .arrays
            .iter()
            .filter(|a| a.elems.len() > 1)
            .map(|a| scopecheck_ir::Array {
                name: a.name.clone(),
                first: a.elems[0],
                len: a.elems.len() as u32,
            })
            .collect();
        let program = Program {
            arch: if self.opencl { Arch::OpenCl } else { Arch::C },
            name: "scopecheck_main".into(),
            description: None,
            locations: self.locations,
            arrays,
            threads: self.threads,
            condition: Condition {
                quantifier: Quantifier::Forall,
                prop: prop.unwrap_or(Prop::True),
                span: self.asserts.first().map(|(_, s)| *s),
            },
            extra_observables: extra,
        };
        Ok((program, self.warnings, self.launches))
    }
}
