//! The calls an extension may make (`{"type":"call","method":…,"params":{…}}`), one variant
//! each with its parameters typed: reading a line is one step that either yields a `Call` or
//! says which method, which field and what was expected. `calls.rs` answers them with an
//! exhaustive `match`, so a new call is a new variant here and an arm there.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::util::typed_json::{self, FieldError, Problem, Step};

/// One call, by its wire name (`method`). Read externally tagged, `{"<method>": <params>}`,
/// which serde reads in place (see `Call::parse`).
#[derive(Debug, Deserialize)]
pub enum Call {
    #[serde(rename = "ui.select")]
    Select(SelectParams),
    #[serde(rename = "ui.confirm")]
    Confirm(ConfirmParams),
    #[serde(rename = "ui.input")]
    Input(InputParams),
    #[serde(rename = "ui.editor")]
    Editor(EditorParams),
    #[serde(rename = "ui.custom")]
    Custom(CustomParams),
    #[serde(rename = "ui.render")]
    Render(ComponentLines),
    #[serde(rename = "ui.customDone")]
    CustomDone(Component),
    #[serde(rename = "ui.setFooter")]
    SetFooter(MaybeLines),
    #[serde(rename = "ui.setHeader")]
    SetHeader(MaybeLines),
    #[serde(rename = "ui.setEditorComponent")]
    SetEditorComponent(EditorComponent),
    #[serde(rename = "ui.editorSubmit")]
    EditorSubmit(Text),
    #[serde(rename = "ui.editorKey")]
    EditorKey(KeyData),
    #[serde(rename = "ui.pasteToEditor")]
    PasteToEditor(Text),
    #[serde(rename = "ui.setEditorText")]
    SetEditorText(Text),
    #[serde(rename = "ui.setWorkingMessage")]
    SetWorkingMessage(WorkingMessage),
    #[serde(rename = "ui.setWorkingVisible")]
    SetWorkingVisible(WorkingVisible),
    #[serde(rename = "ui.setHiddenThinkingLabel")]
    SetHiddenThinkingLabel(Label),
    #[serde(rename = "ui.setToolsExpanded")]
    SetToolsExpanded(ToolsExpanded),
    #[serde(rename = "ui.notify")]
    Notify(NotifyParams),
    #[serde(rename = "ui.setStatus")]
    SetStatus(StatusParams),
    #[serde(rename = "ui.setWidget")]
    SetWidget(WidgetParams),
    #[serde(rename = "ui.setTitle")]
    SetTitle(Title),
    /// Newer UI calls this pi does not draw: they change nothing.
    #[serde(rename = "ui.setWorkingIndicator")]
    SetWorkingIndicator(Ignored),
    #[serde(rename = "ui.setTheme")]
    SetTheme(Ignored),
    /// The bridge asking the handshake to wait (handled while loading; later it means nothing).
    #[serde(rename = "loading")]
    Loading(Ignored),

    #[serde(rename = "tools.run")]
    RunTool(RunToolParams),
    /// Read by `services::ai_stream` (a model, a context and stream options).
    #[serde(rename = "ai.stream")]
    AiStream(Value),
    /// Read by `services::non_chat_call` (a classifier model and its input).
    #[serde(rename = "models.classify")]
    ModelsClassify(Value),
    /// Read by `services::non_chat_call` (an image model and its prompt).
    #[serde(rename = "models.generateImages")]
    ModelsGenerateImages(Value),
    #[serde(rename = "models.auth")]
    ModelAuth(ModelRef),
    #[serde(rename = "exec")]
    Exec(ExecParams),

    #[serde(rename = "setLabel")]
    SetLabel(LabelParams),
    #[serde(rename = "waitForIdle")]
    WaitForIdle(NoParams),
    #[serde(rename = "session.new")]
    NewSession(NoParams),
    #[serde(rename = "session.fork")]
    Fork(ForkParams),
    #[serde(rename = "session.switch")]
    SwitchSession(SwitchParams),
    #[serde(rename = "session.navigateTree")]
    NavigateTree(NavigateParams),
    #[serde(rename = "session.reload")]
    Reload(NoParams),
    #[serde(rename = "shutdown")]
    Shutdown(NoParams),

    #[serde(rename = "getFlag")]
    GetFlag(FlagName),
    #[serde(rename = "registerMcpServer")]
    RegisterMcpServer(McpServerParams),
    #[serde(rename = "unregisterMcpServer")]
    UnregisterMcpServer(McpServerName),
    #[serde(rename = "getMcpServers")]
    GetMcpServers(NoParams),
    #[serde(rename = "getActiveTools")]
    GetActiveTools(NoParams),
    #[serde(rename = "getAllTools")]
    GetAllTools(NoParams),
    #[serde(rename = "getThinkingLevel")]
    GetThinkingLevel(NoParams),
    #[serde(rename = "getSessionName")]
    GetSessionName(NoParams),
    #[serde(rename = "getModel")]
    GetModel(NoParams),
    #[serde(rename = "getSystemPrompt")]
    GetSystemPrompt(NoParams),
    #[serde(rename = "isIdle")]
    IsIdle(NoParams),
    #[serde(rename = "getCommands")]
    GetCommands(NoParams),
    #[serde(rename = "abort")]
    Abort(NoParams),

    #[serde(rename = "sendUserMessage")]
    SendUserMessage(SendUserMessageParams),
    #[serde(rename = "sendMessage")]
    SendMessage(SendMessageParams),
    #[serde(rename = "appendEntry")]
    AppendEntry(AppendEntryParams),
    #[serde(rename = "setModel")]
    SetModel(ModelRef),
    #[serde(rename = "setThinkingLevel")]
    SetThinkingLevel(LevelParams),
    #[serde(rename = "setActiveTools")]
    SetActiveTools(ToolNames),
    #[serde(rename = "setSessionName")]
    SetSessionName(SessionName),
    #[serde(rename = "compact")]
    Compact(CompactParams),
}

/// Why a call line is not a call pi can make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    UnknownMethod(String),
    BadParams { method: String, error: FieldError },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::UnknownMethod(m) => write!(f, "Unknown method: {m}"),
            CallError::BadParams { method, error } => write!(f, "{method}: {error}"),
        }
    }
}

impl Call {
    /// The call `method` with `params` (absent or `null` reads as `{}`).
    pub fn parse(method: &str, params: Option<&Value>) -> Result<Call, CallError> {
        let params = match params {
            None | Some(Value::Null) => json!({}),
            Some(p) => p.clone(),
        };
        let mut line = serde_json::Map::new();
        line.insert(method.to_string(), params);
        typed_json::from_value(&Value::Object(line)).map_err(|mut error| match error.path.first() {
            // The tag is read with an empty path; only an unknown one fails there.
            None if matches!(error.problem, Problem::UnknownVariant { .. }) => {
                CallError::UnknownMethod(method.to_string())
            }
            _ => {
                if matches!(error.path.first(), Some(Step::Key(k)) if k == method) {
                    error.path.remove(0);
                }
                if error.path.is_empty() && matches!(error.problem, Problem::Invalid(_)) {
                    error.problem = Problem::Invalid("\"params\" must be an object".into());
                }
                CallError::BadParams {
                    method: method.to_string(),
                    error,
                }
            }
        })
    }
}

/// A call without parameters (whatever is sent is ignored).
#[derive(Debug, Deserialize)]
pub struct NoParams {}

/// A call whose parameters pi does not use.
#[derive(Debug, Deserialize)]
pub struct Ignored {}

/// Lines of a component, header, footer or widget; a non-string line is shown as its JSON.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Lines(pub Vec<String>);

impl<'de> Deserialize<'de> for Lines {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Lines, D::Error> {
        let items = Vec::<Value>::deserialize(d)?;
        Ok(Lines(
            items
                .into_iter()
                .map(|l| match l {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
                .collect(),
        ))
    }
}

/// A dialog's timeout in milliseconds (JavaScript numbers may carry a fraction).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct Millis(f64);

impl Millis {
    pub fn duration(&self) -> Option<std::time::Duration> {
        (self.0.is_finite() && self.0 >= 0.0)
            .then(|| std::time::Duration::from_millis(self.0 as u64))
    }
}

#[derive(Debug, Deserialize)]
pub struct SelectParams {
    pub title: String,
    #[serde(default)]
    pub options: Vec<String>,
    pub timeout: Option<Millis>,
}

#[derive(Debug, Deserialize)]
pub struct ConfirmParams {
    pub title: String,
    pub message: Option<String>,
    pub timeout: Option<Millis>,
}

#[derive(Debug, Deserialize)]
pub struct InputParams {
    pub title: String,
    pub placeholder: Option<String>,
    pub timeout: Option<Millis>,
}

#[derive(Debug, Deserialize)]
pub struct EditorParams {
    pub title: String,
    pub prefill: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomParams {
    pub component: u64,
    pub lines: Option<Lines>,
    pub overlay: Option<bool>,
    /// Only a numeric `width` is used (pi also takes percentages, which this pi ignores).
    pub overlay_options: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct ComponentLines {
    pub component: u64,
    pub lines: Option<Lines>,
}

#[derive(Debug, Deserialize)]
pub struct Component {
    pub component: u64,
}

#[derive(Debug, Deserialize)]
pub struct MaybeLines {
    pub lines: Option<Lines>,
}

#[derive(Debug, Deserialize)]
pub struct EditorComponent {
    /// `null`: back to the built-in editor.
    pub component: Option<u64>,
    pub lines: Option<Lines>,
}

#[derive(Debug, Deserialize)]
pub struct Text {
    pub text: String,
}

#[derive(Debug, Deserialize)]
pub struct KeyData {
    pub data: String,
}

#[derive(Debug, Deserialize)]
pub struct Title {
    pub title: String,
}

#[derive(Debug, Deserialize)]
pub struct WorkingMessage {
    pub message: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct WorkingVisible {
    pub visible: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct Label {
    pub label: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ToolsExpanded {
    pub expanded: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct NotifyParams {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct StatusParams {
    pub key: String,
    pub text: Option<String>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Placement {
    AboveEditor,
    BelowEditor,
}

#[derive(Debug, Deserialize)]
pub struct WidgetParams {
    pub key: String,
    pub lines: Option<Lines>,
    pub placement: Option<Placement>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunToolParams {
    pub name: String,
    pub cwd: Option<String>,
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub params: Value,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    pub provider: String,
    pub model_id: String,
}

#[derive(Debug, Deserialize)]
pub struct ExecParams {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub timeout: Option<Millis>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelParams {
    pub entry_id: String,
    pub label: Option<String>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ForkPosition {
    /// Fork before the entry (pi's default).
    Before,
    /// Fork at the entry, keeping it.
    At,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkParams {
    pub entry_id: String,
    pub position: Option<ForkPosition>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SwitchParams {
    pub session_path: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateParams {
    pub target_id: String,
    pub summarize: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct FlagName {
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct McpServerParams {
    pub name: String,
    #[serde(default)]
    pub config: Value,
}

#[derive(Debug, Deserialize)]
pub struct McpServerName {
    pub name: String,
}

/// How a message sent during a run joins it.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    Steer,
    FollowUp,
    NextTurn,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendOptions {
    pub deliver_as: Option<DeliverAs>,
    pub trigger_turn: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub struct SendUserMessageParams {
    /// Text or content blocks (checked where it becomes a message).
    #[serde(default)]
    pub content: Value,
    pub options: Option<SendOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    pub custom_type: Option<String>,
    /// Text or content blocks (checked where it becomes a message).
    #[serde(default)]
    pub content: Value,
    pub display: Option<bool>,
    pub details: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct SendMessageParams {
    pub message: CustomMessage,
    pub options: Option<SendOptions>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendEntryParams {
    pub custom_type: String,
    pub data: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct LevelParams {
    pub level: String,
}

#[derive(Debug, Deserialize)]
pub struct ToolNames {
    pub names: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct SessionName {
    pub name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactParams {
    pub custom_instructions: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(method: &str, params: Value) -> String {
        Call::parse(method, Some(&params)).unwrap_err().to_string()
    }

    #[test]
    fn every_call_the_bridge_sends_parses() {
        let ok = |m: &str, p: Value| {
            Call::parse(m, Some(&p)).unwrap_or_else(|e| panic!("{m}: {e}"));
        };
        ok(
            "ui.select",
            json!({"title": "t", "options": ["a"], "timeout": 1500.5}),
        );
        ok("ui.setFooter", json!({"lines": null}));
        ok(
            "ui.setWidget",
            json!({"key": "k", "lines": ["a", 1], "placement": "belowEditor"}),
        );
        ok("ui.setEditorComponent", json!({"component": null}));
        ok(
            "ui.custom",
            json!({"component": 3, "overlay": true, "overlayOptions": {"width": "50%"}}),
        );
        ok("session.fork", json!({"entryId": "e", "position": "at"}));
        ok(
            "sendMessage",
            json!({"message": {"customType": "x", "content": "hi"}, "options": {"deliverAs": "nextTurn"}}),
        );
        ok(
            "exec",
            json!({"command": "ls", "args": ["-l"], "timeout": 1000}),
        );
        assert!(matches!(
            Call::parse("waitForIdle", None).unwrap(),
            Call::WaitForIdle(_)
        ));
        assert!(matches!(
            Call::parse("getModel", Some(&Value::Null)).unwrap(),
            Call::GetModel(_)
        ));
    }

    #[test]
    fn a_bad_call_gets_one_precise_error() {
        assert_eq!(err("nope", json!({})), "Unknown method: nope");
        assert_eq!(err("ui.select", json!({})), "ui.select: missing \"title\"");
        assert_eq!(
            err("setModel", json!({"provider": "p"})),
            "setModel: missing \"modelId\""
        );
        assert_eq!(
            err("setActiveTools", json!({"names": ["read", 7]})),
            "setActiveTools: \"names[1]\": invalid type: integer `7`, expected a string"
        );
        assert_eq!(
            err("sendMessage", json!({"message": {"content": "x"}, "options": {"deliverAs": "later"}})),
            "sendMessage: \"options.deliverAs\": unknown value `later`, expected one of `steer`, `followUp`, `nextTurn`"
        );
        assert_eq!(
            err("setSessionName", json!("x")),
            "setSessionName: \"params\" must be an object"
        );
    }
}
