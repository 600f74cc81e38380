//! The partial SC order `psc` of RC11 (Lahav et al., PLDI 2017, "Repairing sequential consistency
//! in C/C++11"), kept only between events in each other's scope:
//!
//! `scb = sb ∪ (sb≠loc ; hb ; sb≠loc) ∪ (hb ∩ loc) ∪ mo ∪ rb`
//! `psc_base = ([E_sc] ∪ [F_sc] ; hb?) ; scb ; ([E_sc] ∪ hb? ; [F_sc])`
//! `psc_F = [F_sc] ; (hb ∪ hb ; eco ; hb) ; [F_sc]`

use scopecheck_explore::{Graph, Relation};

use super::scope::{is_fence, is_seq_cst};

pub fn psc(g: &Graph, hb: &Relation, mo: &Relation, rb: &Relation, eco: &Relation) -> Relation {
    let n = g.len();
    let ev = |i: usize| &g.events[i];
    let id = |keep: &dyn Fn(usize) -> bool| Relation::identity_where(n, keep);
    let sc = id(&|i| is_seq_cst(ev(i)));
    // Without SC events psc is empty.
    if sc.is_empty() {
        return sc;
    }
    let f_sc = id(&|i| is_seq_cst(ev(i)) && is_fence(ev(i)));
    let mem = |i: usize| ev(i).kind.is_memory();
    let sb_nl = Relation::from_fn(n, |i, j| {
        g.po.contains(i, j) && !(mem(i) && mem(j) && g.same_loc.contains(i, j))
    });
    let mut scb = g.po.clone();
    scb.union_with(&sb_nl.compose(hb).compose(&sb_nl));
    scb.union_with(&hb.intersect(&g.same_loc));
    scb.union_with(mo);
    scb.union_with(rb);
    let hb_opt = {
        let mut r = hb.clone();
        for i in 0..n {
            r.insert(i, i);
        }
        r
    };
    let mut left = sc.clone();
    left.union_with(&f_sc.compose(&hb_opt));
    let mut right = sc;
    right.union_with(&hb_opt.compose(&f_sc));
    let mut psc = left.compose(&scb).compose(&right);
    let mut fences = hb.clone();
    fences.union_with(&hb.compose(eco).compose(hb));
    psc.union_with(&f_sc.compose(&fences).compose(&f_sc));
    psc
}
