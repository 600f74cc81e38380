//! The collect kernel: one thread per instance reads the final values, checks that every role
//! finished, resets the instance for the next launch, turns the final state into a histogram
//! bin through the value table and records the instances whose state is forbidden or outside
//! the table.

use std::fmt::Write;

use scopecheck_ir::{Observable, ThreadId};

use super::{
    anomaly_words, imm, Gen, BINS, BIN_CUT, BIN_OTHER, COLLECT_KERNEL, HOST_PARAMS, MAX_ANOMALIES,
    MAX_VALUES, STATUS_DONE,
};
use crate::layout::{Buffer, Unit, WARP};
use crate::width::wide_observables;

impl Gen<'_> {
    pub(super) fn collect_kernel(&mut self) {
        let obs = self.p.observables();
        e!(self, ".shared .align 4 .b32 s_hist[{BINS}];");
        e!(self, "");
        e!(self, ".visible .entry {COLLECT_KERNEL}(");
        let params = [
            ".u64 p_mem",
            ".u64 p_rec",
            ".u64 p_hist",
            ".u64 p_table",
            ".u64 p_forbid",
            ".u64 p_anom",
            ".u32 p_ninst",
            ".u32 p_launch",
        ];
        let mut params = params.to_vec();
        if self.l.uses_host() {
            params.extend(HOST_PARAMS);
        }
        let host = self.l.uses_host();
        self.entry_head(
            &params,
            "%inst, %ok, %idx, %stride, %other, %bin, %j, %pos, %cnt",
            "%mem, %rec, %recp, %ibase, %tbl, %shist",
            host,
        );
        if !obs.is_empty() {
            let names: Vec<String> = (0..obs.len()).map(|i| format!("%o{i}")).collect();
            e!(self, "\t.reg .b32 \t{};", names.join(", "));
        }
        // The high words of the 64-bit observables.
        let wide = wide_observables(self.p);
        let highs: Vec<String> = (0..obs.len())
            .filter(|&k| wide[k])
            .map(|k| format!("%h{k}"))
            .collect();
        if !highs.is_empty() {
            e!(self, "\t.reg .b32 \t{};", highs.join(", "));
        }
        e!(self, "");
        e!(self, "\tmov.u64 \t%shist, s_hist;");
        e!(self, "\tmov.u32 \t%x15, %ntid.x;");
        e!(self, "\tmov.u32 \t%x0, %tid.x;");
        e!(self, "ZERO:");
        e!(self, "\tsetp.ge.u32 \t%p0, %x0, {BINS};");
        e!(self, "\t@%p0 bra \tZERO_DONE;");
        e!(self, "\tmul.wide.u32 \t%d0, %x0, 4;");
        e!(self, "\tadd.s64 \t%d0, %shist, %d0;");
        e!(self, "\tst.shared.u32 \t[%d0], 0;");
        e!(self, "\tadd.u32 \t%x0, %x0, %x15;");
        e!(self, "\tbra.uni \tZERO;");
        e!(self, "ZERO_DONE:");
        e!(self, "\tbar.sync \t0;");
        e!(self, "\tmov.u32 \t%x0, %ctaid.x;");
        e!(self, "\tmov.u32 \t%x2, %tid.x;");
        e!(self, "\tmad.lo.u32 \t%inst, %x0, %x15, %x2;");
        e!(self, "\tld.param.u32 \t%x0, [p_ninst];");
        e!(self, "\tsetp.ge.u32 \t%p0, %inst, %x0;");
        e!(self, "\t@%p0 bra \tFLUSH;");
        e!(self, "\tld.param.u64 \t%mem, [p_mem];");
        e!(self, "\tcvta.to.global.u64 \t%mem, %mem;");
        e!(self, "\tld.param.u64 \t%rec, [p_rec];");
        e!(self, "\tcvta.to.global.u64 \t%rec, %rec;");
        self.instance_base();
        self.final_values(&obs, &wide);
        self.reset_instance();
        self.dense_index(&wide);
        self.record_anomaly(&wide);
        self.flush_histogram();
    }

    /// `%o0`.. = the final values of the observables, in the report's order; `%hK` the high
    /// word of a 64-bit one (`wide`).
    fn final_values(&mut self, obs: &[Observable], wide: &[bool]) {
        e!(
            self,
            "\t// final values of the observables, in the report's order"
        );
        let regs = self.l.record.regs.clone();
        let shared_obs = self.l.record.shared.clone();
        for (k, o) in obs.iter().enumerate() {
            let (at, off) = match *o {
                Observable::Reg(t, r) => {
                    let w = regs.iter().position(|&x| x == (t, r)).unwrap_or(0);
                    ("%recp".to_string(), self.l.record.reg_word(w) * 4)
                }
                Observable::Loc(loc) => {
                    if let Some((base, off)) = self.loc_base(loc) {
                        if wide[k] {
                            e!(self, "\tadd.s64 \t%d5, {base}, %iline;");
                            ("%d5".to_string(), off)
                        } else {
                            (base.to_string(), off)
                        }
                    } else {
                        let w = shared_obs.iter().position(|&x| x == loc).unwrap_or(0);
                        (
                            "%recp".to_string(),
                            (self.l.record.reg_words() + w as u32) * 4,
                        )
                    }
                }
            };
            e!(self, "\tld.global.u32 \t%o{k}, [{at}+{off}];");
            if wide[k] {
                e!(self, "\tld.global.u32 \t%h{k}, [{at}+{}];", off + 4);
            }
        }
    }

    /// `%ok` = every role finished; status words and locations back to their initial values.
    /// Lanes other than 0 of the bar.red layout stop here.
    fn reset_instance(&mut self) {
        e!(
            self,
            "\t// every role must have finished; reset status words and locations"
        );
        e!(self, "\tmov.u32 \t%ok, 1;");
        for t in 0..self.p.threads.len() {
            let w = self.l.record.status_word(ThreadId(t as u32));
            e!(self, "\tld.global.u32 \t%x0, [%recp+{}];", w * 4);
            e!(self, "\tsetp.ne.u32 \t%p0, %x0, {STATUS_DONE};");
            e!(self, "\t@%p0 mov.u32 \t%ok, 0;");
            e!(self, "\tst.global.u32 \t[%recp+{}], 0;", w * 4);
        }
        for buf in Buffer::ALL {
            let mut locs = self.l.locs(buf).to_vec();
            // A 64-bit location takes two places in the list; it is reset once.
            locs.dedup();
            for loc in locs {
                let init = self.p.location(loc).init;
                let (base, off) = self.loc_base(loc).unwrap_or(("%ibase", 0));
                if self.is_wide_loc(loc) {
                    e!(self, "\tadd.s64 \t%d5, {base}, %iline;");
                    e!(self, "\tmov.b64 \t%d6, {init};");
                    e!(self, "\tst.global.u64 \t[%d5+{off}], %d6;");
                } else {
                    e!(self, "\tmov.b32 \t%x0, {};", imm(init));
                    e!(self, "\tst.global.u32 \t[{base}+{off}], %x0;");
                }
            }
        }
        if let Unit::Warp {
            lane_instances: false,
            ..
        } = self.l.unit
        {
            e!(self, "\t// bar.red layout: lanes other than 0 are decoys");
            e!(self, "\tand.b32 \t%x0, %inst, {};", WARP - 1);
            e!(self, "\tsetp.ne.u32 \t%p0, %x0, 0;");
            e!(self, "\t@%p0 bra \tFLUSH;");
        }
    }

    /// `%bin` = the state's dense index through the value table (or a special bin); forbidden
    /// and out-of-table states go on to `ANOMALY`, the others to `COUNT`.
    fn dense_index(&mut self, wide: &[bool]) {
        let observables = wide.len();
        // The high words of the table follow its rows (StateTable::words).
        let highs = observables as u32 * (MAX_VALUES + 1) * 4;
        e!(self, "\tmov.u32 \t%bin, {BIN_CUT};");
        e!(self, "\tsetp.eq.u32 \t%p0, %ok, 0;");
        e!(self, "\t@%p0 bra \tCOUNT;");
        e!(self, "\t// dense index through the value table");
        e!(self, "\tld.param.u64 \t%tbl, [p_table];");
        e!(self, "\tcvta.to.global.u64 \t%tbl, %tbl;");
        e!(self, "\tmov.u32 \t%idx, 0;");
        e!(self, "\tmov.u32 \t%stride, 1;");
        e!(self, "\tmov.u32 \t%other, 0;");
        for (k, &wide_k) in wide.iter().enumerate() {
            let row = k as u32 * (MAX_VALUES + 1) * 4;
            e!(self, "\tld.global.u32 \t%cnt, [%tbl+{row}];");
            e!(self, "\tmov.u32 \t%j, 0;");
            e!(self, "\tmov.u32 \t%pos, %cnt;");
            e!(self, "T{k}_LOOP:");
            e!(self, "\tsetp.ge.u32 \t%p0, %j, %cnt;");
            e!(self, "\t@%p0 bra \tT{k}_DONE;");
            e!(self, "\tmul.wide.u32 \t%d0, %j, 4;");
            e!(self, "\tadd.s64 \t%d0, %tbl, %d0;");
            e!(self, "\tld.global.u32 \t%x0, [%d0+{}];", row + 4);
            e!(self, "\tsetp.eq.u32 \t%p0, %x0, %o{k};");
            if wide_k {
                let hi = highs + k as u32 * MAX_VALUES * 4;
                e!(self, "\tld.global.u32 \t%x1, [%d0+{hi}];");
                e!(self, "\tsetp.eq.and.u32 \t%p0, %x1, %h{k}, %p0;");
            }
            e!(self, "\t@%p0 mov.u32 \t%pos, %j;");
            e!(self, "\t@%p0 bra \tT{k}_DONE;");
            e!(self, "\tadd.u32 \t%j, %j, 1;");
            e!(self, "\tbra.uni \tT{k}_LOOP;");
            e!(self, "T{k}_DONE:");
            e!(self, "\tsetp.ge.u32 \t%p0, %pos, %cnt;");
            e!(self, "\t@%p0 mov.u32 \t%other, 1;");
            e!(self, "\tmad.lo.u32 \t%idx, %pos, %stride, %idx;");
            e!(self, "\tmul.lo.u32 \t%stride, %stride, %cnt;");
        }
        e!(self, "\tmov.u32 \t%bin, {BIN_OTHER};");
        e!(self, "\tsetp.ne.u32 \t%p0, %other, 0;");
        e!(self, "\t@%p0 bra \tANOMALY;");
        e!(self, "\tmov.u32 \t%bin, %idx;");
        e!(self, "\tld.param.u64 \t%d1, [p_forbid];");
        e!(self, "\tcvta.to.global.u64 \t%d1, %d1;");
        e!(self, "\tmul.wide.u32 \t%d0, %idx, 4;");
        e!(self, "\tadd.s64 \t%d0, %d1, %d0;");
        e!(self, "\tld.global.u32 \t%x0, [%d0];");
        e!(self, "\tsetp.eq.u32 \t%p0, %x0, 0;");
        e!(self, "\t@%p0 bra \tCOUNT;");
    }

    /// `ANOMALY`: the instance and its values appended to the anomaly records, at most
    /// [`MAX_ANOMALIES`] per batch.
    fn record_anomaly(&mut self, wide: &[bool]) {
        let aw = anomaly_words(wide);
        e!(self, "ANOMALY:");
        e!(
            self,
            "\t// record the instance: [count, (instance, launch, values...)...]"
        );
        e!(self, "\tld.param.u64 \t%d1, [p_anom];");
        e!(self, "\tcvta.to.global.u64 \t%d1, %d1;");
        e!(self, "\tatom.global.add.u32 \t%x0, [%d1], 1;");
        e!(self, "\tsetp.ge.u32 \t%p0, %x0, {MAX_ANOMALIES};");
        e!(self, "\t@%p0 bra \tCOUNT;");
        e!(self, "\tmul.wide.u32 \t%d0, %x0, {};", aw * 4);
        e!(self, "\tadd.s64 \t%d0, %d1, %d0;");
        e!(self, "\tst.global.u32 \t[%d0+4], %inst;");
        e!(self, "\tld.param.u32 \t%x1, [p_launch];");
        e!(self, "\tst.global.u32 \t[%d0+8], %x1;");
        let mut at = 12;
        for (k, &w) in wide.iter().enumerate() {
            e!(self, "\tst.global.u32 \t[%d0+{at}], %o{k};");
            at += 4;
            if w {
                e!(self, "\tst.global.u32 \t[%d0+{at}], %h{k};");
                at += 4;
            }
        }
    }

    /// `COUNT`: the bin counted in the block's shared histogram; `FLUSH`: the block's histogram
    /// added to the launch's.
    fn flush_histogram(&mut self) {
        e!(self, "COUNT:");
        e!(self, "\tmul.wide.u32 \t%d0, %bin, 4;");
        e!(self, "\tadd.s64 \t%d0, %shist, %d0;");
        e!(self, "\tatom.shared.add.u32 \t%x0, [%d0], 1;");
        e!(self, "FLUSH:");
        e!(self, "\tbar.sync \t0;");
        e!(self, "\tld.param.u64 \t%d1, [p_hist];");
        e!(self, "\tcvta.to.global.u64 \t%d1, %d1;");
        e!(self, "\tmov.u32 \t%x0, %tid.x;");
        e!(self, "FLUSH_LOOP:");
        e!(self, "\tsetp.ge.u32 \t%p0, %x0, {BINS};");
        e!(self, "\t@%p0 bra \tFLUSH_DONE;");
        e!(self, "\tmul.wide.u32 \t%d0, %x0, 4;");
        e!(self, "\tadd.s64 \t%d0, %shist, %d0;");
        e!(self, "\tld.shared.u32 \t%x1, [%d0];");
        e!(self, "\tsetp.eq.u32 \t%p0, %x1, 0;");
        e!(self, "\t@%p0 bra \tFLUSH_NEXT;");
        e!(self, "\tcvt.u64.u32 \t%d2, %x1;");
        e!(self, "\tmul.wide.u32 \t%d0, %x0, 8;");
        e!(self, "\tadd.s64 \t%d0, %d1, %d0;");
        e!(self, "\tred.global.add.u64 \t[%d0], %d2;");
        e!(self, "FLUSH_NEXT:");
        e!(self, "\tadd.u32 \t%x0, %x0, %x15;");
        e!(self, "\tbra.uni \tFLUSH_LOOP;");
        e!(self, "FLUSH_DONE:");
        e!(self, "\tret;");
        e!(self, "}}");
    }
}
