//! Text encodings of bytes: base64 (standard and URL-safe, on the `base64` crate), lower-case
//! hex, and percent-encoding for URLs and form bodies.

use base64::engine::general_purpose::{
    GeneralPurpose, GeneralPurposeConfig, STANDARD, URL_SAFE_NO_PAD,
};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// Standard base64 with padding (RFC 4648 §4), as images and data URLs carry it.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Appends the standard base64 of `bytes` to `out` (a large payload embedded in a page, with
/// no intermediate copy).
pub fn base64_encode_into(bytes: &[u8], out: &mut String) {
    STANDARD.encode_string(bytes, out);
}

/// Unpadded base64url (RFC 4648 §5), as JWTs and PKCE use it.
pub fn base64url_encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes base64 in either alphabet, padded or not, ignoring ASCII whitespace (PEM bodies,
/// JWT segments, terminal image payloads). `None` on any other character.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let standard: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    LENIENT.decode(standard).ok()
}

/// Lower-case hex digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Percent-encodes every byte but RFC 3986 unreserved characters (`A-Z a-z 0-9 - _ . ~`) and
/// those in `keep` (`b"/"` for paths, `b"!*'()"` for JavaScript's `encodeURIComponent`).
pub fn percent_encode(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || keep.contains(&b) {
            out.push(b as char);
        } else {
            const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(DIGITS[(b >> 4) as usize] as char);
            out.push(DIGITS[(b & 15) as usize] as char);
        }
    }
    out
}

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`, as in form bodies and query
/// strings); malformed escapes are kept literally, invalid UTF-8 is replaced.
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `k=v&k=v` with both sides percent-encoded (an `application/x-www-form-urlencoded` body or a
/// query string).
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k, b""), percent_encode(v, b"")))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_and_decodes_leniently() {
        for (plain, coded) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain), coded);
            assert_eq!(base64_decode(coded).unwrap(), plain);
            assert_eq!(base64_decode(coded.trim_end_matches('=')).unwrap(), plain);
        }
        assert_eq!(base64url_encode(b"\xfb\xff"), "-_8");
        assert_eq!(base64_decode("-_8").unwrap(), b"\xfb\xff");
        assert_eq!(base64_decode("+/8=").unwrap(), b"\xfb\xff");
        assert_eq!(base64_decode("Zm9v\nYmFy\r\n").unwrap(), b"foobar");
        assert_eq!(base64_decode("a!b"), None);
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            assert_eq!(base64_decode(&base64url_encode(&bytes)).unwrap(), bytes);
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
    }

    #[test]
    fn hex_and_percent_encoding() {
        assert_eq!(hex(b"\x00\x7f\xff"), "007fff");
        assert_eq!(percent_encode("a b/c:d~", b""), "a%20b%2Fc%3Ad~");
        assert_eq!(percent_encode("a b/c", b"/"), "a%20b/c");
        assert_eq!(percent_encode("é(!)", b"!*'()"), "%C3%A9(!)");
        assert_eq!(percent_decode("a%20b%3a+c%", true), "a b: c%");
        assert_eq!(percent_decode("a+b%4", false), "a+b%4");
        assert_eq!(percent_decode("%C3%A9%zz", false), "é%zz");
        assert_eq!(form_encode(&[("a", "x y"), ("b", "=")]), "a=x%20y&b=%3D");
    }
}
