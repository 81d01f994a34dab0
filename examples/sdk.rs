//! Embedding pi in another Rust program: build an agent with a model, the built-in tools and an
//! in-memory session, send one prompt, and print the answer as it streams.
//!
//! Runs against any OpenAI-compatible server, e.g. a local Ollama:
//!
//! ```sh
//! PI_SDK_BASE_URL=http://127.0.0.1:11434/v1 PI_SDK_MODEL=qwen2.5-coder:7b \
//!   cargo run --example sdk -- "list the files here"
//! ```
//!
//! `PI_SDK_API_KEY` is sent as the bearer key (local servers accept anything).

use std::io::Write;
use std::sync::Arc;

use pi::agent::{Agent, AgentEvent, Tool};
use pi::ai::{Abort, AssistantEvent, Message, Model, ModelCost, StreamOptions};
use pi::harness::system_prompt::{self, PromptInputs};
use pi::harness::AgentSession;
use pi::resources::settings::RetrySettings;
use pi::tools::{bash::BashTool, edit::EditTool, read::ReadTool, write::WriteTool};

fn main() {
    let env = |k: &str, default: &str| std::env::var(k).unwrap_or_else(|_| default.to_string());
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Say hello in five words.".to_string()
    } else {
        prompt
    };

    // 1. The model: any wire API pi speaks; here an OpenAI-compatible endpoint.
    let id = env("PI_SDK_MODEL", "qwen2.5-coder:7b");
    let model = Model {
        id: id.clone(),
        name: id,
        api: "openai-completions".into(),
        provider: "local".into(),
        base_url: env("PI_SDK_BASE_URL", "http://127.0.0.1:11434/v1"),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 32_768,
        max_tokens: 4096,
        thinking_level_map: None,
        headers: None,
        compat: None,
    };

    // 2. Tools and the system prompt that describes them.
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(ReadTool),
        Arc::new(BashTool::default()),
        Arc::new(EditTool),
        Arc::new(WriteTool),
    ];
    let cwd = std::env::current_dir().expect("a current directory");
    let system = system_prompt::build(&PromptInputs {
        custom: None,
        append: &[],
        context_files: &[],
        skills: &[],
        tools: &tools,
        cwd: &cwd.to_string_lossy(),
    });

    // 3. The agent and the session core (retries on; the session stays in memory).
    let options = StreamOptions {
        api_key: env("PI_SDK_API_KEY", "local"),
        ..Default::default()
    };
    let mut agent = Agent::new(model, system, options);
    agent.tools = tools;
    agent.cwd = cwd;
    let mut session = AgentSession::new(agent, RetrySettings::default(), Abort::new());

    // 4. Prompt, and react to events as they arrive.
    session.prompt(vec![Message::user_text(prompt)], &mut |event| match event {
        AgentEvent::MessageUpdate {
            event: AssistantEvent::TextDelta { delta, .. },
            ..
        } => {
            print!("{delta}");
            let _ = std::io::stdout().flush();
        }
        AgentEvent::ToolExecutionStart { name, args, .. } => eprintln!("\n[tool] {name} {args}"),
        AgentEvent::MessageEnd {
            message: Message::Assistant(a),
        } if a.error_message.is_some() => {
            eprintln!(
                "\n[error] {}",
                a.error_message.as_deref().unwrap_or_default()
            );
        }
        _ => {}
    });
    println!();
}
