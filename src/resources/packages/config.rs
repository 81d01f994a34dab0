//! The model behind `pi config`: package resources grouped by package and kind with pi's
//! display names, and switching one on or off the way pi records it — a `+path` / `-path`
//! entry (relative to the package root) in the package's object-form settings entry.

use std::path::Path;

use serde_json::{Map, Value};

use super::source::relative_to;
use super::{PackageError, PackageResource, PackageResources, ResourceKind, Scope};
use crate::resources::settings::Settings;
use crate::util::sort;

/// One resource as the selector shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigItem {
    pub display_name: String,
    pub enabled: bool,
    pub resource: PackageResource,
}

/// All resources of one package in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigGroup {
    /// `<source> (<scope>)`.
    pub label: String,
    pub scope: Scope,
    pub source: String,
    /// Kinds in pi's order (extensions, skills, prompts, themes), items sorted by name.
    pub kinds: Vec<(ResourceKind, Vec<ConfigItem>)>,
}

/// pi's display name: `SKILL.md` shows its folder, an extension outside an `extensions`
/// folder shows `folder/file`, anything else its file name.
pub fn display_name(kind: ResourceKind, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        ResourceKind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        ResourceKind::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

/// Groups resources: user packages before project ones, then by source.
pub fn groups(resolved: &PackageResources) -> Vec<ConfigGroup> {
    let mut groups: Vec<ConfigGroup> = Vec::new();
    for r in &resolved.resources {
        let idx = match groups
            .iter()
            .position(|g| g.scope == r.scope && g.source == r.source)
        {
            Some(i) => i,
            None => {
                groups.push(ConfigGroup {
                    label: format!("{} ({})", r.source, r.scope.as_str()),
                    scope: r.scope,
                    source: r.source.clone(),
                    kinds: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let kinds = &mut groups[idx].kinds;
        let k = match kinds.iter().position(|(k, _)| *k == r.kind) {
            Some(i) => i,
            None => {
                kinds.push((r.kind, Vec::new()));
                kinds.len() - 1
            }
        };
        kinds[k].1.push(ConfigItem {
            display_name: display_name(r.kind, &r.path),
            enabled: r.enabled,
            resource: r.clone(),
        });
    }
    sort::sort_by(&mut groups, |a, b| {
        (a.scope == Scope::Project)
            .cmp(&(b.scope == Scope::Project))
            .then_with(|| a.source.cmp(&b.source))
    });
    for g in &mut groups {
        sort::sort_by_key(&mut g.kinds, |(k, _)| *k as usize);
        for (_, items) in &mut g.kinds {
            sort::sort_by(items, |a, b| a.display_name.cmp(&b.display_name));
        }
    }
    groups
}

/// Switches one package resource on or off in the settings file of its scope: any earlier
/// `!`/`+`/`-` entry for the same path is replaced by `+path` or `-path`, turning a string
/// entry into the object form.
pub fn set_enabled(
    settings: &mut Settings,
    resource: &PackageResource,
    enabled: bool,
) -> Result<(), PackageError> {
    let map = match resource.scope {
        Scope::User => settings.global_map(),
        Scope::Project => settings.project_map(),
    };
    let mut packages = map
        .get("packages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let source_of = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("source").and_then(Value::as_str).map(String::from),
        _ => None,
    };
    let Some(idx) = packages
        .iter()
        .position(|v| source_of(v).as_deref() == Some(resource.source.as_str()))
    else {
        return Err(PackageError::NotConfigured {
            source: resource.source.clone(),
            scope: resource.scope.as_str(),
        });
    };
    let mut entry = match &packages[idx] {
        Value::Object(o) => o.clone(),
        _ => {
            let mut o = Map::new();
            o.insert("source".into(), Value::String(resource.source.clone()));
            o
        }
    };
    let pattern = relative_to(&resource.path, &resource.base_dir)
        .to_string_lossy()
        .into_owned();
    let key = resource.kind.key();
    let mut list: Vec<Value> = entry
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|v| {
            let s = v.as_str().unwrap_or("");
            let bare = s.strip_prefix(['!', '+', '-']).unwrap_or(s);
            bare != pattern
        })
        .collect();
    let sign = if enabled { '+' } else { '-' };
    list.push(Value::String(format!("{sign}{pattern}")));
    entry.insert(key.into(), Value::Array(list));
    packages[idx] = Value::Object(entry);
    Ok(match resource.scope {
        Scope::User => settings.set_global("packages", Value::Array(packages)),
        Scope::Project => settings.set_project("packages", Value::Array(packages)),
    }?)
}
