//! The export's colours: every token of a pi theme (built-in or a custom `<name>.json`) as a
//! CSS custom property, plus the page, card and info backgrounds, taken from the theme's
//! optional `export` section or derived from its `userMessageBg` as pi derives them.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::tui::theme::{self as tui_theme, Color, ColorMode, Theme, Token};

/// A theme resolved for the export: CSS declarations ready to go inside `:root { }`.
#[derive(Debug, Clone)]
pub struct ExportTheme {
    name: String,
    css: String,
}

impl ExportTheme {
    /// The first of `names` that loads (a built-in, or `<dir>/<name>.json` in `custom_dirs`);
    /// otherwise the default theme for the terminal, as pi falls back.
    pub fn pick(names: &[&str], custom_dirs: &[&Path]) -> ExportTheme {
        names
            .iter()
            .find_map(|n| ExportTheme::load(n, custom_dirs))
            .unwrap_or_else(ExportTheme::default_for_terminal)
    }

    /// The theme pi uses when none is configured: light when `COLORFGBG` says the terminal
    /// background is light, dark otherwise.
    pub fn default_for_terminal() -> ExportTheme {
        let bg = std::env::var("COLORFGBG").ok();
        let name = tui_theme::background_from_colorfgbg(bg.as_deref()).theme_name();
        ExportTheme::load(name, &[]).unwrap_or_else(|| ExportTheme {
            name: "dark".into(),
            css: String::new(),
        })
    }

    /// `name` as a built-in or a custom theme file; `None` if missing or invalid.
    pub fn load(name: &str, custom_dirs: &[&Path]) -> Option<ExportTheme> {
        let text = match tui_theme::builtin_json(name) {
            Some(t) => t.to_string(),
            None => custom_dirs
                .iter()
                .map(|d| d.join(format!("{name}.json")))
                .find(|p| p.is_file())
                .and_then(|p| {
                    crate::util::files::read_limited_string(p, crate::util::files::Limit::THEME)
                        .ok()
                })?,
        };
        let theme = Theme::from_json_str(name, &text, ColorMode::TrueColor).ok()?;
        let json: Value = serde_json::from_str(&text).ok()?;
        Some(ExportTheme {
            name: name.to_string(),
            css: css_vars(&theme, &json),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `--token: #rrggbb;` lines for every theme token and the three backgrounds.
    pub fn css(&self) -> &str {
        &self.css
    }
}

type Rgb = (u8, u8, u8);

fn css_vars(theme: &Theme, json: &Value) -> String {
    let user_bg = match theme.color(Token::UserMessageBg) {
        Color::Default => None,
        c => Some(rgb(c)),
    };
    let light = user_bg.map_or(theme.name() == "light", |c| luminance(c) > 0.5);
    // A token left to the terminal's default colour still needs a visible colour on a page.
    let default_text = if light { "#000000" } else { "#e5e5e7" };
    let mut css = String::new();
    for token in Token::ALL {
        let value = match theme.color(*token) {
            Color::Default => default_text.to_string(),
            c => hex(rgb(c)),
        };
        let _ = writeln!(css, "--{}: {value};", token.name());
    }
    let derived = derive_backgrounds(user_bg.unwrap_or((0x34, 0x35, 0x41)));
    let section = json.get("export");
    let vars = json.get("vars").and_then(Value::as_object);
    let pick = |key: &str, fallback: &str| {
        section
            .and_then(|s| s.get(key))
            .and_then(|v| resolve(v, vars))
            .unwrap_or_else(|| fallback.to_string())
    };
    let _ = writeln!(css, "--page-bg: {};", pick("pageBg", &derived[0]));
    let _ = writeln!(css, "--card-bg: {};", pick("cardBg", &derived[1]));
    let _ = write!(css, "--info-bg: {};", pick("infoBg", &derived[2]));
    css
}

/// An `export` value: `#rrggbb`, a palette index, or a `vars` name; `""` means "derive".
/// An `export` colour as CSS: any theme colour form (hex, `oklch()`, `okhsl()`, a palette
/// index, a `vars` name) becomes `#rrggbb`; the terminal default (`""`) or an invalid value
/// leaves the derived background in place.
fn resolve(v: &Value, vars: Option<&serde_json::Map<String, Value>>) -> Option<String> {
    let empty = serde_json::Map::new();
    match tui_theme::resolve_value(v, vars.unwrap_or(&empty)) {
        Ok(Color::Default) | Err(_) => None,
        Ok(c) => Some(hex(rgb(c))),
    }
}

/// pi's export backgrounds from a base colour: page, card, info.
fn derive_backgrounds((r, g, b): Rgb) -> [String; 3] {
    let scale = |f: f64| {
        let c = |v: u8| (f64::from(v) * f).round().clamp(0.0, 255.0) as u8;
        format!("rgb({}, {}, {})", c(r), c(g), c(b))
    };
    if luminance((r, g, b)) > 0.5 {
        [
            scale(0.96),
            format!("rgb({r}, {g}, {b})"),
            format!(
                "rgb({}, {}, {})",
                r.saturating_add(10),
                g.saturating_add(5),
                b.saturating_sub(20)
            ),
        ]
    } else {
        [
            scale(0.7),
            scale(0.85),
            format!(
                "rgb({}, {}, {b})",
                r.saturating_add(20),
                g.saturating_add(15)
            ),
        ]
    }
}

/// Relative luminance (sRGB), 0 for black to 1 for white.
fn luminance((r, g, b): Rgb) -> f64 {
    let lin = |c: u8| {
        let s = f64::from(c) / 255.0;
        if s <= 0.03928 {
            s / 12.92
        } else {
            crate::util::math::powf((s + 0.055) / 1.055, 2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A colour as RGB; palette indices as the usual xterm values.
fn rgb(c: Color) -> Rgb {
    const BASIC: [Rgb; 16] = [
        (0, 0, 0),
        (128, 0, 0),
        (0, 128, 0),
        (128, 128, 0),
        (0, 0, 128),
        (128, 0, 128),
        (0, 128, 128),
        (192, 192, 192),
        (128, 128, 128),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (0, 0, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match c {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Default => (0, 0, 0),
        Color::Index(i) if i < 16 => BASIC[i as usize],
        Color::Index(i) if i < 232 => {
            let level = |n: u8| if n == 0 { 0 } else { 55 + n * 40 };
            let n = i - 16;
            (level(n / 36), level((n % 36) / 6), level(n % 6))
        }
        Color::Index(i) => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dark_theme_uses_its_export_section() {
        let t = ExportTheme::load("dark", &[]).unwrap();
        assert!(t.css().contains("--page-bg: #18181e;"), "{}", t.css());
        assert!(t.css().contains("--card-bg: #1e1e24;"));
        assert!(t.css().contains("--accent: #8abeb7;"));
        // `text` is the terminal default in the dark theme.
        assert!(t.css().contains("--text: #e5e5e7;"));
    }

    #[test]
    fn light_theme_defaults_to_black_text() {
        let t = ExportTheme::load("light", &[]).unwrap();
        assert!(t.css().contains("--page-bg: #f8f8f8;"));
        assert!(t.css().contains("--text: #000000;"), "{}", t.css());
    }

    #[test]
    fn custom_theme_without_export_section_derives_backgrounds() {
        let d = tempfile::tempdir().unwrap();
        let mut json: Value =
            serde_json::from_str(tui_theme::builtin_json("dark").unwrap()).unwrap();
        json["name"] = "mine".into();
        json.as_object_mut().unwrap().remove("export");
        json["colors"]["userMessageBg"] = "#646464".into();
        json["colors"]["accent"] = 196.into();
        std::fs::write(d.path().join("mine.json"), json.to_string()).unwrap();
        let t = ExportTheme::pick(&["nope", "mine"], &[d.path()]);
        assert_eq!(t.name(), "mine");
        assert!(t.css().contains("--accent: #ff0000;"), "{}", t.css());
        assert!(
            t.css().contains("--page-bg: rgb(70, 70, 70);"),
            "{}",
            t.css()
        );
        assert!(t.css().contains("--card-bg: rgb(85, 85, 85);"));
        assert!(t.css().contains("--info-bg: rgb(120, 115, 100);"));
    }

    #[test]
    fn pi_1x_colour_forms_reach_the_page_as_hex() {
        let d = tempfile::tempdir().unwrap();
        let mut json: Value =
            serde_json::from_str(tui_theme::builtin_json("dark").unwrap()).unwrap();
        json["name"] = "oklab".into();
        json["vars"]["card"] = "okhsl(233 41% 24%)".into();
        json["colors"]["accent"] = "oklch(62% 0.1 200)".into();
        json["colors"]["thinkingMax"] = "#0af".into();
        json["export"] = serde_json::json!({"pageBg": "#0af", "cardBg": "card"});
        std::fs::write(d.path().join("oklab.json"), json.to_string()).unwrap();
        let t = ExportTheme::pick(&["oklab"], &[d.path()]);
        let css = t.css();
        assert!(css.contains("--accent: #1c989e;"), "{css}");
        assert!(css.contains("--thinkingMax: #00aaff;"), "{css}");
        assert!(css.contains("--page-bg: #00aaff;"), "{css}");
        assert!(css.contains("--card-bg: #213b49;"), "{css}");
    }

    #[test]
    fn unknown_or_broken_theme_falls_back() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("bad.json"), "{not json").unwrap();
        let t = ExportTheme::pick(&["bad", "missing"], &[d.path()]);
        assert!(t.name() == "dark" || t.name() == "light");
        assert!(t.css().contains("--page-bg:"));
    }

    #[test]
    fn palette_indices_map_to_xterm_colours() {
        assert_eq!(hex(rgb(Color::Index(9))), "#ff0000");
        assert_eq!(hex(rgb(Color::Index(16))), "#000000");
        assert_eq!(hex(rgb(Color::Index(231))), "#ffffff");
        assert_eq!(hex(rgb(Color::Index(232))), "#080808");
    }
}
