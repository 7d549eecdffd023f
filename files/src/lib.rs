//! Files on disk, for every crate of the workspace: the one atomic writer
//! ([`write_atomic`]) and the one folder walker ([`files_under`]). Torch-free and
//! dependency-light, so that the rules crate and the torch-free `koma` front can use it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` so that no reader ever sees a partial file: a hidden
/// temporary file in the same folder (`.<name>.tmp-*`, which run listings skip), fsync,
/// rename over `path`, then fsync of the folder so that the rename survives a power cut.
/// On failure the temporary file is removed and `path` is untouched. The file gets the
/// permissions `File::create` would give it: those of the file it replaces, or for a new
/// file read and write for all less the umask (not the temporary file's owner-only mode,
/// which would hide a shared model file from the other users of a machine).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} names no file", path.display())))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode asked at creation: the umask then applies, as for File::create.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    if let Ok(old) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(old.permissions())?;
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Opening a folder and fsyncing it works on Linux; elsewhere it may fail harmlessly.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// `paths` with every folder among them replaced by the files below it that `keep`
/// accepts, walked depth first with each folder's entries in byte order of their names
/// (files and subfolders interleaved); a path that is not a folder is kept as given,
/// whatever `keep` says. Unreadable entries are skipped.
pub fn files_under(paths: &[PathBuf], keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let walk = walkdir::WalkDir::new(p).follow_links(true).sort_by_file_name();
        for entry in walk.into_iter().filter_map(Result::ok) {
            if entry.file_type().is_file() && keep(entry.path()) {
                out.push(entry.into_path());
            }
        }
    }
    out
}

/// The lower-case extension of `path` (empty when it has none).
pub fn extension(path: &Path) -> String {
    path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.bin")]);
    }

    /// A new file is readable by all under a usual umask (as File::create makes it); a
    /// replaced file keeps its mode.
    #[cfg(unix)]
    #[test]
    fn atomic_write_gives_the_permissions_file_create_gives() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (ours, plain) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
        write_atomic(&ours, b"one").unwrap();
        std::fs::write(&plain, b"one").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
        assert_ne!(mode(&ours) & 0o044, 0, "a new file is readable beyond its owner: {:o}", mode(&ours));
        std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&ours, b"two").unwrap();
        assert_eq!(mode(&ours), 0o640);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing-folder").join("a.bin");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(write_atomic(Path::new("/"), b"x").is_err());
    }

    #[test]
    fn folders_are_walked_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("b/c")).unwrap();
        for f in ["a.x", "b/z.x", "b/c/y.x", "b/c/skip.y", "c.x"] {
            std::fs::write(d.join(f), b"").unwrap();
        }
        let named = d.join("b/c/skip.y");
        let got = files_under(&[d.to_path_buf(), named.clone()], |p| extension(p) == "x");
        let rel: Vec<_> = got.iter().map(|p| p.strip_prefix(d).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(rel, ["a.x", "b/c/y.x", "b/z.x", "c.x", "b/c/skip.y"]);
    }
}
