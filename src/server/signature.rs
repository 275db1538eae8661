//! `X-Hub-Signature-256` verification against every configured secret
//! (several during a rotation), in constant time.
use crate::config::server::Secret;
use hmac::{Hmac, Mac};
use sha2::Sha256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignatureError {
    #[error("missing X-Hub-Signature-256 header")]
    Missing,
    #[error("X-Hub-Signature-256 is not of the form sha256=<64 hex digits>")]
    Malformed,
    #[error("X-Hub-Signature-256 does not match the body for any configured secret")]
    Mismatch,
}

/// The digest a well-formed header carries: checked before the body is
/// read, so a request without one costs nothing.
pub(crate) fn digest(header: Option<&[u8]>) -> Result<[u8; 32], SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let hex_part = header
        .strip_prefix(b"sha256=")
        .ok_or(SignatureError::Malformed)?;
    let mut expected = [0u8; 32];
    hex::decode_to_slice(hex_part, &mut expected).map_err(|_| SignatureError::Malformed)?;
    Ok(expected)
}

/// Ok with the index of the secret that matched.
#[cfg(test)]
pub(crate) fn verify(
    header: Option<&[u8]>,
    body: &[u8],
    secrets: &[Secret],
) -> Result<usize, SignatureError> {
    verify_digest(&digest(header)?, body, secrets)
}

/// `verify` with the header already parsed.
pub(crate) fn verify_digest(
    expected: &[u8; 32],
    body: &[u8],
    secrets: &[Secret],
) -> Result<usize, SignatureError> {
    // Check every secret (no early exit) so timing does not reveal which one
    // of several matched.
    let mut found = None;
    for (i, secret) in secrets.iter().enumerate() {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.expose().as_bytes()) else {
            continue;
        };
        mac.update(body);
        if mac.verify_slice(expected).is_ok() && found.is_none() {
            found = Some(i);
        }
    }
    found.ok_or(SignatureError::Mismatch)
}

/// The header value GitHub would send for `body` signed with `secret`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_accepts_old_and_new() {
        let secrets = [Secret::new("new"), Secret::new("old")];
        let sig = sign("old", b"{}");
        assert_eq!(verify(Some(sig.as_bytes()), b"{}", &secrets), Ok(1));
        let sig = sign("new", b"{}");
        assert_eq!(verify(Some(sig.as_bytes()), b"{}", &secrets), Ok(0));
    }

    #[test]
    fn rejects_wrong_missing_and_malformed() {
        let secrets = [Secret::new("s")];
        assert_eq!(verify(None, b"{}", &secrets), Err(SignatureError::Missing));
        assert_eq!(
            verify(Some(b"sha1=abc"), b"{}", &secrets),
            Err(SignatureError::Malformed)
        );
        assert_eq!(
            verify(Some(b"sha256=zz"), b"{}", &secrets),
            Err(SignatureError::Malformed)
        );
        let sig = sign("other", b"{}");
        assert_eq!(
            verify(Some(sig.as_bytes()), b"{}", &secrets),
            Err(SignatureError::Mismatch)
        );
        let sig = sign("s", b"{} ");
        assert_eq!(
            verify(Some(sig.as_bytes()), b"{}", &secrets),
            Err(SignatureError::Mismatch)
        );
    }
}
