//! The launch's shape and the special registers (PTX ISA, "Special Registers").

use scopecheck_ir::{Span, Value};

use super::{Launch, LowerError, R};

pub(super) struct Geometry {
    grid: [u32; 3],
    block: [u32; 3],
    cluster: [u32; 3],
}

fn coords(i: u32, d: [u32; 3]) -> [u32; 3] {
    [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])]
}

fn linear(c: [u32; 3], d: [u32; 3]) -> u32 {
    c[0] + d[0] * (c[1] + d[1] * c[2])
}

impl Geometry {
    pub(super) fn new(l: &Launch, span: Span) -> R<Self> {
        for (what, d) in [("grid", l.grid), ("block", l.block), ("cluster", l.cluster)] {
            if d.contains(&0) {
                return Err(LowerError::new(
                    span,
                    format!("the launch's {what} dimensions {d:?} contain a 0"),
                ));
            }
        }
        if (0..3).any(|k| !l.grid[k].is_multiple_of(l.cluster[k])) {
            return Err(LowerError::new(
                span,
                format!(
                    "the grid {:?} is not a whole number of clusters {:?}",
                    l.grid, l.cluster
                ),
            ));
        }
        let total = l
            .grid
            .iter()
            .chain(&l.block)
            .try_fold(1u32, |n, &d| n.checked_mul(d));
        if total.is_none() {
            return Err(LowerError::new(span, "the launch has too many threads"));
        }
        Ok(Geometry {
            grid: l.grid,
            block: l.block,
            cluster: l.cluster,
        })
    }

    pub(super) fn blocks(&self) -> u32 {
        self.grid.iter().product()
    }

    pub(super) fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }

    /// The special registers of thread `t` of block `b` (both linear, x fastest).
    pub(super) fn specials(&self, b: u32, t: u32) -> Specials {
        let ctaid = coords(b, self.grid);
        let cluster_ctaid = [0, 1, 2].map(|k| ctaid[k] % self.cluster[k]);
        let clusterid = [0, 1, 2].map(|k| ctaid[k] / self.cluster[k]);
        let nclusterid = [0, 1, 2].map(|k| self.grid[k] / self.cluster[k]);
        Specials {
            tid: coords(t, self.block),
            ntid: self.block,
            ctaid,
            nctaid: self.grid,
            cluster_ctaid,
            cluster_nctaid: self.cluster,
            clusterid,
            nclusterid,
            cluster_ctarank: linear(cluster_ctaid, self.cluster),
            cluster_nctarank: self.cluster.iter().product(),
            cluster_linear: linear(clusterid, nclusterid),
            linear_tid: t,
            nwarps: self.threads_per_block().div_ceil(32),
        }
    }
}

/// The values of the special registers for one thread (PTX ISA, "Special Registers").
#[derive(Clone, Copy, Debug)]
pub(super) struct Specials {
    tid: [u32; 3],
    ntid: [u32; 3],
    ctaid: [u32; 3],
    nctaid: [u32; 3],
    cluster_ctaid: [u32; 3],
    cluster_nctaid: [u32; 3],
    clusterid: [u32; 3],
    nclusterid: [u32; 3],
    cluster_ctarank: u32,
    cluster_nctarank: u32,
    pub(super) cluster_linear: u32,
    linear_tid: u32,
    nwarps: u32,
}

impl Specials {
    pub(super) fn get(&self, name: &str) -> Option<Value> {
        let lane = self.linear_tid % 32;
        let v3 = |v: [u32; 3], c: &str| match c {
            "x" => Some(v[0]),
            "y" => Some(v[1]),
            "z" => Some(v[2]),
            _ => None,
        };
        let v = match name.split_once('.') {
            Some((reg, c)) => match reg {
                "%tid" => v3(self.tid, c),
                "%ntid" => v3(self.ntid, c),
                "%ctaid" => v3(self.ctaid, c),
                "%nctaid" => v3(self.nctaid, c),
                "%cluster_ctaid" => v3(self.cluster_ctaid, c),
                "%cluster_nctaid" => v3(self.cluster_nctaid, c),
                "%clusterid" => v3(self.clusterid, c),
                "%nclusterid" => v3(self.nclusterid, c),
                _ => None,
            },
            None => match name {
                "%laneid" => Some(lane),
                // The PTX %warpid is the hardware warp slot, which may change under
                // preemption; the warp's number in its CTA is what a test can rely on.
                "%warpid" => Some(self.linear_tid / 32),
                // Likewise the number of warps of the CTA, not the hardware's maximum.
                "%nwarpid" => Some(self.nwarps),
                "%cluster_ctarank" => Some(self.cluster_ctarank),
                "%cluster_nctarank" => Some(self.cluster_nctarank),
                "%gridid" => Some(0),
                "%lanemask_eq" => Some(1 << lane),
                "%lanemask_lt" => Some((1u32 << lane) - 1),
                "%lanemask_le" => Some(((1u64 << (lane + 1)) - 1) as u32),
                "%lanemask_gt" => Some(!(((1u64 << (lane + 1)) - 1) as u32)),
                "%lanemask_ge" => Some(!((1u32 << lane) - 1)),
                _ => None,
            },
        }?;
        Some(Value::from(v))
    }
}

/// Special registers whose value the program does not determine.
pub(super) fn unmodelled_special(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%clock"
            | "%clock64"
            | "%clock_hi"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%smid"
            | "%nsmid"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%is_explicit_cluster"
    ) || base.starts_with("%envreg")
        || base.starts_with("%pm")
}
