// SPDX-License-Identifier: Apache-2.0
//! Sharing buffers on the `host` backend: an export imported by another context, and one that
//! travelled over a socketpair, is one memory, compared byte for byte both ways; an `Export`
//! closes its descriptors when dropped; a buffer allocated without `XFER_ALLOC_SHAREABLE` is not
//! exported, and a socket that carries no export gives an error, not an export.
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use xfer::{sys, Context, Direction, Export};

const BYTES: usize = (1 << 20) + 123; // not a multiple of the page

fn host() -> Context {
    Context::open(Some("host"), 0).expect("open host")
}

fn pattern(i: usize, seed: u8) -> u8 {
    (i as u8).wrapping_mul(31).wrapping_add(seed)
}

fn fill(bytes: &mut [u8], seed: u8) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = pattern(i, seed);
    }
}

// The offset of the first byte that differs from pattern `seed`, or the length when none does.
fn first_mismatch(bytes: &[u8], seed: u8) -> usize {
    bytes.iter().enumerate().position(|(i, &b)| b != pattern(i, seed)).unwrap_or(bytes.len())
}

fn device_bytes(buf: &xfer::Buffer<'_>) -> &'static [u8] {
    // SAFETY: the host backend's device view is host memory of `len()` bytes; the tests read it
    // only while the buffer lives and no copy is queued on it.
    unsafe { std::slice::from_raw_parts(buf.device_ptr() as *const u8, buf.len()) }
}

// The inode behind a descriptor, None when it is not open. Tests of this file run on several
// threads, so a closed descriptor's number may be reused at once: compare inodes, not numbers.
fn fd_inode(fd: RawFd) -> Option<u64> {
    std::fs::metadata(format!("/proc/self/fd/{fd}")).ok().map(|m| m.ino())
}

// Whether `fd` no longer names the file `inode` (closed, or its number reused by another file).
fn closed(fd: RawFd, inode: u64) -> bool {
    fd_inode(fd) != Some(inode)
}

#[test]
fn an_import_in_another_context_is_the_same_memory_both_ways() {
    let (exporter, importer) = (host(), host());
    let mut mine = exporter.alloc(BYTES, sys::XFER_ALLOC_SHAREABLE).unwrap();
    fill(mine.host_mut().unwrap(), 22);
    mine.copy(Direction::ToDevice, 0, BYTES).unwrap();
    // SAFETY (here and below): one thread; no view of one mapping is borrowed while the other
    // writes, and each side's copies are waited for (Buffer::copy) before the other looks.
    let e = unsafe { mine.export() }.unwrap();
    assert_eq!(e.fds().len(), 1);
    let inode = fd_inode(e.fds()[0]).expect("the export's descriptor is open");
    assert!(!e.blob().is_empty());
    assert_eq!(e.as_raw().version, sys::XFER_EXPORT_VERSION);
    let mut theirs = unsafe { importer.import_buffer(&e) }.unwrap();
    assert_eq!(theirs.len(), BYTES);
    assert_ne!(theirs.device_ptr(), mine.device_ptr()); // another mapping of the same pages
    assert_eq!(first_mismatch(theirs.host().unwrap(), 22), BYTES);
    assert_eq!(first_mismatch(device_bytes(&theirs), 22), BYTES);
    // The importer writes, the exporter reads; then the other way round.
    fill(theirs.host_mut().unwrap(), 33);
    theirs.copy(Direction::ToDevice, 0, BYTES).unwrap();
    assert_eq!(first_mismatch(mine.host().unwrap(), 33), BYTES);
    assert_eq!(first_mismatch(device_bytes(&mine), 33), BYTES);
    fill(mine.host_mut().unwrap(), 44);
    mine.copy(Direction::ToDevice, 0, BYTES).unwrap();
    assert_eq!(first_mismatch(device_bytes(&theirs), 44), BYTES);
    // The exporter's buffer and export may go first: the import keeps the memory.
    let fd = e.fds()[0];
    drop(e);
    assert!(closed(fd, inode));
    drop(mine);
    assert_eq!(first_mismatch(theirs.host().unwrap(), 44), BYTES);
    let again = unsafe { theirs.export() }.unwrap();
    let third = unsafe { exporter.import_buffer(&again) }.unwrap();
    assert_eq!(first_mismatch(third.host().unwrap(), 44), BYTES);
}

#[test]
fn an_export_travels_over_a_socketpair() {
    let (exporter, importer) = (host(), host());
    let mut mine = exporter.alloc(BYTES, sys::XFER_ALLOC_SHAREABLE).unwrap();
    fill(mine.host_mut().unwrap(), 55);
    let e = unsafe { mine.export() }.unwrap();
    let (mut a, b) = UnixStream::pair().unwrap();
    e.send(a.as_raw_fd()).unwrap();
    let inode = fd_inode(e.fds()[0]).expect("the sender keeps its descriptors");
    let got = Export::receive(b.as_raw_fd()).unwrap();
    assert_eq!(got.fds().len(), 1);
    assert_ne!(got.fds()[0], e.fds()[0]); // a new descriptor of the same memory
    assert_eq!(fd_inode(got.fds()[0]), Some(inode));
    assert_eq!(got.blob(), e.blob());
    let theirs = unsafe { importer.import_buffer(&got) }.unwrap();
    let fd = got.fds()[0];
    drop(got);
    assert!(closed(fd, inode)); // the import holds its own
    assert_eq!(first_mismatch(theirs.host().unwrap(), 55), BYTES);

    // Bytes that are not an export, a peer that went away, no socket at all.
    a.write_all(&[b'j'; std::mem::size_of::<sys::xfer_export>()]).unwrap();
    let err = Export::receive(b.as_raw_fd()).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_ARGUMENT, "{err}");
    assert_eq!(err.call(), "xfer_export_receive");
    b.set_nonblocking(true).unwrap();
    let mut rest = [0u8; 512];
    while matches!(std::io::Read::read(&mut &b, &mut rest), Ok(n) if n > 0) {}
    b.set_nonblocking(false).unwrap();
    drop(a);
    let err = Export::receive(b.as_raw_fd()).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_BACKEND, "{err}");
    assert!(err.message().contains("closed"), "{err}");
    assert_eq!(e.send(-1).unwrap_err().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
    assert_eq!(Export::receive(-1).unwrap_err().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
}

#[test]
fn a_buffer_without_the_flag_is_not_exported() {
    let ctx = host();
    let plain = ctx.alloc(4096, sys::XFER_ALLOC_DEFAULT).unwrap();
    let err = unsafe { plain.export() }.unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_STATE, "{err}");
    assert_eq!(err.call(), "xfer_buffer_export");
    assert!(err.message().contains("XFER_ALLOC_SHAREABLE"), "{err}");
    // The buffer is as it was.
    assert_eq!(plain.len(), 4096);
    assert!(plain.host().is_ok());
}

#[test]
fn share_info_names_the_memory_and_how_it_is_shared() {
    let ctx = host();
    let shareable = ctx.alloc(4096, sys::XFER_ALLOC_SHAREABLE).unwrap();
    let info = shareable.share_info().unwrap();
    assert_eq!(info.handle_types, sys::XFER_SHARE_HANDLE_MEMFD);
    assert_eq!(info.host_memory_kind, "system");
    assert_eq!(info.device_memory_kind, "system");
    assert_eq!(info.host_dlpack_device, (1, 0)); // kDLCPU
    assert_eq!(info.device_dlpack_device, (1, 0));
    assert_eq!(info.granularity, 0);
    assert!(!info.rdma_capable);
    let plain = ctx.alloc(4096, 0).unwrap();
    assert_eq!(plain.share_info().unwrap().handle_types, 0);
}
