//! The device as scopecheck keeps it for one host process: its memory as bytes, and the work
//! launched since the host last observed it. Where the host observes the device,
//! [`Device::explore`] lowers that work, from the memory as it stands, with the language-level
//! front-end (a harness of the launches, written in the subset docs/cuda.md describes, after
//! the file's device part), explores it under the model, and groups the executions by the
//! memory they leave: each group is one outcome the host may see.

use std::collections::BTreeMap;

use scopecheck_cuda::CudaOptions;
use scopecheck_ir::{Observable, Program, Span, Value};
use scopecheck_model::CheckOptions;

use crate::finding::{Access, Finding, Read, Site, Waiting, Witness, Writer};
use crate::split::{Kernel, Param};
use crate::HostError;

/// Device addresses handed to the host lie at `DEVICE_BASE + (allocation << 32) + offset`
/// (runtime.cpp tells them from host pointers by this range).
pub const DEVICE_BASE: u64 = 0x5c00_0000_0000;
const DEVICE_END: u64 = 0x5d00_0000_0000;

/// The most bytes one allocation may have: each element becomes a location of the explored
/// program, and the front-end bounds an array at `scopecheck_cuda::MAX_ARRAY_ELEMENTS`.
pub const MAX_ALLOCATION_BYTES: u64 = 1 << 20;

/// Where in the user's file a call was made.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One allocation of device memory, or a `__device__` variable.
#[derive(Clone, Debug)]
pub struct Alloc {
    pub bytes: Vec<u8>,
    /// The variable's name, for a `__device__` variable.
    pub symbol: Option<String>,
    pub freed: bool,
    /// For managed memory: its address in the host process (kernels are given it).
    pub host: Option<u64>,
}

/// A kernel launch waiting to be explored.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u64,
    pub stream: u64,
    /// Each argument's bytes, converted to the parameter's type by the host compiler.
    pub args: Vec<Vec<u8>>,
    pub at: At,
}

/// Device work since the last observation, in the order the host issued it.
#[derive(Clone, Debug)]
pub enum Work {
    Launch(Launch),
    Record { event: u64, stream: u64 },
    Wait { stream: u64, event: u64 },
}

/// One process's view of the device.
#[derive(Clone, Debug, Default)]
pub struct Device {
    pub allocs: Vec<Alloc>,
    /// Host shadow address of each `__device__` variable, and its allocation.
    pub symbols: BTreeMap<u64, usize>,
    pub pending: Vec<Work>,
    /// Streams created, with their flags (`cudaStreamNonBlocking`).
    pub streams: Vec<u32>,
    pub events: u64,
}

/// One outcome of an observation: the device it leaves (nothing pending), and the reads of
/// the first execution found that leaves it.
#[derive(Debug)]
pub struct Outcome {
    pub device: Device,
    pub witness: Witness,
}

/// What exploring the pending work found.
#[derive(Debug, Default)]
pub struct Explored {
    /// Each distinct memory the host may observe.
    pub outcomes: Vec<Outcome>,
    /// Findings to report whatever the host does next: races, hangs, failed device asserts,
    /// an incomplete search, a fault.
    pub findings: Vec<Finding>,
    /// Consistent executions explored.
    pub executions: u128,
    /// Whether some execution races, hangs, or fails an assertion in a kernel.
    pub racy: bool,
    pub hangs: bool,
    pub device_assert: bool,
    /// Whether the exploration was cut short (its outcomes may be missing some).
    pub incomplete: bool,
    /// Why the process cannot go on (a fault, or every execution hangs).
    pub stop: Option<String>,
}

/// The file and options every exploration of one check shares.
pub struct Context {
    /// The file's device part, preprocessed, every line where it was.
    pub device_text: String,
    pub kernels: Vec<Kernel>,
    pub cuda: CudaOptions,
    pub check: CheckOptions,
    /// The file's name as reports give it.
    pub file: String,
}

/// A C scalar type as the harness declares it: its size, and whether it is a float.
fn scalar(ty: &str) -> Option<(usize, bool)> {
    let words: Vec<&str> = ty.split_whitespace().collect();
    let w = |s: &str| words.contains(&s);
    Some(match ty {
        "float" => (4, true),
        "double" => (8, true),
        "bool" | "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" => (1, false),
        "short" | "unsigned short" | "int16_t" | "uint16_t" => (2, false),
        "size_t"
        | "int64_t"
        | "uint64_t"
        | "long long"
        | "unsigned long long"
        | "ptrdiff_t"
        | "long long int"
        | "unsigned long long int" => (8, false),
        _ if w("long") => (8, false),
        "int" | "unsigned" | "unsigned int" | "signed" | "signed int" | "int32_t" | "uint32_t" => {
            (4, false)
        }
        _ => return None,
    })
}

/// Whether a scalar type is unsigned.
fn unsigned(ty: &str) -> bool {
    ty.contains("unsigned") || ty.starts_with('u') || ty == "size_t" || ty == "bool"
}

fn le_value(b: &[u8], signed: bool) -> Value {
    let mut v: u64 = 0;
    for (i, x) in b.iter().enumerate() {
        v |= (*x as u64) << (8 * i);
    }
    let bits = 8 * b.len() as u32;
    if signed && bits < 64 && v >> (bits - 1) & 1 == 1 {
        (v | !0u64 << bits) as i64
    } else {
        v as i64
    }
}

impl Device {
    /// A new allocation of `bytes` zero bytes (cudaMalloc's contents are unspecified; zero is
    /// the one definite value the explorer starts from, as for kernel-only files).
    pub fn alloc(&mut self, bytes: Vec<u8>, symbol: Option<String>) -> u64 {
        self.allocs.push(Alloc {
            bytes,
            symbol,
            freed: false,
            host: None,
        });
        DEVICE_BASE + ((self.allocs.len() as u64) << 32)
    }

    /// The allocation and offset a device address points at (one past the end included).
    pub fn resolve(&self, addr: u64) -> Option<(usize, usize)> {
        let managed = self.allocs.iter().position(|a| {
            a.host
                .is_some_and(|h| !a.freed && (h..=h + a.bytes.len() as u64).contains(&addr))
        });
        if let Some(i) = managed {
            let h = self.allocs[i].host.unwrap_or(addr);
            return Some((i, (addr - h) as usize));
        }
        if !(DEVICE_BASE..DEVICE_END).contains(&addr) {
            return None;
        }
        let rel = addr - DEVICE_BASE;
        let id = (rel >> 32) as usize;
        let off = (rel & 0xffff_ffff) as usize;
        let a = self.allocs.get(id.checked_sub(1)?)?;
        (!a.freed && off <= a.bytes.len()).then_some((id - 1, off))
    }

    /// Managed memory's regions, for the process to write back.
    pub fn managed(&self) -> Vec<(u64, &[u8])> {
        self.allocs
            .iter()
            .filter(|a| !a.freed)
            .filter_map(|a| a.host.map(|h| (h, a.bytes.as_slice())))
            .collect()
    }

    /// The bytes `[addr, addr + n)` of one allocation.
    pub fn range(&mut self, addr: u64, n: usize) -> Option<&mut [u8]> {
        let (a, off) = self.resolve(addr)?;
        self.allocs[a].bytes.get_mut(off..off.checked_add(n)?)
    }

    /// Explores the pending work from the memory as it stands.
    pub fn explore(&self, cx: &Context) -> Result<Explored, HostError> {
        if !self.pending.iter().any(|w| matches!(w, Work::Launch(_))) {
            let mut d = self.clone();
            d.pending.clear();
            return Ok(Explored {
                outcomes: vec![Outcome {
                    device: d,
                    witness: vec![],
                }],
                ..Default::default()
            });
        }
        let harness = self.harness(cx)?;
        let places = Places {
            cx,
            device_lines: cx.device_text.split('\n').count() as u32,
            harness: &harness,
        };
        let text = format!("{}\n{}", cx.device_text, harness.text);
        let (mut program, _warnings) =
            scopecheck_cuda::parse_cuda_with(&text, &cx.cuda).map_err(|e| {
                if e.line() > places.device_lines {
                    HostError::Device(format!(
                        "{}: the launch cannot be explored: {}",
                        places.launch_of(e.line()),
                        e.message
                    ))
                } else {
                    HostError::Device(format!(
                        "{}:{}:{}: {}",
                        cx.file,
                        e.line(),
                        e.column(),
                        e.message
                    ))
                }
            })?;
        let observed = self.seed(&mut program);
        // One execution behind each final state: the witness of each outcome.
        let check = CheckOptions {
            state_witnesses: true,
            ..cx.check.clone()
        };
        let verdict = match scopecheck_model::check(&program, &check) {
            Ok(v) => v,
            Err(fault) => {
                let message = places.renamed(&fault.message);
                let site = fault.span.map(|s| places.site(s, &message));
                let at = match &site {
                    Some(s) => s.to_string(),
                    None => places.first_launch().to_string(),
                };
                let why = format!("{at}: a fault on the device: {message}");
                return Ok(Explored {
                    findings: vec![Finding::Fault {
                        at: places.first_launch(),
                        site,
                        message,
                    }],
                    stop: Some(why),
                    ..Default::default()
                });
            }
        };
        let mut out = Explored {
            executions: verdict.executions,
            racy: !verdict.races.is_empty(),
            hangs: !verdict.hangs.is_empty(),
            incomplete: verdict.incomplete.is_some(),
            findings: places.findings(&program, &verdict),
            ..Default::default()
        };
        let mut memories: BTreeMap<Vec<Value>, Witness> = BTreeMap::new();
        for s in &verdict.states {
            out.device_assert |= !s.satisfies;
            let values: Vec<Value> = observed
                .iter()
                .map(|(l, ..)| {
                    s.values
                        .iter()
                        .find(|(o, _)| *o == Observable::Loc(*l))
                        .map_or(0, |(_, v)| *v)
                })
                .collect();
            // States sort by their values: the first to leave a memory gives its witness.
            memories.entry(values).or_insert_with(|| {
                let key: Vec<Value> = s.values.iter().map(|(_, v)| *v).collect();
                verdict
                    .state_witnesses
                    .get(&key)
                    .map(|r| places.reads(&program, r))
                    .unwrap_or_default()
            });
        }
        if out.device_assert {
            out.findings.push(Finding::DeviceAssert {
                launched_at: places.first_launch(),
                witness: places.reads(&program, &verdict.witness),
            });
        }
        if memories.is_empty() {
            out.stop = Some(format!(
                "no execution of the launches from {} finishes: the host waits forever",
                places.first_launch()
            ));
        }
        for (values, witness) in memories {
            let mut d = self.clone();
            d.pending.clear();
            for ((_, alloc, off, size), v) in observed.iter().zip(values) {
                let bytes = (v as u64).to_le_bytes();
                d.allocs[*alloc].bytes[*off..*off + *size].copy_from_slice(&bytes[..*size]);
            }
            out.outcomes.push(Outcome { device: d, witness });
        }
        Ok(out)
    }

    /// Sets each location of device memory in `program` to the bytes it holds now; returns
    /// them (location, allocation, offset, size), which the outcomes observe.
    fn seed(&self, program: &mut Program) -> Vec<(scopecheck_ir::LocId, usize, usize, usize)> {
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        for (i, a) in self.allocs.iter().enumerate() {
            if a.freed {
                continue;
            }
            let name = a
                .symbol
                .clone()
                .unwrap_or_else(|| format!("scopecheck_m{i}"));
            by_name.insert(name, i);
        }
        let mut observed = Vec::new();
        for l in 0..program.locations.len() {
            let loc = &program.locations[l];
            let (base, index) = match loc.name.split_once('[') {
                Some((b, rest)) => match rest.strip_suffix(']').and_then(|i| i.parse().ok()) {
                    Some(i) => (b, i),
                    None => continue,
                },
                None => (loc.name.as_str(), 0usize),
            };
            let Some(&alloc) = by_name.get(base) else {
                continue;
            };
            let size = (loc.ty.bits as usize).div_ceil(8);
            let off = index * size;
            let Some(bytes) = self.allocs[alloc].bytes.get(off..off + size) else {
                continue;
            };
            let v = le_value(bytes, loc.ty.signed && !loc.ty.float);
            let id = scopecheck_ir::LocId(l as u32);
            program.locations[l].init = program.locations[l].ty.wrap(v);
            program.extra_observables.push(Observable::Loc(id));
            observed.push((id, alloc, off, size));
        }
        observed
    }

    /// The harness that launches the pending work: a `__device__` array per allocation the
    /// launches are given, typed by the kernel parameter it is passed to.
    fn harness(&self, cx: &Context) -> Result<Harness, HostError> {
        let mut types: BTreeMap<usize, (String, usize)> = BTreeMap::new();
        let mut body = String::from("void scopecheck_main() {\n");
        let mut h = Harness::default();
        let mut line_launch = vec![0usize];
        for (s, flags) in self.streams.iter().enumerate() {
            let create = if *flags & 1 == 1 {
                format!(
                    "cudaStreamCreateWithFlags(&scopecheck_s{}, cudaStreamNonBlocking);",
                    s + 1
                )
            } else {
                format!("cudaStreamCreate(&scopecheck_s{});", s + 1)
            };
            body.push_str(&format!("cudaStream_t scopecheck_s{}; {create}\n", s + 1));
            line_launch.push(0);
        }
        for e in 0..self.events {
            body.push_str(&format!(
                "cudaEvent_t scopecheck_e{}; cudaEventCreate(&scopecheck_e{});\n",
                e + 1,
                e + 1
            ));
            line_launch.push(0);
        }
        let stream = |s: u64| {
            if s == 0 || s == 1 {
                "0".to_string()
            } else {
                format!("scopecheck_s{}", s - 1)
            }
        };
        for w in &self.pending {
            match w {
                Work::Launch(l) => {
                    let k = h.launch_at.len();
                    h.launch_at.push(l.at.clone());
                    let args = self.launch_args(cx, l, &mut types, &mut h.names)?;
                    body.push_str(&format!(
                        "{}<<<dim3({}, {}, {}), dim3({}, {}, {}), {}, {}>>>({});\n",
                        l.kernel,
                        l.grid[0],
                        l.grid[1],
                        l.grid[2],
                        l.block[0],
                        l.block[1],
                        l.block[2],
                        l.shared,
                        stream(l.stream),
                        args.join(", ")
                    ));
                    line_launch.push(k);
                }
                Work::Record { event, stream: s } => {
                    body.push_str(&format!(
                        "cudaEventRecord(scopecheck_e{event}, {});\n",
                        stream(*s)
                    ));
                    line_launch.push(h.launch_at.len().saturating_sub(1));
                }
                Work::Wait { stream: s, event } => {
                    body.push_str(&format!(
                        "cudaStreamWaitEvent({}, scopecheck_e{event}, 0);\n",
                        stream(*s)
                    ));
                    line_launch.push(h.launch_at.len());
                }
            }
        }
        body.push_str("}\n");
        let mut decls = String::new();
        for (a, (ty, n)) in &types {
            if *n <= 1 {
                decls.push_str(&format!("__device__ {ty} scopecheck_m{a};\n"));
            } else {
                decls.push_str(&format!("__device__ {ty} scopecheck_m{a}[{n}];\n"));
            }
        }
        // The declarations come first: the harness's lines are counted after them.
        let mut ll = vec![0usize; types.len()];
        ll.extend(line_launch);
        h.line_launch = ll;
        h.text = format!("{decls}{body}");
        Ok(h)
    }

    /// The arguments of launch `l` as the harness writes them.
    fn launch_args(
        &self,
        cx: &Context,
        l: &Launch,
        types: &mut BTreeMap<usize, (String, usize)>,
        names: &mut BTreeMap<usize, String>,
    ) -> Result<Vec<String>, HostError> {
        let base = l.kernel.split('<').next().unwrap_or("").trim();
        let k = cx.kernels.iter().find(|k| k.name == base).ok_or_else(|| {
            HostError::Device(format!("{}: no kernel `{base}` in the file", l.at))
        })?;
        if k.template || l.kernel.contains('<') {
            return Err(HostError::Device(format!(
                "{}: not supported yet by the native host path: launching the template kernel `{}`",
                l.at, l.kernel
            )));
        }
        let mut out = Vec::new();
        for (p, bytes) in k.params.iter().zip(&l.args) {
            match p {
                Param::Unsupported(why) => {
                    return Err(HostError::Device(format!(
                        "{}: not supported yet by the native host path: a kernel parameter of `{}`: {why}",
                        l.at, k.name
                    )))
                }
                Param::Scalar { ty } => {
                    let Some((size, float)) = scalar(ty).filter(|(s, _)| *s == bytes.len()) else {
                        return Err(HostError::Device(format!(
                            "{}: not supported yet by the native host path: a kernel argument of type `{ty}`",
                            l.at
                        )));
                    };
                    let text = if float && size == 4 {
                        let f = f32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
                        format!("{f:?}f")
                    } else if float {
                        let f = f64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
                        format!("{f:?}")
                    } else {
                        let v = le_value(bytes, !unsigned(ty));
                        if unsigned(ty) {
                            format!("{}u", v as u64 & (u64::MAX >> (64 - 8 * size)))
                        } else {
                            v.to_string()
                        }
                    };
                    out.push(text);
                }
                Param::Pointer { elem, name } => {
                    let addr = le_value(bytes, false) as u64;
                    if addr == 0 {
                        out.push("0".into());
                        continue;
                    }
                    let Some((alloc, off)) = self.resolve(addr) else {
                        return Err(HostError::Device(format!(
                            "{}: a kernel argument of `{}` is not device memory (a host pointer, or freed memory): {addr:#x}",
                            l.at, k.name
                        )));
                    };
                    if let Some(name) = &self.allocs[alloc].symbol {
                        return Err(HostError::Device(format!(
                            "{}: not supported yet by the native host path: the address of the `__device__` variable `{name}` as a kernel argument",
                            l.at
                        )));
                    }
                    let Some((size, _)) = scalar(elem) else {
                        return Err(HostError::Device(format!(
                            "{}: not supported yet by the native host path: a buffer of `{elem}`",
                            l.at
                        )));
                    };
                    let n = self.allocs[alloc].bytes.len() / size;
                    match types.get(&alloc) {
                        Some((t, _)) if t != elem => {
                            return Err(HostError::Device(format!(
                                "{}: not supported yet by the native host path: one allocation passed as `{t} *` and as `{elem} *`",
                                l.at
                            )))
                        }
                        _ => {
                            types.insert(alloc, (elem.clone(), n.max(1)));
                        }
                    }
                    if !names.contains_key(&alloc) {
                        let shown = self.name_allocation(alloc, name, names);
                        names.insert(alloc, shown);
                    }
                    if off % size != 0 {
                        return Err(HostError::Device(format!(
                            "{}: a `{elem} *` kernel argument not aligned to its element",
                            l.at
                        )));
                    }
                    // A one-element allocation is a scalar variable to the front-end.
                    if n <= 1 {
                        out.push(format!("&scopecheck_m{alloc}"));
                    } else {
                        out.push(format!("&scopecheck_m{alloc}[{}]", off / size));
                    }
                }
            }
        }
        Ok(out)
    }
}

impl Device {
    /// What reports call allocation `alloc`, first passed to a parameter named `param`: the
    /// parameter's name, unless another allocation or a `__device__` variable has that name
    /// already (or the parameter has none); then `param#N`, N the allocation's number among
    /// the device's allocations and variables, in the order the host made them (1-based).
    fn name_allocation(
        &self,
        alloc: usize,
        param: &str,
        names: &BTreeMap<usize, String>,
    ) -> String {
        let taken = param.is_empty()
            || names.values().any(|n| n == param)
            || self
                .allocs
                .iter()
                .any(|a| a.symbol.as_deref() == Some(param));
        match (taken, param.is_empty()) {
            (false, _) => param.to_string(),
            (true, false) => format!("{param}#{}", alloc + 1),
            (true, true) => format!("buffer#{}", alloc + 1),
        }
    }
}

/// A harness and, for each of its lines, the launch it answers for.
#[derive(Default)]
struct Harness {
    text: String,
    launch_at: Vec<At>,
    line_launch: Vec<usize>,
    /// What reports call each allocation the launches are given: the parameter it is first
    /// passed to ([`Device::name_allocation`]).
    names: BTreeMap<usize, String>,
}

/// Where the explored program's spans lie in the user's files, and what its names stand for:
/// lines up to `device_lines` are the file's device part, line for line; the harness's lines
/// after them stand for the launch each answers for.
struct Places<'a> {
    cx: &'a Context,
    device_lines: u32,
    harness: &'a Harness,
}

impl Places<'_> {
    /// The first launch of the work explored.
    fn first_launch(&self) -> At {
        self.harness.launch_at.first().cloned().unwrap_or_default()
    }

    /// The launch a line of the explored text answers for.
    fn launch_of(&self, line: u32) -> At {
        let k = line.saturating_sub(self.device_lines + 1) as usize;
        self.harness
            .line_launch
            .get(k)
            .and_then(|i| self.harness.launch_at.get(*i))
            .cloned()
            .unwrap_or_else(|| self.first_launch())
    }

    /// The site of a span of the explored text (an instruction of a kernel, or a line of the
    /// harness: the launch it answers for, as a whole line).
    fn site(&self, span: Span, text: &str) -> Site {
        if span.line > self.device_lines {
            let at = self.launch_of(span.line);
            return Site {
                file: at.file,
                line: at.line,
                column: 0,
                len: 0,
                text: text.to_string(),
            };
        }
        Site {
            file: self.cx.file.clone(),
            line: span.line,
            column: span.column,
            len: span.len,
            text: text.to_string(),
        }
    }

    /// A location's name as the kernels know it: an allocation's element by the parameter
    /// the allocation was passed to (`scopecheck_m3[2]` -> `data[2]`).
    fn location(&self, program: &Program, loc: scopecheck_ir::LocId) -> String {
        let name = &program.location(loc).name;
        let (base, index) = name.split_at(name.find('[').unwrap_or(name.len()));
        let alloc = base
            .strip_prefix("scopecheck_m")
            .and_then(|n| n.parse().ok());
        match alloc.and_then(|a: usize| self.harness.names.get(&a)) {
            Some(shown) => format!("{shown}{index}"),
            None => name.clone(),
        }
    }

    /// `text` (a message of the explorer) with each allocation's name of the explored
    /// program (`scopecheck_m3`) replaced by the name the kernels know it by ([`location`]).
    ///
    /// [`location`]: Places::location
    fn renamed(&self, text: &str) -> String {
        const PREFIX: &str = "scopecheck_m";
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find(PREFIX) {
            out.push_str(&rest[..i]);
            let after = &rest[i + PREFIX.len()..];
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let shown = after[..digits]
                .parse::<usize>()
                .ok()
                .and_then(|a| self.harness.names.get(&a));
            match shown {
                Some(name) => out.push_str(name),
                None => out.push_str(&rest[i..i + PREFIX.len() + digits]),
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        out
    }

    fn access(&self, program: &Program, a: &scopecheck_model::Access) -> Access {
        Access {
            thread: program.thread(a.thread).name.clone(),
            site: self.site(a.span, &a.text),
            location: self.location(program, a.loc),
            write: a.write,
        }
    }

    /// The reads of an execution, with their places and names.
    fn reads(&self, program: &Program, reads: &[scopecheck_model::WitnessRead]) -> Witness {
        reads
            .iter()
            .map(|r| Read {
                thread: program.thread(r.reader.thread).name.clone(),
                site: self.site(r.reader.span, &r.reader.text),
                location: self.location(program, r.reader.loc),
                value: r.value,
                from: r.from.as_ref().map(|w| Writer {
                    thread: program.thread(w.thread).name.clone(),
                    site: self.site(w.span, &w.text),
                }),
            })
            .collect()
    }

    /// The races, hangs and cut of a verdict, in that order.
    fn findings(&self, program: &Program, verdict: &scopecheck_model::Verdict) -> Vec<Finding> {
        let launched_at = self.first_launch();
        let mut out = Vec::new();
        for r in &verdict.races {
            out.push(Finding::Race {
                kind: r.kind,
                first: self.access(program, &r.first),
                second: self.access(program, &r.second),
                launched_at: launched_at.clone(),
            });
        }
        for h in &verdict.hangs {
            let waiting = h
                .spinning
                .iter()
                .chain(&h.at_barrier)
                .map(|s| Waiting {
                    thread: program.thread(s.thread).name.clone(),
                    site: self.site(s.span, &s.text),
                    waits: s
                        .waits
                        .iter()
                        .map(|(l, v)| (self.location(program, *l), *v))
                        .collect(),
                })
                .collect();
            out.push(Finding::Hang {
                waiting,
                progress: h.progress.clone(),
                reason: h.reason.clone(),
                launched_at: launched_at.clone(),
            });
        }
        if let Some(i) = &verdict.incomplete {
            out.push(Finding::Incomplete {
                launched_at,
                reason: i.reason.clone(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocation is called by the parameter it is first passed to; a name another
    /// allocation or a `__device__` variable has already, or no name, gets the allocation's
    /// number (1-based, in the order the device made them).
    #[test]
    fn allocations_are_named_by_their_parameter() {
        let mut d = Device::default();
        d.alloc(vec![0; 4], Some("flag".into()));
        d.alloc(vec![0; 4], None);
        d.alloc(vec![0; 4], None);
        let mut names = BTreeMap::new();
        assert_eq!(d.name_allocation(1, "data", &names), "data");
        names.insert(1, "data".to_string());
        assert_eq!(d.name_allocation(2, "data", &names), "data#3");
        assert_eq!(d.name_allocation(2, "flag", &names), "flag#3");
        assert_eq!(d.name_allocation(2, "", &names), "buffer#3");
    }
}

#[cfg(test)]
mod renamed {
    use super::*;

    /// The explorer's messages name allocations as the explored program does; the report
    /// names them as the kernels do: `scopecheck_m1` -> `a`, `scopecheck_m12[3]` -> `big[3]`,
    /// and a number no launch was given (`scopecheck_m7`) stays as it is.
    #[test]
    fn allocation_names_in_messages_are_the_kernels_names() {
        let cx = Context {
            device_text: String::new(),
            kernels: vec![],
            cuda: CudaOptions::default(),
            check: CheckOptions::default(),
            file: "f.cu".into(),
        };
        let mut harness = Harness::default();
        harness.names.insert(1, "a".into());
        harness.names.insert(12, "big".into());
        let places = Places {
            cx: &cx,
            device_lines: 0,
            harness: &harness,
        };
        assert_eq!(
            places.renamed("`scopecheck_m1` (2 elements), scopecheck_m12[3], scopecheck_m7"),
            "`a` (2 elements), big[3], scopecheck_m7"
        );
    }
}
