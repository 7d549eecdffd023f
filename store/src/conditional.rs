//! Conditional writes (compare-and-swap): an object is replaced only while it still is the
//! version that was read, or created only while there is none. The learner's lease and
//! `models/latest.json` rely on them.
//!
//! Object stores do it with preconditions: `If-None-Match: *` and `If-Match: <etag>` on S3
//! and S3-compatible servers, generation matches on GCS, versions in a memory store. A local
//! folder has no such thing; there the read, the comparison and the write happen under an
//! exclusive `flock` of a hidden lock file next to the object (`.<name>.lock`), which every
//! koma process on the machine honours (and on NFS, where Linux turns `flock` into a
//! byte-range lock). A store without conditional writes (an S3-compatible server that
//! answers "not implemented") gets a read, a comparison and a plain write: a race of one
//! request's length instead of none.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use object_store::UpdateVersion;

/// An object as read for a conditional write ([`crate::RunStore::get_versioned`]).
#[derive(Clone, Debug)]
pub struct Versioned {
    pub bytes: Vec<u8>,
    pub(crate) version: Version,
}

/// What a conditional write compares.
#[derive(Clone, Debug)]
pub(crate) enum Version {
    /// The store's own version (etag, generation) of the object.
    Tag(UpdateVersion),
    /// The bytes: a local folder (compared under its lock), or a store that gave no version.
    Bytes,
}

impl Versioned {
    pub(crate) fn new(bytes: Vec<u8>, e_tag: Option<String>, version: Option<String>) -> Versioned {
        let version = if e_tag.is_none() && version.is_none() {
            Version::Bytes
        } else {
            Version::Tag(UpdateVersion { e_tag, version })
        };
        Versioned { bytes, version }
    }

    pub(crate) fn local(bytes: Vec<u8>) -> Versioned {
        Versioned { bytes, version: Version::Bytes }
    }
}

/// A local file's bytes; `None` if there is none.
pub(crate) fn read_local(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The hidden lock file of a local object (`dir/.<name>.lock`).
fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// An exclusive lock of a local object, released when dropped (the file is closed).
struct LocalLock(#[allow(dead_code)] File);

fn lock(path: &Path) -> io::Result<LocalLock> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(lock_path(path))?;
    flock_exclusive(&file)?;
    Ok(LocalLock(file))
}

#[cfg(unix)]
fn flock_exclusive(file: &File) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: a valid open descriptor; flock has no memory effects.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Elsewhere the lock file is only created: the comparison still happens, unguarded.
#[cfg(not(unix))]
fn flock_exclusive(_file: &File) -> io::Result<()> {
    Ok(())
}

/// Writes `bytes` to the local file `path` if it still holds `expected` (`None`: if there
/// is no such file), all under the object's lock. The new version, or `None` if the file
/// changed.
pub(crate) fn put_local_if(path: &Path, bytes: &[u8], expected: Option<&[u8]>) -> io::Result<Option<Versioned>> {
    let _guard = lock(path)?;
    if read_local(path)?.as_deref() != expected {
        return Ok(None);
    }
    files::write_atomic(path, bytes)?;
    Ok(Some(Versioned::local(bytes.to_vec())))
}
