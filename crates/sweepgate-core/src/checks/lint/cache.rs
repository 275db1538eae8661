//! Parse results kept by content across lint runs of one process: a
//! replay lints every commit of the history at base and head, and most
//! files (the 300 KB master configs, the changelog, unchanged scripts)
//! are the same blob from one commit to the next, so each blob is parsed
//! once. The key is a SHA-256 of the paths and the git blob ids when the
//! reader fetched every part by its id ([`FileBytes::blob_id`]: our own
//! `git cat-file`, a GitHub tree), else of the paths and the bytes. The
//! bytes of a master config are 2.5 MB, and a replayed commit builds six
//! lint contexts: hashing them was 40% of a replay.
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use sha2::{Digest, Sha256};

use super::input::FileBytes;

/// One part of a key: a path, its contents and their blob id if known.
pub(crate) type Part<'a> = (&'a str, &'a [u8], Option<&'a str>);

/// The part of `path` with contents `f`.
pub(crate) fn part<'a>(path: &'a str, f: &'a FileBytes) -> Part<'a> {
    (path, f.as_slice(), f.blob_id())
}

/// The key of `parts`: by blob ids when all have one, else by content.
/// The leading byte keeps the two kinds of key apart.
fn key(parts: &[Part<'_>]) -> [u8; 32] {
    let by_id = parts.iter().all(|(_, _, id)| id.is_some());
    let mut h = Sha256::new();
    h.update([u8::from(by_id)]);
    for (path, bytes, id) in parts {
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        let named: &[u8] = match id {
            Some(id) if by_id => id.as_bytes(),
            _ => bytes,
        };
        h.update((named.len() as u64).to_le_bytes());
        h.update(named);
    }
    h.finalize().into()
}

/// Two generations of entries: a lookup promotes a hit from the old one,
/// and when the new one is full it becomes the old one (an approximate
/// LRU without bookkeeping per hit).
pub(crate) struct BlobCache<T> {
    state: Mutex<Generations<T>>,
    per_generation: usize,
}

struct Generations<T> {
    new: HashMap<[u8; 32], Arc<T>>,
    old: HashMap<[u8; 32], Arc<T>>,
}

impl<T> BlobCache<T> {
    pub(crate) fn new(per_generation: usize) -> Self {
        Self {
            state: Mutex::new(Generations {
                new: HashMap::new(),
                old: HashMap::new(),
            }),
            per_generation,
        }
    }

    /// The value for these `(path, contents)` parts, or `parse()` kept.
    pub(crate) fn get_or(&self, parts: &[Part<'_>], parse: impl FnOnce() -> T) -> Arc<T> {
        let key = key(parts);
        {
            // A panic while holding the lock leaves consistent maps.
            let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = g.new.get(&key) {
                return v.clone();
            }
            if let Some(v) = g.old.remove(&key) {
                g.new.insert(key, v.clone());
                return v;
            }
        }
        // Parsed outside the lock: other lint runs are not held up.
        let value = Arc::new(parse());
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if g.new.len() >= self.per_generation {
            g.old = std::mem::take(&mut g.new);
        }
        g.new.insert(key, value.clone());
        value
    }

    pub(crate) fn clear(&self) {
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        g.new.clear();
        g.old.clear();
    }
}

/// A process-wide cache, created on first use.
pub(crate) type Shared<T> = LazyLock<BlobCache<T>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_parse_once_and_paths_are_part_of_the_key() {
        let c: BlobCache<usize> = BlobCache::new(2);
        let calls = std::cell::Cell::new(0);
        let get = |p: &str, b: &[u8]| {
            *c.get_or(&[(p, b, None)], || {
                calls.set(calls.get() + 1);
                b.len()
            })
        };
        assert_eq!(get("a", b"xy"), 2);
        assert_eq!(get("a", b"xy"), 2);
        assert_eq!(get("b", b"xy"), 2);
        get("c", b"z");
        get("d", b"z");
        // "a" survived one generation change through the old map.
        assert_eq!(get("a", b"xy"), 2);
        assert_eq!(calls.get(), 4);
    }

    #[test]
    fn blob_ids_key_the_parse_when_every_part_has_one() {
        let c: BlobCache<Vec<u8>> = BlobCache::new(8);
        let get = |files: &[(&str, &FileBytes)]| {
            let parts: Vec<Part<'_>> = files.iter().map(|(p, f)| part(p, f)).collect();
            c.get_or(&parts, || parts[0].1.to_vec()).to_vec()
        };
        let key = |files: &[(&str, &FileBytes)]| {
            key(&files.iter().map(|(p, f)| part(p, f)).collect::<Vec<_>>())
        };
        let a = FileBytes::from_blob(Arc::from(&b"one"[..]), "1111");
        let same_id = FileBytes::from_blob(Arc::from(&b"one"[..]), "1111");
        let other_id = FileBytes::from_blob(Arc::from(&b"two"[..]), "2222");
        let no_id = FileBytes::new(b"two".to_vec());
        assert_eq!(get(&[("p", &a)]), b"one");
        assert_eq!(get(&[("p", &same_id)]), b"one");
        // Another id is another key, and so is content without an id.
        assert_eq!(get(&[("p", &other_id)]), b"two");
        assert_eq!(get(&[("p", &no_id)]), b"two");
        assert_ne!(key(&[("p", &a)]), key(&[("q", &a)]));
        assert_ne!(key(&[("p", &other_id)]), key(&[("p", &no_id)]));
        // One part without an id: the whole key is by content.
        assert_eq!(
            key(&[("p", &a), ("q", &no_id)]),
            key(&[("p", &FileBytes::new(b"one".to_vec())), ("q", &no_id)])
        );
    }
}
