//! Delivery bodies as stored: zstd frames (level 1).
//!
//! The intake's throughput is bound by the bytes it writes: a 28 KB
//! `pull_request` body is written to the WAL and again by the checkpoint,
//! as seven overflow pages. Compressed it is about 3 KB (one page), at
//! about 50 µs of CPU in the request's own task, not in the writer's.
//! Rows written before migration 0009 keep their text in `body`.
use super::StoreError;
use std::cell::RefCell;
use zstd::bulk::Compressor;

/// zstd's fastest standard level: about 50 µs for a 28 KB body.
const LEVEL: i32 = 1;

/// Frames that inflate past this are refused: the intake refuses
/// deliveries over GitHub's 25 MB cap, so a larger body is not ours.
pub const MAX_BODY: usize = 32 << 20;

/// A delivery body, compressed when it is made (in the request's task).
#[derive(Clone, PartialEq, Eq)]
pub enum DeliveryBody {
    /// A zstd frame (`deliveries.body_zstd`).
    Zstd(Vec<u8>),
    /// The text itself (`deliveries.body`), when compression failed: the
    /// delivery is stored all the same.
    Text(String),
}

impl DeliveryBody {
    /// Compresses a body GitHub sent (UTF-8 JSON: the intake parsed it).
    pub fn compress(text: &[u8]) -> Self {
        thread_local! {
            // A context is ~1 MB to set up: one per thread, reused.
            static CONTEXT: RefCell<Option<Compressor<'static>>> = const { RefCell::new(None) };
        }
        let frame = CONTEXT.with(|c| {
            let mut c = c.borrow_mut();
            let ctx = match c.as_mut() {
                Some(ctx) => ctx,
                None => c.insert(Compressor::new(LEVEL)?),
            };
            ctx.compress(text)
        });
        match frame {
            Ok(frame) => Self::Zstd(frame),
            Err(e) => {
                tracing::warn!(error = %e, bytes = text.len(), "a delivery body is stored uncompressed");
                Self::Text(String::from_utf8_lossy(text).into_owned())
            }
        }
    }

    /// The `(body, body_zstd)` columns of the row.
    pub fn columns(&self) -> (&str, Option<&[u8]>) {
        match self {
            Self::Zstd(frame) => ("", Some(frame)),
            Self::Text(text) => (text, None),
        }
    }

    /// The text of a stored row: `body_zstd` when the row has it, else the
    /// `body` text (rows written before migration 0009, or uncompressed).
    pub fn read(text: String, zstd: Option<Vec<u8>>) -> Result<String, StoreError> {
        let Some(frame) = zstd else {
            return Ok(text);
        };
        let bytes = zstd::bulk::decompress(&frame, MAX_BODY)
            .map_err(|e| StoreError::Corrupt(format!("delivery body: {e}")))?;
        String::from_utf8(bytes)
            .map_err(|e| StoreError::Corrupt(format!("delivery body is not UTF-8: {e}")))
    }
}

impl std::fmt::Debug for DeliveryBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Zstd(frame) => write!(f, "DeliveryBody::Zstd({} bytes)", frame.len()),
            Self::Text(text) => write!(f, "DeliveryBody::Text({} bytes)", text.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_reads_back_as_its_text_and_old_rows_as_theirs() {
        let text = r#"{"action":"opened","number":7,"body":"é ✓"}"#.repeat(200);
        let b = DeliveryBody::compress(text.as_bytes());
        let (plain, Some(frame)) = b.columns() else {
            panic!("not compressed: {b:?}");
        };
        assert_eq!(plain, "");
        assert!(frame.len() < text.len() / 10, "{}", frame.len());
        assert_eq!(
            DeliveryBody::read(String::new(), Some(frame.to_vec())).unwrap(),
            text
        );
        assert_eq!(DeliveryBody::read("old".into(), None).unwrap(), "old");
    }

    #[test]
    fn a_damaged_frame_is_an_error_not_a_panic() {
        let DeliveryBody::Zstd(mut bad) = DeliveryBody::compress(b"{}") else {
            panic!("not compressed");
        };
        bad.truncate(bad.len() - 1);
        assert!(matches!(
            DeliveryBody::read(String::new(), Some(bad)),
            Err(StoreError::Corrupt(_))
        ));
        assert!(matches!(
            DeliveryBody::read(String::new(), Some(b"not zstd".to_vec())),
            Err(StoreError::Corrupt(_))
        ));
    }
}
