//! The compile cache: a second load is a hit; a damaged entry is rebuilt,
//! never loaded.

use drover::sandbox::{CacheOutcome, CompileCache, Limits, Sandbox};

fn claude() -> &'static drover::builtin::Builtin {
    drover::builtin::find("claude").expect("claude is built in")
}

fn load(cache: &CompileCache) -> CacheOutcome {
    let sandbox = Sandbox::new(cache.clone()).expect("engine");
    let b = claude();
    let (adapter, outcome) = sandbox
        .load(b.name, b.bytes, b.sha256, Limits::default())
        .expect("loads");
    assert_eq!(adapter.describe().expect("describe").name, "claude");
    outcome
}

#[test]
fn second_load_is_a_hit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = CompileCache::at(dir.path().join("c"));
    assert_eq!(load(&cache), CacheOutcome::Miss);
    assert_eq!(load(&cache), CacheOutcome::Hit);
}

#[test]
fn damaged_entries_are_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = CompileCache::at(dir.path().join("c"));
    assert_eq!(load(&cache), CacheOutcome::Miss);
    let sandbox = Sandbox::new(cache.clone()).expect("engine");
    let entry = cache
        .entry_path(sandbox.engine(), claude().sha256)
        .expect("entry path");
    let good = std::fs::read(&entry).expect("entry written");

    // One flipped byte deep in the code section.
    let mut flipped = good.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x5a;
    std::fs::write(&entry, &flipped).expect("corrupt");
    assert_eq!(load(&cache), CacheOutcome::Rebuilt);
    assert_eq!(
        std::fs::read(&entry).expect("rewritten"),
        good,
        "the entry was rebuilt"
    );

    // A missing checksum is not trusted either.
    std::fs::remove_file(entry.with_extension("sum")).expect("remove sum");
    assert_eq!(load(&cache), CacheOutcome::Rebuilt);

    // Truncated, and garbage.
    std::fs::write(&entry, &good[..good.len() / 3]).expect("truncate");
    assert_eq!(load(&cache), CacheOutcome::Rebuilt);
    std::fs::write(&entry, b"not a compiled component").expect("garbage");
    assert_eq!(load(&cache), CacheOutcome::Rebuilt);
    assert_eq!(load(&cache), CacheOutcome::Hit);
}

#[test]
fn an_unwritable_cache_still_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").expect("write");
    // The cache dir would have to live under a regular file: writes fail.
    let cache = CompileCache::at(blocker.join("c"));
    assert_eq!(load(&cache), CacheOutcome::Miss);
    assert_eq!(load(&cache), CacheOutcome::Miss);
}
