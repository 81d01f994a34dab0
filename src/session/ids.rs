//! Identifiers and timestamps in pi's formats: UUIDv7 session ids, 8-hex entry ids, and
//! ISO-8601 UTC timestamps with milliseconds (JavaScript's `toISOString`).

use crate::util::encoding::hex;
use crate::util::random::bytes as random_bytes;

pub use crate::util::date::{iso_timestamp, parse_iso_ms};

/// A version-7 UUID: 48-bit millisecond timestamp, version and variant bits, random rest.
pub fn uuid_v7() -> String {
    let ms = crate::ai::now_ms() as u64;
    let mut b = random_bytes::<16>();
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    format_uuid(b, 0x70)
}

/// A random (version-4) UUID.
pub fn uuid_v4() -> String {
    format_uuid(random_bytes::<16>(), 0x40)
}

fn format_uuid(mut b: [u8; 16], version: u8) -> String {
    b[6] = (b[6] & 0x0f) | version;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// An 8-hex-digit entry id.
pub fn short_id() -> String {
    hex(&random_bytes::<4>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v7_shape() {
        let u = uuid_v7();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "7");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        assert_ne!(u, uuid_v7());
        assert_eq!(short_id().len(), 8);
    }
}
