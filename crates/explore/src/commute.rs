//! Commuting atomics (docs/explore.md, "Commuting atomics").
//!
//! A location is *commuting* when every access any thread's code may make to it is a relaxed
//! RMW of one commutative operation whose result nobody reads, with nothing after it in its
//! thread that could observe through it which write it read (an acquire fence, a barrier), in
//! threads that all include each other in the RMWs' scopes, and with no SC operation anywhere.
//! Then the coherence order among those RMWs is seen only through the final value, which every
//! order gives alike. The explorer makes each such RMW a *blind update*: a write with no read
//! half, placed last in coherence when it is added (the revisiting search) or ordered at the
//! leaf (the hole search). At a leaf, the updates of each location are chained in one order
//! the model accepts, their values computed along it, and the execution stands for every order
//! the model would accept in its place: the linear extensions of the order it forces among them.

use scopecheck_ir::{
    FenceOrder, InstrKind, MemorySpace, Operand, Order, Placement, Program, RmwKind, RmwOp, Value,
};

use crate::relation::Relation;
use crate::statics::ThreadStatics;
use crate::{count::Count, Graph, Model};

/// The class of operations that commute with each other on one location: `add` and `sub` are
/// both additions modulo the width; `inc` and `dec` commute only with the same bound (each is
/// then one function applied again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpClass {
    Add,
    And,
    Or,
    Xor,
    Min,
    Max,
    Inc(Value),
    Dec(Value),
}

fn op_class(op: RmwOp, operand: Operand) -> Option<OpClass> {
    Some(match op {
        RmwOp::Add | RmwOp::Sub => OpClass::Add,
        RmwOp::And => OpClass::And,
        RmwOp::Or => OpClass::Or,
        RmwOp::Xor => OpClass::Xor,
        RmwOp::Min => OpClass::Min,
        RmwOp::Max => OpClass::Max,
        RmwOp::Inc | RmwOp::Dec => {
            let Operand::Imm(v) = operand else {
                return None;
            };
            if op == RmwOp::Inc {
                OpClass::Inc(v)
            } else {
                OpClass::Dec(v)
            }
        }
        RmwOp::Exch => return None,
    })
}

/// Whether a program has an SC operation (an SC access or `fence.sc`): the partial SC order
/// can relate the updates' threads through their coherence order.
fn has_sc(program: &Program) -> bool {
    program.threads.iter().flat_map(|t| &t.code).any(|i| {
        matches!(
            i.kind,
            InstrKind::Fence {
                order: FenceOrder::Sc,
                ..
            } | InstrKind::Load {
                order: Order::SeqCst,
                ..
            } | InstrKind::Store {
                order: Order::SeqCst,
                ..
            } | InstrKind::Rmw {
                order: Order::SeqCst,
                ..
            }
        )
    })
}

/// Whether an instruction reachable from `pc` (itself excluded) could make a read before it the
/// start of synchronization: an acquire fence or a barrier (PTX counts a barrier's wait as an
/// acquire fence of a pattern), or a warp collective.
fn observer_after(code: &[scopecheck_ir::Instr], pc: usize) -> bool {
    let mut seen = vec![false; code.len() + 1];
    let mut stack: Vec<usize> = code[pc].successors(pc);
    while let Some(p) = stack.pop() {
        if p >= code.len() || seen[p] {
            continue;
        }
        seen[p] = true;
        match code[p].kind {
            InstrKind::Fence {
                order: FenceOrder::Acquire | FenceOrder::AcqRel | FenceOrder::Sc,
                ..
            }
            | InstrKind::Barrier { .. }
            | InstrKind::Warp { .. } => return true,
            _ => {}
        }
        stack.extend(code[p].successors(p));
    }
    false
}

/// An access to a location other than an update: allowed only before every update or after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Other {
    Load,
    Store,
    /// Anything else (an RMW that is not an update): the location is not commuting.
    Never,
}

/// What the code of all threads does to each location.
struct Uses {
    /// The class and type of every update seen, or `None` once some access disqualifies it.
    class: Vec<Option<Option<(OpClass, scopecheck_ir::IntType)>>>,
    /// The (thread, scope) of each update.
    updates: Vec<Vec<(usize, scopecheck_ir::Scope)>>,
    /// The other accesses, by thread.
    others: Vec<Vec<(usize, Other)>>,
}

/// The update an instruction would be (class, type, scope), if it may be one.
fn update_of(
    thread: &scopecheck_ir::Thread,
    statics: &ThreadStatics,
    pc: usize,
) -> Option<(OpClass, scopecheck_ir::IntType, scopecheck_ir::Scope)> {
    match thread.code[pc].kind {
        InstrKind::Rmw {
            kind: RmwKind::Op(op, operand),
            ty,
            order: Order::Relaxed,
            scope,
            ..
        } if matches!(thread.placement, Placement::Device(_))
            && statics.rmw_result_dead(pc)
            && !observer_after(&thread.code, pc)
            && (!statics.is_loop_read(pc) || never_writes_back(op, operand, ty)) =>
        {
            // Float additions do not commute: each rounds (1e8 + 1 - 1e8 is 0, 1e8 - 1e8 + 1
            // is 1), so the order of float atomic adds is explored; min and max commute.
            op_class(op, operand)
                .filter(|c| !ty.float || matches!(c, OpClass::Min | OpClass::Max))
                .map(|c| (c, ty, scope))
        }
        _ => None,
    }
}

/// The locations each instruction may access on any run of its thread from the start: run
/// forward from the launch's registers (`reach`), so an access through a kernel's pointer
/// parameter plus its thread index is one element, not every location; where that walk is too
/// long, every location the address may name.
struct Located(Vec<Option<Vec<Vec<scopecheck_ir::LocId>>>>);

impl Located {
    fn new(program: &Program) -> Self {
        Located(
            program
                .threads
                .iter()
                .map(|t| crate::reach::instruction_locations(program, t))
                .collect(),
        )
    }

    fn at(
        &self,
        program: &Program,
        t: usize,
        pc: usize,
        addr: &scopecheck_ir::Address,
    ) -> Vec<scopecheck_ir::LocId> {
        match &self.0[t] {
            Some(per) => per[pc].clone(),
            None => program.possible_locations(addr),
        }
    }
}

fn uses(program: &Program, statics: &[ThreadStatics], located: &Located) -> Uses {
    let n = program.locations.len();
    let mut u = Uses {
        class: vec![Some(None); n],
        updates: vec![vec![]; n],
        others: vec![vec![]; n],
    };
    for (t, thread) in program.threads.iter().enumerate() {
        for (pc, instr) in thread.code.iter().enumerate() {
            let Some(addr) = instr.kind.address() else {
                continue;
            };
            let update = update_of(thread, &statics[t], pc);
            let other = match instr.kind {
                InstrKind::Load { .. } => Other::Load,
                InstrKind::Store { .. } => Other::Store,
                _ => Other::Never,
            };
            for l in located.at(program, t, pc, addr) {
                let l = l.0 as usize;
                let Some(seen) = u.class[l] else { continue };
                match update {
                    Some((c, ty, scope)) if seen.is_none_or(|s| s == (c, ty)) => {
                        u.class[l] = Some(Some((c, ty)));
                        u.updates[l].push((t, scope));
                    }
                    Some(_) => u.class[l] = None,
                    None => u.others[l].push((t, other)),
                }
            }
        }
    }
    u
}

/// Marks in each thread's statics the RMWs that are blind updates of a commuting location and
/// the loads that read such a location after every update of it (`ThreadStatics::commutes`,
/// `ThreadStatics::final_load`). Nothing is marked when `enabled` is false (`--commute off`).
pub(crate) fn mark(program: &Program, statics: &mut [ThreadStatics], enabled: bool) {
    if !enabled || has_sc(program) {
        return;
    }
    let located = Located::new(program);
    let uses = uses(program, statics, &located);
    let successors = crate::search::launch_successors(program);
    // Thread `t` starts after every updater of `l` finished, or every updater starts after it.
    let after = |l: usize, t: usize| {
        uses.updates[l]
            .iter()
            .all(|&(u, _)| successors[u].contains(&t))
    };
    let before = |l: usize, t: usize| {
        uses.updates[l]
            .iter()
            .all(|&(u, _)| successors[t].contains(&u))
    };
    let n = program.locations.len();
    let commuting: Vec<bool> = (0..n)
        .map(|l| {
            let updates = &uses.updates[l];
            // Stores before the updates, from one thread (program order orders them), and
            // loads before or after them.
            let mut storers = uses.others[l]
                .iter()
                .filter(|o| o.1 == Other::Store)
                .map(|o| o.0)
                .collect::<Vec<_>>();
            storers.dedup();
            let others_ok = storers.len() <= 1
                && uses.others[l].iter().all(|&(t, o)| match o {
                    Other::Load => after(l, t) || before(l, t),
                    Other::Store => before(l, t),
                    Other::Never => false,
                });
            matches!(uses.class[l], Some(Some(_)))
                && others_ok
                && updates
                    .iter()
                    .any(|&(u, _)| updates.iter().any(|&(v, _)| u != v))
                && matches!(
                    program.locations[l].space,
                    MemorySpace::Global | MemorySpace::Shared | MemorySpace::Managed
                )
                && updates.iter().all(|&(t, s)| {
                    updates.iter().all(|&(u, r)| {
                        let (pt, pu) =
                            (&program.threads[t].placement, &program.threads[u].placement);
                        t == u || (pt.scope_includes(s, pu) && pu.scope_includes(r, pt))
                    })
                })
        })
        .collect();
    for (t, thread) in program.threads.iter().enumerate() {
        let locs = |pc: usize, i: &scopecheck_ir::Instr| -> Vec<usize> {
            i.kind.address().map_or(vec![], |a| {
                located
                    .at(program, t, pc, a)
                    .iter()
                    .map(|l| l.0 as usize)
                    .collect()
            })
        };
        let updates: Vec<bool> = thread
            .code
            .iter()
            .enumerate()
            .map(|(pc, i)| {
                matches!(i.kind, InstrKind::Rmw { .. }) && locs(pc, i).iter().all(|&l| commuting[l])
            })
            .collect();
        let final_loads: Vec<bool> = thread
            .code
            .iter()
            .enumerate()
            .map(|(pc, i)| {
                matches!(i.kind, InstrKind::Load { .. })
                    && locs(pc, i).iter().all(|&l| !commuting[l] || after(l, t))
            })
            .collect();
        statics[t].set_commutes(updates, final_loads, commuting.clone().into());
    }
}

/// The value `loc` holds before its updates: that of the last store to it (from the one thread
/// that may store there, before every update: `mark`), else its initial value.
fn base_value<'a>(
    program: &Program,
    statics: &[ThreadStatics],
    traces: impl Iterator<Item = &'a crate::Trace>,
    loc: scopecheck_ir::LocId,
) -> Value {
    let mut v = program.location(loc).init;
    for (t, trace) in traces.enumerate() {
        for e in &trace.events {
            if let crate::EventKind::Write { loc: l, value, .. } = e.kind {
                if l == loc && !statics[t].commutes(e.instr) {
                    v = value;
                }
            }
        }
    }
    v
}

/// The value a location holds once every blind update of it in `traces` is made: its initial
/// value with each update's operation applied, in any order (they commute). What a load that
/// starts after every updater finished reads.
pub(crate) fn final_value<'a>(
    program: &Program,
    statics: &[ThreadStatics],
    traces: impl Iterator<Item = &'a crate::Trace>,
    loc: scopecheck_ir::LocId,
) -> Value {
    let traces: Vec<&crate::Trace> = traces.collect();
    let mut v = base_value(program, statics, traces.iter().copied(), loc);
    for (t, trace) in traces.into_iter().enumerate() {
        for e in &trace.events {
            let crate::EventKind::Write { loc: l, value, .. } = e.kind else {
                continue;
            };
            if l != loc || !statics[t].commutes(e.instr) {
                continue;
            }
            if let InstrKind::Rmw {
                kind: RmwKind::Op(op, _),
                ty,
                ..
            } = program.threads[t].code[e.instr].kind
            {
                v = op.apply(ty, v, value);
            }
        }
    }
    v
}

/// Whether an RMW never writes back what it read, whatever it reads: its iterations of a loop
/// are never pure (docs/loops.md), in every coherence order alike.
fn never_writes_back(op: RmwOp, operand: Operand, ty: scopecheck_ir::IntType) -> bool {
    !ty.float
        && matches!(op, RmwOp::Add | RmwOp::Sub | RmwOp::Xor)
        && matches!(operand, Operand::Imm(v) if ty.wrap(v) != 0)
}

/// The blind updates of a leaf, chained per location, with what the leaf stands for.
pub(crate) struct Chains {
    /// Per commuting location with updates: the updates in the order chosen.
    pub chains: Vec<Vec<usize>>,
    /// How many coherence orders of the updates the model accepts: the product over locations
    /// of the linear extensions of the order it forces among them.
    pub orders: Count,
    /// Under a model whose `po ∪ rf` is acyclic, the orders of two locations constrain each
    /// other when the forced order leads from one location's updates to another's and back:
    /// an update's read reads its predecessor, so the chains enter `po ∪ rf`, and choosing
    /// both chains against each other could close a cycle. The product above then overcounts;
    /// the search must run without the reduction.
    pub entangled: bool,
}

/// Whether graph event `e` is a blind update.
pub(crate) fn is_update(g: &Graph, statics: &[ThreadStatics], e: usize) -> bool {
    let ev = &g.events[e];
    ev.kind.is_write()
        && match (ev.thread, ev.instr) {
            (Some(t), Some(pc)) => statics[t.0 as usize].commutes(pc),
            _ => false,
        }
}

/// The order every consistent execution of `g` keeps between its blind updates `updates`:
/// coherence the model forces between them (happens-before, causality), and for a model whose
/// `po ∪ rf` is acyclic also `(po ∪ rf)+` between them (an update's read reads its coherence
/// predecessor, so the chain is part of `po ∪ rf`). Returned with `(po ∪ rf)+` itself (empty
/// for other models), which relates updates of different locations too. Coherence edges of
/// other locations are no constraint: a path through them orders nothing here.
fn forced_order(
    g: &Graph,
    model: &dyn Model,
    statics: &[ThreadStatics],
    updates: &[usize],
) -> (Relation, Relation) {
    // The loads of commuting locations read the last update of whatever chain is chosen:
    // what they read is no constraint on the chain (without this, Coherence would force
    // every other update before the one a load reads).
    let final_load = |r: usize| {
        let e = &g.events[r];
        match (e.thread, e.instr, e.kind.loc()) {
            (Some(t), Some(pc), Some(l)) => statics[t.0 as usize].reads_final(pc, l),
            _ => false,
        }
    };
    let mut porf = Relation::new(g.len());
    if model.porf_acyclic() {
        porf.union_with(&g.po);
        for r in g.reads.iter().filter(|&r| !final_load(r)) {
            if let Some(w) = g.rf[r] {
                porf.insert(w, r);
            }
        }
        porf.close();
    }
    let coherence = if g.reads.iter().any(|r| final_load(r) && g.rf[r].is_some()) {
        let mut h = g.clone();
        for r in g.reads.iter().filter(|&r| final_load(r)) {
            h.rf[r] = None;
        }
        model.coherence_forced(&h)
    } else {
        model.coherence_forced(g)
    };
    let mut forced = Relation::new(g.len());
    for &a in updates {
        for &b in updates {
            if a != b && (porf.contains(a, b) || coherence.contains(a, b)) {
                forced.insert(a, b);
            }
        }
    }
    forced.close();
    (forced, porf)
}

/// The updates of a leaf chained per location. `placed`: the coherence order the revisiting
/// search placed (their order there); otherwise the least linear extension of the forced
/// order by graph index. `None` when the leaf has no update.
pub(crate) fn chains(
    g: &Graph,
    model: &dyn Model,
    statics: &[ThreadStatics],
    placed: Option<&[Vec<usize>]>,
) -> Option<Chains> {
    let mut by_loc: Vec<Vec<usize>> = vec![vec![]; g.program.locations.len()];
    for e in g.writes.iter() {
        if is_update(g, statics, e) {
            by_loc[g.events[e].kind.loc().expect("a write").0 as usize].push(e);
        }
    }
    if by_loc.iter().all(Vec::is_empty) {
        return None;
    }
    let all: Vec<usize> = by_loc.iter().flatten().copied().collect();
    let (forced, porf) = forced_order(g, model, statics, &all);
    let mut orders: Count = 1;
    let mut chains = vec![];
    for (l, updates) in by_loc.iter().enumerate() {
        if updates.is_empty() {
            continue;
        }
        orders = orders.saturating_mul(linear_extensions(&forced, updates));
        let chain = match placed {
            Some(co) => co[l]
                .iter()
                .copied()
                .filter(|&e| is_update(g, statics, e))
                .collect(),
            None => least_extension(&forced, updates),
        };
        chains.push(chain);
    }
    let mut entangled = model.porf_acyclic() && locations_cycle(g, &porf, &all);
    if entangled && orders <= JOINT_LIMIT {
        let locs: Vec<&Vec<usize>> = by_loc.iter().filter(|u| !u.is_empty()).collect();
        let (count, first) = joint_orders(&forced, &porf, &locs);
        orders = count;
        if placed.is_none() {
            chains = first.expect("the leaf's own chains are one choice");
        }
        entangled = false;
    }
    Some(Chains {
        chains,
        orders,
        entangled,
    })
}

/// Entangled leaves with at most this many combinations of per-location orders are counted by
/// trying each combination; larger ones run the full search instead.
const JOINT_LIMIT: Count = 100_000;

/// The combinations of one linear extension of `forced` per location (`locs`: each location's
/// updates) that keep `(po ∪ rf)+` with the chains acyclic: how many, and the first.
fn joint_orders(
    forced: &Relation,
    porf: &Relation,
    locs: &[&Vec<usize>],
) -> (Count, Option<Vec<Vec<usize>>>) {
    let all: Vec<usize> = locs.iter().flat_map(|u| u.iter().copied()).collect();
    let index = |e: usize| all.iter().position(|&x| x == e).expect("an update");
    let mut base = Relation::new(all.len());
    for (i, &a) in all.iter().enumerate() {
        for (j, &b) in all.iter().enumerate() {
            if porf.contains(a, b) {
                base.insert(i, j);
            }
        }
    }
    let options: Vec<Vec<Vec<usize>>> = locs.iter().map(|u| all_extensions(forced, u)).collect();
    let mut pick = vec![0usize; options.len()];
    let (mut count, mut first) = (0 as Count, None);
    loop {
        let mut r = base.clone();
        for (k, &p) in pick.iter().enumerate() {
            for w in options[k][p].windows(2) {
                r.insert(index(w[0]), index(w[1]));
            }
        }
        if r.is_acyclic() {
            count += 1;
            if first.is_none() {
                first = Some(
                    (0..pick.len())
                        .map(|k| options[k][pick[k]].clone())
                        .collect(),
                );
            }
        }
        // The next combination (an odometer).
        let Some(k) = (0..pick.len())
            .rev()
            .find(|&k| pick[k] + 1 < options[k].len())
        else {
            return (count, first);
        };
        pick[k] += 1;
        pick[k + 1..].iter_mut().for_each(|p| *p = 0);
    }
}

/// Every linear extension of `forced` on `items`.
fn all_extensions(forced: &Relation, items: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![];
    // Depth first on an explicit stack: (placed so far, left).
    let mut stack = vec![(vec![], items.to_vec())];
    while let Some((placed, left)) = stack.pop() {
        if left.is_empty() {
            out.push(placed);
            continue;
        }
        for (k, &e) in left.iter().enumerate().rev() {
            if left.iter().any(|&o| o != e && forced.contains(o, e)) {
                continue;
            }
            let mut p = placed.clone();
            p.push(e);
            let mut l = left.clone();
            l.remove(k);
            stack.push((p, l));
        }
    }
    out
}

/// Whether `(po ∪ rf)+`, seen between the locations of the updates it relates, has a
/// cycle through two locations or more. Without one, any cycle of `po ∪ rf` with the chains
/// would have to leave a location's updates and come back to them, so the chains can be
/// chosen per location, each a linear extension of the forced order on its location
/// (docs/explore.md, "Commuting atomics").
fn locations_cycle(g: &Graph, porf: &Relation, updates: &[usize]) -> bool {
    let loc = |e: usize| g.events[e].kind.loc().expect("a write").0 as usize;
    let n = g.program.locations.len();
    let mut between = Relation::new(n);
    for &a in updates {
        for &b in updates {
            if loc(a) != loc(b) && porf.contains(a, b) {
                between.insert(loc(a), loc(b));
            }
        }
    }
    !between.is_acyclic()
}

/// The linear extension of `forced` on `items` that takes, at each step, the least item none
/// of the others left is forced before.
fn least_extension(forced: &Relation, items: &[usize]) -> Vec<usize> {
    let mut left: Vec<usize> = items.to_vec();
    left.sort_unstable();
    let mut out = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let k = (0..left.len())
            .find(|&k| {
                !left
                    .iter()
                    .any(|&o| o != left[k] && forced.contains(o, left[k]))
            })
            .expect("an acyclic forced order has a minimal element");
        out.push(left.remove(k));
    }
    out
}

/// The number of linear extensions of `forced` restricted to `items`: by dynamic programming
/// over the sets already placed, as positions in per-thread chains (program order orders each
/// thread's updates, so a placed set is a prefix of each). Where no update is forced before
/// another thread's, the multinomial coefficient.
pub(crate) fn linear_extensions(forced: &Relation, items: &[usize]) -> Count {
    let n = items.len();
    // Chains: the items in a topological order, grouped greedily into chains of `forced`.
    let mut order: Vec<usize> = least_extension(forced, items);
    let mut chains: Vec<Vec<usize>> = vec![];
    'next: for e in order.drain(..) {
        for c in chains.iter_mut() {
            if forced.contains(*c.last().expect("a chain"), e) {
                c.push(e);
                continue 'next;
            }
        }
        chains.push(vec![e]);
    }
    let across = chains.iter().enumerate().any(|(i, a)| {
        chains
            .iter()
            .enumerate()
            .any(|(j, b)| i != j && a.iter().any(|&x| b.iter().any(|&y| forced.contains(x, y))))
    });
    if !across {
        // n! / (c1! c2! ...), exactly (`count::orbit_size` divides factorials).
        let sizes: Vec<usize> = chains.iter().map(Vec::len).collect();
        return crate::count::orbit_size(&[n], std::iter::once(&sizes[..]));
    }
    // Ways to place the rest from a state (positions in each chain).
    let mut memo: std::collections::HashMap<Vec<u32>, Count> = Default::default();
    let mut stack: Vec<(Vec<u32>, bool)> = vec![(vec![0; chains.len()], false)];
    while let Some((state, expanded)) = stack.pop() {
        if memo.contains_key(&state) {
            continue;
        }
        let placed: u32 = state.iter().sum();
        if placed as usize == n {
            memo.insert(state, 1);
            continue;
        }
        let nexts: Vec<Vec<u32>> = (0..chains.len())
            .filter_map(|c| {
                let p = state[c] as usize;
                let e = *chains[c].get(p)?;
                // Every item forced before `e` is placed.
                let ready = chains.iter().enumerate().all(|(d, chain)| {
                    chain[state[d] as usize..]
                        .iter()
                        .all(|&x| x == e || !forced.contains(x, e))
                });
                ready.then(|| {
                    let mut s = state.clone();
                    s[c] += 1;
                    s
                })
            })
            .collect();
        if expanded {
            let total = nexts
                .iter()
                .fold(0 as Count, |acc, s| acc.saturating_add(memo[s]));
            memo.insert(state, total);
        } else {
            stack.push((state, true));
            stack.extend(
                nexts
                    .into_iter()
                    .filter(|s| !memo.contains_key(s))
                    .map(|s| (s, false)),
            );
        }
    }
    memo[&vec![0; chains.len()]]
}

/// Gives the updates of each chain their values: the location's initial value, then each
/// update applied to its predecessor's. An update's event holds its operand until then.
pub(crate) fn values(g: &Graph, statics: &[ThreadStatics], chain: &[usize]) -> Vec<Value> {
    let Some(&first) = chain.first() else {
        return vec![];
    };
    let loc = g.events[first].kind.loc().expect("a write");
    // From the last store before the updates (one thread's, in program order), if any.
    let mut v = g
        .writes
        .iter()
        .filter(|&w| g.events[w].kind.loc() == Some(loc) && g.events[w].thread.is_some())
        .filter(|&w| !is_update(g, statics, w))
        .last()
        .map_or(g.program.location(loc).init, |w| {
            g.events[w].kind.value().expect("a write has a value")
        });
    chain
        .iter()
        .map(|&e| {
            let ev = &g.events[e];
            let t = ev.thread.expect("an update of a thread").0 as usize;
            let instr = &g.program.threads[t].code[ev.instr.expect("an instruction")];
            let InstrKind::Rmw {
                kind: RmwKind::Op(op, _),
                ty,
                ..
            } = instr.kind
            else {
                unreachable!("an update is an RMW");
            };
            v = op.apply(ty, v, ev.kind.value().expect("an operand"));
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(n: usize, edges: &[(usize, usize)]) -> Relation {
        let mut r = Relation::new(n);
        for &(a, b) in edges {
            r.insert(a, b);
        }
        r.close();
        r
    }

    /// Every permutation of `items` that keeps `forced`: the count by brute force.
    fn brute(forced: &Relation, items: &[usize]) -> Count {
        fn go(forced: &Relation, left: &mut Vec<usize>, placed: &mut Vec<usize>) -> Count {
            if left.is_empty() {
                return 1;
            }
            let mut total = 0;
            for k in 0..left.len() {
                let e = left[k];
                if left.iter().any(|&o| o != e && forced.contains(o, e)) {
                    continue;
                }
                left.remove(k);
                placed.push(e);
                total += go(forced, left, placed);
                placed.pop();
                left.insert(k, e);
            }
            total
        }
        go(forced, &mut items.to_vec(), &mut vec![])
    }

    #[test]
    fn independent_chains_count_multinomially() {
        // Three threads of 2, 2 and 1 updates, each in program order: 5! / (2! 2! 1!) = 30.
        let r = relation(5, &[(0, 1), (2, 3)]);
        assert_eq!(linear_extensions(&r, &[0, 1, 2, 3, 4]), 30);
        // Eight unordered updates: 8! = 40320.
        let r = relation(8, &[]);
        assert_eq!(linear_extensions(&r, &(0..8).collect::<Vec<_>>()), 40320);
    }

    #[test]
    fn orders_across_chains_match_brute_force() {
        // A diamond and a chain crossing threads: counted by the dynamic programme and by
        // trying every permutation.
        let cases: Vec<(usize, Vec<(usize, usize)>)> = vec![
            (4, vec![(0, 1), (0, 2), (1, 3), (2, 3)]),
            (5, vec![(0, 1), (2, 3), (0, 3)]),
            (6, vec![(0, 1), (1, 2), (3, 4), (4, 5), (1, 4), (3, 2)]),
            (6, vec![(0, 5), (1, 2), (3, 4)]),
        ];
        for (n, edges) in cases {
            let r = relation(n, &edges);
            let items: Vec<usize> = (0..n).collect();
            assert_eq!(
                linear_extensions(&r, &items),
                brute(&r, &items),
                "{edges:?}"
            );
        }
    }

    #[test]
    fn the_least_extension_keeps_the_order() {
        let r = relation(4, &[(3, 0), (2, 1)]);
        assert_eq!(least_extension(&r, &[0, 1, 2, 3]), vec![2, 1, 3, 0]);
    }
}
