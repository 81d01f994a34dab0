//! Which proxy a request goes through, picked as undici's `EnvHttpProxyAgent` (what pi uses)
//! picks it from the environment: `HTTPS_PROXY`/`HTTP_PROXY` by the URL's scheme (either case),
//! then `ALL_PROXY`; `NO_PROXY` and loopback hosts (local model servers) opt out.

/// The host part of an `http(s)://` URL, lower-cased, without port or brackets.
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    host.to_ascii_lowercase()
}

/// Whether a request to `url` may go through the proxy from the environment: never for
/// loopback (local model servers), nor for hosts listed in `NO_PROXY` (`*`, exact names, or
/// domain suffixes such as `.corp` / `corp`).
#[cfg(test)]
fn use_proxy(url: &str) -> bool {
    let no_proxy = std::env::var("NO_PROXY")
        .or_else(|_| std::env::var("no_proxy"))
        .unwrap_or_default();
    use_proxy_with(url, &no_proxy)
}

fn use_proxy_with(url: &str, no_proxy: &str) -> bool {
    let host = url_host(url);
    if host == "localhost" || host.starts_with("127.") || host == "::1" {
        return false;
    }
    !no_proxy
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = entry.trim_start_matches('.').to_ascii_lowercase();
            entry == "*" || host == entry || host.ends_with(&format!(".{entry}"))
        })
}

/// The proxy for `url` as undici's `EnvHttpProxyAgent` picks it: `https://` URLs use
/// `HTTPS_PROXY`, falling back to `HTTP_PROXY`; `http://` URLs use `HTTP_PROXY`. Lower-case
/// names count too (upper case first), then `ALL_PROXY`; empty values are unset; `NO_PROXY` and
/// loopback opt out.
pub fn proxy_for(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let var = |upper: &str| {
        env(upper)
            .or_else(|| env(&upper.to_ascii_lowercase()))
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if !use_proxy_with(url, &var("NO_PROXY").unwrap_or_default()) {
        return None;
    }
    let specific = if url
        .get(..8)
        .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
    {
        var("HTTPS_PROXY").or_else(|| var("HTTP_PROXY"))
    } else {
        var("HTTP_PROXY")
    };
    // ALL_PROXY is not undici's, but earlier builds honoured it (through ureq): keep it last.
    specific.or_else(|| var("ALL_PROXY"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_never_uses_the_proxy() {
        assert_eq!(url_host("http://user:pw@[::1]:8080/v1"), "::1");
        assert_eq!(url_host("https://API.example.com/v1?x"), "api.example.com");
        assert!(!use_proxy("http://127.0.0.1:11434/v1"));
        assert!(!use_proxy("http://localhost:8080/v1"));
    }

    #[test]
    fn proxy_choice_follows_scheme_case_and_no_proxy() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let e = env(&[
            ("https_proxy", "http://p:3128"),
            ("HTTP_PROXY", "http://h:80"),
        ]);
        assert_eq!(
            proxy_for("https://api.x.com/v1", &e).as_deref(),
            Some("http://p:3128")
        );
        assert_eq!(
            proxy_for("http://api.x.com/v1", &e).as_deref(),
            Some("http://h:80")
        );
        assert_eq!(proxy_for("http://127.0.0.1:9/v1", &e), None);
        let e = env(&[("HTTP_PROXY", "http://h:80"), ("no_proxy", ".corp, other")]);
        assert_eq!(
            proxy_for("https://api.x.com/v1", &e).as_deref(),
            Some("http://h:80")
        );
        assert_eq!(proxy_for("https://llm.corp/v1", &e), None);
        assert_eq!(proxy_for("https://other:8443/v1", &e), None);
        let e = env(&[("HTTPS_PROXY", " ")]);
        assert_eq!(proxy_for("https://api.x.com", &e), None);
        let e = env(&[("all_proxy", "socks5://s:1080")]);
        assert_eq!(
            proxy_for("https://api.x.com", &e).as_deref(),
            Some("socks5://s:1080")
        );
    }
}
