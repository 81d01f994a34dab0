use super::*;

fn metadata(extra: Value) -> ServerMetadata {
    let mut m = json!({
        "issuer": "https://as", "authorization_endpoint": "https://as/authorize",
        "token_endpoint": "https://as/token", "response_types_supported": ["code"],
        "token_endpoint_auth_methods_supported": ["none"],
        "client_id_metadata_document_supported": true
    });
    for (k, v) in extra.as_object().unwrap() {
        m[k] = v.clone();
    }
    ServerMetadata::parse(&m).unwrap()
}

#[test]
fn loopback_redirects() {
    let d = loopback(&Settings::default());
    assert_eq!(
        (d.bind_host.as_str(), d.port, d.path.as_str()),
        ("127.0.0.1", None, "/callback")
    );
    assert_eq!(d.fixed_redirect_url, None);
    let port = loopback(&Settings {
        callback_port: Some(8765),
        ..Settings::default()
    });
    assert_eq!(
        port.fixed_redirect_url.as_deref(),
        Some("http://127.0.0.1:8765/callback")
    );
    let url = loopback(&Settings {
        callback_url: Some("http://localhost/cb".into()),
        callback_port: Some(9),
        ..Settings::default()
    });
    assert_eq!(url.bind_host, "127.0.0.1");
    assert_eq!(url.redirect_host, "localhost");
    assert_eq!(
        url.fixed_redirect_url.as_deref(),
        Some("http://localhost:9/cb")
    );
    let v6 = loopback(&Settings {
        callback_url: Some("http://[::1]:7/callback".into()),
        ..Settings::default()
    });
    assert_eq!(v6.bind_host, "::1");
    assert_eq!(
        v6.fixed_redirect_url.as_deref(),
        Some("http://[::1]:7/callback")
    );
}

#[test]
fn when_pi_presents_its_document() {
    let auto = Settings::default();
    assert!(offers_document(&auto, "http://127.0.0.1:1/callback"));
    assert!(!offers_document(&auto, "http://[::1]:1/callback"));
    assert!(!offers_document(&auto, "http://127.0.0.1:1/cb"));
    let named = Settings {
        client_name: Some("Claude Code".into()),
        ..Settings::default()
    };
    assert!(!offers_document(&named, "http://127.0.0.1:1/callback"));
    let dcr = Settings {
        registration: Registration::Dcr,
        ..Settings::default()
    };
    assert!(!offers_document(&dcr, "http://127.0.0.1:1/callback"));
}

#[test]
fn documents_are_server_specific_without_iss() {
    let server = "https://mcp.example/mcp";
    let redirect = "http://127.0.0.1:5/callback";
    let general = client_document(
        server,
        redirect,
        Some(&metadata(
            json!({"authorization_response_iss_parameter_supported": true}),
        )),
    )
    .unwrap();
    assert_eq!(general.url, "https://pi.dev/oauth/client.json");
    assert_eq!(general.redirect_url, redirect);
    let specific = client_document(server, redirect, Some(&metadata(json!({})))).unwrap();
    let id = callback_id(server);
    assert_eq!(id.len(), 12);
    assert_eq!(
        specific.url,
        format!("https://pi.dev/oauth/{id}/client.json")
    );
    assert_eq!(
        specific.redirect_url,
        format!("http://127.0.0.1:5/callback/{id}")
    );
    // Confidential-only servers and servers without document support: none.
    let confidential =
        metadata(json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}));
    assert_eq!(client_document(server, redirect, Some(&confidential)), None);
    assert_eq!(client_document(server, redirect, None), None);
    // The id ignores the fragment.
    assert_eq!(callback_id("https://mcp.example/mcp#x"), id);
}

#[test]
fn client_authentication_is_chosen_like_pi() {
    let public = json!({"client_id": "c"}).as_object().cloned().unwrap();
    let secret = json!({"client_id": "c", "client_secret": "s"})
        .as_object()
        .cloned()
        .unwrap();
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(auth_method(&public, &[]), "none");
    assert_eq!(auth_method(&secret, &[]), "client_secret_basic");
    assert_eq!(
        auth_method(&secret, &v(&["client_secret_post", "none"])),
        "client_secret_post"
    );
    assert_eq!(auth_method(&public, &v(&["client_secret_post"])), "none");
    let hinted = json!({"client_id": "c", "client_secret": "s", "token_endpoint_auth_method": "client_secret_post"})
        .as_object()
        .cloned()
        .unwrap();
    assert_eq!(auth_method(&hinted, &[]), "client_secret_post");
}

#[test]
fn token_responses() {
    let t = parse_tokens(&json!({
        "access_token": "a", "token_type": "Bearer", "expires_in": "3600",
        "scope": "", "refresh_token": null
    }))
    .unwrap();
    assert_eq!(t.get("expires_in"), Some(&json!(3600.0)));
    assert!(!t.contains_key("scope") && !t.contains_key("refresh_token"));
    assert!(parse_tokens(&json!({"token_type": "Bearer"})).is_err());
    assert!(
        parse_tokens(&json!({"access_token": "a", "token_type": "Bearer", "expires_in": "x"}))
            .is_err()
    );
    let kept = with_scope(t, Some("read"));
    assert_eq!(kept["scope"], "read");
}

#[test]
fn oauth_errors_win_over_the_status() {
    let r = net::Response {
        status: 200,
        body: r#"{"error":"invalid_grant","error_description":"expired"}"#.into(),
    };
    assert_eq!(
        oauth_answer(&r).unwrap_err(),
        OAuthError::Server {
            code: "invalid_grant".into(),
            description: "expired".into()
        }
    );
    let r = net::Response {
        status: 500,
        body: "boom".into(),
    };
    assert_eq!(oauth_answer(&r).unwrap_err().to_string(), "HTTP 500: boom");
}

#[test]
fn refreshes_present_a_document_redirect() {
    let s = Settings::default();
    let state = State::default();
    assert_eq!(refresh_redirect_url(&s, &state, None), DEFAULT_REDIRECT_URL);
    assert_eq!(
        refresh_redirect_url(&s, &state, Some("http://127.0.0.1:4/callback")),
        "http://127.0.0.1:4/callback"
    );
    assert_eq!(
        refresh_redirect_url(&s, &state, Some("http://127.0.0.1:4/other")),
        DEFAULT_REDIRECT_URL
    );
}
