//! pi 1.x's persisted system messages: the prompt and the tool loadout recorded in the
//! transcript. The first request of a branch writes a checkpoint (every prompt section and
//! every tool); later changes are patches (changed sections, `null` for a removed one, tools
//! added and removed). Replaying a branch's system messages in order gives the prompt and tools
//! the model has now ([`SystemState`]); comparing that with what the next request wants gives
//! the patch to write before it ([`SystemState::patch`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ai::Extra;

/// A `role: "system"` message, in pi's key order: `content`, `sections`, `timestamp`,
/// `toolsAdded`, `toolsRemoved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemMessage {
    /// Free text (empty in the messages pi writes; older or foreign ones may carry the prompt
    /// here). Usually a string; kept as written.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub content: Value,
    /// Section name to its rendered text; `null` removes the section.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sections: Option<Map<String, Value>>,
    #[serde(default)]
    pub timestamp: i64,
    /// Tool declarations `{name, description, parameters, …}`.
    #[serde(
        rename = "toolsAdded",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub tools_added: Option<Vec<Value>>,
    /// `{name}` of each tool taken away (a changed tool is removed, then added again).
    #[serde(
        rename = "toolsRemoved",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub tools_removed: Option<Vec<Value>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl SystemMessage {
    /// Characters for pi's chars/4 token estimate: the content, every section, and the JSON
    /// of the tools added; `len` measures a string as JavaScript does.
    pub fn estimated_chars(&self, len: impl Fn(&str) -> usize) -> usize {
        let sections: usize = self
            .sections
            .iter()
            .flatten()
            .filter_map(|(_, v)| v.as_str())
            .map(&len)
            .sum();
        let tools = self
            .tools_added
            .as_ref()
            .map_or(0, |t| len(&crate::util::json::to_js_string(t)));
        len(&self.content_text()) + sections + tools
    }

    /// The text of `content` (a string, or the text blocks of a block list).
    fn content_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// The prompt and tools a transcript has declared so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemState {
    /// `content` texts, in order (pi appends each to the base prompt).
    content: Vec<String>,
    /// Sections in declaration order: a changed section keeps its place, a re-added one goes
    /// last (JavaScript `Map` order, as pi replays them).
    pub sections: Vec<(String, String)>,
    /// Tool declarations, by the same order rule.
    pub tools: Vec<Value>,
    /// Whether any system message was seen.
    pub declared: bool,
}

fn tool_name(tool: &Value) -> &str {
    tool["name"].as_str().unwrap_or("")
}

impl SystemState {
    /// Replays `messages` in order.
    pub fn replay<'a>(messages: impl IntoIterator<Item = &'a SystemMessage>) -> SystemState {
        let mut state = SystemState::default();
        for m in messages {
            state.apply(m);
        }
        state
    }

    pub fn apply(&mut self, m: &SystemMessage) {
        self.declared = true;
        let text = m.content_text();
        if !text.is_empty() {
            self.content.push(text);
        }
        for (name, value) in m.sections.iter().flatten() {
            match value.as_str() {
                Some(text) => match self.sections.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = text.to_string(),
                    None => self.sections.push((name.clone(), text.to_string())),
                },
                None => self.sections.retain(|(n, _)| n != name),
            }
        }
        for removed in m.tools_removed.iter().flatten() {
            self.tools.retain(|t| tool_name(t) != tool_name(removed));
        }
        for added in m.tools_added.iter().flatten() {
            match self
                .tools
                .iter_mut()
                .find(|t| tool_name(t) == tool_name(added))
            {
                Some(slot) => *slot = added.clone(),
                None => self.tools.push(added.clone()),
            }
        }
    }

    /// The prompt as the model has it: the content texts, then every section, blank-line
    /// separated.
    pub fn prompt(&self) -> String {
        render(
            self.content
                .iter()
                .map(String::as_str)
                .chain(self.sections.iter().map(|(_, text)| text.as_str())),
        )
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| tool_name(t).to_string())
            .collect()
    }

    /// The message that turns this state into `sections` and `tools`, or `None` when nothing
    /// changed. On an empty state this is the full checkpoint.
    pub fn patch(
        &self,
        sections: &[(String, String)],
        tools: &[Value],
        timestamp: i64,
    ) -> Option<SystemMessage> {
        let mut changed = Map::new();
        for (name, text) in sections {
            let same = self.sections.iter().any(|(n, t)| n == name && t == text);
            if !same {
                changed.insert(name.clone(), Value::String(text.clone()));
            }
        }
        for (name, _) in &self.sections {
            if !sections.iter().any(|(n, _)| n == name) {
                changed.insert(name.clone(), Value::Null);
            }
        }
        let same_tool = |a: &Value, list: &[Value]| list.iter().any(|b| b == a);
        let added: Vec<Value> = tools
            .iter()
            .filter(|t| !same_tool(t, &self.tools))
            .cloned()
            .collect();
        let removed: Vec<Value> = self
            .tools
            .iter()
            .filter(|t| !same_tool(t, tools))
            .map(|t| serde_json::json!({"name": tool_name(t)}))
            .collect();
        if changed.is_empty() && added.is_empty() && removed.is_empty() {
            return None;
        }
        Some(SystemMessage {
            content: Value::String(String::new()),
            sections: (!changed.is_empty()).then_some(changed),
            timestamp,
            tools_added: (!added.is_empty()).then_some(added),
            tools_removed: (!removed.is_empty()).then_some(removed),
            extra: Extra::new(),
        })
    }

    /// The whole state as one message (a compaction's `systemMessage`), or `None` when the
    /// transcript declared nothing.
    pub fn checkpoint(&self, timestamp: i64) -> Option<SystemMessage> {
        if !self.declared && self.tools.is_empty() {
            return None;
        }
        let sections: Map<String, Value> = self
            .sections
            .iter()
            .map(|(n, t)| (n.clone(), Value::String(t.clone())))
            .collect();
        Some(SystemMessage {
            content: Value::String(self.content.join("\n\n")),
            sections: (!sections.is_empty()).then_some(sections),
            timestamp,
            tools_added: (!self.tools.is_empty()).then(|| self.tools.clone()),
            tools_removed: None,
            extra: Extra::new(),
        })
    }
}

/// Prompt parts joined as pi renders a system message: non-empty parts, blank-line separated.
pub fn render<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sections(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect()
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "parameters": {"type": "object"}})
    }

    #[test]
    fn first_patch_is_a_full_checkpoint_in_pis_key_order() {
        let state = SystemState::default();
        let m = state
            .patch(
                &sections(&[("preamble", "Hi."), ("cwd", "<cwd>\n/p\n</cwd>")]),
                &[tool("read", "r")],
                7,
            )
            .unwrap();
        let line = serde_json::to_string(&m).unwrap();
        assert_eq!(
            line,
            r#"{"content":"","sections":{"preamble":"Hi.","cwd":"<cwd>\n/p\n</cwd>"},"timestamp":7,"toolsAdded":[{"name":"read","description":"r","parameters":{"type":"object"}}]}"#
        );
        let replayed = SystemState::replay([&m]);
        assert_eq!(replayed.prompt(), "Hi.\n\n<cwd>\n/p\n</cwd>");
        assert_eq!(replayed.tool_names(), ["read"]);
    }

    #[test]
    fn later_patches_carry_only_changes_and_replay_to_the_new_state() {
        let first = SystemState::default()
            .patch(
                &sections(&[("preamble", "Hi."), ("skills", "S"), ("cwd", "C")]),
                &[tool("read", "r"), tool("bash", "b")],
                1,
            )
            .unwrap();
        let state = SystemState::replay([&first]);
        assert_eq!(
            state.patch(
                &sections(&[("preamble", "Hi."), ("skills", "S"), ("cwd", "C")]),
                &[tool("read", "r"), tool("bash", "b")],
                2
            ),
            None
        );
        // cwd changed, skills gone, bash gone, read redefined, ls new.
        let patch = state
            .patch(
                &sections(&[("preamble", "Hi."), ("cwd", "D")]),
                &[tool("read", "r2"), tool("ls", "l")],
                2,
            )
            .unwrap();
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!({
                "content": "",
                "sections": {"cwd": "D", "skills": null},
                "timestamp": 2,
                "toolsAdded": [tool("read", "r2"), tool("ls", "l")],
                "toolsRemoved": [{"name": "read"}, {"name": "bash"}],
            })
        );
        let replayed = SystemState::replay([&first, &patch]);
        assert_eq!(replayed.prompt(), "Hi.\n\nD");
        assert_eq!(replayed.tool_names(), ["read", "ls"]);
        // The checkpoint of the result replays to the same state.
        let checkpoint = replayed.checkpoint(3).unwrap();
        let again = SystemState::replay([&checkpoint]);
        assert_eq!(again.prompt(), replayed.prompt());
        assert_eq!(again.tools, replayed.tools);
    }

    #[test]
    fn a_tools_only_patch_has_no_sections_and_content_text_joins_the_prompt() {
        let m: SystemMessage = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "Base."}], "timestamp": 1, "future": true
        }))
        .unwrap();
        assert_eq!(m.extra["future"], true);
        let state = SystemState::replay([&m]);
        assert_eq!(state.prompt(), "Base.");
        assert!(state.checkpoint(2).is_some());
        let patch = state.patch(&[], &[tool("read", "r")], 2).unwrap();
        assert!(patch.sections.is_none());
        assert_eq!(SystemState::default().checkpoint(1), None);
    }
}
