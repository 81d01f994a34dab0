use super::*;

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn builtins_define_every_token_with_pi_values() {
    for name in BUILTIN_THEMES {
        let theme = Theme::builtin(name, ColorMode::TrueColor).expect("built-in loads");
        assert_eq!(theme.name(), *name);
        assert_eq!(resolved_colors(&theme).len(), Token::ALL.len());
    }
    let dark = Theme::builtin("dark", ColorMode::TrueColor).unwrap();
    assert_eq!(Token::ALL.len(), 56);
    assert_eq!(dark.color(Token::Accent), Color::Rgb(0x8a, 0xbe, 0xb7));
    assert_eq!(dark.color(Token::Text), Color::Default);
    assert_eq!(dark.color(Token::MdHeading), Color::Rgb(0xf0, 0xc6, 0x74));
    assert_eq!(
        dark.fg(Token::Error, "x"),
        "\x1b[38;2;204;102;102mx\x1b[39m"
    );
    assert_eq!(
        dark.bg(Token::SelectedBg, "x"),
        "\x1b[48;2;58;58;74mx\x1b[49m"
    );
    assert_eq!(dark.fg(Token::Text, "x"), "\x1b[39mx\x1b[39m");
    let light = Theme::builtin("light", ColorMode::TrueColor).unwrap();
    assert_eq!(light.color(Token::MdHeading), Color::Rgb(0x9a, 0x73, 0x26));
}

#[test]
fn token_names_round_trip() {
    for t in Token::ALL {
        assert_eq!(Token::from_name(t.name()), Some(*t));
    }
    assert_eq!(Token::from_name("nope"), None);
}

#[test]
fn color_256_fallback_maps_to_nearest_entry() {
    let dark = Theme::builtin("dark", ColorMode::Color256).unwrap();
    // #cc6666 → cube (4,1,1) = 16 + 144 + 6 + 1
    assert_eq!(dark.fg(Token::Error, "x"), "\x1b[38;5;167mx\x1b[39m");
    assert_eq!(rgb_to_256(0, 0, 0), 16);
    assert_eq!(rgb_to_256(255, 255, 255), 231);
    // A neutral grey prefers the grey ramp: #808080 → 244 (value 128).
    assert_eq!(rgb_to_256(0x80, 0x80, 0x80), 244);
    assert_eq!(rgb_to_256(0x5f, 0x87, 0xff), 16 + 36 + 12 + 5);
}

#[test]
fn no_color_emits_no_colour_codes_but_keeps_attributes() {
    let dark = Theme::builtin("dark", ColorMode::NoColor).unwrap();
    assert_eq!(dark.fg(Token::Accent, "x"), "x");
    assert_eq!(dark.bg(Token::SelectedBg, "x"), "x");
    assert_eq!(dark.bold("x"), "\x1b[1mx\x1b[22m");
    assert_eq!(
        ColorMode::detect_from(env(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")])),
        ColorMode::NoColor
    );
}

#[test]
fn colour_mode_detection() {
    assert_eq!(
        ColorMode::detect_from(env(&[("COLORTERM", "24bit"), ("TERM", "dumb")])),
        ColorMode::TrueColor
    );
    assert_eq!(
        ColorMode::detect_from(env(&[("TERM", "screen-256color")])),
        ColorMode::Color256
    );
    assert_eq!(ColorMode::detect_from(env(&[])), ColorMode::Color256);
    assert_eq!(
        ColorMode::detect_from(env(&[("TERM", "xterm-256color"), ("NO_COLOR", "")])),
        ColorMode::TrueColor
    );
}

fn custom_json(colors_extra: &str, drop: &[&str]) -> String {
    let dark: Value = serde_json::from_str(DARK_JSON).unwrap();
    let mut colors = dark["colors"].as_object().unwrap().clone();
    for d in drop {
        colors.remove(*d);
    }
    let extra: serde_json::Map<String, Value> = serde_json::from_str(colors_extra).unwrap();
    colors.extend(extra);
    serde_json::json!({"name": "mine", "vars": dark["vars"], "colors": colors}).to_string()
}

#[test]
fn custom_theme_file_loads_vars_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.json");
    std::fs::write(
        &path,
        custom_json(r#"{"accent": 208, "border": "cyan"}"#, &[]),
    )
    .unwrap();
    let theme = Theme::load_file(&path, ColorMode::TrueColor).unwrap();
    assert_eq!(theme.name(), "mine");
    assert_eq!(theme.fg(Token::Accent, "x"), "\x1b[38;5;208mx\x1b[39m");
    assert_eq!(theme.color(Token::Border), Color::Rgb(0, 0xd7, 0xff));
    let by_name = load_named("mine", &[dir.path()], ColorMode::TrueColor).unwrap();
    assert_eq!(by_name.color(Token::Accent), Color::Index(208));
    assert!(load_named("dark", &[], ColorMode::TrueColor).is_ok());
    let missing = load_named("absent", &[dir.path()], ColorMode::TrueColor).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "Invalid theme \"absent\": theme not found"
    );
}

#[test]
fn bad_theme_files_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, custom_json("{}", &["mdHeading", "bashMode"])).unwrap();
    let err = Theme::load_file(&path, ColorMode::TrueColor).unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("mdHeading, bashMode"), "{text}");

    std::fs::write(&path, custom_json(r#"{"accent": "nosuchvar"}"#, &[])).unwrap();
    let text = Theme::load_file(&path, ColorMode::TrueColor)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("colors.accent") && text.contains("nosuchvar"),
        "{text}"
    );

    std::fs::write(&path, "{ not json").unwrap();
    let text = Theme::load_file(&path, ColorMode::TrueColor)
        .unwrap_err()
        .to_string();
    assert!(text.contains("not valid JSON"), "{text}");

    let cyclic = r#"{"name":"c","vars":{"a":"b","b":"a"},"colors":{}}"#;
    let mut json: Value = serde_json::from_str(cyclic).unwrap();
    for t in Token::ALL {
        json["colors"][t.name()] = Value::from("a");
    }
    let err = Theme::from_json_str("c", &json.to_string(), ColorMode::TrueColor).unwrap_err();
    assert!(err.message.contains("circular"), "{err}");

    let err = Theme::load_file(&dir.path().join("none.json"), ColorMode::TrueColor).unwrap_err();
    assert!(err.message.contains("cannot read file"), "{err}");
}

#[test]
fn background_detection() {
    assert_eq!(
        parse_osc11_reply("\x1b]11;rgb:0000/0000/0000\x07"),
        Some(Background::Dark)
    );
    assert_eq!(
        parse_osc11_reply("\x1b]11;rgb:ffff/ffff/ffff\x1b\\"),
        Some(Background::Light)
    );
    assert_eq!(
        parse_osc11_reply("\x1b]11;rgb:fd/f6/e3\x07"),
        Some(Background::Light)
    );
    assert_eq!(
        parse_osc11_reply("\x1b]11;rgb:2828/2c2c/3434\x07"),
        Some(Background::Dark)
    );
    assert_eq!(parse_osc11_reply("garbage"), None);
    assert_eq!(background_from_colorfgbg(Some("15;0")), Background::Dark);
    assert_eq!(background_from_colorfgbg(Some("0;15")), Background::Light);
    assert_eq!(background_from_colorfgbg(None), Background::Dark);
}

#[test]
fn global_theme_install() {
    install(Theme::builtin("light", ColorMode::NoColor).unwrap());
    assert_eq!(current().name(), "light");
    install(Theme::builtin("dark", ColorMode::NoColor).unwrap());
    assert_eq!(current().name(), "dark");
}

#[test]
fn rgb_backgrounds_are_classified_by_luminance() {
    assert_eq!(background_from_rgb(0, 0, 0), Background::Dark);
    assert_eq!(background_from_rgb(255, 255, 255), Background::Light);
    assert_eq!(background_from_rgb(40, 44, 52), Background::Dark);
    assert_eq!(background_from_rgb(253, 246, 227), Background::Light);
}

#[test]
fn system_and_light_dark_pairs_follow_the_background() {
    assert!(follows_background(None));
    assert!(follows_background(Some("system")));
    assert!(follows_background(Some("paper/ink")));
    assert!(!follows_background(Some("dark")));
    assert_eq!(resolve_name(Some("system"), Background::Light), "light");
    assert_eq!(resolve_name(None, Background::Dark), "dark");
    assert_eq!(resolve_name(Some("paper/ink"), Background::Light), "paper");
    assert_eq!(resolve_name(Some("paper/ink"), Background::Dark), "ink");
    assert_eq!(resolve_name(Some("light"), Background::Dark), "light");
    // "system" is reserved: it never loads a custom file of that name.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("system.json"), "{ not a theme").unwrap();
    let theme = load_named("system", &[dir.path()], ColorMode::TrueColor).unwrap();
    assert!(["dark", "light"].contains(&theme.name()));
    let pair = load_named("light/dark", &[], ColorMode::TrueColor).unwrap();
    assert!(["dark", "light"].contains(&pair.name()));
}

/// A theme with every required token set to `value`, plus `extra` colour entries.
fn theme_json(value: &str, extra: &str) -> String {
    let colors: Vec<String> = Token::ALL
        .iter()
        .filter(|t| t.fallback().is_none())
        .map(|t| format!("{:?}: {value}", t.name()))
        .collect();
    format!(
        r##"{{"name":"t","appearance":"dark","vars":{{"v":"okhsl(250 60% 55%)"}},"colors":{{{}{extra}}}}}"##,
        colors.join(",")
    )
}

#[test]
fn pi_1x_colour_forms_resolve_as_pi_resolves_them() {
    let cases = [
        (r##""#0af""##, Color::Rgb(0, 170, 255)),
        (r##""#00AAFF""##, Color::Rgb(0, 170, 255)),
        (r#""oklch(62% 0.1 200)""#, Color::Rgb(28, 152, 158)),
        (r#""OKLCH(0.62 0.1 200deg)""#, Color::Rgb(28, 152, 158)),
        (r#""okhsl(233 41% 24%)""#, Color::Rgb(33, 59, 73)),
        (r#""okhsl(233deg 0.41 0.24)""#, Color::Rgb(33, 59, 73)),
        (r#""v""#, Color::Rgb(78, 136, 194)),
        ("39", Color::Index(39)),
        (r#""""#, Color::Default),
    ];
    for (value, want) in cases {
        let theme = Theme::from_json_str("t", &theme_json(value, ""), ColorMode::TrueColor)
            .unwrap_or_else(|e| panic!("{value}: {e}"));
        assert_eq!(theme.color(Token::Accent), want, "{value}");
    }
}

#[test]
fn invalid_colour_forms_are_reported_with_the_token() {
    for value in [
        r#""oklch(120% 0.1 200)""#,
        r#""oklch(50% -1 200)""#,
        r#""okhsl(200 150% 50%)""#,
        r#""okhsl(200 50%)""#,
        r#""oklch(inf 0 0)""#,
        r##""#12345""##,
    ] {
        let err = Theme::from_json_str("t.json", &theme_json(value, ""), ColorMode::TrueColor)
            .expect_err(value)
            .to_string();
        assert!(
            err.contains("colors.accent") && err.contains("t.json"),
            "{value}: {err}"
        );
    }
}

#[test]
fn optional_1x_tokens_fall_back_or_take_their_own_colour() {
    let theme = Theme::from_json_str("t", &theme_json("1", ""), ColorMode::TrueColor).unwrap();
    assert_eq!(
        theme.color(Token::ThinkingMax),
        theme.color(Token::ThinkingXhigh)
    );
    assert_eq!(
        theme.color(Token::SearchMatchBg),
        theme.color(Token::SelectedBg)
    );
    let theme = Theme::from_json_str(
        "t",
        &theme_json("1", r##","thinkingMax":"#ff0000","scrollbarThumb":"v""##),
        ColorMode::TrueColor,
    )
    .unwrap();
    assert_eq!(theme.color(Token::ThinkingMax), Color::Rgb(255, 0, 0));
    assert_eq!(theme.color(Token::ScrollbarThumb), Color::Rgb(78, 136, 194));
    assert_eq!(theme.color(Token::ScrollbarTrack), Color::Index(1));
    assert_eq!(theme.thinking_border("max"), Token::ThinkingMax);
}
