//! Reading (never verifying) the claims of a JWT access token: the ChatGPT account id the Codex
//! backend wants in a header lives there. Includes the base64 decoder it needs.

use serde_json::Value;

/// The claim namespace OpenAI puts account details under.
const OPENAI_AUTH_CLAIM: &str = "https://api.openai.com/auth";

/// Decodes base64 in either alphabet, padded or not. `None` on any other character.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6 | v as u32) & 0xffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// The payload of a `header.payload.signature` token as JSON.
pub fn claims(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    serde_json::from_slice(&base64_decode(payload)?).ok()
}

/// `chatgpt_account_id` from an OpenAI access token.
pub fn chatgpt_account_id(token: &str) -> Option<String> {
    claims(token)?
        .get(OPENAI_AUTH_CLAIM)?
        .get("chatgpt_account_id")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_id_is_read_from_the_payload() {
        // {"https://api.openai.com/auth":{"chatgpt_account_id":"acc-1"}} in base64url.
        let payload =
            "eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjLTEifX0";
        assert_eq!(
            chatgpt_account_id(&format!("h.{payload}.s")).as_deref(),
            Some("acc-1")
        );
        assert_eq!(chatgpt_account_id("h.e30.s"), None);
        assert!(claims("only.two").is_none());
        assert!(claims("a.b.c.d").is_none());
        assert_eq!(base64_decode("+/8=").unwrap(), b"\xfb\xff");
        assert_eq!(base64_decode("a b"), None);
    }
}
