//! The run store on `memory://` and on a local folder: the same behaviour through one API.

use store::{RunStore, StoreError};

fn exercise(s: &RunStore) {
    assert_eq!(s.get("models/latest.json").unwrap(), None);
    s.put("samples/w1-0001.chunk", b"one".to_vec()).unwrap();
    s.put("samples/w2-0001.chunk", b"two!".to_vec()).unwrap();
    s.put("models/latest.json", b"{}".to_vec()).unwrap();
    assert_eq!(s.get("samples/w1-0001.chunk").unwrap().unwrap(), b"one");
    // A put replaces the object whole.
    s.put("models/latest.json", b"{\"step\":4}".to_vec()).unwrap();
    assert_eq!(s.get("models/latest.json").unwrap().unwrap(), b"{\"step\":4}");
    let listed = s.list("samples").unwrap();
    let keys: Vec<&str> = listed.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["samples/w1-0001.chunk", "samples/w2-0001.chunk"]);
    assert_eq!(listed[1].size, 4);
    assert_eq!(listed[1].name(), "w2-0001.chunk");
    assert!(listed[0].modified_ms > 1_600_000_000_000);
    // A prefix is a folder, not a string prefix.
    s.put("samplesX/other", b"x".to_vec()).unwrap();
    assert_eq!(s.list("samples").unwrap().len(), 2);
    assert!(s.list("nothing-here").unwrap().is_empty());
    s.copy("samples/w1-0001.chunk", "models/copy").unwrap();
    assert_eq!(s.get("models/copy").unwrap().unwrap(), b"one");
    s.delete("samples/w1-0001.chunk").unwrap();
    s.delete("samples/w1-0001.chunk").unwrap();
    assert_eq!(s.list("samples").unwrap().len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("f.bin");
    std::fs::write(&local, b"from disk").unwrap();
    s.upload_file("checkpoints/f.bin", &local).unwrap();
    let back = dir.path().join("sub/back.bin");
    assert!(s.download_file("checkpoints/f.bin", &back).unwrap());
    assert_eq!(std::fs::read(&back).unwrap(), b"from disk");
    assert!(!s.download_file("checkpoints/none", &back).unwrap());
    assert!(matches!(s.get("../escape"), Err(StoreError::BadKey { .. })));
}

#[test]
fn memory_store_round_trip_and_sharing_by_name() {
    let s = RunStore::open("memory://round-trip").unwrap();
    exercise(&s);
    assert!(s.local_root().is_none());
    // The same name in the same process is the same store.
    let again = RunStore::open("memory://round-trip").unwrap();
    assert_eq!(again.get("models/copy").unwrap().unwrap(), b"one");
    assert!(RunStore::open("memory://other").unwrap().list("models").unwrap().is_empty());
}

#[test]
fn local_folder_round_trip_as_plain_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("runs/r");
    let s = RunStore::open(run.to_str().unwrap()).unwrap();
    exercise(&s);
    // Objects are plain files of the folder, readable by every other tool.
    assert_eq!(std::fs::read(run.join("samples/w2-0001.chunk")).unwrap(), b"two!");
    assert_eq!(s.local_path("models/latest.json").unwrap(), run.canonicalize().unwrap().join("models/latest.json"));
    // A leftover temporary file (a writer killed mid-write) is never listed.
    std::fs::write(run.join("samples/.w3-0001.chunk.tmp-7"), b"half").unwrap();
    assert_eq!(s.list("samples").unwrap().len(), 1);
    // file:// names the same folder.
    let same = RunStore::open(&format!("file://{}", run.display())).unwrap();
    assert_eq!(same.get("samples/w2-0001.chunk").unwrap().unwrap(), b"two!");
    // Uploading a store's own file onto itself is a no-op, not a truncation.
    let own = s.local_path("samples/w2-0001.chunk").unwrap();
    s.upload_file("samples/w2-0001.chunk", &own).unwrap();
    assert_eq!(std::fs::read(&own).unwrap(), b"two!");
}

#[test]
fn a_folder_that_cannot_be_written_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let s = RunStore::open(dir.path().to_str().unwrap()).unwrap();
    // `samples` is a file: nothing can be written below it.
    std::fs::write(dir.path().join("samples"), b"in the way").unwrap();
    let e = s.put("samples/x.chunk", b"x".to_vec()).unwrap_err();
    assert!(e.to_string().contains("samples"), "{e}");
    std::fs::remove_file(dir.path().join("samples")).unwrap();
    s.put("samples/x.chunk", b"x".to_vec()).unwrap();
}
