//! OAuth logins and token refresh for the subscription providers pi knows: Anthropic
//! (Claude Pro/Max), OpenAI Codex (ChatGPT Plus/Pro) and GitHub Copilot.
//!
//! A flow never touches the terminal itself: it talks to whoever drives it through
//! [`LoginUi`] (show a URL, ask for a pasted code, report progress), so the interactive
//! `/login` and the headless `--login <provider>` share the same code. Flows block the calling
//! thread; the only threads they start are the callback server's and whatever the UI starts for
//! manual input. Credentials are stored in auth.json exactly as pi stores them
//! (`{"type":"oauth","refresh","access","expires",...extras}`); [`refresh`] keeps them fresh
//! under pi's lock.
//!
//! This file holds the registry of built-in providers; `flow` what every flow shares (the
//! traits, the credentials, the token requests), one file per provider beside it.

pub mod anthropic;
pub mod callback;
pub mod error;
pub mod flow;
pub mod github_copilot;
pub mod openai_codex;
pub mod pkce;
pub mod refresh;

pub use error::LoginError;
pub use flow::{parse_authorization_input, Credentials, LoginUi, OAuthProvider};

/// The built-in providers with their real endpoints, in pi's order.
pub fn providers() -> Vec<Box<dyn OAuthProvider>> {
    vec![
        Box::new(anthropic::Anthropic::default()),
        Box::new(github_copilot::GithubCopilot::default()),
        Box::new(openai_codex::OpenAiCodex::default()),
    ]
}

/// A built-in provider by id.
pub fn provider(id: &str) -> Option<Box<dyn OAuthProvider>> {
    providers().into_iter().find(|p| p.id() == id)
}

/// What a request to `provider` should use when auth.json holds its OAuth login: the API key
/// (refreshed first if expired) and, for Copilot, the base URL its token names. `Ok(None)`
/// when there is no stored OAuth login for a provider we know.
pub fn request_credentials(
    auth_path: &std::path::Path,
    provider_id: &str,
) -> Result<Option<(String, Option<String>)>, LoginError> {
    let Some(flow) = provider(provider_id) else {
        return Ok(None);
    };
    let Some(creds) = refresh::fresh_credentials(auth_path, &*flow)? else {
        return Ok(None);
    };
    let base_url = (provider_id == "github-copilot").then(|| github_copilot::base_url_for(&creds));
    Ok(Some((flow.api_key(&creds), base_url)))
}

#[cfg(test)]
mod tests;
