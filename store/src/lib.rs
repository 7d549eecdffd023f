//! koma's run store: where a training run lives, addressed by a URL.
//!
//! One blocking API ([`RunStore`]) over the `object_store` crate, so that the learner and
//! any number of self-play workers can share a run through storage that already exists:
//!
//! | URL | store |
//! | --- | --- |
//! | `runs/demo`, `/abs/path`, `file:///abs/path` | a local folder (created if needed) |
//! | `s3://bucket/prefix` | Amazon S3 or an S3-compatible store (MinIO, ...) |
//! | `gs://bucket/prefix` | Google Cloud Storage |
//! | `memory://name` | in this process's memory (tests); one store per name |
//!
//! Credentials and endpoints come from the usual environment variables, never from files
//! of the run: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT` (an S3-compatible server), `AWS_ALLOW_HTTP=true` (plain HTTP to it),
//! `GOOGLE_APPLICATION_CREDENTIALS` / `GOOGLE_SERVICE_ACCOUNT`, ...
//!
//! Keys are `/`-separated paths relative to the run (`samples/w1-....chunk`). Every
//! [`RunStore::put`] replaces an object whole: readers see the old object or the new one,
//! never part of one (a local folder writes a temporary file and renames it). Nothing here
//! relies on the order of a listing. [`RunStore::put_if`] writes conditionally
//! ([`conditional`]), which the learner's [`lease`] and the published-model pointer use.
//! A `memory://` store can be made to fail on purpose ([`faults`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, PutMode, PutPayload, RetryConfig};

pub mod conditional;
pub mod faults;
pub mod lease;

pub use conditional::Versioned;
use conditional::{put_local_if, read_local, Version};
use faults::{Access, Faults};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("run store URL `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("run store key `{key}` is not a relative path of plain names")]
    BadKey { key: String },
    #[error("{url}: {op} `{key}`: {cause}")]
    Backend { url: String, op: &'static str, key: String, cause: Box<object_store::Error> },
    #[error("{path}: {cause}")]
    Io { path: PathBuf, cause: std::io::Error },
}

/// One object of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Key relative to the run (`samples/x.chunk`).
    pub key: String,
    pub size: u64,
    /// Last modification, milliseconds since the Unix epoch (the store's clock).
    pub modified_ms: i64,
}

impl Entry {
    /// The last path component of the key.
    pub fn name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }
}

/// A run's storage. Cheap to clone; safe to share between threads.
#[derive(Clone, Debug)]
pub struct RunStore {
    store: Arc<dyn ObjectStore>,
    url: String,
    local_root: Option<PathBuf>,
    /// The fault switch of a `memory://` store.
    faults: Option<Arc<Faults>>,
}

/// The runtime that drives `object_store`'s futures for the blocking API.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("koma-store-io")
            .enable_all()
            .build()
            .expect("start the run store's I/O runtime")
    })
}

/// `memory://name` stores of this process (with their fault switches), so that roles in
/// one process share a run.
fn memory_store(name: &str) -> (Arc<dyn ObjectStore>, Arc<Faults>) {
    type Stores = HashMap<String, (Arc<InMemory>, Arc<Faults>)>;
    static STORES: OnceLock<Mutex<Stores>> = OnceLock::new();
    let mut map = STORES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let (store, faults) = map.entry(name.to_string()).or_default().clone();
    (store, faults)
}

/// Quick failure instead of minutes of retries: a worker spools chunks locally and tries
/// again later, so a store that is down must be noticed in seconds.
fn cloud_retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(20),
    }
}

/// Connection and request timeouts (the rest of the client options come from the
/// environment, e.g. `AWS_ALLOW_HTTP`).
const CONNECT_TIMEOUT: &str = "5s";
const REQUEST_TIMEOUT: &str = "120s";

/// Splits `scheme://bucket/prefix` into (bucket URL, prefix).
fn split_bucket(url: &str, scheme: &str) -> (String, String) {
    let rest = url[scheme.len() + 3..].trim_end_matches('/');
    match rest.split_once('/') {
        Some((bucket, prefix)) => (format!("{scheme}://{bucket}"), prefix.trim_matches('/').to_string()),
        None => (format!("{scheme}://{rest}"), String::new()),
    }
}

fn with_prefix(store: Arc<dyn ObjectStore>, prefix: &str) -> Arc<dyn ObjectStore> {
    if prefix.is_empty() {
        store
    } else {
        Arc::new(PrefixStore::new(store, prefix))
    }
}

impl RunStore {
    /// Opens the store named by `url` (see the crate documentation for the forms).
    pub fn open(url: &str) -> Result<RunStore, StoreError> {
        let bad = |reason: String| StoreError::BadUrl { url: url.to_string(), reason };
        let mut faults = None;
        let (store, local_root): (Arc<dyn ObjectStore>, Option<PathBuf>) =
            if let Some(name) = url.strip_prefix("memory://") {
                let (store, switch) = memory_store(name);
                faults = Some(switch);
                (store, None)
            } else if url.starts_with("s3://") {
                let (bucket, prefix) = split_bucket(url, "s3");
                let s3 = AmazonS3Builder::from_env()
                    .with_url(bucket)
                    .with_retry(cloud_retry())
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout), CONNECT_TIMEOUT)
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), REQUEST_TIMEOUT)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                (with_prefix(Arc::new(s3), &prefix), None)
            } else if url.starts_with("gs://") {
                let (bucket, prefix) = split_bucket(url, "gs");
                let gcs = GoogleCloudStorageBuilder::from_env()
                    .with_url(bucket)
                    .with_retry(cloud_retry())
                    .with_config(GoogleConfigKey::Client(ClientConfigKey::ConnectTimeout), CONNECT_TIMEOUT)
                    .with_config(GoogleConfigKey::Client(ClientConfigKey::Timeout), REQUEST_TIMEOUT)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                (with_prefix(Arc::new(gcs), &prefix), None)
            } else if url.contains("://") && !url.starts_with("file://") {
                return Err(bad("expected a folder, file://, s3://, gs:// or memory://".into()));
            } else {
                let dir = PathBuf::from(url.strip_prefix("file://").unwrap_or(url));
                if dir.as_os_str().is_empty() {
                    return Err(bad("empty folder name".into()));
                }
                std::fs::create_dir_all(&dir).map_err(|cause| StoreError::Io { path: dir.clone(), cause })?;
                let root = dir.canonicalize().map_err(|cause| StoreError::Io { path: dir.clone(), cause })?;
                let fs = LocalFileSystem::new_with_prefix(&root).map_err(|e| bad(e.to_string()))?;
                (Arc::new(fs), Some(root))
            };
        Ok(RunStore { store, url: url.to_string(), local_root, faults })
    }

    /// The fault switch of a `memory://` store (`None` for every other store).
    pub fn faults(&self) -> Option<&Faults> {
        self.faults.as_deref()
    }

    /// Fails the request when a fault is injected.
    fn admit(&self, access: Access, op: &'static str, key: &str) -> Result<(), StoreError> {
        let Some(f) = &self.faults else { return Ok(()) };
        f.admit(access).map_err(|e| {
            let cause = object_store::Error::Generic { store: "memory", source: Box::new(e) };
            self.backend(op, key)(cause)
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The folder of a local store.
    pub fn local_root(&self) -> Option<&Path> {
        self.local_root.as_deref()
    }

    /// Where `key` lives on this machine's disk, for a local store.
    pub fn local_path(&self, key: &str) -> Option<PathBuf> {
        self.local_root.as_ref().map(|r| r.join(key))
    }

    fn path(&self, key: &str) -> Result<ObjectPath, StoreError> {
        let plain = |p: &str| !p.is_empty() && p != "." && p != ".." && !p.contains('\\');
        if key.starts_with('/') || !key.split('/').all(plain) {
            return Err(StoreError::BadKey { key: key.to_string() });
        }
        ObjectPath::parse(key).map_err(|_| StoreError::BadKey { key: key.to_string() })
    }

    fn backend(&self, op: &'static str, key: &str) -> impl FnOnce(object_store::Error) -> StoreError + '_ {
        let key = key.to_string();
        move |cause| StoreError::Backend { url: self.url.clone(), op, key, cause: Box::new(cause) }
    }

    /// Writes `bytes` as `key` in one request, replacing any object of that name.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.admit(Access::Write, "put", key)?;
        if let Some(local) = self.local_path(key) {
            // Durable as well as atomic: fsync before the rename (a power cut keeps a run).
            return write_local(&local, &bytes);
        }
        runtime().block_on(self.store.put(&path, PutPayload::from(bytes))).map_err(self.backend("put", key))?;
        Ok(())
    }

    /// The object `key`, or `None` if there is none.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key)?;
        self.admit(Access::Read, "get", key)?;
        let result = runtime().block_on(async {
            let r = self.store.get(&path).await?;
            r.bytes().await
        });
        match result {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.backend("get", key)(e)),
        }
    }

    /// Every object whose key starts with the folder `prefix` (e.g. `samples`), sorted
    /// by key. Names starting with `.` (temporary files of a local folder) are left out.
    pub fn list(&self, prefix: &str) -> Result<Vec<Entry>, StoreError> {
        let p = self.path(prefix.trim_end_matches('/'))?;
        self.admit(Access::List, "list", prefix)?;
        let metas: Vec<object_store::ObjectMeta> =
            runtime().block_on(self.store.list(Some(&p)).try_collect()).map_err(self.backend("list", prefix))?;
        let mut out: Vec<Entry> = metas
            .into_iter()
            .map(|m| Entry {
                key: m.location.to_string(),
                size: m.size,
                modified_ms: m.last_modified.timestamp_millis(),
            })
            .filter(|e| !e.name().starts_with('.'))
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// Deletes `key`; a missing object is not an error.
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.admit(Access::Write, "delete", key)?;
        match runtime().block_on(self.store.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.backend("delete", key)(e)),
        }
    }

    /// Copies `from` to `to` inside the store (server-side where the store can).
    pub fn copy(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let (f, t) = (self.path(from)?, self.path(to)?);
        self.admit(Access::Write, "copy", to)?;
        runtime().block_on(self.store.copy(&f, &t)).map_err(self.backend("copy", from))
    }

    /// The object `key` with its version, for a conditional [`RunStore::put_if`]; `None` if
    /// there is none.
    pub fn get_versioned(&self, key: &str) -> Result<Option<Versioned>, StoreError> {
        let path = self.path(key)?;
        self.admit(Access::Read, "get", key)?;
        if let Some(local) = self.local_path(key) {
            let bytes = read_local(&local).map_err(|cause| StoreError::Io { path: local, cause })?;
            return Ok(bytes.map(Versioned::local));
        }
        let result = runtime().block_on(async {
            let r = self.store.get(&path).await?;
            let meta = r.meta.clone();
            Ok::<_, object_store::Error>((r.bytes().await?, meta))
        });
        match result {
            Ok((b, meta)) => Ok(Some(Versioned::new(b.to_vec(), meta.e_tag, meta.version))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.backend("get", key)(e)),
        }
    }

    /// Writes `bytes` as `key` only while the object still is `expected` (as
    /// [`RunStore::get_versioned`] read it), or, with `expected` `None`, only while there is
    /// no such object. The version written, or `None` (nothing written) when the object
    /// changed in between.
    pub fn put_if(
        &self,
        key: &str,
        bytes: Vec<u8>,
        expected: Option<&Versioned>,
    ) -> Result<Option<Versioned>, StoreError> {
        let path = self.path(key)?;
        self.admit(Access::Write, "put", key)?;
        if let Some(local) = self.local_path(key) {
            let expected = expected.map(|v| v.bytes.as_slice());
            return put_local_if(&local, &bytes, expected).map_err(|cause| StoreError::Io { path: local, cause });
        }
        let mode = match expected.map(|v| &v.version) {
            None => PutMode::Create,
            Some(Version::Tag(v)) => PutMode::Update(v.clone()),
            Some(Version::Bytes) => return self.put_if_same_bytes(key, bytes, expected),
        };
        let payload = PutPayload::from(bytes.clone());
        match runtime().block_on(self.store.put_opts(&path, payload, mode.into())) {
            Ok(r) => Ok(Some(Versioned::new(bytes, r.e_tag, r.version))),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. }
                | object_store::Error::NotFound { .. },
            ) => Ok(None),
            Err(object_store::Error::NotImplemented) => self.put_if_same_bytes(key, bytes, expected),
            Err(e) => Err(self.backend("put", key)(e)),
        }
    }

    /// A store without conditional writes: read, compare the bytes, write.
    fn put_if_same_bytes(
        &self,
        key: &str,
        bytes: Vec<u8>,
        expected: Option<&Versioned>,
    ) -> Result<Option<Versioned>, StoreError> {
        if self.get(key)?.as_deref() != expected.map(|v| v.bytes.as_slice()) {
            return Ok(None);
        }
        self.put(key, bytes.clone())?;
        Ok(Some(Versioned::local(bytes)))
    }

    /// Uploads the local file `path` as `key`; nothing to do when `path` already is that
    /// object of a local store.
    pub fn upload_file(&self, key: &str, path: &Path) -> Result<(), StoreError> {
        if self.local_path(key).is_some_and(|p| same_file(&p, path)) {
            return Ok(());
        }
        let bytes = std::fs::read(path).map_err(|cause| StoreError::Io { path: path.to_path_buf(), cause })?;
        self.put(key, bytes)
    }

    /// Downloads `key` to the local file `dest` (atomically: a temporary file renamed).
    /// Returns false if there is no such object.
    pub fn download_file(&self, key: &str, dest: &Path) -> Result<bool, StoreError> {
        let Some(bytes) = self.get(key)? else { return Ok(false) };
        write_local(dest, &bytes)?;
        Ok(true)
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Writes a local file atomically and durably: a hidden temporary file in the same
/// folder, fsync, rename, fsync of the folder; creates the folder. A crash leaves at most
/// a `.<name>.tmp-*` file, which listings skip.
pub fn write_local(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io = |cause| StoreError::Io { path: path.to_path_buf(), cause };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    files::write_atomic(path, bytes).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_urls_split_into_bucket_and_prefix() {
        assert_eq!(split_bucket("s3://b/runs/x/", "s3"), ("s3://b".into(), "runs/x".into()));
        assert_eq!(split_bucket("gs://b", "gs"), ("gs://b".into(), String::new()));
    }

    #[test]
    fn keys_must_stay_inside_the_run() {
        let s = RunStore::open("memory://keys").unwrap();
        for bad in ["../x", "/etc/passwd", "a//b", "a/./b", "", "a\\b"] {
            assert!(matches!(s.put(bad, vec![1]), Err(StoreError::BadKey { .. })), "{bad}");
        }
    }

    #[test]
    fn unknown_schemes_are_refused() {
        assert!(matches!(RunStore::open("ftp://host/x"), Err(StoreError::BadUrl { .. })));
    }
}
