//! Structs held by value: a host local `Params p;` whose fields are set one by one
//! (`cudaMalloc(&p.data, ...)`, `p.n = 4;`), passed to a kernel or a device function by value
//! (`__global__ void k(Params p)`), as real code bundles its kernel arguments. Such a struct is
//! not memory: each field is a variable of its own, named `p.f`, so `p.data[i]`, `p.n` and
//! `&p.data` are what they would be for plain variables. A struct with pointer fields lives
//! only so (in memory, a pointer would be a value read at run time, which the front-end does
//! not follow).

use super::{err, Binding, Ctx, Lw, Ty, R};

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// `p.f` on a struct held by value: the name of the field's own variable (`None` for any
    /// other expression, a struct in memory among them).
    pub(super) fn flat_field(&self, e: tree_sitter::Node<'t>) -> Option<String> {
        if e.kind() != "field_expression" || self.op(e) != "." {
            return None;
        }
        let a = e.child_by_field_name("argument")?;
        if a.kind() != "identifier" {
            return None;
        }
        let Some(Binding::ValStruct(_)) = self.build.lookup(self.text(a)) else {
            return None;
        };
        let f = e.child_by_field_name("field")?;
        Some(format!("{}.{}", self.text(a), self.text(f)))
    }

    /// Declares the struct `name` of type `sid` held by value: one variable per field,
    /// pointers unallocated and numbers 0 until assigned, or the fields of `init` (`= {a, b}`,
    /// `{a, b}`, or another struct held by value).
    pub(super) fn val_struct_decl(
        &mut self,
        name: &str,
        sid: usize,
        init: Option<tree_sitter::Node<'t>>,
    ) -> R<()> {
        let fields = self.cx.structs[sid].fields.clone();
        let items: Option<Vec<tree_sitter::Node<'t>>> = match init {
            None => None,
            Some(i) if matches!(i.kind(), "initializer_list" | "argument_list") => {
                let mut c = i.walk();
                let items: Vec<_> = i
                    .named_children(&mut c)
                    .filter(|k| k.kind() != "comment")
                    .collect();
                if items.len() > fields.len() {
                    return err(
                        i,
                        format!(
                            "{} initialisers for the {} fields of `{}`",
                            items.len(),
                            fields.len(),
                            self.cx.structs[sid].name
                        ),
                    );
                }
                Some(items)
            }
            Some(i) => {
                // A copy of another struct held by value.
                let from = match i.kind() {
                    "identifier" => self.text(i).to_string(),
                    _ => {
                        return err(
                            i,
                            "not supported: this initialiser of a struct (write `{field values}` or another struct variable)",
                        )
                    }
                };
                let bindings = self.val_struct_fields(&from, sid, i)?;
                self.build.bind(name, Binding::ValStruct(sid));
                for ((f, _), b) in fields.iter().zip(bindings) {
                    self.build.bind(&format!("{name}.{f}"), b);
                }
                return Ok(());
            }
        };
        self.build.bind(name, Binding::ValStruct(sid));
        for (k, (f, ty)) in fields.iter().enumerate() {
            let key = format!("{name}.{f}");
            let item = items.as_ref().and_then(|v| v.get(k).copied());
            let b = self.field_binding(&key, ty, item)?;
            self.build.bind(&key, b);
        }
        Ok(())
    }

    /// The binding of a field variable of type `ty`, initialised from `init` when given.
    fn field_binding(
        &mut self,
        key: &str,
        ty: &Ty,
        init: Option<tree_sitter::Node<'t>>,
    ) -> R<Binding> {
        if ty.pointer {
            return Ok(match init {
                Some(i) => {
                    let p = self.pointer(i)?;
                    let p = self.retype(p, ty.ptr_ty(), i)?;
                    Binding::Ptr(self.keep_pointer(p, i)?)
                }
                None => Binding::PtrUnset(ty.access, ty.size, ty.strukt, ty.int),
            });
        }
        let v = match init {
            Some(i) => self.value_as(i, ty.int, None)?,
            None => scopecheck_ir::Operand::Imm(0),
        };
        Ok(match v {
            scopecheck_ir::Operand::Imm(v) => Binding::Const(ty.int.wrap(v), ty.int),
            v => {
                let r = self.build.new_reg(key, ty.int);
                let at = init.expect("a register value comes from an initialiser");
                self.mov(r, v, at);
                Binding::Reg(r, self.seg, ty.int)
            }
        })
    }

    /// The bindings of the fields of the struct variable `from`, which must hold a `sid`, as a
    /// by-value parameter receives them.
    pub(super) fn val_struct_fields(
        &self,
        from: &str,
        sid: usize,
        at: tree_sitter::Node<'t>,
    ) -> R<Vec<Binding>> {
        let def = &self.cx.structs[sid];
        match self.build.lookup(from) {
            Some(Binding::ValStruct(s)) if s == sid => {}
            Some(Binding::ValStruct(s)) => {
                return err(
                    at,
                    format!(
                        "`{from}` is a `{}`, the parameter a `{}`",
                        self.cx.structs[s].name, def.name
                    ),
                )
            }
            _ => {
                return err(
                    at,
                    format!(
                        "expected a `{}` variable (a struct is passed by value from a local of its type)",
                        def.name
                    ),
                )
            }
        }
        def.fields
            .iter()
            .map(|(f, _)| {
                let key = format!("{from}.{f}");
                match self.build.lookup(&key) {
                    Some(Binding::PtrUnset(..)) => err(
                        at,
                        format!("`{key}` is passed before it is allocated (cudaMalloc / cudaMallocManaged / cudaHostAlloc)"),
                    ),
                    Some(b) => Ok(b),
                    None => err(at, format!("internal: no variable for the field `{key}`")),
                }
            })
            .collect()
    }

    /// Binds a by-value struct parameter `pname` of type `sid` to the fields of the argument
    /// `arg` (a struct variable of the caller), into `frame`. In a launch the fields must be
    /// pointers or constants: the kernel's threads cannot read the host's registers.
    pub(super) fn bind_struct_param(
        &self,
        pname: &str,
        sid: usize,
        arg: tree_sitter::Node<'t>,
        launch: bool,
        frame: &mut Vec<(String, Binding)>,
    ) -> R<()> {
        let from =
            match arg.kind() {
                "identifier" => self.text(arg).to_string(),
                _ => return err(
                    arg,
                    "not supported: a struct argument that is not a variable (pass a struct local)",
                ),
            };
        let bindings = self.val_struct_fields(&from, sid, arg)?;
        frame.push((pname.to_string(), Binding::ValStruct(sid)));
        for ((f, _), b) in self.cx.structs[sid].fields.iter().zip(bindings) {
            if launch && matches!(b, Binding::Reg(..)) {
                return err(
                    arg,
                    format!("not supported: the field `{from}.{f}` is computed at run time by the host, and a kernel argument must be a constant or a pointer"),
                );
            }
            frame.push((format!("{pname}.{f}"), b));
        }
        Ok(())
    }
}

impl<'s, 't> Ctx<'s, 't> {
    /// Whether struct `sid` can only be held by value (it has pointer fields).
    pub(super) fn by_value_only(&self, sid: Option<usize>) -> bool {
        sid.is_some_and(|s| self.structs[s].fields.iter().any(|(_, t)| t.pointer))
    }

    /// Refuses a struct with pointer fields in memory, at `n`.
    pub(super) fn not_in_memory(&self, sid: Option<usize>, n: tree_sitter::Node<'t>) -> R<()> {
        if self.by_value_only(sid) {
            let name = &self.structs[sid.unwrap_or_default()].name;
            return err(
                n,
                format!("not supported: a `{name}` in memory (its pointer fields would be values read at run time); hold it in a local and pass it by value"),
            );
        }
        Ok(())
    }
}
