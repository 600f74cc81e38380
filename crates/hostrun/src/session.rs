//! Running the host binary: a server on a Unix socket answers every runtime call of the child
//! and of each process it forks into, one thread per process.
//!
//! Every process (the first and each fork) runs under a supervisor that reports how it ended
//! ([`Ending`]) and what it printed. The processes are one process group, killed as a whole
//! when the check ends or runs out of time, so no process is left behind.

use std::collections::{BTreeSet, HashMap};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::device::{At, Context, Device, Explored, Launch, Work, MAX_ALLOCATION_BYTES};
use crate::finding::{Finding, Witness};
use crate::wire::{code, read_request, Op, Reply, Request, WireError};
use crate::HostError;

/// The exit status of a process scopecheck stopped (`Stop`: an unsupported call, a fault, a
/// host that would wait forever); runtime.cpp exits with it.
const STOPPED_STATUS: u32 = 125;

/// Bounds of the native path.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// The most outcomes one observation forks into (`--max-outcomes`); more are cut, and the
    /// report says so.
    pub max_outcomes: usize,
    /// The most processes one check runs in all.
    pub max_processes: usize,
    /// The whole run's time (`--timeout`).
    pub timeout: Option<Duration>,
}

/// The default of `--max-outcomes`.
pub const DEFAULT_MAX_OUTCOMES: usize = 16;
/// The most processes of one check unless told otherwise.
pub const DEFAULT_MAX_PROCESSES: usize = 256;

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            max_outcomes: DEFAULT_MAX_OUTCOMES,
            max_processes: DEFAULT_MAX_PROCESSES,
            timeout: None,
        }
    }
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Exit(u32),
    Signal(u32),
    /// scopecheck stopped it, for this reason.
    Stopped(String),
    /// Its supervisor never reported (killed at the time limit).
    Lost,
}

/// One step of a process's way through the run.
#[derive(Clone, Debug)]
pub enum Step {
    /// An observation of device work: the outcome this process went on with (1-based, of
    /// `of`), and the reads of the device execution that gives it.
    Observed {
        at: At,
        outcome: usize,
        of: usize,
        witness: Arc<Witness>,
    },
    /// scopecheck stopped the process, for this reason.
    Stopped(String),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Observed {
                at, outcome, of, ..
            } => write!(f, "{at}: outcome {outcome} of {of}"),
            Step::Stopped(why) => write!(f, "stopped: {why}"),
        }
    }
}

/// One process of the run: the observations on its way with the outcome taken at each, how
/// it ended and the tail of what it printed.
#[derive(Clone, Debug)]
pub struct ProcessResult {
    pub path: Vec<Step>,
    pub ending: Ending,
    pub output: String,
}

impl ProcessResult {
    /// The steps that tell this process from the others: the observations with more than
    /// one outcome, and a stop.
    pub fn forks(&self) -> Vec<String> {
        self.path
            .iter()
            .filter(|s| !matches!(s, Step::Observed { of: 1, .. }))
            .map(Step::to_string)
            .collect()
    }

    /// Whether it failed the test: a non-zero exit (a failed `assert` aborts) or a signal.
    pub fn failed(&self) -> bool {
        matches!(self.ending, Ending::Exit(c) if c != 0) || matches!(self.ending, Ending::Signal(_))
    }
}

/// What the run found.
#[derive(Clone, Debug, Default)]
pub struct HostReport {
    pub processes: Vec<ProcessResult>,
    /// Races, hangs, failed device asserts, incomplete explorations, faults, unsupported
    /// calls: each once (as its one-line text tells it), in order.
    pub findings: Vec<Finding>,
    /// Why the run did not cover every outcome, if it did not.
    pub cut: Option<String>,
    /// Consistent device executions explored, over all observations and processes.
    pub executions: u128,
    /// Whether some exploration found a race, a hang, a failed assertion in a kernel, or was
    /// cut short.
    pub racy: bool,
    pub hangs: bool,
    pub device_assert: bool,
    pub incomplete: bool,
    pub compile_time: Duration,
    pub run_time: Duration,
    pub cached: bool,
    pub compiler: String,
}

impl HostReport {
    /// Whether the requirement fails: some process failed, or an assertion in a kernel.
    pub fn failed(&self) -> bool {
        self.device_assert || self.processes.iter().any(ProcessResult::failed)
    }

    /// Whether every outcome was run to its end: nothing cut, stopped or lost.
    pub fn complete(&self) -> bool {
        self.cut.is_none()
            && !self.incomplete
            && self
                .processes
                .iter()
                .all(|p| matches!(p.ending, Ending::Exit(_) | Ending::Signal(_)))
    }
}

/// A fork waiting for its process to connect: its device and the reply it continues from.
struct PendingFork {
    device: Device,
    reply: Reply,
    path: Vec<Step>,
}

struct Shared {
    cx: Arc<Context>,
    forks: HashMap<(u64, u64), PendingFork>,
    next_conn: u64,
    /// Processes expected that have not ended yet.
    live: usize,
    processes: usize,
    report: HostReport,
    findings: BTreeSet<String>,
    platform: scopecheck_model::Platform,
    opts: HostOptions,
}

impl Shared {
    fn finding(&mut self, f: Finding) {
        if self.findings.insert(f.to_string()) {
            self.report.findings.push(f);
        }
    }
}

/// Runs `binary` with scopecheck answering its runtime calls.
pub fn run(
    binary: &Path,
    cx: Context,
    check: &scopecheck_model::CheckOptions,
    opts: &HostOptions,
) -> Result<HostReport, HostError> {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("scopecheck-host-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| HostError::Io(format!("{}: {e}", dir.display())))?;
    let sock = dir.join("s");
    let _ = std::fs::remove_file(&sock);
    let listener =
        UnixListener::bind(&sock).map_err(|e| HostError::Io(format!("{}: {e}", sock.display())))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| HostError::Io(e.to_string()))?;
    let begun = Instant::now();
    let deadline = opts.timeout.map(|t| begun + t);
    let mut child = std::process::Command::new(binary)
        .env("SCOPECHECK_SOCKET", &sock)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| HostError::Io(format!("cannot run {}: {e}", binary.display())))?;
    let pgid = child.id() as i32;
    let shared = Arc::new(Mutex::new(Shared {
        cx: Arc::new(cx),
        forks: HashMap::new(),
        next_conn: 1,
        live: 1,
        processes: 1,
        report: HostReport::default(),
        findings: BTreeSet::new(),
        platform: check.platform.clone(),
        opts: opts.clone(),
    }));
    let mut threads = Vec::new();
    let mut timed_out = false;
    // A panic while serving a process (exploring its device work) ends the run at once: that
    // process would never report its end, and the run would wait for it until the time limit.
    let panicked: Arc<Mutex<Option<String>>> = Arc::default();
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let shared = Arc::clone(&shared);
                let panicked = Arc::clone(&panicked);
                threads.push(std::thread::spawn(move || {
                    guarded(&panicked, || serve(stream, &shared));
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if lock(&panicked).is_some() {
                    break;
                }
                let done = lock(&shared).live == 0;
                if done {
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    timed_out = true;
                    break;
                }
                // The first process may end before it ever connects (a crash in a static
                // constructor): then nothing will come.
                if let Ok(Some(status)) = child.try_wait() {
                    let mut s = lock(&shared);
                    if s.next_conn == 1 {
                        s.live = 0;
                        s.report.processes.push(ProcessResult {
                            path: vec![],
                            ending: match status.code() {
                                Some(c) => Ending::Exit(c as u32),
                                None => Ending::Lost,
                            },
                            output: String::new(),
                        });
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(HostError::Io(format!("accept: {e}"))),
        }
    }
    // Every process of the run is in the group: none outlives the check.
    // SAFETY: kill(2) with a negative pid signals the group we created; no memory is touched.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let _ = child.wait();
    for t in threads {
        let _ = t.join();
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(why) = lock(&panicked).take() {
        return Err(HostError::Internal(format!(
            "exploring a process's device work panicked: {why}"
        )));
    }
    let mut s = lock(&shared);
    if timed_out {
        s.report.cut = Some(format!(
            "the time limit ({:?}) ended the run with {} processes not finished",
            opts.timeout.unwrap_or_default(),
            s.live
        ));
    }
    let mut report = std::mem::take(&mut s.report);
    report.run_time = begun.elapsed();
    Ok(report)
}

/// Runs `serve`; a panic in it is recorded in `panicked` (its message) instead of ending the
/// thread silently.
fn guarded(panicked: &Mutex<Option<String>>, serve: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(serve)) {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        lock(panicked).get_or_insert(why);
    }
}

/// The mutex's value, even if a thread panicked holding it (the run then ends with that
/// panic as its error; what the value holds is not used for a verdict).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serves one process until its supervisor reports how it ended.
fn serve(mut stream: UnixStream, shared: &Mutex<Shared>) {
    let (conn, mut device, mut path) = match hello(&mut stream, shared) {
        Some(x) => x,
        None => {
            lock(shared).live -= 1;
            return;
        }
    };
    let ending = loop {
        let req = match read_request(&mut stream) {
            Ok(r) => r,
            Err(_) => break (Ending::Lost, String::new()),
        };
        if req.op == Op::ManagedPush {
            // The host's view of managed memory, before its next call: no reply.
            if push_managed(req, &mut device).is_err() {
                break (Ending::Lost, String::new());
            }
            continue;
        }
        if req.op == Op::Status {
            match status(req) {
                Ok(x) => break x,
                Err(_) => break (Ending::Lost, String::new()),
            }
        }
        match answer(req, conn, &mut device, &mut path, shared) {
            Ok(reply) => {
                if reply.send(&mut stream).is_err() {
                    break (Ending::Lost, String::new());
                }
            }
            Err(e) => {
                let why = e.to_string();
                lock(shared).finding(Finding::Stopped { why: why.clone() });
                path.push(Step::Stopped(why.clone()));
                let _ = Reply::stop(&why).send(&mut stream);
            }
        }
    };
    let (ending, output) = ending;
    let mut s = lock(shared);
    let ending = match ending {
        Ending::Exit(STOPPED_STATUS) if matches!(path.last(), Some(Step::Stopped(_))) => {
            match path.pop() {
                Some(Step::Stopped(why)) => Ending::Stopped(why),
                _ => unreachable!("the last step is a stop"),
            }
        }
        e => e,
    };
    let _ = conn;
    s.report.processes.push(ProcessResult {
        path,
        ending,
        output,
    });
    s.live -= 1;
}

/// The first message of a connection: a new process, or a fork taking up its outcome.
fn hello(stream: &mut UnixStream, shared: &Mutex<Shared>) -> Option<(u64, Device, Vec<Step>)> {
    let mut req = read_request(stream).ok()?;
    let mut s = lock(shared);
    let conn = s.next_conn;
    s.next_conn += 1;
    match req.op {
        Op::HelloRoot => {
            drop(s);
            Reply::raw_u64(conn).send(stream).ok()?;
            Some((conn, Device::default(), vec![]))
        }
        Op::HelloFork => {
            let parent = req.u64().ok()?;
            let outcome = req.u64().ok()?;
            let fork = s.forks.remove(&(parent, outcome))?;
            drop(s);
            Reply::raw_u64(conn).send(stream).ok()?;
            fork.reply.send(stream).ok()?;
            Some((conn, fork.device, fork.path))
        }
        _ => None,
    }
}

fn push_managed(mut req: Request, device: &mut Device) -> Result<(), WireError> {
    let n = req.u32()?;
    for _ in 0..n {
        let addr = req.u64()?;
        let bytes = req.blob()?;
        if let Some(m) = device.range(addr, bytes.len()) {
            m.copy_from_slice(&bytes);
        }
    }
    Ok(())
}

/// `reply`, after the contents of managed memory where the call observes the device.
fn with_managed(call: &Call, device: &Device, reply: Reply) -> Reply {
    let regions = device.managed();
    if !call.observes() || regions.is_empty() {
        return reply;
    }
    let mut r = Reply::managed(&regions);
    r.append(reply);
    r
}

/// The supervisor's report: how the process ended and what it printed.
fn status(mut req: Request) -> Result<(Ending, String), WireError> {
    let kind = req.u8()?;
    let code = req.u32()?;
    let out = req.blob()?;
    let ending = if kind == 1 {
        Ending::Signal(code)
    } else {
        Ending::Exit(code)
    };
    Ok((ending, String::from_utf8_lossy(&out).into_owned()))
}

/// A runtime call, read from its request.
enum Call {
    Register {
        name: String,
        shadow: u64,
        bytes: Vec<u8>,
        managed: bool,
    },
    Malloc(u64),
    MallocManaged {
        host: u64,
        n: u64,
        name: String,
    },
    Free(u64),
    CopyH2D {
        dst: u64,
        data: Vec<u8>,
    },
    CopyD2H {
        src: u64,
        n: u64,
    },
    CopyD2D {
        dst: u64,
        src: u64,
        n: u64,
    },
    Memset {
        dst: u64,
        value: u8,
        n: u64,
    },
    Launch(Launch),
    Sync,
    StreamCreate(u32),
    EventCreate,
    EventRecord {
        event: u64,
        stream: u64,
    },
    WaitEvent {
        stream: u64,
        event: u64,
    },
    Unsupported(String),
    Props,
    SymbolAddress(u64),
}

impl Call {
    /// Whether the call waits for (or is ordered after) the device work so far, so that the
    /// host sees, or changes, the memory that work leaves.
    fn observes(&self) -> bool {
        matches!(
            self,
            Call::Free(_)
                | Call::CopyH2D { .. }
                | Call::CopyD2H { .. }
                | Call::CopyD2D { .. }
                | Call::Memset { .. }
                | Call::Sync
        )
    }
}

fn read_call(op: Op, req: &mut Request, at: &At) -> Result<Call, WireError> {
    Ok(match op {
        Op::Register => Call::Register {
            name: req.str()?,
            shadow: req.u64()?,
            bytes: req.blob()?,
            managed: req.u8()? != 0,
        },
        Op::Malloc => Call::Malloc(req.u64()?),
        Op::MallocManaged => Call::MallocManaged {
            host: req.u64()?,
            n: req.u64()?,
            name: req.str()?,
        },
        Op::Free => Call::Free(req.u64()?),
        Op::CopyH2D => Call::CopyH2D {
            dst: req.u64()?,
            data: req.blob()?,
        },
        Op::CopyD2H => Call::CopyD2H {
            src: req.u64()?,
            n: req.u64()?,
        },
        Op::CopyD2D => Call::CopyD2D {
            dst: req.u64()?,
            src: req.u64()?,
            n: req.u64()?,
        },
        Op::Memset => Call::Memset {
            dst: req.u64()?,
            value: req.u8()?,
            n: req.u64()?,
        },
        Op::Launch => {
            let kernel = req.str()?;
            let mut d = [0u32; 6];
            for x in &mut d {
                *x = req.u32()?;
            }
            let shared = req.u64()?;
            let stream = req.u64()?;
            let n = req.u32()?;
            let mut args = Vec::new();
            for _ in 0..n {
                args.push(req.blob()?);
            }
            Call::Launch(Launch {
                kernel,
                grid: [d[0], d[1], d[2]],
                block: [d[3], d[4], d[5]],
                shared,
                stream,
                args,
                at: at.clone(),
            })
        }
        Op::Sync => {
            let _what = req.u8()?;
            let _handle = req.u64()?;
            Call::Sync
        }
        Op::StreamCreate => Call::StreamCreate(req.u32()?),
        Op::EventCreate => Call::EventCreate,
        Op::EventRecord => Call::EventRecord {
            event: req.u64()?,
            stream: req.u64()?,
        },
        Op::WaitEvent => Call::WaitEvent {
            stream: req.u64()?,
            event: req.u64()?,
        },
        Op::Unsupported => Call::Unsupported(req.str()?),
        Op::Props => Call::Props,
        Op::SymbolAddress => Call::SymbolAddress(req.u64()?),
        Op::HelloRoot | Op::HelloFork | Op::Status | Op::ManagedPush => {
            return Err(WireError::Malformed(
                "a hello or status in the middle of a run",
            ))
        }
    })
}

/// Answers one request of process `conn`: where it observes pending device work, the work
/// is explored first, and the process forks once per further outcome.
fn answer(
    mut req: Request,
    conn: u64,
    device: &mut Device,
    path: &mut Vec<Step>,
    shared: &Mutex<Shared>,
) -> Result<Reply, HostError> {
    let file = req.str().map_err(wire)?;
    let line = req.u32().map_err(wire)?;
    let at = At { file, line };
    let call = read_call(req.op, &mut req, &at).map_err(wire)?;
    if let Call::Unsupported(what) = &call {
        let f = Finding::Unsupported {
            at: at.clone(),
            what: what.clone(),
        };
        let why = f.to_string();
        lock(shared).finding(f);
        path.push(Step::Stopped(why.clone()));
        return Ok(Reply::stop(&why));
    }
    if !call.observes() || device.pending.is_empty() {
        let platform = lock(shared).platform.clone();
        let r = apply(&call, device, &at, &platform)?;
        return Ok(with_managed(&call, device, r));
    }
    // Explored outside the lock: other processes go on meanwhile.
    let cx = Arc::clone(&lock(shared).cx);
    let explored: Explored = device.explore(&cx)?;
    let mut s = lock(shared);
    s.report.executions = s.report.executions.saturating_add(explored.executions);
    s.report.racy |= explored.racy;
    s.report.hangs |= explored.hangs;
    s.report.device_assert |= explored.device_assert;
    s.report.incomplete |= explored.incomplete;
    for f in explored.findings {
        s.finding(f);
    }
    if let Some(why) = explored.stop {
        path.push(Step::Stopped(why.clone()));
        return Ok(Reply::stop(&why));
    }
    let mut outcomes = explored.outcomes;
    let n_all = outcomes.len();
    let room = s.opts.max_processes.saturating_sub(s.processes) + 1;
    let keep = n_all.min(s.opts.max_outcomes).min(room).max(1);
    if keep < n_all {
        let why = format!(
            "{at}: {n_all} outcomes, {keep} run (--max-outcomes {}, at most {} processes)",
            s.opts.max_outcomes, s.opts.max_processes
        );
        s.report.cut.get_or_insert(why);
        outcomes.truncate(keep);
    }
    let platform = s.platform.clone();
    let mut replies = Vec::new();
    for o in &mut outcomes {
        let r = apply(&call, &mut o.device, &at, &platform)?;
        replies.push(with_managed(&call, &o.device, r));
    }
    let n = outcomes.len();
    // Every observation is a step of the way, one outcome or more: its witness is part of
    // what led the process where it goes.
    let step = |i: usize, witness: Witness| Step::Observed {
        at: at.clone(),
        outcome: i + 1,
        of: n,
        witness: Arc::new(witness),
    };
    if n == 1 {
        let o = outcomes.pop().expect("one outcome");
        *device = o.device;
        path.push(step(0, o.witness));
        drop(s);
        return Ok(replies.pop().expect("one reply"));
    }
    let base = path.clone();
    let mut first = None;
    for (i, (o, r)) in outcomes.into_iter().zip(replies).enumerate() {
        let mut p = base.clone();
        p.push(step(i, o.witness));
        let d = o.device;
        if i == 0 {
            first = Some((d, r, p));
        } else {
            s.forks.insert(
                (conn, i as u64),
                PendingFork {
                    device: d,
                    reply: r,
                    path: p,
                },
            );
        }
    }
    s.live += n - 1;
    s.processes += n - 1;
    drop(s);
    let (d, r, p) = first.expect("an outcome");
    *device = d;
    *path = p;
    // The fork message, then this process's own reply: both go out together.
    let mut both = Reply::fork(n as u64);
    both.append(r);
    Ok(both)
}

fn wire(e: WireError) -> HostError {
    HostError::Internal(e.to_string())
}

/// The reply to `call` on `device`, whose pending work is explored already where the call
/// observes it.
fn apply(
    call: &Call,
    device: &mut Device,
    at: &At,
    platform: &scopecheck_model::Platform,
) -> Result<Reply, HostError> {
    Ok(match call {
        Call::Register {
            name,
            shadow,
            bytes,
            managed,
        } => {
            if *managed {
                return Err(bad(
                    at,
                    format!(
                        "the `__managed__` variable `{name}`: not supported by the native host path yet"
                    ),
                ));
            }
            let addr = device.alloc(bytes.clone(), Some(name.clone()));
            let (a, _) = device.resolve(addr).expect("just allocated");
            device.symbols.insert(*shadow, a);
            Reply::ok(code::SUCCESS)
        }
        Call::Malloc(n) => malloc(device, at, *n)?,
        Call::MallocManaged { host, n, name } => malloc_managed(device, at, *host, *n, name)?,
        Call::Free(addr) => match device.resolve(*addr) {
            Some((a, 0)) if device.allocs[a].symbol.is_none() => {
                device.allocs[a].freed = true;
                Reply::ok(code::SUCCESS)
            }
            _ => Reply::ok(code::INVALID_DEVICE_POINTER),
        },
        Call::CopyH2D { .. }
        | Call::CopyD2H { .. }
        | Call::CopyD2D { .. }
        | Call::Memset { .. } => copy(call, device),
        Call::Launch(l) => {
            let threads: u64 = l.grid.iter().chain(&l.block).map(|&d| d as u64).product();
            if threads == 0 {
                return Ok(Reply::ok(9)); // cudaErrorInvalidConfiguration
            }
            device.pending.push(Work::Launch(l.clone()));
            Reply::ok(code::SUCCESS)
        }
        Call::Sync => Reply::ok(code::SUCCESS),
        Call::StreamCreate(flags) => {
            device.streams.push(*flags);
            let mut r = Reply::ok(code::SUCCESS);
            // Handles 0 and 1 are the legacy default stream; created streams start at 2.
            r.u64(device.streams.len() as u64 + 1);
            r
        }
        Call::EventCreate | Call::EventRecord { .. } | Call::WaitEvent { .. } => {
            event(call, device)
        }
        Call::Props => props(platform),
        Call::SymbolAddress(shadow) => match device.symbols.get(shadow) {
            Some(&a) => {
                let mut r = Reply::ok(code::SUCCESS);
                r.u64(crate::device::DEVICE_BASE + ((a as u64 + 1) << 32));
                r
            }
            None => {
                let mut r = Reply::ok(code::INVALID_SYMBOL);
                r.u64(0);
                r
            }
        },
        Call::Unsupported(what) => Reply::stop(&format!("{at}: `{what}` is not supported")),
    })
}

/// A call the native host path refuses, at `at`.
fn bad(at: &At, what: String) -> HostError {
    HostError::Device(format!("{at}: {what}"))
}

/// `cudaMalloc` of `n` bytes: the new allocation's address.
fn malloc(device: &mut Device, at: &At, n: u64) -> Result<Reply, HostError> {
    if n > MAX_ALLOCATION_BYTES {
        return Err(bad(
            at,
            format!(
                "cudaMalloc of {n} bytes: the native host path keeps device memory of at most {MAX_ALLOCATION_BYTES} bytes per allocation"
            ),
        ));
    }
    let addr = device.alloc(vec![0; n as usize], None);
    let mut r = Reply::ok(code::SUCCESS);
    r.u64(addr);
    Ok(r)
}

/// `cudaMallocManaged` of `n` bytes at host address `host`, or a `__managed__` variable
/// `name` (empty for an allocation).
fn malloc_managed(
    device: &mut Device,
    at: &At,
    host: u64,
    n: u64,
    name: &str,
) -> Result<Reply, HostError> {
    if n > MAX_ALLOCATION_BYTES {
        return Err(bad(
            at,
            format!(
                "managed memory of {n} bytes: the native host path keeps at most {MAX_ALLOCATION_BYTES} bytes per allocation"
            ),
        ));
    }
    let symbol = (!name.is_empty()).then(|| name.to_string());
    device.alloc(vec![0; n as usize], symbol.clone());
    let a = device.allocs.len() - 1;
    device.allocs[a].host = Some(host);
    if symbol.is_some() {
        device.symbols.insert(host, a);
    }
    Ok(Reply::ok(code::SUCCESS))
}

/// The copies (`cudaMemcpy` each way) and `cudaMemset`: an invalid value where a range is not
/// inside one allocation.
fn copy(call: &Call, device: &mut Device) -> Reply {
    match call {
        Call::CopyH2D { dst, data } => match device.range(*dst, data.len()) {
            Some(m) => {
                m.copy_from_slice(data);
                Reply::ok(code::SUCCESS)
            }
            None => Reply::ok(code::INVALID_VALUE),
        },
        Call::CopyD2H { src, n } => match device.range(*src, *n as usize) {
            Some(m) => {
                let mut r = Reply::ok(code::SUCCESS);
                r.blob(m);
                r
            }
            None => Reply::ok(code::INVALID_VALUE),
        },
        Call::CopyD2D { dst, src, n } => {
            let data = device.range(*src, *n as usize).map(|m| m.to_vec());
            match (data, device.range(*dst, *n as usize)) {
                (Some(d), Some(m)) => {
                    m.copy_from_slice(&d);
                    Reply::ok(code::SUCCESS)
                }
                _ => Reply::ok(code::INVALID_VALUE),
            }
        }
        Call::Memset { dst, value, n } => match device.range(*dst, *n as usize) {
            Some(m) => {
                m.fill(*value);
                Reply::ok(code::SUCCESS)
            }
            None => Reply::ok(code::INVALID_VALUE),
        },
        _ => unreachable!("`copy` is called for copies and memsets"),
    }
}

/// The event calls: `cudaEventCreate`, and `cudaEventRecord` and `cudaStreamWaitEvent`, which
/// queue their order among the device work.
fn event(call: &Call, device: &mut Device) -> Reply {
    match *call {
        Call::EventCreate => {
            device.events += 1;
            let mut r = Reply::ok(code::SUCCESS);
            r.u64(device.events);
            r
        }
        Call::EventRecord { event, .. } | Call::WaitEvent { event, .. }
            if event == 0 || event > device.events =>
        {
            Reply::ok(code::INVALID_RESOURCE_HANDLE)
        }
        Call::EventRecord { event, stream } => {
            device.pending.push(Work::Record { event, stream });
            Reply::ok(code::SUCCESS)
        }
        Call::WaitEvent { stream, event } => {
            device.pending.push(Work::Wait { stream, event });
            Reply::ok(code::SUCCESS)
        }
        _ => unreachable!("`event` is called for the event calls"),
    }
}

/// `cudaGetDeviceProperties`: the platform's name, compute capability 9.0, 132
/// multiprocessors, and what the platform lets the host rely on.
fn props(platform: &scopecheck_model::Platform) -> Reply {
    let mut r = Reply::ok(code::SUCCESS);
    r.blob(platform_name(platform).as_bytes());
    r.u32(9).u32(0).u32(132);
    r.u8(platform.host_native_atomics as u8);
    r.u8(platform.concurrent_managed_access as u8);
    r.u8(platform.pageable_memory_access as u8);
    r
}

fn platform_name(p: &scopecheck_model::Platform) -> String {
    match p.name.as_str() {
        "ideal" => "scopecheck ideal GPU".into(),
        n => format!("scopecheck {n}"),
    }
}

#[cfg(test)]
mod panics {
    use super::*;

    /// A panic while serving is kept with its message (the run then ends with it as an
    /// internal error), and the mutex it held stays usable: before, a serving thread's panic
    /// left its process counted live and the run waited until the time limit.
    #[test]
    fn a_panic_while_serving_is_recorded_with_its_message() {
        let panicked = Mutex::new(None);
        let shared = Mutex::new(0u32);
        guarded(&panicked, || {
            let _held = shared.lock().unwrap();
            panic!("exploration broke at {}", 7);
        });
        assert_eq!(lock(&panicked).as_deref(), Some("exploration broke at 7"));
        *lock(&shared) += 1;
        assert_eq!(*lock(&shared), 1);
    }

    /// A thread that serves to the end leaves nothing recorded.
    #[test]
    fn serving_to_the_end_records_nothing() {
        let panicked = Mutex::new(None);
        guarded(&panicked, || {});
        assert!(lock(&panicked).is_none());
    }
}
