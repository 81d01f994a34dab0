//! Random bytes from the operating system (`getrandom(2)` through `ring`): `secure_bytes` for
//! secrets, which fails rather than guess, and `bytes` for identifiers and temporary names,
//! which must always be produced and fall back to a time-and-pid mix if the OS source fails.

use ring::rand::{SecureRandom, SystemRandom};

/// The operating system gave no secure random bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoSecureRandom;

impl std::fmt::Display for NoSecureRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no secure random source available")
    }
}

impl std::error::Error for NoSecureRandom {}

/// For callers whose own errors are still text.
impl From<NoSecureRandom> for String {
    fn from(e: NoSecureRandom) -> String {
        e.to_string()
    }
}

/// `N` bytes from the system's secure random source (PKCE verifiers, OAuth state).
pub fn secure_bytes<const N: usize>() -> Result<[u8; N], NoSecureRandom> {
    let mut out = [0u8; N];
    SystemRandom::new()
        .fill(&mut out)
        .map_err(|_| NoSecureRandom)?;
    Ok(out)
}

/// `N` random bytes for ids and file names. Never fails: without an OS source the bytes come
/// from a splitmix64 stream seeded by the clock, the pid and a process-wide counter.
pub fn bytes<const N: usize>() -> [u8; N] {
    if let Ok(b) = secure_bytes::<N>() {
        return b;
    }
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default();
    let mut z = nanos
        ^ u64::from(std::process::id()) << 32
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ() {
        assert_ne!(bytes::<16>(), bytes::<16>());
        assert_ne!(secure_bytes::<16>().unwrap(), secure_bytes::<16>().unwrap());
        assert_eq!(bytes::<5>().len(), 5);
    }
}
