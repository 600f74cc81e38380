//! Two-dimensional arrays (`__shared__ float t[32][33]`, `__device__ int g[4][8]`): their
//! elements are the locations of a one-dimensional array of `H * W`, row after row, as C lays
//! them out, so `t[i][j]` is element `i * W + j` and every analysis sees the same locations as
//! for `t[i * W + j]`. What C adds is the inner bound: `t[i][j]` with `j` outside `0..W` is
//! undefined behaviour even where element `i * W + j` lies in the array. Both indices pass
//! through [`BinOp::Bound`] against their dimension: a constant inside folds away, one
//! outside (a constant, with a warning, or a value computed at run time) faults at the
//! access's line when it runs, a fault of the test as any out-of-bounds access is, not a
//! refusal of the file.
//!
//! A row (`t[i]`) decays to a pointer to its first element, indexed from there like any
//! pointer (the inner bound is then the array's), and `(int *)t` is `&t[0][0]`. The array
//! itself used as a pointer (`t + 1`, passing `t` to a function) would step a row at a time,
//! which a pointer to elements does not: refused ([`Lw::pointer_named`]).

use scopecheck_ir::{BinOp, IntType};
use tree_sitter::Node;

use super::{err, field, Binding, Lw, Ptr, Val, R};

impl<'c, 's, 't> Lw<'c, 's, 't> {
    /// The one index of a subscript `a[i]`.
    pub(super) fn the_index(&self, e: Node<'t>) -> R<Node<'t>> {
        let idx = field(e, "indices")?;
        let mut c = idx.walk();
        let items: Vec<Node> = idx.named_children(&mut c).collect();
        match items.as_slice() {
            [i] => Ok(*i),
            _ => err(idx, "expected one index"),
        }
    }

    /// The two-dimensional array the name `e` denotes (a `__shared__`, `__device__` or host
    /// array declared `t[H][W]`): its first element and its row length `W`.
    pub(super) fn two_dimensional(&mut self, e: Node<'t>) -> R<Option<(Ptr, usize)>> {
        if e.kind() != "identifier" {
            return Ok(None);
        }
        let name = self.text(e);
        let p = match self.build.lookup(name) {
            Some(Binding::Shared(d)) => self.shared_ptr(d, e)?.0,
            Some(Binding::HostArr(p)) => p,
            Some(_) => return Ok(None),
            None => match self.object(name, e)? {
                Some((p, _)) => p,
                None => return Ok(None),
            },
        };
        Ok(self.cx.arrays[p.arr].row.map(|w| (p, w)))
    }

    /// A row `t[i]` of a two-dimensional array: a pointer to its first element, and the row
    /// length; `None` when `e` is not one.
    pub(super) fn row(&mut self, e: Node<'t>) -> R<Option<(Ptr, usize)>> {
        if e.kind() != "subscript_expression" {
            return Ok(None);
        }
        let Some((p, w)) = self.two_dimensional(field(e, "argument")?)? else {
            return Ok(None);
        };
        let i = self.the_index(e)?;
        let stride = self.stride(p.strukt);
        let rows = self.cx.arrays[p.arr].elems.len() / (stride as usize * w);
        let v = self.bounded(i, rows, e)?;
        let row = self.offset_by(p, v, stride * w as i64, false, i, e)?;
        Ok(Some((row, w)))
    }

    /// Element `j` of the row `row` of `len` elements (`t[i][j]`), the index checked against
    /// the row (module documentation).
    pub(super) fn element_of_row(
        &mut self,
        row: Ptr,
        len: usize,
        j: Node<'t>,
        e: Node<'t>,
    ) -> R<Ptr> {
        let stride = self.stride(row.strukt);
        let v = self.bounded(j, len, e)?;
        self.offset_by(row, v, stride, false, j, e)
    }

    /// The index `i` checked against a dimension of `n` ([`BinOp::Bound`], at the access
    /// `e`): a constant inside folds to itself; one outside is emitted as it is, which faults
    /// at its line when it runs (with a warning, as every constant operation without a value).
    fn bounded(&mut self, i: Node<'t>, n: usize, e: Node<'t>) -> R<Val> {
        let v = self.val(i, None)?;
        let wide = self.convert(v, IntType::S64, None, i);
        Ok(self.binary(
            BinOp::Bound,
            wide,
            Val::imm(n as i64, IntType::S64),
            None,
            e,
        ))
    }
}
