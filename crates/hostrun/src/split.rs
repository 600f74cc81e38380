//! Splitting a `.cu` file as nvcc does: the host part, which the system C++ compiler builds
//! against scopecheck's runtime, and the kernels' signatures, which give the launches'
//! argument bytes their meaning.
//!
//! The host part is the file as written with
//! - each `__global__` kernel's body emptied (the kernel stays a host function of the same
//!   signature, so that a launch converts its arguments to the parameters' types as a call
//!   does);
//! - each device-only function (`__device__` without `__host__`) and each namespace-scope
//!   `__shared__` variable blanked;
//! - each `__device__`, `__constant__` or `__managed__` variable kept as a host shadow and
//!   registered by name (`scopecheck::Symbol`), on its own line;
//! - each launch `k<<<g, b, s, st>>>(args)` written
//!   `::scopecheck::Launch("k", __FILE__, __LINE__, g, b, s, st).run(k, args)`.
//!
//! Every line keeps its number (blanked text keeps its newlines, a rewritten launch is padded
//! to its lines), so the host compiler's messages and `__LINE__` name the user's lines.

use tree_sitter::Node;

use crate::HostError;

/// A kernel parameter as the launch harness needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Param {
    /// A pointer (or array) parameter: the element type as written (`int`, `unsigned int`),
    /// and the parameter's name (empty when it has none), which reports call the allocation
    /// passed to it by.
    Pointer { elem: String, name: String },
    /// A scalar parameter of this type.
    Scalar { ty: String },
    /// A parameter the native path does not pass yet, and why.
    Unsupported(String),
}

/// A `__global__` kernel's name and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    /// Whether it is a template (the device side does not instantiate those yet).
    pub template: bool,
}

/// A file split for the native host path.
#[derive(Clone, Debug)]
pub struct Split {
    /// The host part, for the system C++ compiler.
    pub host: String,
    pub kernels: Vec<Kernel>,
    /// Launches rewritten.
    pub launches: usize,
    /// `__device__`, `__constant__` and `__managed__` variables registered.
    pub symbols: usize,
    /// Where the host code touches memory a running kernel may access, so that the file needs
    /// the interpreted harness ([`crate::concurrent`]); `None` when nothing was seen.
    pub concurrent: Option<crate::concurrent::Concurrent>,
}

/// One replacement of source bytes.
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// Splits `source` (as written: the host compiler runs its own preprocessor).
pub fn split(source: &str) -> Result<Split, HostError> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| HostError::Internal(format!("grammar: {e}")))?;
    let tree = parser
        .parse(source, None)
        .ok_or_else(|| HostError::Internal("the parser gave no tree".into()))?;
    let mut s = Splitter {
        src: source,
        edits: Vec::new(),
        kernels: Vec::new(),
        launches: 0,
        symbols: 0,
        stubs: Vec::new(),
        aliases: Vec::new(),
    };
    s.scope(tree.root_node());
    s.register_stubs();
    let concurrent = crate::concurrent::find(tree.root_node(), source);
    let mut host = source.to_string();
    // A harness written as `void scopecheck_main()` (docs/cuda.md) runs as the program's main.
    let defines = |name: &str| {
        let mut c = tree.root_node().walk();
        let found = tree.root_node().named_children(&mut c).any(|f| {
            f.kind() == "function_definition"
                && f.child_by_field_name("declarator")
                    .and_then(|d| d.child_by_field_name("declarator"))
                    .is_some_and(|n| &source[n.byte_range()] == name)
        });
        found
    };
    if defines("scopecheck_main") && !defines("main") {
        host.push_str("\nint main() { scopecheck_main(); return 0; }\n");
    }
    s.edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    for e in &s.edits {
        host.replace_range(e.start..e.end, &e.text);
    }
    Ok(Split {
        host,
        kernels: s.kernels,
        launches: s.launches,
        symbols: s.symbols,
        concurrent,
    })
}

struct Splitter<'s> {
    src: &'s str,
    edits: Vec<Edit>,
    kernels: Vec<Kernel>,
    launches: usize,
    symbols: usize,
    /// Each non-template kernel definition: where it ends, and its name.
    stubs: Vec<(usize, String)>,
    /// The file's type aliases so far (`typedef unsigned int uint;`, `using u32 = ...;`):
    /// the name and the type it stands for, as words.
    aliases: Vec<(String, String)>,
}

/// The words (identifiers and keywords) of `s`.
fn words(s: &str) -> Vec<&str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// `text` with every character but newlines turned into a space.
fn blanked(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect()
}

impl<'s> Splitter<'s> {
    fn text(&self, n: Node) -> &'s str {
        &self.src[n.byte_range()]
    }

    /// The words of `n` before its body (all of it when it has none): where it runs.
    fn head_words(&self, n: Node) -> Vec<&'s str> {
        let end = n
            .child_by_field_name("body")
            .map_or(n.end_byte(), |b| b.start_byte());
        words(&self.src[n.start_byte()..end])
    }

    fn blank(&mut self, n: Node) {
        self.edits.push(Edit {
            start: n.start_byte(),
            end: n.end_byte(),
            text: blanked(self.text(n)),
        });
    }

    /// The items of a namespace-level scope.
    fn scope(&mut self, scope: Node) {
        let mut c = scope.walk();
        let items: Vec<Node> = scope.named_children(&mut c).collect();
        for item in items {
            match item.kind() {
                "function_definition" => self.function(item, false),
                "template_declaration" => {
                    let mut c = item.walk();
                    let inner = item
                        .named_children(&mut c)
                        .find(|n| n.kind() == "function_definition");
                    match inner {
                        Some(f) => {
                            let w = self.head_words(f);
                            if w.contains(&"__device__")
                                && !w.contains(&"__host__")
                                && !w.contains(&"__global__")
                            {
                                self.blank(item);
                            } else {
                                self.function(f, true);
                            }
                        }
                        None => self.launches_in(item),
                    }
                }
                "declaration" => self.declaration(item),
                "type_definition" | "alias_declaration" => {
                    self.alias(item);
                    self.launches_in(item);
                }
                "namespace_definition" | "linkage_specification" => {
                    match item.child_by_field_name("body") {
                        Some(b) if b.kind() == "function_definition" => self.function(b, false),
                        Some(b) if b.kind() == "declaration" => self.declaration(b),
                        Some(b) => self.scope(b),
                        None => {}
                    }
                }
                "declaration_list" | "preproc_if" | "preproc_ifdef" | "preproc_else"
                | "preproc_elif" | "preproc_elifdef" => self.scope(item),
                _ => self.launches_in(item),
            }
        }
    }

    fn function(&mut self, f: Node, template: bool) {
        let w = self.head_words(f);
        if w.contains(&"__global__") {
            if let Some(k) = self.kernel(f, template) {
                if !template {
                    self.stubs.push((f.end_byte(), k.name.clone()));
                }
                self.kernels.push(k);
            }
            if let Some(body) = f.child_by_field_name("body") {
                let inner = blanked(self.text(body));
                let mut text = String::with_capacity(inner.len());
                text.push('{');
                text.push_str(&inner[1..inner.len().saturating_sub(1).max(1)]);
                text.push('}');
                self.edits.push(Edit {
                    start: body.start_byte(),
                    end: body.end_byte(),
                    text,
                });
            }
        } else if w.contains(&"__device__") && !w.contains(&"__host__") {
            self.blank(f);
        } else {
            self.launches_in(f);
        }
    }

    /// A namespace-scope declaration: `__shared__` variables go, device variables stay as
    /// host shadows registered by name.
    fn declaration(&mut self, d: Node) {
        let w = self.head_words(d);
        if w.contains(&"__shared__") {
            self.blank(d);
            return;
        }
        let device = w.contains(&"__device__") || w.contains(&"__constant__");
        let managed = w.contains(&"__managed__");
        if !(device || managed) || w.contains(&"extern") {
            self.launches_in(d);
            return;
        }
        let mut c = d.walk();
        let mut names = Vec::new();
        for decl in d.children_by_field_name("declarator", &mut c) {
            if let Some(name) = declared_name(decl, self.src) {
                names.push(name);
            }
        }
        let mut text = String::new();
        for name in names {
            self.symbols += 1;
            text.push_str(&format!(
                " static ::scopecheck::Symbol scopecheck_symbol_{n}((const void *)&{name}, sizeof({name}), \"{name}\", {m});",
                n = self.symbols,
                m = managed as u8
            ));
        }
        self.edits.push(Edit {
            start: d.end_byte(),
            end: d.end_byte(),
            text,
        });
    }

    /// Registers each kernel's host stub by name after its definition, on the same line, for
    /// `cudaLaunchKernel` (runtime: `scopecheck::kernel_name`). An overloaded name is left
    /// out (the stub's address would be ambiguous): launching it by address is refused at run
    /// time, naming the call.
    fn register_stubs(&mut self) {
        for (i, (end, name)) in self.stubs.iter().enumerate() {
            if self.stubs.iter().filter(|(_, n)| n == name).count() > 1 {
                continue;
            }
            self.edits.push(Edit {
                start: *end,
                end: *end,
                text: format!(
                    " static int scopecheck_kernel_{i} = ::scopecheck::kernel_name({name}, \"{name}\");"
                ),
            });
        }
    }

    /// Records a type alias of the file, for kernel parameters written with it.
    fn alias(&mut self, n: Node) {
        let (Some(ty), name) = (
            n.child_by_field_name("type"),
            if n.kind() == "alias_declaration" {
                n.child_by_field_name("name")
            } else {
                n.child_by_field_name("declarator")
            },
        ) else {
            return;
        };
        let Some(name) = name.filter(|d| matches!(d.kind(), "type_identifier" | "identifier"))
        else {
            return;
        };
        let ty = match ty.child_by_field_name("type") {
            // `using A = const unsigned int;`: a type_descriptor holding the type.
            Some(inner) if ty.kind() == "type_descriptor" => self.text(inner),
            _ => self.text(ty),
        };
        let ty = self.resolve(&words(ty).join(" "));
        self.aliases.push((self.text(name).to_string(), ty));
    }

    /// `ty` with the file's aliases replaced by what they stand for.
    fn resolve(&self, ty: &str) -> String {
        match self.aliases.iter().rev().find(|(n, _)| n == ty) {
            Some((_, t)) => t.clone(),
            None => ty.to_string(),
        }
    }

    /// Rewrites every launch inside `n`.
    fn launches_in(&mut self, n: Node) {
        if n.kind() == "call_expression" {
            let mut c = n.walk();
            let config = n
                .children(&mut c)
                .find(|k| k.kind() == "kernel_call_syntax");
            if let Some(config) = config {
                self.launch(n, config);
                return;
            }
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.children(&mut c).collect();
        for k in children {
            self.launches_in(k);
        }
    }

    fn launch(&mut self, call: Node, config: Node) {
        let (Some(f), Some(args)) = (
            call.child_by_field_name("function"),
            call.child_by_field_name("arguments"),
        ) else {
            return;
        };
        let name = self.text(f).trim();
        let mut c = config.walk();
        let cfg: Vec<&str> = config
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .map(|n| self.text(n))
            .collect();
        let inner = self.text(args);
        let inner = inner
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or(inner);
        let args = if inner.trim().is_empty() {
            String::new()
        } else {
            format!(", {inner}")
        };
        let mut text = format!(
            "::scopecheck::Launch(\"{}\", __FILE__, __LINE__, {}).run({name}{args})",
            name.replace('"', "\\\""),
            cfg.join(", ")
        );
        let lines = |s: &str| s.matches('\n').count();
        for _ in lines(&text)..lines(self.text(call)) {
            text.push('\n');
        }
        self.launches += 1;
        self.edits.push(Edit {
            start: call.start_byte(),
            end: call.end_byte(),
            text,
        });
    }

    fn kernel(&self, f: Node, template: bool) -> Option<Kernel> {
        let decl = innermost_function(f.child_by_field_name("declarator")?)?;
        let name = self
            .text(decl.child_by_field_name("declarator")?)
            .to_string();
        let mut params = Vec::new();
        if let Some(list) = decl.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c) {
                match p.kind() {
                    "parameter_declaration" => params.push(self.param(p)),
                    "comment" => {}
                    _ => params.push(Param::Unsupported(format!(
                        "`{}`: this kind of parameter",
                        self.text(p)
                    ))),
                }
            }
        }
        Some(Kernel {
            name,
            params,
            template,
        })
    }

    fn param(&self, p: Node) -> Param {
        let mut pointers = 0;
        let mut name = String::new();
        let mut d = p.child_by_field_name("declarator");
        while let Some(n) = d {
            match n.kind() {
                "identifier" => name = self.text(n).to_string(),
                "pointer_declarator" | "array_declarator" | "abstract_pointer_declarator" => {
                    pointers += 1
                }
                "reference_declarator" => {
                    return Param::Unsupported("a reference parameter".into())
                }
                _ => {}
            }
            d = n.child_by_field_name("declarator");
        }
        let ty: Vec<&str> = p
            .child_by_field_name("type")
            .map(|t| words(self.text(t)))
            .unwrap_or_default()
            .into_iter()
            .collect();
        // The qualifiers of the whole parameter (`const`, `volatile`, `__restrict__`) do not
        // change the bytes passed.
        let ty: Vec<&str> = ty
            .into_iter()
            .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__" | "struct"))
            .collect();
        let ty = self.resolve(&ty.join(" "));
        match pointers {
            0 => Param::Scalar { ty },
            1 => Param::Pointer { elem: ty, name },
            _ => Param::Unsupported("a pointer to pointers".into()),
        }
    }
}

/// `device_text` (the device part, as `scopecheck_cuda::device_source` gives it) without the
/// host-only code the language-level front-end does not read and kernels cannot use: class
/// templates, classes with member functions (and the `;` after them), enums, namespaces and
/// `using` aliases in which no `__device__` or `__global__` appears, and host variables other
/// than integer constants (host globals, string constants, `int S::count = 0;`). They come
/// from the host's own code and headers (a class wrapping device memory, an error-check
/// helper, a test's counters) and answer for nothing on the device.
pub fn device_only(device_text: &str) -> String {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .is_err()
    {
        return device_text.to_string();
    }
    let Some(tree) = parser.parse(device_text, None) else {
        return device_text.to_string();
    };
    let mut out = device_text.as_bytes().to_vec();
    let device = [
        "__device__",
        "__global__",
        "__managed__",
        "__constant__",
        "__shared__",
    ];
    // The names device code mentions: a host constant no kernel names answers for nothing.
    let mut c = tree.root_node().walk();
    let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for item in tree.root_node().named_children(&mut c) {
        let w = words(&device_text[item.byte_range()]);
        if device.iter().any(|d| w.contains(d)) {
            named.extend(w);
        }
    }
    let mut c = tree.root_node().walk();
    for item in tree.root_node().named_children(&mut c) {
        let text = &device_text[item.byte_range()];
        let w = words(text);
        if device.iter().any(|d| w.contains(d)) {
            continue;
        }
        let class = w.contains(&"class") || w.contains(&"struct");
        let host_only = match item.kind() {
            "template_declaration" | "namespace_definition" | "alias_declaration" => true,
            "enum_specifier" => true,
            "class_specifier" | "struct_specifier" => text.contains('('),
            "declaration" if class => text.contains('('),
            // A host variable (kernels reach only `__device__` ones): all but the integer
            // constants device code names (as sizes, bounds). A string or a pointer is no
            // such constant.
            "declaration" => {
                let mut c = item.walk();
                let names: Vec<String> = item
                    .children_by_field_name("declarator", &mut c)
                    .filter_map(|d| declared_name(d, device_text))
                    .collect();
                !(w.contains(&"const") || w.contains(&"constexpr"))
                    || text.contains('"')
                    || text.contains('*')
                    || !names.iter().any(|n| named.contains(n.as_str()))
            }
            _ => false,
        };
        if host_only {
            let mut range = item.byte_range();
            // `struct S { ... };` read as the specifier and a `;` after it: the `;` goes too.
            if let Some(next) = item.next_sibling() {
                if device_text[next.byte_range()].trim() == ";" {
                    range.end = next.end_byte();
                }
            }
            for b in &mut out[range] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    let text = String::from_utf8(out).unwrap_or_else(|_| device_text.to_string());
    scalar_aliases_resolved(&text, &tree)
}

/// `text` with each top-level alias of a scalar type (`typedef unsigned int uint;`,
/// `using real = float;`) blanked and its uses spelled as the type: the language-level
/// front-end reads `typedef struct { ... } Name;` alone. `tree` is `text`'s tree before
/// blanking (blanking keeps every byte's place).
fn scalar_aliases_resolved(text: &str, tree: &tree_sitter::Tree) -> String {
    const SCALAR: &[&str] = &[
        "bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double", "size_t",
        "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
        "const",
    ];
    let mut aliases: Vec<(String, String)> = Vec::new();
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut c = tree.root_node().walk();
    for item in tree.root_node().named_children(&mut c) {
        let (ty, name) = match item.kind() {
            "type_definition" => (
                item.child_by_field_name("type"),
                item.child_by_field_name("declarator"),
            ),
            "alias_declaration" => (
                item.child_by_field_name("type")
                    .and_then(|t| t.child_by_field_name("type").or(Some(t))),
                item.child_by_field_name("name"),
            ),
            _ => continue,
        };
        let (Some(ty), Some(name)) = (ty, name) else {
            continue;
        };
        let ty_words = words(&text[ty.byte_range()]);
        if name.kind() != "type_identifier"
            || ty_words.is_empty()
            || !ty_words.iter().all(|w| SCALAR.contains(w))
        {
            continue;
        }
        aliases.push((text[name.byte_range()].to_string(), ty_words.join(" ")));
        edits.push((item.byte_range(), blanked(&text[item.byte_range()])));
    }
    if aliases.is_empty() {
        return text.to_string();
    }
    uses_of(tree.root_node(), text, &aliases, &mut edits);
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (r, t) in edits {
        out.replace_range(r, &t);
    }
    out
}

/// Each `type_identifier` of `n` that names one of `aliases`, with its type.
fn uses_of(
    n: Node,
    text: &str,
    aliases: &[(String, String)],
    edits: &mut Vec<(std::ops::Range<usize>, String)>,
) {
    if matches!(n.kind(), "type_definition" | "alias_declaration") {
        // An alias's own definition is blanked whole, or left as written.
        return;
    }
    if n.kind() == "type_identifier" {
        if let Some((_, ty)) = aliases.iter().find(|(a, _)| *a == text[n.byte_range()]) {
            edits.push((n.byte_range(), ty.clone()));
        }
        return;
    }
    let mut c = n.walk();
    for k in n.children(&mut c) {
        uses_of(k, text, aliases, edits);
    }
}

/// The name a declarator declares (through initialisers, arrays, pointers).
fn declared_name(mut d: Node, src: &str) -> Option<String> {
    loop {
        if matches!(d.kind(), "identifier" | "field_identifier") {
            return Some(src[d.byte_range()].to_string());
        }
        d = d.child_by_field_name("declarator")?;
    }
}

/// The `function_declarator` inside a declarator (through pointers and parentheses).
fn innermost_function(mut d: Node) -> Option<Node> {
    loop {
        if d.kind() == "function_declarator" {
            return Some(d);
        }
        d = d.child_by_field_name("declarator")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "#include <cstdio>\n__device__ int flag = 3;\n__shared__ int s[4];\n__device__ int twice(int x) { return 2 * x; }\n__global__ void k(int *out, unsigned n) {\n  out[0] = twice(n);\n}\nint main() {\n  int *d;\n  cudaMalloc(&d, 4);\n  k<<<1,\n      2>>>(d, 7);\n  return 0;\n}\n";

    /// Every line keeps its number; the kernel body and the device function go; the launch
    /// and the symbol are rewritten; the kernel's parameters are read.
    #[test]
    fn the_host_part_keeps_lines_and_rewrites_launches() {
        let s = split(FILE).unwrap();
        assert_eq!(s.host.lines().count(), FILE.lines().count(), "{}", s.host);
        let lines: Vec<&str> = s.host.lines().collect();
        assert!(lines[1].contains("scopecheck::Symbol") && lines[1].contains("\"flag\""));
        assert!(lines[2].trim().is_empty(), "{}", lines[2]);
        assert!(lines[3].trim().is_empty(), "{}", lines[3]);
        assert!(lines[4].contains("__global__ void k(int *out, unsigned n) {"));
        assert!(lines[5].trim().is_empty(), "the body is gone: {}", lines[5]);
        assert!(
            lines[6].contains("::scopecheck::kernel_name(k, \"k\")"),
            "the stub is registered for cudaLaunchKernel: {}",
            lines[6]
        );
        assert!(
            lines[10]
                .contains("::scopecheck::Launch(\"k\", __FILE__, __LINE__, 1, 2).run(k, d, 7)"),
            "{}",
            lines[10]
        );
        assert_eq!(s.launches, 1);
        assert_eq!(s.symbols, 1);
        assert_eq!(
            s.kernels,
            vec![Kernel {
                name: "k".into(),
                params: vec![
                    Param::Pointer {
                        elem: "int".into(),
                        name: "out".into()
                    },
                    Param::Scalar {
                        ty: "unsigned".into()
                    }
                ],
                template: false
            }]
        );
    }
}
