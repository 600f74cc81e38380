//! The device part of a `.cu` file, as NVRTC must see it: NVRTC compiles device code only and
//! rejects every host function, so the host part (`main`, the harness, host helpers, host
//! variables, host-only headers) is blanked out, each character a space and every newline
//! kept, so that NVRTC's line numbers and the PTX's `.loc` lines are the user's
//! (../shared/docs/NVRTC.md, "What it accepts").
//!
//! The file is read with the same grammar as the language-level front-end, as written (NVRTC
//! runs its own preprocessor with the real headers). Blanked: a function whose declaration
//! names neither `__global__` nor `__device__`; a namespace-scope variable that is not
//! `__device__`, `__shared__`, `__constant__` or `__managed__` and not a compile-time constant
//! (`const`/`constexpr`, which device code may use); an `#include` of a host header (the C and
//! C++ standard library, `cuda_runtime.h`). Types, templates of types, `using`, `typedef`,
//! macros and namespaces stay. `<cstdint>`/`<stdint.h>` become libcu++'s `<cuda/std/cstdint>`, which
//! gives the fixed-width types at namespace scope under NVRTC.

use tree_sitter::Node;

/// Headers device code may include as they are (NVRTC finds them in the pip packages or the
/// CUDA toolkit).
const DEVICE_HEADERS: &[&str] = &[
    "cuda/",
    "cub/",
    "thrust/",
    "nv/",
    "cooperative_groups",
    "cuda_fp16",
    "cuda_bf16",
    "mma.h",
    "sm_",
    "crt/",
];

/// What replaces `#include <cstdint>` and `<stdint.h>`, on one line: libcu++'s header, which
/// under NVRTC declares the fixed-width types in the global namespace too (typedefs of our own
/// would clash with that declaration whenever `<cuda/atomic>` pulls it in).
const FIXED_WIDTH_TYPEDEFS: &str = "#include <cuda/std/cstdint>";

/// `source` with its host part blanked, for NVRTC. `None` when the grammar cannot read the
/// file (the caller reports the language-level front-end's syntax error instead).
pub fn device_source(source: &str) -> Option<String> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(source, None)?;
    // The walk below recurses into nested scopes: a file nested too deeply is left to the
    // language-level front-end's error.
    crate::nesting::check_tree(tree.root_node()).ok()?;
    let mut out = source.as_bytes().to_vec();
    let mut replace: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    visit_scope(tree.root_node(), source, &mut out, &mut replace);
    // Replacements go last to first, so that earlier ranges keep their offsets; each keeps its
    // line (it replaces text on one line and is no longer than... any length: it ends the line).
    replace.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut text = String::from_utf8(out).ok()?;
    for (r, with) in replace {
        text.replace_range(r, with);
    }
    Some(text)
}

/// The children of a scope (the file, a namespace body, a linkage block, a preprocessor
/// conditional), each kept or blanked.
fn visit_scope(
    scope: Node,
    source: &str,
    out: &mut [u8],
    replace: &mut Vec<(std::ops::Range<usize>, &'static str)>,
) {
    let mut cursor = scope.walk();
    for child in scope.named_children(&mut cursor) {
        match child.kind() {
            "function_definition" | "declaration" | "template_declaration"
                if is_host(child, source) =>
            {
                blank(child, out);
            }
            "preproc_include" => {
                let path = child
                    .child_by_field_name("path")
                    .and_then(|p| p.utf8_text(source.as_bytes()).ok())
                    .unwrap_or("");
                let inner = path.trim_matches(|c| c == '<' || c == '>' || c == '"');
                if matches!(inner, "cstdint" | "stdint.h") {
                    // The directive ends at the line's end: libcu++'s takes its place.
                    let r = child.start_byte()..line_end(source, child.start_byte());
                    replace.push((r, FIXED_WIDTH_TYPEDEFS));
                } else if matches!(inner, "climits" | "limits.h") {
                    let r = child.start_byte()..line_end(source, child.start_byte());
                    replace.push((r, "#include <cuda/std/climits>"));
                } else if !path.starts_with('"')
                    && !DEVICE_HEADERS.iter().any(|h| inner.starts_with(h))
                {
                    // A user's own header (`"x.h"`) stays: NVRTC is given it with its host
                    // code blanked (`ptx_view`).
                    blank(child, out);
                }
            }
            "namespace_definition" | "linkage_specification" => {
                if let Some(body) = child.child_by_field_name("body") {
                    visit_scope(body, source, out, replace);
                }
            }
            "declaration_list" | "preproc_if" | "preproc_ifdef" | "preproc_else"
            | "preproc_elif" | "preproc_elifdef" => visit_scope(child, source, out, replace),
            _ => {}
        }
    }
}

/// Whether a namespace-scope function, variable or template is host code.
fn is_host(node: Node, source: &str) -> bool {
    // What comes before the body (or the whole declaration): the specifiers say where it runs.
    let head_end = node
        .child_by_field_name("body")
        .map_or(node.end_byte(), |b| b.start_byte());
    let head = &source[node.start_byte()..head_end];
    let words: Vec<&str> = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    if has("__global__") || has("__device__") {
        return false;
    }
    match node.kind() {
        "function_definition" => true,
        "template_declaration" => {
            // A template of a type (`template <int N> struct S {...}`) stays; a template of a
            // host function goes.
            let mut c = node.walk();
            let inner = node
                .named_children(&mut c)
                .find(|n| n.kind() == "function_definition" || n.kind() == "declaration");
            inner.is_some_and(|n| n.kind() == "function_definition")
        }
        _ => {
            // A declaration: a function prototype or a variable. Device variables carry their
            // space; compile-time constants are usable on both sides.
            let device_var = ["__shared__", "__constant__", "__managed__"]
                .iter()
                .any(|w| has(w));
            let constant = has("constexpr") || has("const");
            let declares_something = node.child_by_field_name("declarator").is_some();
            declares_something && !device_var && !constant
        }
    }
}

/// Replaces every character of `node` but newlines with a space.
fn blank(node: Node, out: &mut [u8]) {
    for b in &mut out[node.start_byte()..node.end_byte()] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

fn line_end(source: &str, from: usize) -> usize {
    source[from..].find('\n').map_or(source.len(), |k| from + k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(|l| l.trim_end().to_string()).collect()
    }

    /// Host functions, host variables and host headers are blanked; kernels, device
    /// functions, device variables, types and constants stay, each on its own line.
    #[test]
    fn the_host_part_is_blanked_line_for_line() {
        let src = "#include <cstdio>\n#include <cuda/atomic>\n#include <cstdint>\nconstexpr int N = 4;\nstruct Pair { int a, b; };\n__device__ int flag;\nint host_copy[4];\n__device__ int twice(int x) { return 2 * x; }\n__global__ void k(int* p) { p[0] = twice(N); }\nstatic void check(int* p) { printf(\"%d\\n\", p[0]); }\nint main() {\n  k<<<1, 1>>>(nullptr);\n  return 0;\n}\n";
        let out = device_source(src).expect("parses");
        assert_eq!(out.lines().count(), src.lines().count());
        let l = lines(&out);
        assert_eq!(l[0], "");
        assert_eq!(l[1], "#include <cuda/atomic>");
        assert_eq!(l[2], "#include <cuda/std/cstdint>");
        assert_eq!(l[3], "constexpr int N = 4;");
        assert_eq!(l[4], "struct Pair { int a, b; };");
        assert_eq!(l[5], "__device__ int flag;");
        assert_eq!(l[6], "");
        assert_eq!(l[7], "__device__ int twice(int x) { return 2 * x; }");
        assert_eq!(l[8], "__global__ void k(int* p) { p[0] = twice(N); }");
        assert_eq!(l[9], "");
        for (k, line) in l.iter().enumerate().skip(10) {
            assert_eq!(line, "", "line {}", k + 1);
        }
    }

    /// Inside namespaces and preprocessor conditionals too; a template of a type stays, a
    /// template host function goes.
    #[test]
    fn nested_scopes_are_walked() {
        let src = "namespace lib {\n__global__ void k() {}\nvoid host_only() {}\n}\n#ifdef DEBUG\nvoid dump() {}\n#endif\ntemplate <int N> struct Buf { int v[N]; };\ntemplate <typename T> void fill(T* p) {}\ntemplate <typename T> __device__ void put(T* p) { *p = 0; }\n";
        let l = lines(&device_source(src).expect("parses"));
        assert_eq!(l[1], "__global__ void k() {}");
        assert_eq!(l[2], "");
        assert_eq!(l[5], "");
        assert_eq!(l[7], "template <int N> struct Buf { int v[N]; };");
        assert_eq!(l[8], "");
        assert_eq!(
            l[9],
            "template <typename T> __device__ void put(T* p) { *p = 0; }"
        );
    }
}
