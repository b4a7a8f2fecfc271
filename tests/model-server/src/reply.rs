//! Deciding what to answer: the reply text ("Reply with exactly: X"), the
//! structured-output schema a request asks for, whether it offers tools or
//! forces one (`tool_choice` naming a function), and a minimal JSON instance
//! of a JSON Schema.

use serde_json::{Map, Value, json};

use crate::protocols::Protocol;

pub const MARKER: &str = "Reply with exactly:";
/// A prompt holding this is answered, once a tool has run, with the text
/// of the last tool result in the request: a test can see what a tool
/// returned in the CLI's final reply.
pub const LAST_TOOL_RESULT: &str = "Reply with the last tool result";

/// What a request asks for, as far as the fake cares.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    /// Text of the last real user message ("" when none).
    pub last_user_text: String,
    /// Schema of a structured-output request (`Some(json!({}))` for plain JSON mode).
    pub schema: Option<Value>,
    /// The request offers at least one tool.
    pub has_tools: bool,
    /// A tool the request forces (`tool_choice` naming one function), with
    /// that tool's parameter schema (`{}` when the request declares none).
    pub forced_tool: Option<(String, Value)>,
    /// Model named in the body (Gemini: in the path, filled in by the caller).
    pub model: Option<String>,
    pub stream: bool,
    /// Text of the last tool result in the request (None when it holds none).
    pub last_tool_result: Option<String>,
}

/// `X` from "... Reply with exactly: X" (rest of that line, surrounding
/// whitespace and quotes stripped), or None.
pub fn exact_reply(text: &str) -> Option<String> {
    let idx = text.rfind(MARKER)?;
    let rest = &text[idx + MARKER.len()..];
    let line = rest.lines().next().unwrap_or("");
    let quotes: &[char] = &[
        '"', '\'', '`', '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}',
    ];
    let out = line.trim().trim_matches(quotes).trim();
    Some(out.to_string())
}

/// The reply text for a request: the last tool result or the exact reply
/// if asked, else the default.
pub fn reply_text(ask: &Ask, default_reply: &str) -> String {
    if ask.last_user_text.contains(LAST_TOOL_RESULT)
        && let Some(result) = &ask.last_tool_result
    {
        return result.clone();
    }
    exact_reply(&ask.last_user_text).unwrap_or_else(|| default_reply.to_string())
}

/// `(namespace, tool)` when `name` is `<namespace>__<tool>` and the
/// request offers `tool` inside a Responses namespace tool of that name.
pub fn namespaced(body: &Value, name: &str) -> Option<(String, String)> {
    body.get("tools")?
        .as_array()?
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("namespace"))
        .find_map(|t| {
            let namespace = t.get("name").and_then(Value::as_str)?;
            let tool = name.strip_prefix(namespace)?.strip_prefix("__")?;
            let offered = t
                .get("tools")?
                .as_array()?
                .iter()
                .any(|inner| inner.get("name").and_then(Value::as_str) == Some(tool));
            offered.then(|| (namespace.to_string(), tool.to_string()))
        })
}

/// A tool result's content as text: a string, or the text parts of an
/// array of parts, joined by newlines.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The last tool result among `items` (messages, input items or parts),
/// by the protocol's shape.
fn last_tool_result(protocol: Protocol, body: &Value) -> Option<String> {
    let array = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    // Newest first: messages, then the parts of each.
    let newest = |key: &str, parts: Option<&str>| -> Vec<Value> {
        let mut out = Vec::new();
        for item in array(body.get(key)).into_iter().rev() {
            match parts {
                Some(p) => out.extend(array(item.get(p)).into_iter().rev()),
                None => out.push(item),
            }
        }
        out
    };
    let kind = |v: &Value, k: &str| v.get("type").and_then(Value::as_str) == Some(k);
    match protocol {
        // A user message's `tool_result` blocks.
        Protocol::Anthropic => newest("messages", Some("content"))
            .into_iter()
            .find(|b| kind(b, "tool_result"))
            .map(|b| result_text(b.get("content").unwrap_or(&Value::Null))),
        Protocol::Responses => newest("input", None)
            .into_iter()
            .find(|i| kind(i, "function_call_output"))
            .map(|i| result_text(i.get("output").unwrap_or(&Value::Null))),
        Protocol::Chat => newest("messages", None)
            .into_iter()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(|m| result_text(m.get("content").unwrap_or(&Value::Null))),
        // A `functionResponse` part; its `response` is an object the CLI
        // shaped (`{"output": …}` for text).
        Protocol::Gemini => newest("contents", Some("parts"))
            .into_iter()
            .find_map(|p| p.get("functionResponse").cloned())
            .map(|r| match r.get("response") {
                Some(response) => match response.get("output") {
                    Some(output) => result_text(output),
                    None => response.to_string(),
                },
                None => String::new(),
            }),
    }
}

fn is_reminder(t: &str) -> bool {
    let t = t.trim_start();
    t.starts_with("<system-reminder>") || t.is_empty()
}

/// Text parts of one content value (string, or array of typed parts).
/// Returns (joined text, has_real_text).
fn content_text(content: &Value) -> (String, bool) {
    match content {
        Value::String(s) => (s.clone(), !is_reminder(s)),
        Value::Array(parts) => {
            let mut texts = Vec::new();
            let mut real = false;
            for p in parts {
                let t = p.get("text").and_then(Value::as_str).filter(|_| {
                    matches!(
                        p.get("type").and_then(Value::as_str),
                        None | Some("text") | Some("input_text")
                    )
                });
                if let Some(t) = t {
                    real |= !is_reminder(t);
                    texts.push(t.to_string());
                }
            }
            (texts.join("\n"), real)
        }
        _ => (String::new(), false),
    }
}

/// Text of the last user message that carries real text (skipping messages
/// that only hold tool results or `<system-reminder>` blocks).
fn last_user_text<'a>(
    msgs: impl DoubleEndedIterator<Item = &'a Value>,
    role_key: &str,
    content_key: &str,
) -> String {
    for m in msgs.rev() {
        if m.get(role_key).and_then(Value::as_str) != Some("user") {
            continue;
        }
        let (text, real) = match m.get(content_key) {
            Some(c) if content_key == "parts" => {
                let mut texts = Vec::new();
                let mut real = false;
                for p in c.as_array().into_iter().flatten() {
                    if p.get("thought").and_then(Value::as_bool) == Some(true) {
                        continue;
                    }
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        real |= !is_reminder(t);
                        texts.push(t.to_string());
                    }
                }
                (texts.join("\n"), real)
            }
            Some(c) => content_text(c),
            None => (String::new(), false),
        };
        if real {
            return text;
        }
    }
    String::new()
}

fn non_empty_array(v: Option<&Value>) -> bool {
    v.and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

/// `name` and its parameter schema from the request's `tools` array: the
/// entry whose `name` (or `function.name`) is `name`, schema at `path`.
fn declared(body: &Value, name: &str, path: &[&str]) -> (String, Value) {
    let tool = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|t| {
            let n = t
                .get("name")
                .or_else(|| t.get("function").and_then(|f| f.get("name")));
            n.and_then(Value::as_str) == Some(name)
        });
    let schema = tool
        .and_then(|t| path.iter().try_fold(t, |v, key| v.get(*key)))
        .cloned()
        .unwrap_or_else(|| json!({}));
    (name.to_string(), schema)
}

/// Read what a request body asks for.
pub fn inspect(protocol: Protocol, body: &Value) -> Ask {
    let last_tool_result = last_tool_result(protocol, body);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let empty = Vec::new();
    match protocol {
        Protocol::Anthropic => {
            let msgs = body
                .get("messages")
                .and_then(Value::as_array)
                .unwrap_or(&empty);
            let schema = ["output_config", "output_format"].iter().find_map(|k| {
                let v = body.get(*k)?;
                let f = v.get("format").unwrap_or(v);
                (f.get("type").and_then(Value::as_str) == Some("json_schema"))
                    .then(|| f.get("schema").cloned().unwrap_or_else(|| json!({})))
            });
            let forced = body
                .get("tool_choice")
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("tool"))
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str);
            Ask {
                last_user_text: last_user_text(msgs.iter(), "role", "content"),
                schema,
                has_tools: non_empty_array(body.get("tools")),
                forced_tool: forced.map(|name| declared(body, name, &["input_schema"])),
                model,
                stream,
                last_tool_result,
            }
        }
        Protocol::Responses => {
            let text = match body.get("input") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(items)) => last_user_text(items.iter(), "role", "content"),
                _ => String::new(),
            };
            let schema = body
                .get("text")
                .and_then(|t| t.get("format"))
                .and_then(|f| match f.get("type").and_then(Value::as_str) {
                    Some("json_schema") => {
                        Some(f.get("schema").cloned().unwrap_or_else(|| json!({})))
                    }
                    Some("json_object") => Some(json!({})),
                    _ => None,
                });
            let forced = body
                .get("tool_choice")
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("function"))
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str);
            Ask {
                last_user_text: text,
                schema,
                has_tools: non_empty_array(body.get("tools")),
                forced_tool: forced.map(|name| declared(body, name, &["parameters"])),
                model,
                stream,
                last_tool_result,
            }
        }
        Protocol::Chat => {
            let msgs = body
                .get("messages")
                .and_then(Value::as_array)
                .unwrap_or(&empty);
            let schema = body.get("response_format").and_then(|f| {
                match f.get("type").and_then(Value::as_str) {
                    Some("json_schema") => Some(
                        f.get("json_schema")
                            .and_then(|j| j.get("schema"))
                            .cloned()
                            .unwrap_or_else(|| json!({})),
                    ),
                    Some("json_object") => Some(json!({})),
                    _ => None,
                }
            });
            let forced = body
                .get("tool_choice")
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("function"))
                .and_then(|c| c.get("function"))
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str);
            Ask {
                last_user_text: last_user_text(msgs.iter(), "role", "content"),
                schema,
                has_tools: non_empty_array(body.get("tools")),
                forced_tool: forced.map(|name| declared(body, name, &["function", "parameters"])),
                model,
                stream,
                last_tool_result,
            }
        }
        Protocol::Gemini => {
            let contents = body
                .get("contents")
                .and_then(Value::as_array)
                .unwrap_or(&empty);
            let gc = body.get("generationConfig");
            let schema = gc.and_then(|g| {
                g.get("responseJsonSchema")
                    .or_else(|| g.get("responseSchema"))
                    .or_else(|| g.get("response_json_schema"))
                    .or_else(|| g.get("response_schema"))
                    .cloned()
                    .or_else(|| {
                        (g.get("responseMimeType").and_then(Value::as_str)
                            == Some("application/json"))
                        .then(|| json!({}))
                    })
            });
            let has_tools = body
                .get("tools")
                .and_then(Value::as_array)
                .is_some_and(|ts| {
                    ts.iter()
                        .any(|t| non_empty_array(t.get("functionDeclarations")))
                });
            // mode ANY with exactly one allowed function forces that one.
            let forced = body
                .get("toolConfig")
                .and_then(|t| t.get("functionCallingConfig"))
                .filter(|f| f.get("mode").and_then(Value::as_str) == Some("ANY"))
                .and_then(|f| f.get("allowedFunctionNames"))
                .and_then(Value::as_array)
                .filter(|names| names.len() == 1)
                .and_then(|names| names[0].as_str());
            let forced_tool = forced.map(|name| {
                let params = body
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
                    .flatten()
                    .find(|d| d.get("name").and_then(Value::as_str) == Some(name))
                    .and_then(|d| {
                        d.get("parameters")
                            .or_else(|| d.get("parametersJsonSchema"))
                    })
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                (name.to_string(), params)
            });
            Ask {
                last_user_text: last_user_text(contents.iter(), "role", "parts"),
                schema,
                has_tools,
                forced_tool,
                model,
                stream,
                last_tool_result,
            }
        }
    }
}

/// A minimal JSON value that validates against `schema` (JSON Schema, or the
/// Gemini/OpenAPI subset with upper-case type names). Every declared property
/// of an object is filled in, so readers that expect optional keys find them.
pub fn instance(schema: &Value) -> Value {
    instance_in(schema, schema, 0)
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let ptr = reference.strip_prefix('#')?;
    root.pointer(ptr)
}

fn instance_in(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > 24 {
        return Value::Null;
    }
    let s = match schema {
        Value::Object(m) => m,
        Value::Bool(_) => return json!({}),
        _ => return json!({}),
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return match resolve(root, r) {
            Some(t) => instance_in(t, root, depth + 1),
            None => json!({}),
        };
    }
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(e) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return e.clone();
    }
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s.get(k).and_then(Value::as_array).and_then(|a| {
            a.iter()
                .find(|x| x.get("type").and_then(Value::as_str) != Some("null"))
                .or_else(|| a.first())
        }) && (k != "allOf" || s.get("type").is_none())
        {
            return instance_in(first, root, depth + 1);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| !t.eq_ignore_ascii_case("null"))
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if s.contains_key("properties") => "object".into(),
        _ if s.contains_key("items") => "array".into(),
        _ => return json!({}),
    };
    match ty.as_str() {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    out.insert(k.clone(), instance_in(v, root, depth + 1));
                }
            }
            for r in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(k) = r.as_str() {
                    out.entry(k.to_string()).or_insert_with(|| json!(""));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let item = s.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..n)
                    .map(|_| instance_in(&item, root, depth + 1))
                    .collect(),
            )
        }
        "string" => {
            let n = s
                .get("minLength")
                .and_then(Value::as_u64)
                .or_else(|| s.get("min_length").and_then(Value::as_u64))
                .unwrap_or(0) as usize;
            json!("a".repeat(n))
        }
        "integer" | "number" => {
            let min = s.get("minimum").and_then(Value::as_f64);
            let xmin = s.get("exclusiveMinimum").and_then(Value::as_f64);
            let v = match (min, xmin) {
                (Some(m), _) => m.ceil(),
                (None, Some(x)) => x.floor() + 1.0,
                _ => 0.0,
            };
            json!(v as i64)
        }
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_reply_strips_quotes_and_stops_at_line_end() {
        assert_eq!(exact_reply("Reply with exactly: OK").as_deref(), Some("OK"));
        assert_eq!(
            exact_reply("\"Reply with exactly: OK\"").as_deref(),
            Some("OK")
        );
        assert_eq!(
            exact_reply("Reply with exactly: 'two words'\nmore").as_deref(),
            Some("two words")
        );
        assert_eq!(exact_reply("hello"), None);
        assert_eq!(
            reply_text(
                &Ask {
                    last_user_text: "hi".into(),
                    schema: None,
                    has_tools: false,
                    forced_tool: None,
                    model: None,
                    stream: true,
                    last_tool_result: None,
                },
                "DEF"
            ),
            "DEF"
        );
    }

    #[test]
    fn last_user_message_skips_tool_results_and_reminders() {
        let body = json!({"messages":[
            {"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"Reply with exactly: FIRST"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"hi"},{"type":"text","text":"<system-reminder>y</system-reminder>"}]}
        ],"tools":[{"name":"Bash"}],"stream":true,"model":"m"});
        let ask = inspect(Protocol::Anthropic, &body);
        assert_eq!(reply_text(&ask, "OK"), "FIRST");
        assert!(ask.has_tools);
        assert!(ask.stream);
        assert_eq!(ask.model.as_deref(), Some("m"));
    }

    #[test]
    fn the_last_tool_result_is_the_reply_when_asked() {
        let ask = "Reply with the last tool result";
        let a = json!({"messages":[
            {"role":"user","content":ask},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"FIRST"}]}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"SECOND"}]}]});
        assert_eq!(
            reply_text(&inspect(Protocol::Anthropic, &a), "OK"),
            "SECOND"
        );
        let r = json!({"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":ask}]},{"type":"function_call_output","call_id":"c","output":"R-OUT"}]});
        assert_eq!(reply_text(&inspect(Protocol::Responses, &r), "OK"), "R-OUT");
        let c =
            json!({"messages":[{"role":"user","content":ask},{"role":"tool","content":"C-OUT"}]});
        assert_eq!(reply_text(&inspect(Protocol::Chat, &c), "OK"), "C-OUT");
        let g = json!({"contents":[{"role":"user","parts":[{"text":ask}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"G-OUT"}}}]}]});
        assert_eq!(reply_text(&inspect(Protocol::Gemini, &g), "OK"), "G-OUT");
        // Before any tool ran, the default reply.
        let none = json!({"messages":[{"role":"user","content":ask}]});
        assert_eq!(reply_text(&inspect(Protocol::Chat, &none), "OK"), "OK");
    }

    #[test]
    fn a_tool_in_a_namespace_is_called_by_its_parts() {
        let body = json!({"tools":[
            {"type":"function","name":"exec_command"},
            {"type":"namespace","name":"mcp__drover","tools":[{"type":"function","name":"list_seats"}]}]});
        assert_eq!(
            namespaced(&body, "mcp__drover__list_seats"),
            Some(("mcp__drover".to_string(), "list_seats".to_string()))
        );
        assert_eq!(namespaced(&body, "mcp__drover__down"), None);
        assert_eq!(namespaced(&body, "exec_command"), None);
    }

    #[test]
    fn responses_and_chat_and_gemini_user_text() {
        let r = json!({"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Reply with exactly: R"}]},{"type":"function_call_output","call_id":"c","output":"x"}]});
        assert_eq!(reply_text(&inspect(Protocol::Responses, &r), "OK"), "R");
        let c = json!({"messages":[{"role":"system","content":"s"},{"role":"user","content":"\"Reply with exactly: C\""},{"role":"tool","content":"x"}]});
        assert_eq!(reply_text(&inspect(Protocol::Chat, &c), "OK"), "C");
        let g = json!({"contents":[{"role":"user","parts":[{"text":"Reply with exactly: G"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}],
                       "tools":[{"functionDeclarations":[{"name":"f"}]}]});
        let ask = inspect(Protocol::Gemini, &g);
        assert_eq!(reply_text(&ask, "OK"), "G");
        assert!(ask.has_tools);
    }

    #[test]
    fn forced_tools_are_found_with_their_schemas() {
        let params = json!({"type":"object","properties":{"session_title":{"type":"string"}},"required":["session_title"]});
        let r = json!({"input":"x","tools":[{"type":"function","name":"other","parameters":{}},{"type":"function","name":"session_title","parameters":params}],
                       "tool_choice":{"type":"function","name":"session_title"}});
        assert_eq!(
            inspect(Protocol::Responses, &r).forced_tool,
            Some(("session_title".to_string(), params.clone()))
        );
        let c = json!({"messages":[],"tools":[{"type":"function","function":{"name":"t","parameters":params}}],
                       "tool_choice":{"type":"function","function":{"name":"t"}}});
        assert_eq!(
            inspect(Protocol::Chat, &c).forced_tool,
            Some(("t".to_string(), params.clone()))
        );
        let a = json!({"messages":[],"tools":[{"name":"t","input_schema":params}],"tool_choice":{"type":"tool","name":"t"}});
        assert_eq!(
            inspect(Protocol::Anthropic, &a).forced_tool,
            Some(("t".to_string(), params.clone()))
        );
        let g = json!({"contents":[],"tools":[{"functionDeclarations":[{"name":"t","parameters":params}]}],
                       "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["t"]}}});
        assert_eq!(
            inspect(Protocol::Gemini, &g).forced_tool,
            Some(("t".to_string(), params))
        );
        // "auto", "required" and "any" leave the choice to the model.
        for choice in [json!("auto"), json!("required"), json!({"type":"any"})] {
            let mut c = c.clone();
            c["tool_choice"] = choice.clone();
            assert_eq!(inspect(Protocol::Chat, &c).forced_tool, None, "{choice}");
            let mut a = a.clone();
            a["tool_choice"] = choice.clone();
            assert_eq!(
                inspect(Protocol::Anthropic, &a).forced_tool,
                None,
                "{choice}"
            );
        }
    }

    #[test]
    fn structured_output_schemas_are_found() {
        let g = json!({"contents":[],"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"a":{"type":"string"}}}}});
        assert!(inspect(Protocol::Gemini, &g).schema.is_some());
        let c = json!({"messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"}}}});
        assert_eq!(
            inspect(Protocol::Chat, &c).schema,
            Some(json!({"type":"object"}))
        );
        let r = json!({"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"array"}}}});
        assert_eq!(
            inspect(Protocol::Responses, &r).schema,
            Some(json!({"type":"array"}))
        );
        let plain = json!({"input":"x","text":{"format":{"type":"text"}}});
        assert_eq!(inspect(Protocol::Responses, &plain).schema, None);
        let a = json!({"messages":[],"output_config":{"effort":"high"}});
        assert_eq!(inspect(Protocol::Anthropic, &a).schema, None);
    }

    #[test]
    fn schema_instances_are_minimal_and_valid() {
        let router = json!({"type":"OBJECT","properties":{
            "complexity_reasoning":{"type":"STRING"},
            "complexity_score":{"type":"INTEGER","minimum":1,"maximum":100}},
            "required":["complexity_reasoning","complexity_score"]});
        assert_eq!(
            instance(&router),
            json!({"complexity_reasoning":"","complexity_score":1})
        );
        let s = json!({"type":"object","properties":{
            "kind":{"enum":["x","y"]},
            "n":{"type":["null","number"],"exclusiveMinimum":2},
            "list":{"type":"array","minItems":2,"items":{"$ref":"#/$defs/item"}},
            "opt":{"anyOf":[{"type":"null"},{"type":"boolean"}]}},
            "required":["missing"],
            "$defs":{"item":{"type":"string","minLength":3}}});
        assert_eq!(
            instance(&s),
            json!({"kind":"x","n":3,"list":["aaa","aaa"],"opt":false,"missing":""})
        );
        assert_eq!(instance(&json!({})), json!({}));
    }
}
