//! The crate's one-way rule, checked on the source (see DESIGN.md, "Layers"): no two files of
//! `src/` import each other, directly or through a circle, and the agent loop and the LLM
//! layer (`src/agent/`, `src/ai/`) never name the session storage (`crate::session`).
//!
//! A file imports another when it names an item of it through a `crate::`, `super::` or
//! `self::` path, a bare path into one of its own child modules (`child::f()`,
//! `pub use child::X`), or a path through a name a `use` brought in (`use crate::ai::types;`
//! … `types::Message`), in a `use` or anywhere in its code. A path lands in the file that
//! defines the item: when a module only re-exports a name (`pub use child::X`), a path through
//! it (`super::X`) lands in the file it was re-exported from, so a `mod.rs` that declares and
//! re-exports is a facade its children never depend on. Modules are found the way rustc finds
//! them, from `src/lib.rs` through `mod` declarations (`#[path]` included). Comments, string
//! literals and `#[cfg(test)]` items are left out: tests may reach anywhere.

// Not part of the binary: std's sorts are fine here (clippy.toml keeps them out of `src/`).
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Circles still allowed, each with why. A circle passes only if all of its files are in one
/// entry, so an entry can only shrink; drop it when its files are one-way. Nothing else
/// belongs here.
const ALLOWED_CIRCLES: &[(&str, &[&str])] = &[];

/// The layers below the session storage.
const BELOW_SESSION: &[&str] = &["agent", "ai"];

/// The floors of `src/`, lowest first. A top-level module imports only from floors below its
/// own; modules on one floor do not import each other.
const FLOORS: &[&[&str]] = &[
    &["util"],
    &["ai", "tui"],
    &["agent", "resources"],
    &["session", "tools"],
    &["mcp"],
    &["extensions"],
    &["harness"],
    &["modes"],
    &["cli"],
];

#[test]
fn no_file_imports_another_that_imports_it_back() {
    let graph = Graph::load(Path::new(env!("CARGO_MANIFEST_DIR")), "src/lib.rs");
    assert!(
        graph.modules.len() > 100,
        "the module tree was not found ({} modules)",
        graph.modules.len()
    );
    let mut failures = Vec::new();
    let cycles = graph.cycles();
    let in_circle: BTreeSet<&str> = cycles
        .iter()
        .flatten()
        .map(|m| graph.modules[m].rel.as_str())
        .collect();
    for (why, files) in ALLOWED_CIRCLES {
        let gone: Vec<&str> = files
            .iter()
            .copied()
            .filter(|f| !in_circle.contains(f))
            .collect();
        if !gone.is_empty() {
            failures.push(format!(
                "  ALLOWED_CIRCLES ({why}) lists files no longer in a circle; drop them: {}",
                gone.join(", ")
            ));
        }
    }
    for cycle in cycles {
        let allowed = ALLOWED_CIRCLES.iter().any(|(_, files)| {
            cycle
                .iter()
                .all(|m| files.contains(&graph.modules[m].rel.as_str()))
        });
        if allowed {
            continue;
        }
        failures.push(graph.describe(&cycle));
    }
    assert!(
        failures.is_empty(),
        "files that import each other (make one direction go through a narrow trait, pass \
         the state in, or move the shared type down):\n\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn the_agent_and_ai_layers_never_name_the_session_storage() {
    let graph = Graph::load(Path::new(env!("CARGO_MANIFEST_DIR")), "src/lib.rs");
    let mut failures = Vec::new();
    for (module, m) in &graph.modules {
        if !module
            .first()
            .is_some_and(|top| BELOW_SESSION.contains(&top.as_str()))
        {
            continue;
        }
        for path in &m.paths {
            if path.first().is_some_and(|s| s == "session") {
                failures.push(format!("{}: crate::{}", m.rel, path.join("::")));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the layers below storage name crate::session (move the type down instead):\n{}",
        failures.join("\n")
    );
}

#[test]
fn each_floor_imports_only_from_the_floors_below() {
    let graph = Graph::load(Path::new(env!("CARGO_MANIFEST_DIR")), "src/lib.rs");
    let floor = |top: &str| FLOORS.iter().position(|f| f.contains(&top));
    let mut failures = Vec::new();
    for (module, m) in &graph.modules {
        let Some(from) = module.first() else { continue };
        let Some(from_floor) = floor(from) else {
            failures.push(format!("{}: `{from}` is on no floor of FLOORS", m.rel));
            continue;
        };
        for target in &m.imports {
            let Some(to) = target.first().filter(|to| *to != from) else {
                continue;
            };
            if floor(to).is_none_or(|to_floor| to_floor >= from_floor) {
                failures.push(format!("{} -> {}", m.rel, graph.modules[target].rel));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "imports that go up or sideways between floors:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_checker_sees_circles_and_ignores_comments_strings_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "src/lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod agent;\npub mod session;\n\
         pub mod facade;\npub mod owner;\npub mod e;\npub mod tree;\n",
    );
    // e -> tree::leaf -> e, with e naming the leaf through a module it imported by name.
    write(
        "src/e.rs",
        "use crate::tree;\npub struct E;\nfn f() { tree::leaf::g() }\n",
    );
    write("src/tree/mod.rs", "pub mod leaf;\n");
    write(
        "src/tree/leaf.rs",
        "use crate::e as up;\npub fn g() {}\nfn h() { let _ = up::E; }\n",
    );
    // a -> b -> c -> a through a use group, an expression path and `super`.
    write("src/a.rs", "use crate::{b::B, d};\npub struct A;\n");
    write("src/b.rs", "pub struct B(crate::c::C);\n");
    write(
        "src/c.rs",
        "pub struct C;\nfn f() { let _ = super::a::A; }\n#[path = \"c_more.rs\"]\nmod more;\n",
    );
    // d names a and b only where it does not count.
    write(
        "src/d.rs",
        "// use crate::a;\n/* crate::b::B */\nconst S: &str = \"crate::a::A\";\nconst R: &str = r#\"crate::b\"#;\nfn lifetime<'a>(x: &'a str) -> char { let _ = x; '{' }\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n    fn t() { let _ = crate::b::B; }\n}\n",
    );
    write("src/c_more.rs", "use super::super::a::A;\n");
    write("src/agent/mod.rs", "pub fn f() { crate::session::g() }\n");
    write("src/session/mod.rs", "pub fn g() {}\n");
    // A facade: its children import each other through its re-exports, never from it.
    write(
        "src/facade/mod.rs",
        "mod x;\nmod y;\npub use x::X;\npub use y::*;\nuse std::fmt::Display as Shown;\n",
    );
    write("src/facade/x.rs", "pub struct X;\n");
    write(
        "src/facade/y.rs",
        "use super::{Shown, X};\npub struct Y(X);\nfn f(_: &dyn Shown) {}\n",
    );
    // A parent that defines what its child uses and calls the child by a bare path.
    write(
        "src/owner/mod.rs",
        "mod part;\npub struct Owner;\npub fn f() { part::run() }\n",
    );
    write("src/owner/part.rs", "use super::Owner;\npub fn run() {}\n");
    let graph = Graph::load(dir.path(), "src/lib.rs");
    let key = |s: &str| -> Vec<String> { s.split("::").map(str::to_string).collect() };
    let mut cycles: Vec<Vec<String>> = graph
        .cycles()
        .iter()
        .map(|c| c.iter().map(|m| graph.modules[m].rel.clone()).collect())
        .collect();
    cycles.sort();
    assert_eq!(
        cycles,
        [
            vec!["src/a.rs", "src/b.rs", "src/c.rs"],
            vec!["src/e.rs", "src/tree/leaf.rs"],
            vec!["src/owner/mod.rs", "src/owner/part.rs"]
        ]
    );
    assert_eq!(
        graph.modules[&key("facade::y")].imports,
        BTreeSet::from([key("facade::x")])
    );
    assert_eq!(
        graph.modules[&key("facade")].imports,
        BTreeSet::from([key("facade::x"), key("facade::y")])
    );
    assert_eq!(graph.modules[&key("c::more")].rel, "src/c_more.rs");
    assert!(graph.modules[&key("c::more")].imports.contains(&key("a")));
    assert!(graph.modules[&key("d")].imports.is_empty());
    assert_eq!(graph.modules[&key("agent")].paths, [key("session::g")]);
}

/// One file of the crate.
struct Module {
    /// The file, relative to the crate root (`src/ai/types.rs`).
    rel: String,
    /// Every `crate::`-relative path it names (made absolute).
    paths: Vec<Vec<String>>,
    /// The modules (files) those paths land in, itself excluded.
    imports: BTreeSet<Vec<String>>,
}

struct Graph {
    /// By module path (`["ai", "types"]`; the crate root is `[]`).
    modules: BTreeMap<Vec<String>, Module>,
}

impl Graph {
    fn load(root: &Path, lib: &str) -> Graph {
        let mut files = BTreeMap::new();
        collect(root, &root.join(lib), Vec::new(), true, &mut files);
        let known: BTreeSet<Vec<String>> = files.keys().cloned().collect();
        let externs = extern_crates(root);
        let scans: BTreeMap<Vec<String>, Scan> = files
            .iter()
            .map(|(module, (_, code))| {
                let children: BTreeSet<String> = known
                    .iter()
                    .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
                    .map(|k| k[module.len()].clone())
                    .collect();
                (module.clone(), scan(code, module, &children, &externs))
            })
            .collect();
        let mut modules = BTreeMap::new();
        for (module, (rel, _)) in files {
            let paths = scans[&module].paths.clone();
            let imports = paths
                .iter()
                .filter_map(|p| land(&scans, p, 0))
                .filter(|target| *target != module)
                .collect();
            modules.insert(
                module,
                Module {
                    rel,
                    paths,
                    imports,
                },
            );
        }
        Graph { modules }
    }

    /// Strongly connected groups of more than one file (Tarjan), each sorted by file.
    fn cycles(&self) -> Vec<Vec<Vec<String>>> {
        struct State<'a> {
            graph: &'a Graph,
            next: usize,
            index: BTreeMap<&'a [String], usize>,
            low: BTreeMap<&'a [String], usize>,
            stack: Vec<&'a [String]>,
            on_stack: BTreeSet<&'a [String]>,
            found: Vec<Vec<Vec<String>>>,
        }
        fn visit<'a>(s: &mut State<'a>, v: &'a [String]) {
            s.index.insert(v, s.next);
            s.low.insert(v, s.next);
            s.next += 1;
            s.stack.push(v);
            s.on_stack.insert(v);
            for w in &s.graph.modules[v].imports {
                let w = w.as_slice();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
            if s.low[v] == s.index[v] {
                let mut group = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack.remove(w);
                    group.push(w.to_vec());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort_by(|a, b| s.graph.modules[a].rel.cmp(&s.graph.modules[b].rel));
                    s.found.push(group);
                }
            }
        }
        let mut s = State {
            graph: self,
            next: 0,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            found: Vec::new(),
        };
        for v in self.modules.keys() {
            if !s.index.contains_key(v.as_slice()) {
                visit(&mut s, v);
            }
        }
        s.found
    }

    /// A circle's files and the imports between them.
    fn describe(&self, cycle: &[Vec<String>]) -> String {
        let members: BTreeSet<&Vec<String>> = cycle.iter().collect();
        let mut out = Vec::new();
        for m in cycle {
            let targets: Vec<&str> = self.modules[m]
                .imports
                .iter()
                .filter(|t| members.contains(t))
                .map(|t| self.modules[t].rel.as_str())
                .collect();
            out.push(format!(
                "  {} -> {}",
                self.modules[m].rel,
                targets.join(", ")
            ));
        }
        out.join("\n")
    }
}

/// Reads `file` as module `module` and, through its `mod` declarations, its children:
/// `(path relative to root, code without comments, literals and test items)` by module.
fn collect(
    root: &Path,
    file: &Path,
    module: Vec<String>,
    owns_dir: bool,
    out: &mut BTreeMap<Vec<String>, (String, String)>,
) {
    let Ok(source) = std::fs::read_to_string(file) else {
        return;
    };
    let (code, literals) = strip(&source);
    let code = without_test_items(&code);
    let dir = file.parent().unwrap_or(root).to_path_buf();
    for (name, path_attr) in mod_declarations(&code, &literals) {
        let (child, child_owns_dir) = match path_attr {
            Some(p) => {
                let f = dir.join(p);
                let owns = f.file_name().is_some_and(|n| n == "mod.rs");
                (f, owns)
            }
            None => {
                let base = if owns_dir {
                    dir.clone()
                } else {
                    dir.join(file.file_stem().unwrap_or_default())
                };
                let flat = base.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, false)
                } else {
                    (base.join(&name).join("mod.rs"), true)
                }
            }
        };
        let mut child_module = module.clone();
        child_module.push(name);
        collect(root, &child, child_module, child_owns_dir, out);
    }
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned();
    out.insert(module, (rel, code));
}

/// The code with comments removed and every string or char literal replaced by `"<n>"`, `n`
/// indexing the returned literal texts (so `#[path = "…"]` can still be read).
fn strip(src: &str) -> (String, Vec<String>) {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut literals = Vec::new();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some((hashes, start)) = raw_string_at(&c, i).filter(|_| !prev_ident) {
            // A raw string: r"…", r#"…"#, br"…".
            let mut j = start;
            while j < c.len()
                && !(c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')))
            {
                j += 1;
            }
            literals.push(c[start..j.min(c.len())].iter().collect());
            out.push_str(&format!("\"{}\"", literals.len() - 1));
            i = j + 1 + hashes;
        } else if c[i] == '"' || (c[i] == 'b' && !prev_ident && c.get(i + 1) == Some(&'"')) {
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let start = j;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            literals.push(c[start..j.min(c.len())].iter().collect());
            out.push_str(&format!("\"{}\"", literals.len() - 1));
            i = j + 1;
        } else if c[i] == '\'' {
            // A char literal ('x', '\n', '\u{1F600}'), else a lifetime or label.
            if c.get(i + 1) == Some(&'\\') {
                let mut j = i + 2;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
            } else if c.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    (out, literals)
}

/// At a raw string's `r` (or `br`): its number of `#`s and where its text starts.
fn raw_string_at(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = match (c.get(i), c.get(i + 1)) {
        (Some('r'), _) => i + 1,
        (Some('b'), Some('r')) => i + 2,
        _ => return None,
    };
    let hashes_from = j;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((j - hashes_from, j + 1))
}

/// The code without the items marked `#[cfg(test)]` (a `mod x;`, a `mod tests { … }`, a
/// function).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let mut depth = 0i32;
        let mut end = item.len();
        for (k, ch) in item.char_indices() {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                '{' if depth == 0 => {
                    end = k + matching_brace(&item[k..]);
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The length of the balanced `{ … }` block that `s` starts with.
fn matching_brace(s: &str) -> usize {
    let mut depth = 0;
    for (k, ch) in s.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// `mod name;` declarations with their `#[path = "…"]`, if any.
fn mod_declarations(code: &str, literals: &[String]) -> Vec<(String, Option<String>)> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        let (Some(name), Some(semi)) = (tokens.get(k + 1), tokens.get(k + 2)) else {
            continue;
        };
        if t.text != "mod" || !is_ident(&name.text) || semi.text != ";" {
            continue;
        }
        // Attributes sit between the previous item's end and `mod`.
        let start = tokens[..k]
            .iter()
            .rposition(|t| matches!(t.text.as_str(), ";" | "{" | "}"))
            .map_or(0, |p| p + 1);
        let head = &tokens[start..k];
        let path = head.windows(4).find_map(|w| {
            (w[0].text == "path" && w[1].text == "=" && w[2].text.starts_with('"'))
                .then(|| w[2].text.trim_matches('"').parse::<usize>().ok())
                .flatten()
                .and_then(|n| literals.get(n).cloned())
        });
        out.push((name.text.clone(), path));
    }
    out
}

struct Token {
    text: String,
    /// Byte offset in the code.
    at: usize,
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, literal placeholders, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<Token> {
    let b: Vec<(usize, char)> = code.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (at, ch) = b[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let mut j = i;
            while j < b.len() && (b[j].1.is_alphanumeric() || b[j].1 == '_') {
                j += 1;
            }
            let end = b.get(j).map_or(code.len(), |x| x.0);
            out.push(Token {
                text: code[at..end].to_string(),
                at,
            });
            i = j;
        } else if ch == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j].1 != '"' {
                j += 1;
            }
            let end = b.get(j + 1).map_or(code.len(), |x| x.0);
            out.push(Token {
                text: code[at..end].to_string(),
                at,
            });
            i = j + 1;
        } else if ch == ':' && b.get(i + 1).is_some_and(|x| x.1 == ':') {
            out.push(Token {
                text: "::".into(),
                at,
            });
            i += 2;
        } else {
            out.push(Token {
                text: ch.to_string(),
                at,
            });
            i += 1;
        }
    }
    out
}

/// What one file names and defines.
struct Scan {
    /// Every path into the crate it names, made absolute (`use` trees expanded).
    paths: Vec<Vec<String>>,
    /// The items it defines at its top level (`fn`, `struct`, `mod`, …).
    defined: BTreeSet<String>,
    /// Names it brings in with a top-level `use`, to the absolute path they stand for (`None`
    /// for another crate's items).
    imported: BTreeMap<String, Option<Vec<String>>>,
    /// Its top-level glob imports (`pub use child::*`), made absolute.
    globs: Vec<Vec<String>>,
}

/// Scans the code of `module`, whose child modules are `children`; `externs` are the names of
/// other crates a `use` may start with.
fn scan(
    code: &str,
    module: &[String],
    children: &BTreeSet<String>,
    externs: &BTreeSet<String>,
) -> Scan {
    let tokens = tokens(code);
    let mut out = Scan {
        paths: Vec::new(),
        defined: BTreeSet::new(),
        imported: BTreeMap::new(),
        globs: Vec::new(),
    };
    // The names `use` brings in from this crate, anywhere in the file, so a path that starts
    // with one (`use crate::ai::types;` … `types::Message`) lands where it leads. A `use`
    // inside a function is read as the whole file's: that can only add imports.
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, t) in tokens.iter().enumerate() {
        if t.text != "use" || (k > 0 && matches!(tokens[k - 1].text.as_str(), "::" | ".")) {
            continue;
        }
        let mut p = k + 1;
        if tokens.get(p).is_some_and(|t| t.text == "::") {
            p += 1;
        }
        let mut leaves = Vec::new();
        use_tree(&tokens, &mut p, Vec::new(), &mut leaves);
        for leaf in leaves.into_iter().filter(|l| !l.glob) {
            let name = leaf.alias.clone().or_else(|| leaf.path.last().cloned());
            if let (Some(name), Some(target)) = (name, absolute(&leaf.path, module, children)) {
                aliases.entry(name).or_insert(target);
            }
        }
    }
    let mut uses = Vec::new();
    let mut depth = 0usize;
    let mut k = 0;
    while k < tokens.len() {
        let text = tokens[k].text.as_str();
        let after_colons = k > 0 && matches!(tokens[k - 1].text.as_str(), "::" | ".");
        match text {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union" | "mod"
                if depth == 0 =>
            {
                if let Some(name) = tokens.get(k + 1).filter(|t| is_ident(&t.text)) {
                    out.defined.insert(name.text.clone());
                }
            }
            "macro_rules" if depth == 0 => {
                if let Some(name) = tokens.get(k + 2).filter(|t| is_ident(&t.text)) {
                    out.defined.insert(name.text.clone());
                }
            }
            _ => {}
        }
        if text == "use" && !after_colons {
            let mut leaves = Vec::new();
            let mut p = k + 1;
            if tokens.get(p).is_some_and(|t| t.text == "::") {
                p += 1;
            }
            use_tree(&tokens, &mut p, Vec::new(), &mut leaves);
            uses.extend(leaves.into_iter().map(|leaf| (leaf, depth == 0)));
            k = p;
            continue;
        }
        let rooted = matches!(text, "crate" | "super" | "self")
            || children.contains(text)
            || aliases.contains_key(text);
        if rooted && !after_colons && tokens.get(k + 1).is_some_and(|t| t.text == "::") {
            let mut segs = vec![text.to_string()];
            let mut p = k + 1;
            while tokens.get(p).is_some_and(|t| t.text == "::")
                && tokens.get(p + 1).is_some_and(|t| is_ident(&t.text))
                // `crate :: x` written apart is not a path we would write; stay exact.
                && tokens[p + 1].at > tokens[p].at
            {
                segs.push(tokens[p + 1].text.clone());
                p += 2;
            }
            let path = match aliases.get(text) {
                Some(target) if !children.contains(text) && !is_path_keyword(text) => {
                    let mut path = target.clone();
                    path.extend(segs.into_iter().skip(1));
                    Some(path)
                }
                _ => absolute(&segs, module, children),
            };
            out.paths.extend(path);
            k = p;
            continue;
        }
        k += 1;
    }
    for (leaf, top_level) in uses {
        let target = absolute(&leaf.path, module, children);
        out.paths.extend(target.clone());
        if !top_level {
            continue;
        }
        if leaf.glob {
            out.globs.extend(target);
            continue;
        }
        let Some(name) = leaf.alias.or_else(|| leaf.path.last().cloned()) else {
            continue;
        };
        let first = leaf.path[0].as_str();
        if target.is_some() {
            out.imported.insert(name, target);
        } else if externs.contains(first) && !out.defined.contains(first) {
            out.imported.insert(name, None);
        }
        // Otherwise (`use Kind::*` of a local enum, …) the name stays the module's own.
    }
    out
}

fn is_path_keyword(s: &str) -> bool {
    matches!(s, "crate" | "super" | "self")
}

/// The module a path lands in: the file that defines the item it names, following the
/// re-exports of the modules it passes through. `None` when it leads out of the crate.
fn land(scans: &BTreeMap<Vec<String>, Scan>, path: &[String], hops: usize) -> Option<Vec<String>> {
    let module = (0..=path.len())
        .rev()
        .map(|n| &path[..n])
        .find(|prefix| scans.contains_key(*prefix))?
        .to_vec();
    let Some(name) = path.get(module.len()) else {
        return Some(module);
    };
    let s = &scans[&module];
    if hops > 16 || s.defined.contains(name) {
        return Some(module);
    }
    let rest = &path[module.len() + 1..];
    if let Some(target) = s.imported.get(name) {
        let mut next = target.clone()?;
        next.extend(rest.iter().cloned());
        return land(scans, &next, hops + 1);
    }
    for glob in &s.globs {
        let Some(from) = land(scans, glob, hops + 1) else {
            continue;
        };
        let g = &scans[&from];
        if from != module && (g.defined.contains(name) || g.imported.contains_key(name)) {
            let mut next = from;
            next.extend(path[module.len()..].iter().cloned());
            return land(scans, &next, hops + 1);
        }
    }
    Some(module)
}

/// The crates a path may start with besides our own: the standard ones and the
/// `[dependencies]` of the manifest beside `src/`.
fn extern_crates(root: &Path) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = ["std", "core", "alloc"].map(String::from).into();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
        } else if in_deps {
            if let Some((name, _)) = line.split_once('=') {
                let name = name.trim().split('.').next().unwrap_or_default();
                if !name.starts_with('#') && !name.is_empty() {
                    out.insert(name.replace('-', "_"));
                }
            }
        }
    }
    out
}

/// One leaf of a `use` tree.
struct UseLeaf {
    path: Vec<String>,
    /// The `as` name, if any.
    alias: Option<String>,
    glob: bool,
}

/// Parses one use tree at `tokens[*p]` (after `use` or `{`/`,`), appending each leaf.
fn use_tree(tokens: &[Token], p: &mut usize, prefix: Vec<String>, leaves: &mut Vec<UseLeaf>) {
    let mut path = prefix;
    loop {
        let Some(t) = tokens.get(*p) else { return };
        match t.text.as_str() {
            "{" => {
                *p += 1;
                loop {
                    match tokens.get(*p).map(|t| t.text.as_str()) {
                        None => return,
                        Some("}") => {
                            *p += 1;
                            break;
                        }
                        Some(",") => *p += 1,
                        Some(_) => use_tree(tokens, p, path.clone(), leaves),
                    }
                }
                return;
            }
            "*" => {
                *p += 1;
                leaves.push(UseLeaf {
                    path,
                    alias: None,
                    glob: true,
                });
                return;
            }
            "self" if !path.is_empty() => {
                *p += 1;
                let alias = alias(tokens, p);
                leaves.push(UseLeaf {
                    path,
                    alias,
                    glob: false,
                });
                return;
            }
            name if is_ident(name) => {
                path.push(name.to_string());
                *p += 1;
                if tokens.get(*p).is_some_and(|t| t.text == "::") {
                    *p += 1;
                    continue;
                }
                let alias = alias(tokens, p);
                leaves.push(UseLeaf {
                    path,
                    alias,
                    glob: false,
                });
                return;
            }
            // `;`, `,` or `}`: the caller's.
            _ => return,
        }
    }
}

/// Reads `as name` at `tokens[*p]`, if there.
fn alias(tokens: &[Token], p: &mut usize) -> Option<String> {
    if tokens.get(*p).is_some_and(|t| t.text == "as") {
        *p += 2;
        return tokens.get(*p - 1).map(|t| t.text.clone());
    }
    None
}

/// `path` made absolute from `module`, whose child modules are `children` (`None` for paths
/// into other crates).
fn absolute(
    path: &[String],
    module: &[String],
    children: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let (first, mut rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => {
            let mut base = module.to_vec();
            base.pop();
            while let Some(("super", r)) = rest.split_first().map(|(s, r)| (s.as_str(), r)) {
                base.pop();
                rest = r;
            }
            base
        }
        child if children.contains(child) => {
            let mut base = module.to_vec();
            base.push(child.to_string());
            base
        }
        _ => return None,
    };
    base.extend(rest.iter().cloned());
    Some(base)
}
