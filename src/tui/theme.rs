//! Named colour tokens and the escape codes they become: pi's theme files (`dark`, `light`,
//! custom JSON under `themes/`) resolved for the terminal at hand.
//!
//! A theme JSON has `name`, optional `vars` (name → colour), `appearance` and `colors` with
//! every required [`Token`] (pi 1.x's five newer tokens are optional and fall back to an
//! older one); a colour is `"#rgb"`/`"#rrggbb"`, `"oklch(L C H)"`, `"okhsl(H S L)"` (see
//! [`super::oklab`]), an xterm palette index 0–255, a `vars` name, or `""` (the terminal's
//! default). Colours are emitted as truecolor, as the nearest xterm-256
//! entry, or not at all ([`ColorMode`]). Components receive an `Arc<Theme>`; the app may
//! also [`install`] one process-wide theme and read it back with [`current`].

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::Value;

macro_rules! tokens {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// Every colour a theme must define, named as in pi's theme JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Token { $($variant),* }

        impl Token {
            /// All tokens, in schema order.
            pub const ALL: &'static [Token] = &[$(Token::$variant),*];

            /// The JSON key (`"mdHeading"`).
            pub fn name(self) -> &'static str {
                match self { $(Token::$variant => $name),* }
            }

            /// The token whose JSON key is `name`.
            pub fn from_name(name: &str) -> Option<Token> {
                match name { $($name => Some(Token::$variant),)* _ => None }
            }
        }
    };
}

tokens! {
    Accent = "accent", Border = "border", BorderAccent = "borderAccent",
    BorderMuted = "borderMuted", Success = "success", Error = "error", Warning = "warning",
    Muted = "muted", Dim = "dim", Text = "text", ThinkingText = "thinkingText",
    SelectedBg = "selectedBg", UserMessageBg = "userMessageBg",
    UserMessageText = "userMessageText", CustomMessageBg = "customMessageBg",
    CustomMessageText = "customMessageText", CustomMessageLabel = "customMessageLabel",
    ToolPendingBg = "toolPendingBg", ToolSuccessBg = "toolSuccessBg",
    ToolErrorBg = "toolErrorBg", ToolTitle = "toolTitle", ToolOutput = "toolOutput",
    MdHeading = "mdHeading", MdLink = "mdLink", MdLinkUrl = "mdLinkUrl", MdCode = "mdCode",
    MdCodeBlock = "mdCodeBlock", MdCodeBlockBorder = "mdCodeBlockBorder",
    MdQuote = "mdQuote", MdQuoteBorder = "mdQuoteBorder", MdHr = "mdHr",
    MdListBullet = "mdListBullet",
    ToolDiffAdded = "toolDiffAdded", ToolDiffRemoved = "toolDiffRemoved",
    ToolDiffContext = "toolDiffContext",
    SyntaxComment = "syntaxComment", SyntaxKeyword = "syntaxKeyword",
    SyntaxFunction = "syntaxFunction", SyntaxVariable = "syntaxVariable",
    SyntaxString = "syntaxString", SyntaxNumber = "syntaxNumber", SyntaxType = "syntaxType",
    SyntaxOperator = "syntaxOperator", SyntaxPunctuation = "syntaxPunctuation",
    ThinkingOff = "thinkingOff", ThinkingMinimal = "thinkingMinimal",
    ThinkingLow = "thinkingLow", ThinkingMedium = "thinkingMedium",
    ThinkingHigh = "thinkingHigh", ThinkingXhigh = "thinkingXhigh",
    BashMode = "bashMode",
    // pi 1.x's optional tokens (see `Token::fallback`); keep them last.
    ThinkingMax = "thinkingMax", ScrollbarTrack = "scrollbarTrack",
    ScrollbarThumb = "scrollbarThumb", SearchMatchBg = "searchMatchBg",
    SearchMatchText = "searchMatchText",
}

impl Token {
    /// The token an optional one takes its colour from when a theme leaves it out (pi 1.x's
    /// documented fallbacks); `None` for the required tokens.
    pub fn fallback(self) -> Option<Token> {
        match self {
            Token::ThinkingMax => Some(Token::ThinkingXhigh),
            Token::ScrollbarTrack => Some(Token::Muted),
            Token::ScrollbarThumb => Some(Token::Text),
            Token::SearchMatchBg => Some(Token::SelectedBg),
            Token::SearchMatchText => Some(Token::Text),
            _ => None,
        }
    }
}

/// A resolved colour value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// The terminal's default (`""`).
    Default,
    Rgb(u8, u8, u8),
    /// An xterm palette index.
    Index(u8),
}

/// How colours reach the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    TrueColor,
    /// Hex colours are mapped to the nearest xterm-256 entry.
    Color256,
    /// `NO_COLOR`: no colour codes at all (bold, italic and friends stay, per no-color.org).
    NoColor,
}

impl ColorMode {
    /// The mode for this process's environment.
    pub fn detect() -> ColorMode {
        ColorMode::detect_from(|k| std::env::var(k).ok())
    }

    /// Detection over any environment lookup: `NO_COLOR` (non-empty) disables colour;
    /// `COLORTERM=truecolor|24bit` or Windows Terminal means truecolor; terminals known to
    /// lack it (dumb, linux console, Apple Terminal, GNU screen) get 256 colours; anything
    /// else is assumed modern and truecolor, as pi does.
    pub fn detect_from(env: impl Fn(&str) -> Option<String>) -> ColorMode {
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorMode::NoColor;
        }
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" || env("WT_SESSION").is_some() {
            return ColorMode::TrueColor;
        }
        let term = env("TERM").unwrap_or_default();
        let limited = matches!(term.as_str(), "" | "dumb" | "linux")
            || term == "screen"
            || term.starts_with("screen-")
            || term.starts_with("screen.")
            || env("TERM_PROGRAM").as_deref() == Some("Apple_Terminal");
        if limited {
            ColorMode::Color256
        } else {
            ColorMode::TrueColor
        }
    }
}

/// Why a theme could not be loaded; `Display` names the file and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeError {
    /// The file path or theme name the error is about.
    pub label: String,
    pub message: String,
}

impl fmt::Display for ThemeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid theme \"{}\": {}", self.label, self.message)
    }
}

impl std::error::Error for ThemeError {}

const DARK_JSON: &str = include_str!("themes/dark.json");
const LIGHT_JSON: &str = include_str!("themes/light.json");

/// Names of the themes compiled into the binary.
pub const BUILTIN_THEMES: &[&str] = &["dark", "light"];

/// A loaded theme: resolved colours plus their escape codes for one [`ColorMode`].
#[derive(Debug, Clone)]
pub struct Theme {
    name: String,
    mode: ColorMode,
    colors: Vec<Color>,
    fg_codes: Vec<String>,
    bg_codes: Vec<String>,
}

const SGR_FG_RESET: &str = "\x1b[39m";
const SGR_BG_RESET: &str = "\x1b[49m";

/// The JSON source of a built-in theme (the HTML export reads its `export` colours).
pub fn builtin_json(name: &str) -> Option<&'static str> {
    match name {
        "dark" => Some(DARK_JSON),
        "light" => Some(LIGHT_JSON),
        _ => None,
    }
}

impl Theme {
    /// A built-in theme (`"dark"` or `"light"`).
    pub fn builtin(name: &str, mode: ColorMode) -> Option<Theme> {
        Theme::from_json_str(name, builtin_json(name)?, mode).ok()
    }

    /// The dark theme for the detected colour mode (pi's fallback theme).
    pub fn dark() -> Theme {
        Theme::builtin("dark", ColorMode::detect()).unwrap_or_else(Theme::plain)
    }

    /// A theme with every colour the terminal default (used only if a built-in is broken).
    fn plain() -> Theme {
        Theme::from_colors(
            "plain",
            vec![Color::Default; Token::ALL.len()],
            ColorMode::NoColor,
        )
    }

    /// Loads a custom theme file.
    pub fn load_file(path: &Path, mode: ColorMode) -> Result<Theme, ThemeError> {
        let label = path.display().to_string();
        let content =
            crate::util::files::read_limited_string(path, crate::util::files::Limit::THEME)
                .map_err(|e| ThemeError {
                    label: label.clone(),
                    message: format!("cannot read file: {e}"),
                })?;
        Theme::from_json_str(&label, &content, mode)
    }

    /// Parses theme JSON; `label` (a path or name) is used in error messages.
    pub fn from_json_str(label: &str, content: &str, mode: ColorMode) -> Result<Theme, ThemeError> {
        let err = |message: String| ThemeError {
            label: label.to_string(),
            message,
        };
        let json: Value =
            serde_json::from_str(content).map_err(|e| err(format!("not valid JSON: {e}")))?;
        let name = json
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| err("missing string field \"name\"".into()))?;
        let empty = serde_json::Map::new();
        let vars = match json.get("vars") {
            None => &empty,
            Some(v) => v
                .as_object()
                .ok_or_else(|| err("\"vars\" must be an object".into()))?,
        };
        let colors = json
            .get("colors")
            .and_then(Value::as_object)
            .ok_or_else(|| err("missing object \"colors\"".into()))?;
        let missing: Vec<&str> = Token::ALL
            .iter()
            .filter(|t| t.fallback().is_none())
            .map(|t| t.name())
            .filter(|n| !colors.contains_key(*n))
            .collect();
        if !missing.is_empty() {
            return Err(err(format!(
                "missing required color tokens: {} (see the built-in dark and light themes \
                 for reference values)",
                missing.join(", ")
            )));
        }
        let mut resolved: Vec<Color> = Vec::with_capacity(Token::ALL.len());
        // Optional tokens come last, so their fallbacks are already resolved.
        for token in Token::ALL {
            let color = match (colors.get(token.name()), token.fallback()) {
                (Some(value), _) => resolve(value, vars, 0)
                    .map_err(|m| err(format!("colors.{}: {m}", token.name())))?,
                (None, Some(fallback)) => resolved[fallback as usize],
                (None, None) => Color::Default,
            };
            resolved.push(color);
        }
        Ok(Theme::from_colors(name, resolved, mode))
    }

    fn from_colors(name: &str, colors: Vec<Color>, mode: ColorMode) -> Theme {
        let fg_codes = colors.iter().map(|c| sgr(*c, mode, false)).collect();
        let bg_codes = colors.iter().map(|c| sgr(*c, mode, true)).collect();
        Theme {
            name: name.to_string(),
            mode,
            colors,
            fg_codes,
            bg_codes,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn mode(&self) -> ColorMode {
        self.mode
    }

    /// The same colours emitted for another mode.
    pub fn with_mode(&self, mode: ColorMode) -> Theme {
        Theme::from_colors(&self.name, self.colors.clone(), mode)
    }

    /// The resolved colour of a token (for HTML export and the like).
    pub fn color(&self, token: Token) -> Color {
        self.colors[token as usize]
    }

    /// The escape sequence that sets `token` as foreground ("" without colour).
    pub fn fg_code(&self, token: Token) -> &str {
        &self.fg_codes[token as usize]
    }

    /// The escape sequence that sets `token` as background ("" without colour).
    pub fn bg_code(&self, token: Token) -> &str {
        &self.bg_codes[token as usize]
    }

    /// The sequence that ends a foreground set by [`Theme::fg_code`].
    pub fn fg_reset(&self) -> &'static str {
        if self.mode == ColorMode::NoColor {
            ""
        } else {
            SGR_FG_RESET
        }
    }

    /// The sequence that ends a background set by [`Theme::bg_code`].
    pub fn bg_reset(&self) -> &'static str {
        if self.mode == ColorMode::NoColor {
            ""
        } else {
            SGR_BG_RESET
        }
    }

    /// `text` in the token's foreground colour; only the foreground is reset afterwards.
    pub fn fg(&self, token: Token, text: &str) -> String {
        wrap(self.fg_code(token), text, self.fg_reset())
    }

    /// `text` on the token's background colour; only the background is reset afterwards.
    pub fn bg(&self, token: Token, text: &str) -> String {
        wrap(self.bg_code(token), text, self.bg_reset())
    }

    pub fn bold(&self, text: &str) -> String {
        wrap("\x1b[1m", text, "\x1b[22m")
    }

    pub fn dim(&self, text: &str) -> String {
        wrap("\x1b[2m", text, "\x1b[22m")
    }

    pub fn italic(&self, text: &str) -> String {
        wrap("\x1b[3m", text, "\x1b[23m")
    }

    pub fn underline(&self, text: &str) -> String {
        wrap("\x1b[4m", text, "\x1b[24m")
    }

    pub fn inverse(&self, text: &str) -> String {
        wrap("\x1b[7m", text, "\x1b[27m")
    }

    pub fn strikethrough(&self, text: &str) -> String {
        wrap("\x1b[9m", text, "\x1b[29m")
    }

    /// The border colour for a thinking level (`off`, `minimal`, … `xhigh`); unknown
    /// levels get the `off` colour.
    pub fn thinking_border(&self, level: &str) -> Token {
        match level {
            "minimal" => Token::ThinkingMinimal,
            "low" => Token::ThinkingLow,
            "medium" => Token::ThinkingMedium,
            "high" => Token::ThinkingHigh,
            "xhigh" => Token::ThinkingXhigh,
            "max" => Token::ThinkingMax,
            _ => Token::ThinkingOff,
        }
    }
}

fn wrap(open: &str, text: &str, close: &str) -> String {
    let mut s = String::with_capacity(open.len() + text.len() + close.len());
    s.push_str(open);
    s.push_str(text);
    s.push_str(close);
    s
}

/// Why a theme colour value could not be read; `value` is the text as written.
#[derive(Debug, Clone, PartialEq)]
pub enum ColorError {
    PaletteIndex(String),
    InvalidHex(String),
    CircularVar(String),
    UnknownVar(String),
    NotAColor(String),
    Invalid(String),
    /// A lightness or saturation outside 0..=1.
    OutOfRange {
        what: &'static str,
        value: String,
    },
    NegativeChroma(String),
}

impl std::fmt::Display for ColorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColorError::PaletteIndex(n) => write!(f, "palette index {n} is not in 0..=255"),
            ColorError::InvalidHex(s) => write!(f, "invalid hex color {s:?}"),
            ColorError::CircularVar(s) => write!(f, "circular variable reference {s:?}"),
            ColorError::UnknownVar(s) => {
                write!(f, "variable reference {s:?} not found in \"vars\"")
            }
            ColorError::NotAColor(v) => {
                write!(f, "expected a color string or palette index, got {v}")
            }
            ColorError::Invalid(s) => write!(f, "invalid color value {s:?}"),
            ColorError::OutOfRange { what, value } => {
                write!(
                    f,
                    "{what} must be between 0 and 1 (0% and 100%) in {value:?}"
                )
            }
            ColorError::NegativeChroma(s) => write!(f, "chroma must not be negative in {s:?}"),
        }
    }
}

impl std::error::Error for ColorError {}

/// Resolves one colour value, following `vars` references (a chain longer than the
/// number of vars is a cycle).
fn resolve(
    value: &Value,
    vars: &serde_json::Map<String, Value>,
    depth: usize,
) -> Result<Color, ColorError> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .filter(|n| *n <= 255)
            .map(|n| Color::Index(n as u8))
            .ok_or_else(|| ColorError::PaletteIndex(n.to_string())),
        Value::String(s) if s.is_empty() => Ok(Color::Default),
        Value::String(s) if s.starts_with('#') => {
            parse_hex(s).ok_or_else(|| ColorError::InvalidHex(s.clone()))
        }
        Value::String(s) if function_form(s).is_some() => parse_function(s),
        Value::String(s) => {
            if depth > vars.len() {
                return Err(ColorError::CircularVar(s.clone()));
            }
            let next = vars
                .get(s)
                .ok_or_else(|| ColorError::UnknownVar(s.clone()))?;
            resolve(next, vars, depth + 1)
        }
        other => Err(ColorError::NotAColor(other.to_string())),
    }
}

/// `#rrggbb` or its three-digit short form `#rgb`.
fn parse_hex(s: &str) -> Option<Color> {
    let hex = s.strip_prefix('#')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let digit = |i: usize| u8::from_str_radix(&hex[i..=i], 16).ok();
    match hex.len() {
        3 => Some(Color::Rgb(digit(0)? * 17, digit(1)? * 17, digit(2)? * 17)),
        6 => {
            let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
            Some(Color::Rgb(channel(0)?, channel(2)?, channel(4)?))
        }
        _ => None,
    }
}

/// The function name (`oklch`/`okhsl`, any case) of a colour written as `name(...)`.
fn function_form(s: &str) -> Option<&'static str> {
    let open = s.find('(')?;
    let name = &s[..open];
    ["oklch", "okhsl"]
        .into_iter()
        .find(|f| name.eq_ignore_ascii_case(f))
}

/// `oklch(L C H)` (L a fraction or a percentage, H optionally in `deg`) or
/// `okhsl(H S L)` (S and L fractions or percentages), as pi 1.x reads them.
fn parse_function(s: &str) -> Result<Color, ColorError> {
    let invalid = || ColorError::Invalid(s.to_string());
    let form = function_form(s).ok_or_else(invalid)?;
    let inner = s[form.len()..]
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(invalid)?;
    let parts: Vec<&str> = inner.split_ascii_whitespace().collect();
    let [first, second, third] = parts[..] else {
        return Err(invalid());
    };
    // A number with an optional unit; percentages become fractions.
    let number = |text: &str, unit: &str| -> Result<f64, ColorError> {
        let (digits, scale) = match text.strip_suffix(unit) {
            Some(d) if !unit.is_empty() => (d, if unit == "%" { 100.0 } else { 1.0 }),
            _ => (text, 1.0),
        };
        let plain = !digits.is_empty()
            && digits
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        match digits.parse::<f64>() {
            Ok(v) if plain && v.is_finite() => Ok(v / scale),
            _ => Err(invalid()),
        }
    };
    let in_unit = |v: f64, what: &'static str| {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(ColorError::OutOfRange {
                what,
                value: s.to_string(),
            })
        }
    };
    let (r, g, b) = if form == "oklch" {
        let l = in_unit(number(first, "%")?, "lightness")?;
        let c = number(second, "")?;
        if c < 0.0 {
            return Err(ColorError::NegativeChroma(s.to_string()));
        }
        super::oklab::oklch_to_rgb(l, c, number(third, "deg")?.rem_euclid(360.0))
    } else {
        let h = number(first, "deg")?;
        let sat = in_unit(number(second, "%")?, "saturation")?;
        let l = in_unit(number(third, "%")?, "lightness")?;
        super::oklab::okhsl_to_rgb(h, sat, l)
    };
    Ok(Color::Rgb(r, g, b))
}

/// A colour value as a theme file writes it (`"#rgb"`, `"oklch(…)"`, a palette index, a
/// `vars` name…), resolved to a concrete colour: for readers of theme files other than
/// [`Theme`] itself, such as the HTML export's `export` section.
pub fn resolve_value(
    value: &Value,
    vars: &serde_json::Map<String, Value>,
) -> Result<Color, ColorError> {
    resolve(value, vars, 0)
}

/// The escape sequence that sets `color` as foreground (or background) in `mode` ("" without
/// colour): for fixed brand colours drawn outside any theme token, such as pi's logo.
pub fn sgr(color: Color, mode: ColorMode, background: bool) -> String {
    let (base, default) = if background { (48, 49) } else { (38, 39) };
    match (mode, color) {
        (ColorMode::NoColor, _) => String::new(),
        (_, Color::Default) => format!("\x1b[{default}m"),
        (_, Color::Index(i)) => format!("\x1b[{base};5;{i}m"),
        (ColorMode::TrueColor, Color::Rgb(r, g, b)) => format!("\x1b[{base};2;{r};{g};{b}m"),
        (ColorMode::Color256, Color::Rgb(r, g, b)) => {
            format!("\x1b[{base};5;{}m", rgb_to_256(r, g, b))
        }
    }
}

const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn nearest(levels: impl Iterator<Item = u8>, value: u8) -> (usize, u8) {
    levels
        .enumerate()
        .min_by_key(|(_, l)| l.abs_diff(value))
        .unwrap_or((0, 0))
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let d = |x: u8, y: u8| f64::from(x) - f64::from(y);
    d(a.0, b.0).powi(2) * 0.299 + d(a.1, b.1).powi(2) * 0.587 + d(a.2, b.2).powi(2) * 0.114
}

/// The xterm-256 index nearest to an RGB colour: the 6×6×6 cube, or the grey ramp when
/// the colour is nearly neutral and the grey is closer (so tinted greys keep their hue).
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let (ri, rv) = nearest(CUBE_LEVELS.into_iter(), r);
    let (gi, gv) = nearest(CUBE_LEVELS.into_iter(), g);
    let (bi, bv) = nearest(CUBE_LEVELS.into_iter(), b);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let cube_dist = distance((r, g, b), (rv, gv, bv));
    let luma = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as u8;
    let (gray_i, gray_v) = nearest((0..24).map(|i| 8 + i * 10), luma);
    let gray_dist = distance((r, g, b), (gray_v, gray_v, gray_v));
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10 && gray_dist < cube_dist {
        (232 + gray_i) as u8
    } else {
        cube_index as u8
    }
}

/// Whether the terminal background is dark or light.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    Dark,
    Light,
}

impl Background {
    /// The built-in theme that suits this background.
    pub fn theme_name(self) -> &'static str {
        match self {
            Background::Dark => "dark",
            Background::Light => "light",
        }
    }
}

/// Parses a terminal's reply to the OSC 11 background query (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB`
/// ending in BEL or ST; channels of 1–4 hex digits) and classifies it by luminance.
pub fn parse_osc11_reply(reply: &str) -> Option<Background> {
    let start = reply.find("rgb:")? + 4;
    let body = &reply[start..];
    let end = body.find(['\x07', '\x1b']).unwrap_or(body.len());
    let mut channels = body[..end].split('/').map(|c| {
        let max = 16f64.powi(c.len() as i32) - 1.0;
        (1..=4)
            .contains(&c.len())
            .then(|| u32::from_str_radix(c, 16).ok())
            .flatten()
            .map(|v| f64::from(v) / max)
    });
    let (r, g, b) = (channels.next()??, channels.next()??, channels.next()??);
    Some(background_from_luminance(r, g, b))
}

/// Dark or light for a background colour of 8-bit channels (an OSC 11 reply already parsed).
pub fn background_from_rgb(r: u8, g: u8, b: u8) -> Background {
    let unit = |c: u8| f64::from(c) / 255.0;
    background_from_luminance(unit(r), unit(g), unit(b))
}

fn background_from_luminance(r: f64, g: f64, b: f64) -> Background {
    let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    if luminance < 0.5 {
        Background::Dark
    } else {
        Background::Light
    }
}

/// pi's start-up guess without querying the terminal: `COLORFGBG="fg;bg"` with a
/// background index below 8 is dark, otherwise light; no hint means dark.
pub fn background_from_colorfgbg(value: Option<&str>) -> Background {
    let bg = value
        .and_then(|v| v.split(';').nth(1))
        .and_then(|b| b.trim().parse::<u32>().ok());
    match bg {
        Some(n) if n >= 8 => Background::Light,
        _ => Background::Dark,
    }
}

/// pi 1.x's default theme name: follow the terminal's light or dark background.
pub const SYSTEM: &str = "system";

/// Whether the `theme` setting follows the terminal's background: unset, `"system"`, or a
/// `"light/dark"` pair.
pub fn follows_background(setting: Option<&str>) -> bool {
    setting.is_none_or(|s| s == SYSTEM || s.contains('/'))
}

/// The concrete theme a setting names on `background`: `"system"` (and no setting) is the
/// built-in for it, a `"light/dark"` pair its half for it, anything else itself.
pub fn resolve_name(setting: Option<&str>, background: Background) -> String {
    match setting {
        None | Some(SYSTEM) => background.theme_name().to_string(),
        Some(pair) if pair.contains('/') => {
            let (light, dark) = pair.split_once('/').unwrap_or((pair, pair));
            match background {
                Background::Light => light.trim().to_string(),
                Background::Dark => dark.trim().to_string(),
            }
        }
        Some(name) => name.to_string(),
    }
}

/// Theme lookup by name among built-ins and custom files (`<dir>/<name>.json`). `"system"`
/// and `"light/dark"` pairs resolve by `COLORFGBG` (the app corrects the choice once the
/// terminal reports its background).
pub fn load_named(name: &str, custom_dirs: &[&Path], mode: ColorMode) -> Result<Theme, ThemeError> {
    if follows_background(Some(name)) {
        let background = background_from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref());
        return load_named(&resolve_name(Some(name), background), custom_dirs, mode);
    }
    if let Some(theme) = Theme::builtin(name, mode) {
        return Ok(theme);
    }
    for dir in custom_dirs {
        let path = dir.join(format!("{name}.json"));
        if path.is_file() {
            return Theme::load_file(&path, mode);
        }
    }
    Err(ThemeError {
        label: name.to_string(),
        message: "theme not found".into(),
    })
}

/// Every token's JSON key mapped to its resolved colour (handy for exports and tests).
pub fn resolved_colors(theme: &Theme) -> HashMap<&'static str, Color> {
    // Includes the optional tokens, resolved to their fallbacks when a theme omits them.
    Token::ALL
        .iter()
        .map(|t| (t.name(), theme.color(*t)))
        .collect()
}

static GLOBAL: OnceLock<RwLock<Arc<Theme>>> = OnceLock::new();

fn global() -> &'static RwLock<Arc<Theme>> {
    GLOBAL.get_or_init(|| RwLock::new(Arc::new(Theme::dark())))
}

/// The process-wide theme (dark for the detected colour mode until [`install`] is called).
pub fn current() -> Arc<Theme> {
    global()
        .read()
        .map(|g| Arc::clone(&g))
        .unwrap_or_else(|e| Arc::clone(&e.into_inner()))
}

/// Replaces the process-wide theme (start-up, `/settings`, hot reload); components holding
/// the old `Arc` keep it until the app invalidates and rebuilds them.
pub fn install(theme: Theme) {
    // The first install (start-up) becomes the initial theme: no dark theme is built first
    // only to be replaced.
    let mut theme = Some(theme);
    let lock =
        GLOBAL.get_or_init(|| RwLock::new(Arc::new(theme.take().unwrap_or_else(Theme::dark))));
    if let Some(theme) = theme {
        *lock.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(theme);
    }
}

#[cfg(test)]
#[path = "theme_tests.rs"]
mod tests;
