//! The little URL handling MCP needs: splitting an `http(s)://` URL into its parts (to check
//! the config the way WHATWG URL parsing does for these cases) and `file://` URLs for roots.

use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Lower-cased, without `:`.
    pub scheme: String,
    /// Lower-cased; IPv6 hosts keep their brackets (`[::1]`), as WHATWG `hostname` does.
    pub host: String,
    pub port: Option<u16>,
    /// `/` when empty.
    pub path: String,
    /// The text after `?`, if there was a `?`.
    pub query: Option<String>,
    pub fragment: Option<String>,
}

impl Url {
    /// Parses `scheme://[user@]host[:port][/path][?query][#fragment]`; `None` when it has no
    /// scheme, no host, or a bad port.
    pub fn parse(text: &str) -> Option<Url> {
        let text = text.trim();
        let (scheme, rest) = text.split_once("://")?;
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return None;
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f.to_string())),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_string())),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = if host_port.starts_with('[') {
            let end = host_port.find(']')?;
            let port = &host_port[end + 1..];
            (&host_port[..=end], port.strip_prefix(':'))
        } else {
            match host_port.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_port, None),
            }
        };
        if host.is_empty() {
            return None;
        }
        let port = match port {
            None | Some("") => None,
            Some(p) => Some(p.parse::<u16>().ok()?),
        };
        Some(Url {
            scheme: scheme.to_ascii_lowercase(),
            host: host.to_ascii_lowercase(),
            port,
            path: path.to_string(),
            query,
            fragment,
        })
    }

    /// `localhost`, `127.0.0.1` or `[::1]`.
    pub fn is_loopback(&self) -> bool {
        matches!(self.host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
    }

    /// `scheme://host[:port]`, without the scheme's default port.
    pub fn origin(&self) -> String {
        let default = match self.scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        match self.port.filter(|p| Some(*p) != default) {
            Some(p) => format!("{}://{}:{p}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// The URL as WHATWG URL parsing serialises these cases: lower-case scheme and host, no
    /// default port, `/` for an empty path.
    pub fn serialize(&self) -> String {
        let mut out = format!("{}{}", self.origin(), self.path);
        if let Some(q) = &self.query {
            out.push('?');
            out.push_str(q);
        }
        if let Some(f) = &self.fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    }

    /// The same URL without its fragment.
    pub fn without_fragment(&self) -> Url {
        Url {
            fragment: None,
            ..self.clone()
        }
    }
}

/// `text` normalised by [`Url::serialize`], or as written when it does not parse.
pub fn normalize(text: &str) -> String {
    Url::parse(text).map_or_else(|| text.to_string(), |u| u.serialize())
}

/// `file://` URL of an absolute path, percent-encoding what a URL path may not hold (as Node's
/// `pathToFileURL` does for the usual characters).
pub fn file_url(path: &Path) -> String {
    let path = path.to_string_lossy();
    let encoded = crate::util::encoding::percent_encode(&path, b"/!$&'()*+,;=:@");
    format!("file://{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        let u = Url::parse("HTTP://User@Example.COM:8080/mcp?x=1#f").unwrap();
        assert_eq!(u.scheme, "http");
        assert_eq!(u.host, "example.com");
        assert_eq!(u.port, Some(8080));
        assert_eq!(u.path, "/mcp");
        assert_eq!(u.query.as_deref(), Some("x=1"));
        assert_eq!(u.fragment.as_deref(), Some("f"));
        let v6 = Url::parse("http://[::1]:9/callback").unwrap();
        assert_eq!(v6.host, "[::1]");
        assert!(v6.is_loopback());
        assert_eq!(Url::parse("https://x").unwrap().path, "/");
        assert!(Url::parse("http://").is_none());
        assert!(Url::parse("example.com/mcp").is_none());
        assert!(Url::parse("http://h:99999/").is_none());
    }

    #[test]
    fn serialised_like_whatwg() {
        assert_eq!(normalize("HTTPS://Example.com:443"), "https://example.com/");
        assert_eq!(
            normalize("http://127.0.0.1:8080/mcp?x=1"),
            "http://127.0.0.1:8080/mcp?x=1"
        );
        assert_eq!(normalize("http://h:80/a#f"), "http://h/a#f");
        let u = Url::parse("https://h/a#f").unwrap();
        assert_eq!(u.without_fragment().serialize(), "https://h/a");
        assert_eq!(u.origin(), "https://h");
    }

    #[test]
    fn file_urls_encode_spaces_and_unicode() {
        assert_eq!(
            file_url(Path::new("/tmp/a b/ü")),
            "file:///tmp/a%20b/%C3%BC"
        );
    }
}
