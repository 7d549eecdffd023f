//! A run's store and the local folder where this process keeps its files of it.
//!
//! For a local run the folder is the run itself and nothing is copied. For a remote run
//! (S3, GCS, memory) it is a cache: checkpoints and TensorBoard files are written there
//! and uploaded; networks are downloaded there before they are loaded.

use std::path::{Path, PathBuf};

use store::RunStore;

use crate::error::TrainError;

pub struct RunFiles {
    pub store: RunStore,
    dir: PathBuf,
}

/// The default cache folder of a remote run: the system's temporary folder, one
/// sub-folder per URL.
fn default_cache(url: &str) -> PathBuf {
    let safe: String = url.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    std::env::temp_dir().join("koma-cache").join(safe)
}

impl RunFiles {
    /// Opens the run at `url`; `cache` overrides the cache folder of a remote run.
    pub fn open(url: &str, cache: Option<&Path>) -> Result<RunFiles, TrainError> {
        let store = RunStore::open(url)?;
        let dir = match store.local_root() {
            Some(root) => root.to_path_buf(),
            None => cache.map(Path::to_path_buf).unwrap_or_else(|| default_cache(url)),
        };
        std::fs::create_dir_all(&dir).map_err(|source| TrainError::Io { path: dir.clone(), source })?;
        Ok(RunFiles { store, dir })
    }

    /// The local folder (the run itself, or the cache of a remote run).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_local(&self) -> bool {
        self.store.local_root().is_some()
    }

    /// The local file of `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// How to name the run in messages: its folder, or its URL.
    pub fn describe(&self) -> String {
        if self.is_local() {
            self.dir.display().to_string()
        } else {
            self.store.url().to_string()
        }
    }

    /// Uploads the local file of `key` (nothing to do for a local run).
    pub fn push(&self, key: &str) -> Result<(), TrainError> {
        if self.is_local() {
            return Ok(());
        }
        Ok(self.store.upload_file(key, &self.path(key))?)
    }

    /// The local file of `key`, downloaded first for a remote run; `None` if the run has
    /// no such object.
    pub fn pull(&self, key: &str) -> Result<Option<PathBuf>, TrainError> {
        let path = self.path(key);
        if self.is_local() {
            return Ok(path.exists().then_some(path));
        }
        Ok(self.store.download_file(key, &path)?.then_some(path))
    }
}
