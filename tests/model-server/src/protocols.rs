//! Wire encoders for the four model APIs: answers (streaming and not), tool
//! calls, token counts, model lists and each API's error body.

use serde_json::{Value, json};

/// Which API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Anthropic Messages (`POST …/messages`).
    Anthropic,
    /// OpenAI Responses (`POST …/responses`).
    Responses,
    /// OpenAI Chat Completions (`POST …/chat/completions`).
    Chat,
    /// Gemini (`POST /v1beta/models/<m>:generateContent|streamGenerateContent|countTokens`).
    Gemini,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Anthropic => "anthropic",
            Protocol::Responses => "responses",
            Protocol::Chat => "chat",
            Protocol::Gemini => "gemini",
        }
    }
}

/// Distinctive token counts, so they can be recognised in transcripts.
pub mod tokens {
    pub const ANTHROPIC_INPUT: u64 = 1201;
    pub const ANTHROPIC_CACHE_CREATION: u64 = 1302;
    pub const ANTHROPIC_CACHE_READ: u64 = 1403;
    pub const ANTHROPIC_OUTPUT: u64 = 57;

    pub const RESPONSES_INPUT: u64 = 2101;
    pub const RESPONSES_CACHED: u64 = 1000;
    pub const RESPONSES_OUTPUT: u64 = 67;
    pub const RESPONSES_REASONING: u64 = 5;
    pub const RESPONSES_TOTAL: u64 = 2168;

    pub const CHAT_PROMPT: u64 = 3101;
    pub const CHAT_CACHED: u64 = 300;
    pub const CHAT_COMPLETION: u64 = 77;
    pub const CHAT_TOTAL: u64 = 3178;

    pub const GEMINI_PROMPT: u64 = 4101;
    pub const GEMINI_CACHED: u64 = 400;
    pub const GEMINI_CANDIDATES: u64 = 87;
    pub const GEMINI_THOUGHTS: u64 = 9;
    pub const GEMINI_TOTAL: u64 = 4197;
}
use tokens::*;

/// What the model says this time.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    Text(String),
    /// `namespace`: the Responses namespace tool (`{"type":"namespace"}`,
    /// as Codex groups an MCP server's tools) the call names its tool in.
    Tool {
        name: String,
        args: Value,
        namespace: Option<String>,
    },
}

/// A response body: a complete JSON document, or SSE events written as
/// separate chunks.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(Value),
    Sse(Vec<String>),
}

/// Ids that differ per response (derived from a server-wide counter).
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    pub n: u64,
    pub created: u64,
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn args_string(args: &Value) -> String {
    match args {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn args_object(args: &Value) -> Value {
    match args {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------- Anthropic

pub fn anthropic_usage() -> Value {
    json!({
        "input_tokens": ANTHROPIC_INPUT,
        "cache_creation_input_tokens": ANTHROPIC_CACHE_CREATION,
        "cache_read_input_tokens": ANTHROPIC_CACHE_READ,
        "output_tokens": ANTHROPIC_OUTPUT,
        "service_tier": "standard"
    })
}

pub fn anthropic(turn: &Turn, model: &str, stream: bool, ids: Ids) -> Body {
    let msg_id = format!("msg_fake_{:06}", ids.n);
    let (block, stop_reason) = match turn {
        Turn::Text(t) => (json!({"type":"text","text":t}), "end_turn"),
        Turn::Tool { name, args, .. } => (
            json!({"type":"tool_use","id":format!("toolu_fake_{:06}", ids.n),"name":name,"input":args_object(args)}),
            "tool_use",
        ),
    };
    if !stream {
        return Body::Json(json!({
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
            "usage": anthropic_usage()
        }));
    }
    let mut start_usage = anthropic_usage();
    start_usage["output_tokens"] = json!(1);
    let (start_block, delta) = match turn {
        Turn::Text(t) => (
            json!({"type":"text","text":""}),
            json!({"type":"text_delta","text":t}),
        ),
        Turn::Tool { args, .. } => {
            let mut b = block.clone();
            b["input"] = json!({});
            (
                b,
                json!({"type":"input_json_delta","partial_json":args_string(&args_object(args))}),
            )
        }
    };
    Body::Sse(vec![
        sse(
            Some("message_start"),
            &json!({"type":"message_start","message":{
            "id": msg_id, "type":"message", "role":"assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
        ),
        sse(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":0,"content_block":start_block}),
        ),
        sse(Some("ping"), &json!({"type":"ping"})),
        sse(
            Some("content_block_delta"),
            &json!({"type":"content_block_delta","index":0,"delta":delta}),
        ),
        sse(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":0}),
        ),
        sse(
            Some("message_delta"),
            &json!({"type":"message_delta",
            "delta":{"stop_reason":stop_reason,"stop_sequence":null},"usage":anthropic_usage()}),
        ),
        sse(Some("message_stop"), &json!({"type":"message_stop"})),
    ])
}

pub fn anthropic_count_tokens() -> Value {
    json!({"input_tokens": ANTHROPIC_INPUT})
}

// ---------------------------------------------------------------- Responses

pub fn responses_usage() -> Value {
    json!({
        "input_tokens": RESPONSES_INPUT,
        "input_tokens_details": {"cached_tokens": RESPONSES_CACHED},
        "output_tokens": RESPONSES_OUTPUT,
        "output_tokens_details": {"reasoning_tokens": RESPONSES_REASONING},
        "total_tokens": RESPONSES_TOTAL
    })
}

pub fn responses(turn: &Turn, model: &str, stream: bool, ids: Ids) -> Body {
    let resp_id = format!("resp_fake_{:06}", ids.n);
    let item_id = format!("msg_fake_{:06}", ids.n);
    let item = match turn {
        Turn::Text(t) => {
            json!({"id":item_id,"type":"message","status":"completed","role":"assistant",
            "content":[{"type":"output_text","text":t,"annotations":[]}]})
        }
        Turn::Tool {
            name,
            args,
            namespace,
        } => {
            let mut call = json!({"id":format!("fc_fake_{:06}", ids.n),"type":"function_call",
            "status":"completed","call_id":format!("call_fake_{:06}", ids.n),"name":name,
            "arguments":args_string(&args_object(args))});
            if let Some(namespace) = namespace {
                call["namespace"] = json!(namespace);
            }
            call
        }
    };
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id":resp_id,"object":"response","created_at":ids.created,"status":status,"model":model,
               "output":output,"usage":usage,"error":null,"incomplete_details":null})
    };
    if !stream {
        return Body::Json(response("completed", json!([item]), responses_usage()));
    }
    let mut seq = 0u64;
    let mut ev = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(seq);
        seq += 1;
        sse(Some(name), &data)
    };
    let mut out = vec![
        ev(
            "response.created",
            json!({"response": response("in_progress", json!([]), Value::Null)}),
        ),
        ev(
            "response.in_progress",
            json!({"response": response("in_progress", json!([]), Value::Null)}),
        ),
    ];
    match turn {
        Turn::Text(t) => {
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            added["content"] = json!([]);
            let part0 = json!({"type":"output_text","text":"","annotations":[]});
            let part = json!({"type":"output_text","text":t,"annotations":[]});
            out.push(ev(
                "response.output_item.added",
                json!({"output_index":0,"item":added}),
            ));
            out.push(ev(
                "response.content_part.added",
                json!({"item_id":item_id,"output_index":0,"content_index":0,"part":part0}),
            ));
            out.push(ev(
                "response.output_text.delta",
                json!({"item_id":item_id,"output_index":0,"content_index":0,"delta":t,"logprobs":[]}),
            ));
            out.push(ev(
                "response.output_text.done",
                json!({"item_id":item_id,"output_index":0,"content_index":0,"text":t,"logprobs":[]}),
            ));
            out.push(ev(
                "response.content_part.done",
                json!({"item_id":item_id,"output_index":0,"content_index":0,"part":part}),
            ));
        }
        Turn::Tool { .. } => {
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            added["arguments"] = json!("");
            let fc_id = item["id"].clone();
            out.push(ev(
                "response.output_item.added",
                json!({"output_index":0,"item":added}),
            ));
            out.push(ev(
                "response.function_call_arguments.delta",
                json!({"item_id":fc_id,"output_index":0,"delta":item["arguments"]}),
            ));
            out.push(ev(
                "response.function_call_arguments.done",
                json!({"item_id":fc_id,"output_index":0,"arguments":item["arguments"]}),
            ));
        }
    }
    out.push(ev(
        "response.output_item.done",
        json!({"output_index":0,"item":item}),
    ));
    out.push(ev(
        "response.completed",
        json!({"response": response("completed", json!([item]), responses_usage())}),
    ));
    Body::Sse(out)
}

// ---------------------------------------------------------------- Chat Completions

pub fn chat_usage() -> Value {
    json!({
        "prompt_tokens": CHAT_PROMPT,
        "completion_tokens": CHAT_COMPLETION,
        "total_tokens": CHAT_TOTAL,
        "prompt_tokens_details": {"cached_tokens": CHAT_CACHED},
        "completion_tokens_details": {"reasoning_tokens": 0}
    })
}

pub fn chat(turn: &Turn, model: &str, stream: bool, ids: Ids) -> Body {
    let id = format!("chatcmpl-fake{:06}", ids.n);
    let tool_call = |with_index: bool| match turn {
        Turn::Tool { name, args, .. } => {
            let mut c = json!({"id":format!("call_fake_{:06}", ids.n),"type":"function",
                "function":{"name":name,"arguments":args_string(&args_object(args))}});
            if with_index {
                c["index"] = json!(0);
            }
            Some(c)
        }
        Turn::Text(_) => None,
    };
    let finish = if matches!(turn, Turn::Tool { .. }) {
        "tool_calls"
    } else {
        "stop"
    };
    if !stream {
        let message = match turn {
            Turn::Text(t) => json!({"role":"assistant","content":t}),
            Turn::Tool { .. } => {
                json!({"role":"assistant","content":null,"tool_calls":[tool_call(false)]})
            }
        };
        return Body::Json(
            json!({"id":id,"object":"chat.completion","created":ids.created,"model":model,
            "choices":[{"index":0,"message":message,"finish_reason":finish}],"usage":chat_usage()}),
        );
    }
    let chunk = |choices: Value, usage: Value| {
        let mut c = json!({"id":id,"object":"chat.completion.chunk","created":ids.created,"model":model,
            "choices":choices});
        if !usage.is_null() {
            c["usage"] = usage;
        }
        sse(None, &c)
    };
    let mut out = vec![chunk(
        json!([{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]),
        Value::Null,
    )];
    match turn {
        Turn::Text(t) => out.push(chunk(
            json!([{"index":0,"delta":{"content":t},"finish_reason":null}]),
            Value::Null,
        )),
        Turn::Tool { .. } => out.push(chunk(
            json!([{"index":0,"delta":{"tool_calls":[tool_call(true)]},"finish_reason":null}]),
            Value::Null,
        )),
    }
    out.push(chunk(
        json!([{"index":0,"delta":{},"finish_reason":finish}]),
        Value::Null,
    ));
    out.push(chunk(json!([]), chat_usage()));
    out.push("data: [DONE]\n\n".to_string());
    Body::Sse(out)
}

// ---------------------------------------------------------------- Gemini

pub fn gemini_usage() -> Value {
    json!({
        "promptTokenCount": GEMINI_PROMPT,
        "candidatesTokenCount": GEMINI_CANDIDATES,
        "cachedContentTokenCount": GEMINI_CACHED,
        "thoughtsTokenCount": GEMINI_THOUGHTS,
        "totalTokenCount": GEMINI_TOTAL
    })
}

pub fn gemini(turn: &Turn, model: &str, stream: bool, ids: Ids) -> Body {
    let part = match turn {
        Turn::Text(t) => json!({"text": t}),
        Turn::Tool { name, args, .. } => {
            json!({"functionCall":{"name":name,"args":args_object(args)}})
        }
    };
    let doc = json!({
        "candidates": [{"content":{"role":"model","parts":[part]},"finishReason":"STOP","index":0}],
        "usageMetadata": gemini_usage(),
        "modelVersion": model,
        "responseId": format!("fake-{:06}", ids.n)
    });
    if stream {
        Body::Sse(vec![sse(None, &doc)])
    } else {
        Body::Json(doc)
    }
}

pub fn gemini_count_tokens() -> Value {
    json!({"totalTokens": GEMINI_PROMPT})
}

// ---------------------------------------------------------------- models

/// `GET …/models` in the dialect the request implies.
pub fn models_list(dialect: &str, models: &[&str]) -> Value {
    match dialect {
        "gemini" => json!({"models": models.iter().map(|m| json!({
            "name": format!("models/{m}"), "displayName": m, "version": "001",
            "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent","streamGenerateContent","countTokens"]
        })).collect::<Vec<_>>()}),
        "anthropic" => json!({
            "data": models.iter().map(|m| json!({"type":"model","id":m,"display_name":m,
                "created_at":"2026-01-01T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last()
        }),
        _ => json!({"object":"list","data": models.iter().map(|m| json!({
            "id": m, "object":"model", "created": 1767225600u64, "owned_by":"drover-fake"
        })).collect::<Vec<_>>()}),
    }
}

// ---------------------------------------------------------------- errors

/// The error body each API sends for `status`.
pub fn error_body(protocol: Protocol, status: u16) -> Value {
    match protocol {
        Protocol::Anthropic => {
            let (ty, msg) = match status {
                400 => ("invalid_request_error", "fake error"),
                401 => ("authentication_error", "invalid x-api-key"),
                403 => (
                    "permission_error",
                    "Your API key does not have permission to use the specified resource.",
                ),
                404 => (
                    "not_found_error",
                    "The requested resource could not be found.",
                ),
                413 => (
                    "request_too_large",
                    "Request exceeds the maximum allowed number of bytes.",
                ),
                429 => (
                    "rate_limit_error",
                    "Number of request tokens has exceeded your per-minute rate limit",
                ),
                500 => ("api_error", "Internal server error"),
                529 => ("overloaded_error", "Overloaded"),
                503 => ("overloaded_error", "Service unavailable"),
                _ => ("api_error", "fake error"),
            };
            json!({"type":"error","error":{"type":ty,"message":msg},"request_id":"req_fake"})
        }
        Protocol::Responses | Protocol::Chat => {
            let (ty, code, msg) = match status {
                400 => ("invalid_request_error", Value::Null, "fake error"),
                401 => (
                    "invalid_request_error",
                    json!("invalid_api_key"),
                    "Incorrect API key provided",
                ),
                403 => (
                    "invalid_request_error",
                    json!("unsupported_country_region_territory"),
                    "Country, region, or territory not supported",
                ),
                404 => (
                    "invalid_request_error",
                    json!("model_not_found"),
                    "The model does not exist or you do not have access to it.",
                ),
                429 => (
                    "requests",
                    json!("rate_limit_exceeded"),
                    "Rate limit reached for requests",
                ),
                500 => (
                    "server_error",
                    Value::Null,
                    "The server had an error while processing your request.",
                ),
                503 => (
                    "server_error",
                    json!("server_overloaded"),
                    "The engine is currently overloaded, please try again later.",
                ),
                529 => ("server_error", json!("overloaded"), "Overloaded"),
                _ => ("server_error", Value::Null, "fake error"),
            };
            json!({"error":{"message":msg,"type":ty,"param":null,"code":code}})
        }
        Protocol::Gemini => {
            let (st, msg) = match status {
                400 => ("INVALID_ARGUMENT", "fake error"),
                401 => (
                    "UNAUTHENTICATED",
                    "API key not valid. Please pass a valid API key.",
                ),
                403 => ("PERMISSION_DENIED", "The caller does not have permission"),
                404 => ("NOT_FOUND", "Requested entity was not found."),
                429 => (
                    "RESOURCE_EXHAUSTED",
                    "Resource has been exhausted (e.g. check quota).",
                ),
                500 => ("INTERNAL", "Internal error encountered."),
                503 | 529 => (
                    "UNAVAILABLE",
                    "The model is overloaded. Please try again later.",
                ),
                _ => ("UNKNOWN", "fake error"),
            };
            json!({"error":{"code":status,"message":msg,"status":st}})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: Ids = Ids {
        n: 7,
        created: 1700000000,
    };

    /// Split SSE text into (event name, data JSON) pairs.
    fn events(body: &Body) -> Vec<(Option<String>, Value)> {
        let Body::Sse(chunks) = body else {
            panic!("not SSE: {body:?}")
        };
        let mut out = Vec::new();
        for c in chunks {
            assert!(c.ends_with("\n\n"), "event not terminated: {c:?}");
            let mut name = None;
            let mut data = None;
            for line in c.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(if d == "[DONE]" {
                        json!("[DONE]")
                    } else {
                        serde_json::from_str(d).unwrap()
                    });
                }
            }
            out.push((name, data.expect("data line")));
        }
        out
    }

    #[test]
    fn anthropic_stream_sequence_and_usage() {
        let ev = events(&anthropic(
            &Turn::Text("HELLO".into()),
            "claude-x",
            true,
            IDS,
        ));
        let names: Vec<_> = ev.iter().map(|(n, _)| n.clone().unwrap()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        for (n, d) in &ev {
            assert_eq!(
                d["type"],
                json!(n.as_deref().unwrap()),
                "type field matches event name"
            );
        }
        assert_eq!(ev[0].1["message"]["model"], "claude-x");
        assert_eq!(ev[0].1["message"]["usage"]["input_tokens"], 1201);
        assert_eq!(ev[3].1["delta"]["text"], "HELLO");
        let u = &ev[5].1["usage"];
        assert_eq!(
            (
                u["input_tokens"].as_u64(),
                u["cache_creation_input_tokens"].as_u64(),
                u["cache_read_input_tokens"].as_u64(),
                u["output_tokens"].as_u64()
            ),
            (Some(1201), Some(1302), Some(1403), Some(57))
        );
        assert_eq!(ev[5].1["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn anthropic_tool_use_and_plain_json() {
        let t = Turn::Tool {
            namespace: None,
            name: "Bash".into(),
            args: json!({"command":"echo hi"}),
        };
        let ev = events(&anthropic(&t, "m", true, IDS));
        assert_eq!(ev[1].1["content_block"]["type"], "tool_use");
        assert_eq!(ev[1].1["content_block"]["name"], "Bash");
        let partial: Value =
            serde_json::from_str(ev[3].1["delta"]["partial_json"].as_str().unwrap()).unwrap();
        assert_eq!(partial, json!({"command":"echo hi"}));
        assert_eq!(ev[5].1["delta"]["stop_reason"], "tool_use");
        let Body::Json(doc) = anthropic(&t, "m", false, IDS) else {
            panic!()
        };
        assert_eq!(doc["content"][0]["input"]["command"], "echo hi");
        assert_eq!(doc["usage"]["output_tokens"], 57);
    }

    #[test]
    fn responses_stream_sequence_and_usage() {
        let ev = events(&responses(&Turn::Text("R".into()), "gpt-x", true, IDS));
        let names: Vec<_> = ev.iter().map(|(n, _)| n.clone().unwrap()).collect();
        assert_eq!(names.first().unwrap(), "response.created");
        assert_eq!(names.last().unwrap(), "response.completed");
        assert!(names.contains(&"response.output_text.delta".to_string()));
        assert!(names.contains(&"response.output_item.done".to_string()));
        for (i, (n, d)) in ev.iter().enumerate() {
            assert_eq!(d["type"], json!(n.as_deref().unwrap()));
            assert_eq!(d["sequence_number"], json!(i));
        }
        let done = &ev
            .iter()
            .find(|(n, _)| n.as_deref() == Some("response.output_item.done"))
            .unwrap()
            .1;
        assert_eq!(done["item"]["content"][0]["text"], "R");
        let u = &ev.last().unwrap().1["response"]["usage"];
        assert_eq!(u["input_tokens"], 2101);
        assert_eq!(u["input_tokens_details"]["cached_tokens"], 1000);
        assert_eq!(u["output_tokens"], 67);
        assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 5);
        assert_eq!(u["total_tokens"], 2168);
        assert_eq!(
            u["input_tokens"].as_u64().unwrap() + u["output_tokens"].as_u64().unwrap(),
            RESPONSES_TOTAL
        );
    }

    #[test]
    fn responses_function_call() {
        let t = Turn::Tool {
            namespace: None,
            name: "exec_command".into(),
            args: json!({"cmd":"echo hi"}),
        };
        let ev = events(&responses(&t, "m", true, IDS));
        let done = &ev
            .iter()
            .find(|(n, _)| n.as_deref() == Some("response.output_item.done"))
            .unwrap()
            .1;
        assert_eq!(done["item"]["type"], "function_call");
        assert_eq!(done["item"]["name"], "exec_command");
        let args: Value =
            serde_json::from_str(done["item"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["cmd"], "echo hi");
        assert!(
            done["item"]["call_id"]
                .as_str()
                .unwrap()
                .starts_with("call_")
        );
    }

    #[test]
    fn chat_stream_has_usage_chunk_and_done() {
        let ev = events(&chat(&Turn::Text("C".into()), "fake-model", true, IDS));
        assert!(
            ev.iter().all(|(n, _)| n.is_none()),
            "chat SSE has no event: lines"
        );
        assert_eq!(ev.last().unwrap().1, json!("[DONE]"));
        let usage = &ev[ev.len() - 2].1;
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["prompt_tokens"], 3101);
        assert_eq!(
            usage["usage"]["prompt_tokens_details"]["cached_tokens"],
            300
        );
        assert_eq!(usage["usage"]["completion_tokens"], 77);
        assert_eq!(usage["usage"]["total_tokens"], 3178);
        let text: String = ev
            .iter()
            .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "C");
        assert_eq!(ev[ev.len() - 3].1["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn chat_tool_call() {
        let t = Turn::Tool {
            namespace: None,
            name: "bash".into(),
            args: json!({"command":"ls"}),
        };
        let ev = events(&chat(&t, "m", true, IDS));
        let tc = &ev[1].1["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(tc["index"], 0);
        assert_eq!(tc["function"]["name"], "bash");
        assert_eq!(tc["function"]["arguments"], "{\"command\":\"ls\"}");
        assert_eq!(ev[2].1["choices"][0]["finish_reason"], "tool_calls");
        let Body::Json(doc) = chat(&t, "m", false, IDS) else {
            panic!()
        };
        assert_eq!(
            doc["choices"][0]["message"]["tool_calls"][0]["type"],
            "function"
        );
    }

    #[test]
    fn gemini_stream_and_json() {
        let ev = events(&gemini(&Turn::Text("G".into()), "gemini-z", true, IDS));
        assert_eq!(ev.len(), 1);
        let d = &ev[0].1;
        assert_eq!(d["candidates"][0]["content"]["parts"][0]["text"], "G");
        assert_eq!(d["candidates"][0]["finishReason"], "STOP");
        assert_eq!(d["modelVersion"], "gemini-z");
        let u = &d["usageMetadata"];
        assert_eq!(
            (
                u["promptTokenCount"].as_u64(),
                u["cachedContentTokenCount"].as_u64(),
                u["candidatesTokenCount"].as_u64(),
                u["thoughtsTokenCount"].as_u64(),
                u["totalTokenCount"].as_u64()
            ),
            (Some(4101), Some(400), Some(87), Some(9), Some(4197))
        );
        let t = Turn::Tool {
            namespace: None,
            name: "run_shell_command".into(),
            args: json!({"command":"ls"}),
        };
        let Body::Json(doc) = gemini(&t, "m", false, IDS) else {
            panic!()
        };
        assert_eq!(
            doc["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]["command"],
            "ls"
        );
    }

    #[test]
    fn error_bodies_follow_each_api() {
        let a = error_body(Protocol::Anthropic, 529);
        assert_eq!(a["type"], "error");
        assert_eq!(a["error"]["type"], "overloaded_error");
        assert_eq!(
            error_body(Protocol::Anthropic, 429)["error"]["type"],
            "rate_limit_error"
        );
        assert_eq!(
            error_body(Protocol::Anthropic, 401)["error"]["type"],
            "authentication_error"
        );
        let o = error_body(Protocol::Chat, 401);
        assert_eq!(o["error"]["message"], "Incorrect API key provided");
        assert_eq!(o["error"]["code"], "invalid_api_key");
        assert_eq!(
            error_body(Protocol::Responses, 500)["error"]["type"],
            "server_error"
        );
        let g = error_body(Protocol::Gemini, 503);
        assert_eq!(g["error"]["code"], 503);
        assert_eq!(g["error"]["status"], "UNAVAILABLE");
        assert_eq!(
            error_body(Protocol::Gemini, 500)["error"]["message"],
            "Internal error encountered."
        );
    }

    #[test]
    fn models_dialects() {
        assert_eq!(models_list("openai", &["a"])["data"][0]["id"], "a");
        assert_eq!(models_list("anthropic", &["a"])["data"][0]["type"], "model");
        assert_eq!(
            models_list("gemini", &["a"])["models"][0]["name"],
            "models/a"
        );
    }
}
