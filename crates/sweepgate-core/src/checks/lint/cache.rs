//! Parse results kept by content across lint runs of one process: a
//! replay lints every commit of the history at base and head, and most
//! files (the 300 KB master configs, the changelog, unchanged scripts)
//! are the same blob from one commit to the next, so each blob is parsed
//! once. The key is a SHA-256 of the path and the bytes (what a blob id
//! names, without trusting a caller's id).
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use sha2::{Digest, Sha256};

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

    /// The value for these `(path, bytes)` parts, or `parse()` kept.
    pub(crate) fn get_or(&self, parts: &[(&str, &[u8])], parse: impl FnOnce() -> T) -> Arc<T> {
        let mut h = Sha256::new();
        for (path, bytes) in parts {
            h.update((path.len() as u64).to_le_bytes());
            h.update(path.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        let key: [u8; 32] = h.finalize().into();
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
            *c.get_or(&[(p, b)], || {
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
}
