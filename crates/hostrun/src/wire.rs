//! The messages between scopecheck and the runtime library in the child processes
//! (`runtime/runtime.cpp`; the two change together).
//!
//! Each message is a little-endian `u32` length and that many bytes. A request starts with its
//! operation byte, then (all but the hellos and the status) the file and line of the call;
//! integers are little-endian `u32`/`u64`, byte strings a `u64` length and the bytes. A reply
//! starts with a tag: [`Tag::Reply`] (a `u32` CUDA error code and the call's results follow),
//! [`Tag::Fork`] (the process forks into a `u64` count of processes, each of which then reads
//! its own reply) or [`Tag::Stop`] (the process prints the reason and exits).

use std::io::{Read, Write};

/// Operations of requests (`enum Op` in runtime.cpp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    HelloRoot,
    HelloFork,
    Register,
    Malloc,
    Free,
    CopyH2D,
    CopyD2H,
    CopyD2D,
    Memset,
    Launch,
    Sync,
    StreamCreate,
    EventCreate,
    EventRecord,
    WaitEvent,
    Unsupported,
    Props,
    SymbolAddress,
    ManagedPush,
    MallocManaged,
    Status,
}

impl Op {
    fn from_byte(b: u8) -> Option<Op> {
        Some(match b {
            1 => Op::HelloRoot,
            2 => Op::HelloFork,
            10 => Op::Register,
            11 => Op::Malloc,
            12 => Op::Free,
            13 => Op::CopyH2D,
            14 => Op::CopyD2H,
            15 => Op::CopyD2D,
            16 => Op::Memset,
            19 => Op::Launch,
            20 => Op::Sync,
            21 => Op::StreamCreate,
            22 => Op::EventCreate,
            23 => Op::EventRecord,
            24 => Op::WaitEvent,
            25 => Op::Unsupported,
            26 => Op::Props,
            27 => Op::SymbolAddress,
            28 => Op::ManagedPush,
            29 => Op::MallocManaged,
            30 => Op::Status,
            _ => return None,
        })
    }
}

/// Reply tags (`enum Tag` in runtime.cpp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Reply = 0,
    Fork = 1,
    Stop = 2,
    /// Managed memory's contents as the device left them: a `u32` count of regions, each its
    /// host address (`u64`) and bytes; the process writes them and reads on.
    Managed = 3,
}

/// The CUDA error codes scopecheck answers with (`enum cudaError` in cuda_runtime.h).
pub mod code {
    pub const SUCCESS: u32 = 0;
    pub const INVALID_VALUE: u32 = 1;
    pub const INVALID_SYMBOL: u32 = 13;
    pub const INVALID_DEVICE_POINTER: u32 = 17;
    pub const INVALID_RESOURCE_HANDLE: u32 = 400;
    pub const LAUNCH_FAILURE: u32 = 719;
}

/// A malformed message: the child is not running scopecheck's runtime as built.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the connection ended")]
    Closed,
    #[error("a malformed message from the host program: {0}")]
    Malformed(&'static str),
}

/// A request being read.
pub struct Request {
    pub op: Op,
    body: Vec<u8>,
    at: usize,
}

/// The largest message either side sends (device memory copies are bounded far below it).
pub const MAX_MESSAGE: usize = 256 << 20;

/// Reads one request; `Closed` at the end of the stream.
pub fn read_request(r: &mut impl Read) -> Result<Request, WireError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(|_| WireError::Closed)?;
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_MESSAGE {
        return Err(WireError::Malformed("a message length out of range"));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).map_err(|_| WireError::Closed)?;
    let op = Op::from_byte(body[0]).ok_or(WireError::Malformed("an unknown operation"))?;
    Ok(Request { op, body, at: 1 })
}

impl Request {
    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.body.len())
            .ok_or(WireError::Malformed("a message shorter than its fields"))?;
        let s = &self.body[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    pub fn blob(&mut self) -> Result<Vec<u8>, WireError> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| WireError::Malformed("a length out of range"))?;
        Ok(self.take(n)?.to_vec())
    }
    pub fn str(&mut self) -> Result<String, WireError> {
        Ok(String::from_utf8_lossy(&self.blob()?).into_owned())
    }
}

/// A reply being built: one message, or (after a fork) two, sent back to back.
pub struct Reply(Vec<Vec<u8>>);

impl Reply {
    fn tagged(tag: Tag) -> Reply {
        Reply(vec![vec![tag as u8]])
    }
    /// A [`Tag::Reply`] with the error code `code`.
    pub fn ok(code: u32) -> Reply {
        let mut r = Reply::tagged(Tag::Reply);
        r.u32(code);
        r
    }
    pub fn fork(n: u64) -> Reply {
        let mut r = Reply::tagged(Tag::Fork);
        r.u64(n);
        r
    }
    pub fn stop(why: &str) -> Reply {
        let mut r = Reply::tagged(Tag::Stop);
        r.blob(why.as_bytes());
        r
    }
    /// The contents of managed memory, `(host address, bytes)` per region.
    pub fn managed(regions: &[(u64, &[u8])]) -> Reply {
        let mut r = Reply::tagged(Tag::Managed);
        r.u32(regions.len() as u32);
        for (addr, bytes) in regions {
            r.u64(*addr).blob(bytes);
        }
        r
    }
    /// A bare value (the hellos' connection number).
    pub fn raw_u64(v: u64) -> Reply {
        let mut r = Reply(vec![vec![]]);
        r.u64(v);
        r
    }
    /// `next` as a message of its own after this one.
    pub fn append(&mut self, next: Reply) {
        self.0.extend(next.0);
    }
    fn last(&mut self) -> &mut Vec<u8> {
        self.0.last_mut().expect("a reply has a message")
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.last().push(v);
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.last().extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.last().extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn blob(&mut self, b: &[u8]) -> &mut Self {
        self.u64(b.len() as u64);
        self.last().extend_from_slice(b);
        self
    }
    pub fn send(&self, w: &mut impl Write) -> std::io::Result<()> {
        for m in &self.0 {
            w.write_all(&(m.len() as u32).to_le_bytes())?;
            w.write_all(m)?;
        }
        w.flush()
    }
}
