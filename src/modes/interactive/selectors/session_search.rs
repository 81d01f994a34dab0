//! The `/resume` search language: whitespace-separated fuzzy tokens, `"exact phrases"`, or
//! `re:<regex>`; matched against a session's id, name, message text and cwd.

use regex::{Regex, RegexBuilder};

use crate::session::dir::SessionInfo;
use crate::tui::fuzzy::fuzzy_match;

pub enum Query {
    Tokens(Vec<Token>),
    Regex(Regex),
    /// An invalid regex matches nothing.
    Invalid,
}

pub enum Token {
    Fuzzy(String),
    Phrase(String),
}

pub fn parse(query: &str) -> Query {
    let trimmed = query.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = pattern.trim();
        return match RegexBuilder::new(pattern).case_insensitive(true).build() {
            Ok(re) if !pattern.is_empty() => Query::Regex(re),
            _ => Query::Invalid,
        };
    }
    if trimmed.matches('"').count() % 2 == 1 {
        return Query::Tokens(
            trimmed
                .split_whitespace()
                .map(|t| Token::Fuzzy(t.into()))
                .collect(),
        );
    }
    let mut tokens = Vec::new();
    for (i, part) in trimmed.split('"').enumerate() {
        if i % 2 == 1 {
            if !part.trim().is_empty() {
                tokens.push(Token::Phrase(part.trim().to_string()));
            }
        } else {
            tokens.extend(part.split_whitespace().map(|t| Token::Fuzzy(t.into())));
        }
    }
    Query::Tokens(tokens)
}

fn squash(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lower is better; `None` when the session does not match.
pub fn score(session: &SessionInfo, query: &Query) -> Option<f64> {
    let text = format!(
        "{} {} {} {}",
        session.id,
        session.name.as_deref().unwrap_or(""),
        session.all_messages_text,
        session.cwd
    );
    match query {
        Query::Invalid => None,
        Query::Regex(re) => re.find(&text).map(|m| m.start() as f64 * 0.1),
        Query::Tokens(tokens) => {
            let mut total = 0.0;
            let squashed = squash(&text);
            for token in tokens {
                match token {
                    Token::Phrase(p) => total += squashed.find(&squash(p))? as f64 * 0.1,
                    Token::Fuzzy(f) => {
                        let m = fuzzy_match(f, &text);
                        if !m.matches {
                            return None;
                        }
                        total += m.score;
                    }
                }
            }
            Some(total)
        }
    }
}
