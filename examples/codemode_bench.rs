//! What `codemode` costs and saves (`make bench`'s codemode row): the engine's start-up per
//! call (a script that returns at once), and twenty `read`s done by one script (under
//! `Promise.all`) against twenty direct `read` calls, in time and in what reaches the model
//! (characters / 4, pi's token estimate; a direct call sends its call and its whole result,
//! the script only what it returns). Prints one machine-readable line:
//!
//!   codemode_us runs=<N> start=<median µs> script20=<median µs> direct20=<median µs> tokens_script=<n> tokens_direct=<n>
//!
//!   cargo run --release --example codemode_bench [-- RUNS]

#![allow(clippy::disallowed_methods)]
use std::sync::Arc;
use std::time::Instant;

use pi::agent::tool::{NestedOutcome, NestedTools, Tool, ToolContext};
use pi::ai::Abort;
use pi::tools::codemode::tool::CodemodeTool;
use pi::tools::read::ReadTool;
use serde_json::{json, Value};

struct Reads(std::path::PathBuf);

impl NestedTools for Reads {
    fn tools(&self, _: &Abort) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(ReadTool)]
    }
    fn call(&self, _name: &str, args: Value, abort: &Abort, started: &dyn Fn()) -> NestedOutcome {
        started();
        let out = direct_read(&self.0, args, abort);
        NestedOutcome {
            id: "b/1".into(),
            is_error: out.is_none(),
            output: out.unwrap_or_default(),
        }
    }
}

fn direct_read(cwd: &std::path::Path, args: Value, abort: &Abort) -> Option<pi::agent::ToolOutput> {
    let ctx = ToolContext {
        cwd: cwd.to_path_buf(),
        abort: abort.clone(),
        on_update: &|_| {},
        nested: None,
    };
    ReadTool.execute("r", args, &ctx).ok()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn text_len(o: &pi::agent::ToolOutput) -> usize {
    pi::agent::execute::content_text(&o.content).chars().count()
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..20 {
        let body: String = (0..200)
            .map(|l| format!("file {i} line {l}: some text\n"))
            .collect();
        std::fs::write(dir.path().join(format!("f{i}.txt")), body).unwrap();
    }
    let abort = Abort::new();
    let nested: Arc<dyn NestedTools> = Arc::new(Reads(dir.path().to_path_buf()));
    let tool = CodemodeTool::default();
    let run = |code: &str| {
        let ctx = ToolContext {
            cwd: dir.path().to_path_buf(),
            abort: abort.clone(),
            on_update: &|_| {},
            nested: Some(Arc::clone(&nested)),
        };
        tool.execute("b", json!({ "code": code }), &ctx)
            .expect("script result")
    };
    let script = "const all = await Promise.all(Array.from({length: 20}, (_, i) => tools.read({path: `f${i}.txt`})));\nreturn all.map((t) => t.split('\\n').filter((l) => l.includes('line 7:')).join('')).join('\\n');";
    let (mut start, mut script20, mut direct20) = (Vec::new(), Vec::new(), Vec::new());
    let (mut tokens_script, mut tokens_direct) = (0, 0);
    for _ in 0..runs {
        let t = Instant::now();
        run("return 1");
        start.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        let out = run(script);
        script20.push(t.elapsed().as_secs_f64() * 1e6);
        tokens_script = (text_len(&out) + script.len()).div_ceil(4);
        let t = Instant::now();
        let mut chars = 0;
        for i in 0..20 {
            let args = json!({ "path": format!("f{i}.txt") });
            chars += args.to_string().len();
            chars += direct_read(dir.path(), args, &abort).map_or(0, |o| text_len(&o));
        }
        direct20.push(t.elapsed().as_secs_f64() * 1e6);
        tokens_direct = chars.div_ceil(4);
    }
    println!(
        "codemode_us runs={runs} start={:.0} script20={:.0} direct20={:.0} tokens_script={tokens_script} tokens_direct={tokens_direct}",
        median(start),
        median(script20),
        median(direct20)
    );
}
