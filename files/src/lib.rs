//! Files on disk, for every crate of the workspace: the one atomic writer
//! ([`write_atomic`]) and the one folder walker ([`files_under`]). Torch-free and
//! dependency-light, so that the rules crate and the torch-free `koma` front can use it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` so that no reader ever sees a partial file: a hidden
/// temporary file in the same folder (`.<name>.tmp-*`, which run listings skip), fsync,
/// rename over `path`, then fsync of the folder so that the rename survives a power cut.
/// On failure the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} names no file", path.display())))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(&format!(".{}.tmp-", name.to_string_lossy())).tempfile_in(dir)?;
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
