//! Reading a test file (or a harness, a platform or cost table) hardened against what a CI
//! checkout or a careless glob can hold: FIFOs, sockets and devices, huge files and bytes
//! that are not UTF-8.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use scopecheck_ir::Span;

use crate::Failure;

/// The default `--max-file-size`: far above any test, far below what hurts. Each reader takes
/// its limit as an argument (`crate::Options::max_file_size` for what [`crate::load`] reads):
/// no process-wide setting, so that a library user's two loads can have two limits.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 16 << 20;

/// A size as people read it: `16 MiB`, `1500 bytes`.
fn show_size(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.trailing_zeros() >= shift {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// What a path that is neither a regular file nor a directory is, for messages.
pub(crate) fn kind(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "something other than a regular file"
    }
}

/// Why `path` could not even be looked at; a dangling symbolic link says so.
pub(crate) fn unreadable(path: &Path, e: &std::io::Error) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() && e.kind() == std::io::ErrorKind::NotFound => {
            "cannot read this file: a symbolic link to a file that does not exist".into()
        }
        _ => format!("cannot read this file: {e}"),
    }
}

/// Reads a test file (or a harness) whose reports name it `file`, of at most `limit` bytes:
/// its text, or the failure to report, with the position of the first byte that is not UTF-8.
pub fn read_source(file: &str, path: &Path, limit: u64) -> Result<String, Box<Failure>> {
    let bytes = read_bytes(path, limit).map_err(|e| Failure::io(file, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let (span, message) = not_utf8(&bytes, offset);
        Failure::located(
            file,
            message,
            String::from_utf8_lossy(&bytes).into_owned(),
            span,
        )
    })
}

/// Reads a text file given by a flag (a platform or cost table), of at most `limit` bytes: its
/// text, or why not, in one line naming the file.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    let shown = path.display();
    let bytes = read_bytes(path, limit).map_err(|e| format!("{shown}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        format!("{shown}: {}", not_utf8(e.as_bytes(), offset).1)
    })
}

/// Where the bytes stop being UTF-8 (`offset`, from `Utf8Error::valid_up_to`), as a span of
/// the lossy text (whose prefix up to `offset` is the same bytes) and a message.
fn not_utf8(bytes: &[u8], offset: usize) -> (Span, String) {
    // Valid UTF-8 up to the offset, so this cannot fail.
    let prefix = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line = prefix.matches('\n').count() + 1;
    let column = prefix[prefix.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let span = Span {
        offset,
        // The replacement character the lossy text has there.
        len: '\u{FFFD}'.len_utf8(),
        line: line as u32,
        column: column as u32,
    };
    let message = format!(
        "not UTF-8 text: invalid byte 0x{:02X} at byte offset {offset} (line {line}, column {column})",
        bytes[offset]
    );
    (span, message)
}

/// A file's bytes, at most `limit` (`--max-file-size`) of them. Only a regular file is opened:
/// a FIFO would block the open and the read, a device like /dev/zero would never end.
fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    check_regular(&meta)?;
    if meta.len() > limit {
        return Err(too_large(Some(meta.len()), limit));
    }
    // Non-blocking, and checked again once open: the path may have been replaced by a FIFO
    // since it was looked at. On a regular file the flag changes nothing.
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read this file: {e}"))?;
    let opened = file
        .metadata()
        .map_err(|e| format!("cannot read this file: {e}"))?;
    check_regular(&opened)?;
    let mut bytes = Vec::with_capacity(opened.len().min(limit) as usize);
    // One byte more than the limit tells a file that grew past it (or whose size the system
    // does not know, as in /proc) from one that fits.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read this file: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

pub(crate) fn check_regular(meta: &Metadata) -> Result<(), String> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(format!(
            "cannot read this file: it is {}, and only regular files are read",
            kind(meta)
        ))
    }
}

fn too_large(size: Option<u64>, limit: u64) -> String {
    let size = size.map_or_else(|| "larger".into(), |n| format!("{} bytes,", n));
    format!(
        "this file is {size} more than the limit of {} (--max-file-size raises it)",
        show_size(limit)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_show_in_the_largest_whole_binary_unit() {
        // 16 << 20 is a whole number of MiB; 1500 is no whole number of KiB.
        assert_eq!(show_size(16 << 20), "16 MiB");
        assert_eq!(show_size(1500), "1500 bytes");
        assert_eq!(show_size(3 << 10), "3 KiB");
    }

    #[test]
    fn the_first_invalid_byte_is_located() {
        let bytes = b"ab\ncd\xffe";
        let (span, message) = not_utf8(bytes, 5);
        assert_eq!((span.line, span.column, span.offset), (2, 3, 5));
        assert!(
            message.contains("0xFF at byte offset 5 (line 2, column 3)"),
            "{message}"
        );
    }
}
