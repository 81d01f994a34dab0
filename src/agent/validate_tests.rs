use super::*;
use serde_json::json;

/// Schemas and arguments run through pi 1.5.2's own validator (`validateToolArguments`, with
/// pi-schema): the coerced arguments it returned, or the exact error text it threw.
const PI_CASES: &str = include_str!("validate_cases.json");

#[test]
fn agrees_with_pi_schema_on_every_recorded_case() {
    let data: Value = serde_json::from_str(PI_CASES).unwrap();
    let cases = data["cases"].as_array().unwrap();
    assert!(cases.len() > 50);
    let mut failures = Vec::new();
    for case in cases {
        let tool = case["tool"].as_str().unwrap();
        let schema = &data["schemas"][tool];
        let got = validate_arguments(tool, schema, &case["args"]);
        let ok = match (&got, case.get("ok"), case.get("error")) {
            (Ok(v), Some(want), _) => {
                json_eq(v, want)
                    && serde_json::to_string(v).ok() == serde_json::to_string(want).ok()
            }
            (Err(e), _, Some(Value::String(want))) => e == want,
            _ => false,
        };
        if !ok {
            failures.push(format!("{tool} {}: got {got:?}, pi {case}", case["args"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn numbers_keep_javascript_shapes() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}});
    let got = validate_arguments("t", &schema, &json!({"n": "12", "s": 0.000001})).unwrap();
    assert_eq!(got.to_string(), r#"{"n":12,"s":"0.000001"}"#);
    let got = validate_arguments("t", &schema, &json!({"s": 1e21})).unwrap();
    assert_eq!(got["s"], "1e+21");
}

#[test]
fn self_referencing_schemas_terminate() {
    let schema = json!({"$ref": "#"});
    assert!(validate_arguments("t", &schema, &json!({"a": 1})).is_ok());
    let schema =
        json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["v"]});
    let err = validate_arguments("t", &schema, &json!({"v": 1, "next": {"next": {}}})).unwrap_err();
    assert!(err.contains("  - next.next.v: missing"), "{err}");
}

#[test]
fn paths_escape_like_json_pointers() {
    assert_eq!(display_path(""), "root");
    assert_eq!(
        display_path(&pointer(&pointer("", "a/b"), "c~d")),
        "a/b.c~d"
    );
}
