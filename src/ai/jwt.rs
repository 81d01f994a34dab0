//! Reading (never verifying) the claims of a JWT access token: the ChatGPT account id the Codex
//! backend wants in a header lives there.

use serde_json::Value;

use crate::util::encoding::base64_decode;

/// The claim namespace OpenAI puts account details under.
const OPENAI_AUTH_CLAIM: &str = "https://api.openai.com/auth";

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
    }
}
