//! `/login` and `/logout`. Login first asks for the method (a subscription or an API key, as
//! pi does), then lists that kind of provider with its credential status — the API-key list
//! includes the custom providers of models.json; choosing one opens the login dialog (an
//! API-key prompt, Amazon Bedrock's AWS setup notes, or an OAuth flow running on its own
//! thread that the dialog talks to). Logout lists what auth.json
//! holds and removes the chosen entry. Either way the model list is re-read so the change
//! shows at once, and a first login picks the provider's default model as pi does.

use super::app::App;
use super::overlays::OverlayKind;
use super::selectors::login::{
    AuthKind, LoginDialog, LoginOutcome, PickerMode, ProviderOption, ProviderOutcome,
    ProviderPicker,
};
use super::selectors::login_method::{AuthMethodOutcome, AuthMethodPicker};
use crate::ai::catalog;
use crate::resources::auth::AuthStorage;
use crate::resources::oauth;
use crate::resources::provider_names::{api_key_providers, custom_providers, provider_name};
use crate::tui::terminal::Terminal;
use crate::tui::theme::{self, Token};
use crate::util::collate::locale_compare;
use crate::util::sort;

/// Bedrock signs requests with AWS credentials, so its "login" is a page of setup notes.
const BEDROCK: &str = "amazon-bedrock";

/// What the Bedrock setup page says: where AWS credentials come from.
fn bedrock_setup_lines() -> Vec<String> {
    let t = theme::current();
    let var = |name: &str, what: &str| {
        format!(
            "  {}  {}",
            t.fg(Token::Accent, &format!("{name:<26}")),
            t.fg(Token::Muted, what)
        )
    };
    vec![
        t.fg(
            Token::Text,
            "Amazon Bedrock uses AWS credentials instead of a single API key.",
        ),
        t.fg(
            Token::Text,
            "Configure an AWS profile, IAM keys, bearer token, or role-based credentials:",
        ),
        String::new(),
        var(
            "AWS_PROFILE",
            "a profile from ~/.aws/config or ~/.aws/credentials",
        ),
        var(
            "AWS_ACCESS_KEY_ID",
            "with AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)",
        ),
        var("AWS_BEARER_TOKEN_BEDROCK", "a Bedrock API key"),
        var(
            "AWS_ROLE_ARN",
            "with AWS_WEB_IDENTITY_TOKEN_FILE (web identity)",
        ),
        var("AWS_REGION", "the region to call, e.g. us-east-1"),
        String::new(),
        t.fg(
            Token::Muted,
            "Set them in the shell that starts pi, then pick a Bedrock model with /model.",
        ),
    ]
}

/// `✓ configured`, `✓ env: VAR`, `• API key configured`, `• unconfigured`.
fn status(auth: &AuthStorage, id: &str, kind: AuthKind) -> String {
    if let Some(stored) = auth.get(id) {
        let stored_oauth = stored["type"] == "oauth";
        return match (stored_oauth, kind) {
            (true, AuthKind::OAuth) | (false, AuthKind::ApiKey) => "✓ configured".into(),
            (true, AuthKind::ApiKey) => "• subscription configured".into(),
            (false, AuthKind::OAuth) => "• API key configured".into(),
        };
    }
    if kind == AuthKind::ApiKey {
        let set = |v: &&&str| std::env::var(v).is_ok_and(|x| !x.is_empty());
        if let Some(var) = catalog::env_key_vars(id).iter().find(set) {
            return format!("✓ env: {var}");
        }
    }
    "• unconfigured".into()
}

impl<T: Terminal> App<T> {
    fn auth_path(&self) -> std::path::PathBuf {
        self.env.agent_dir.join("auth.json")
    }

    pub(super) fn open_provider_picker(&mut self, mode: PickerMode) -> Result<(), String> {
        let auth = AuthStorage::load(self.auth_path());
        if let Some(e) = auth.load_error() {
            return Err(e.to_string());
        }
        let custom = custom_providers(&self.env.agent_dir);
        let mut options: Vec<ProviderOption> = match mode {
            PickerMode::Login => {
                self.show_dialog(
                    AuthMethodPicker::new(theme::current()),
                    OverlayKind::AuthMethod,
                );
                return Ok(());
            }
            PickerMode::Logout => {
                let stored = auth.list();
                if stored.is_empty() {
                    self.view.status_note("No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.");
                    return Ok(());
                }
                stored
                    .into_iter()
                    .map(|id| {
                        let oauth = auth.get(&id).is_some_and(|c| c["type"] == "oauth");
                        ProviderOption {
                            name: provider_name(&id, &custom),
                            kind: if oauth {
                                AuthKind::OAuth
                            } else {
                                AuthKind::ApiKey
                            },
                            status: "✓ configured".into(),
                            id,
                        }
                    })
                    .collect()
            }
        };
        sort::sort_by(&mut options, |a, b| locale_compare(&a.name, &b.name));
        let picker = ProviderPicker::new(mode, options, theme::current());
        self.show_dialog(picker, OverlayKind::Providers(mode));
        Ok(())
    }

    /// The method was chosen: list the providers that log in that way.
    pub(super) fn apply_auth_method(&mut self, outcome: AuthMethodOutcome) -> Result<(), String> {
        let AuthMethodOutcome::Selected(kind) = outcome else {
            return Ok(());
        };
        let auth = AuthStorage::load(self.auth_path());
        let mut options: Vec<ProviderOption> = match kind {
            AuthKind::OAuth => oauth::providers()
                .into_iter()
                .map(|p| ProviderOption {
                    id: p.id().to_string(),
                    name: p.name().to_string(),
                    kind,
                    status: status(&auth, p.id(), kind),
                })
                .collect(),
            AuthKind::ApiKey => {
                let builtin =
                    api_key_providers().map(|(id, name)| (id.to_string(), name.to_string()));
                builtin
                    .chain(custom_providers(&self.env.agent_dir))
                    .map(|(id, name)| ProviderOption {
                        status: status(&auth, &id, kind),
                        id,
                        name,
                        kind,
                    })
                    .collect()
            }
        };
        if options.is_empty() {
            self.view.status_note(match kind {
                AuthKind::OAuth => "No subscription providers available.",
                AuthKind::ApiKey => "No API key providers available.",
            });
            return Ok(());
        }
        sort::sort_by(&mut options, |a, b| locale_compare(&a.name, &b.name));
        let picker = ProviderPicker::new(PickerMode::Login, options, theme::current());
        self.show_dialog(picker, OverlayKind::Providers(PickerMode::Login));
        Ok(())
    }

    pub(super) fn apply_provider_outcome(
        &mut self,
        mode: PickerMode,
        outcome: ProviderOutcome,
    ) -> Result<(), String> {
        let ProviderOutcome::Selected(option) = outcome else {
            // Backing out of the login list returns to the method choice, as in pi.
            if mode == PickerMode::Login {
                self.show_dialog(
                    AuthMethodPicker::new(theme::current()),
                    OverlayKind::AuthMethod,
                );
            }
            return Ok(());
        };
        match mode {
            PickerMode::Logout => self.logout(&option),
            PickerMode::Login => {
                self.start_login(option);
                Ok(())
            }
        }
    }

    fn logout(&mut self, option: &ProviderOption) -> Result<(), String> {
        let mut auth = AuthStorage::load(self.auth_path());
        auth.remove(&option.id)
            .map_err(|e| format!("Logout failed: {e}"))?;
        self.reload_models();
        let message = match option.kind {
            AuthKind::OAuth => format!("Logged out of {}", option.name),
            AuthKind::ApiKey => format!("Removed stored API key for {}. Environment variables and models.json config are unchanged.", option.name),
        };
        self.view.status_note(&message);
        Ok(())
    }

    fn start_login(&mut self, option: ProviderOption) {
        let theme = theme::current();
        let path = self.auth_path();
        let dialog = match option.kind {
            AuthKind::ApiKey if option.id == BEDROCK => LoginDialog::info(
                &option.id,
                "Amazon Bedrock setup",
                bedrock_setup_lines(),
                theme,
            ),
            AuthKind::ApiKey => LoginDialog::api_key(&option.id, &option.name, path, theme),
            AuthKind::OAuth => {
                let Some(flow) = (self.env.oauth_provider)(&option.id) else {
                    self.view
                        .error(&format!("Unknown OAuth provider {}", option.id));
                    return;
                };
                let (dialog, ui) = LoginDialog::oauth(&option.id, &option.name, path, theme);
                let abort = dialog.abort_handle();
                // Detached on purpose: the flow ends on its own (callback, pasted code, or
                // the abort flag the dialog sets on Escape) and only reports to the dialog.
                let spawned = std::thread::Builder::new()
                    .name("pi-oauth-login".into())
                    .spawn(move || ui.finish(flow.login(&ui, &abort).map_err(|e| e.to_string())));
                if let Err(e) = spawned {
                    self.view.error(&format!("Could not start the login: {e}"));
                    return;
                }
                dialog
            }
        };
        self.dialogs.pending_login = Some(option);
        self.show_dialog(dialog, OverlayKind::Login);
    }

    pub(super) fn apply_login_outcome(&mut self, outcome: LoginOutcome) -> Result<(), String> {
        let Some(option) = self.dialogs.pending_login.take() else {
            return Ok(());
        };
        match outcome {
            LoginOutcome::Cancelled => Ok(()),
            LoginOutcome::Failed(e) => Err(match option.kind {
                AuthKind::OAuth => format!("Failed to login to {}: {e}", option.name),
                AuthKind::ApiKey => format!("Failed to save API key for {}: {e}", option.name),
            }),
            LoginOutcome::LoggedIn(provider) => {
                self.reload_models();
                let action = match option.kind {
                    AuthKind::OAuth => format!("Logged in to {}", option.name),
                    AuthKind::ApiKey => format!("Saved API key for {}", option.name),
                };
                let saved = format!("Credentials saved to {}", self.auth_path().display());
                if self.env.has_model {
                    self.view.status_note(&format!("{action}. {saved}"));
                    return Ok(());
                }
                // The first credentials: start on the provider's default model.
                let default = catalog::default_model_id(&provider).and_then(|id| {
                    (self.env.available_models)()
                        .into_iter()
                        .find(|m| m.provider == provider && m.id == id)
                });
                match default {
                    Some(model) => {
                        let id = model.id.clone();
                        self.change_model(model, true)?;
                        self.view
                            .status_note(&format!("{action}. Selected {id}. {saved}"));
                        Ok(())
                    }
                    None => {
                        self.view.status_note(&format!("{action}. {saved}"));
                        Err(format!(
                            "{action}, but no default model is available for provider \"{provider}\". Use /model to select a model."
                        ))
                    }
                }
            }
        }
    }

    /// Re-reads auth.json so new or removed credentials count at once.
    fn reload_models(&mut self) {
        if let Some(reload) = &self.env.reload_models {
            reload();
        }
        let mut providers: Vec<String> = (self.env.available_models)()
            .into_iter()
            .map(|m| m.provider)
            .collect();
        sort::sort(&mut providers);
        providers.dedup();
        self.view.footer.info.show_provider = providers.len() > 1;
        self.env.provider_count = providers.len();
        self.install_autocomplete();
    }
}
