//! The one table of marker families the scaffolding filter knows.
//!
//! Adding a family is one entry in [`FAMILIES`]: who writes it, what its content is
//! ([`Role`]), its openers, how its span ends ([`End`]) and where it may start
//! ([`Position`]). Everything else — trigger bytes, longest-match order, text held back
//! at the end of a chunk, closers met on their own — is derived from this table.
//!
//! Markers are matched byte for byte and case-sensitively. Each one needs a byte that is
//! not an ASCII letter, digit or space (its *anchor*, found by a fast scan); only
//! [`Position::MessageStart`] markers, checked once at the start of a message, may do
//! without one.

/// What a family's markup wraps, and so what becomes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Tool-call markup (and hallucinated tool results): the span, opener to closer, is
    /// removed, counted in `stripped_chars` and reported as `Stripped`.
    ToolCall,
    /// Reasoning: the content goes out as `Thinking`; the tags are dropped, not counted.
    Reasoning,
    /// A wrapper around the answer: the tags are dropped, the content stays in the answer
    /// (and is filtered like any other answer text).
    Answer,
    /// Turn framing (end-of-turn residue, turn headers): the token is dropped, not counted.
    Framing,
}

/// How a family's span ends.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// The opener is the whole marker.
    Token,
    /// The span ends with the first of `closers` (part of the markup) or just before the
    /// first of `stops` (left for what follows). With `lone_closers`, a closer met outside
    /// its span is markup too (an opener the model or a parser dropped).
    Closers {
        closers: &'static [&'static str],
        stops: &'static [&'static str],
        lone_closers: bool,
    },
    /// No closing token: the span runs to the end of the message.
    EndOfMessage,
    /// A call to one of bor's tools in this shape, right after the opener; anything else
    /// is the user's content and stays.
    Call(CallShape),
}

/// The call-syntax formats that are only markup when they name one of bor's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// `{"name": N, "arguments"|"parameters": …}` (after the `{`).
    JsonObject,
    /// `[N(a=1), …]` or `[{"name": N, …}, …]`, not followed by `(` (a markdown link).
    CallList,
    /// `call:N{…}` (after the `call:`).
    CallBraces,
    /// A ```` ``` ```` or ```` ```json ```` fence whose whole body is a JSON call or a list
    /// of them (after the backticks).
    JsonFence,
}

/// Where an opener may start.
#[derive(Debug, Clone, Copy)]
pub enum Position {
    Anywhere,
    /// Not right after an ASCII letter, digit or `_`.
    WordStart,
    /// Preceded on its line only by spaces or tabs.
    LineStart,
    /// At the first non-whitespace of the message, and followed by a character for which
    /// the function is true.
    MessageStart(fn(char) -> bool),
    /// Followed by nothing but whitespace to the end of the message.
    MessageEnd,
}

/// One family of markup.
#[derive(Debug)]
pub struct Family {
    /// Who writes it (for tests and reading).
    pub name: &'static str,
    pub role: Role,
    pub openers: &'static [&'static str],
    pub end: End,
    pub at: Position,
}

/// Index in [`FAMILIES`] of the `<think>` family, the one `thinking_forced_open` starts in.
pub const FORCED_OPEN_FAMILY: usize = 0;

const fn closed_by(closers: &'static [&'static str]) -> End {
    End::Closers {
        closers,
        stops: &[],
        lone_closers: true,
    }
}

const fn tool(name: &'static str, openers: &'static [&'static str], end: End) -> Family {
    Family {
        name,
        role: Role::ToolCall,
        openers,
        end,
        at: Position::Anywhere,
    }
}

const fn reasoning(name: &'static str, openers: &'static [&'static str], end: End) -> Family {
    Family {
        name,
        role: Role::Reasoning,
        openers,
        end,
        at: Position::Anywhere,
    }
}

const fn answer(name: &'static str, openers: &'static [&'static str], end: End) -> Family {
    Family {
        name,
        role: Role::Answer,
        openers,
        end,
        at: Position::Anywhere,
    }
}

const fn framing(name: &'static str, openers: &'static [&'static str]) -> Family {
    Family {
        name,
        role: Role::Framing,
        openers,
        end: End::Token,
        at: Position::Anywhere,
    }
}

const fn at(family: Family, at: Position) -> Family {
    Family { at, ..family }
}

/// Every family the filter removes, routes or unwraps.
pub static FAMILIES: &[Family] = &[
    // Reasoning. `<think>` stays first: see FORCED_OPEN_FAMILY.
    reasoning(
        "DeepSeek-R1 / Qwen3 / GLM / MiniMax think",
        &["<think>"],
        closed_by(&["</think>"]),
    ),
    reasoning(
        "thinking tags",
        &["<thinking>"],
        closed_by(&["</thinking>"]),
    ),
    reasoning(
        "reasoning tags",
        &["<reasoning>"],
        closed_by(&["</reasoning>"]),
    ),
    reasoning(
        "Mistral Magistral think",
        &["[THINK]"],
        closed_by(&["[/THINK]"]),
    ),
    reasoning("Kimi-VL think", &["◁think▷"], closed_by(&["◁/think▷"])),
    reasoning(
        "Cohere Command A thinking",
        &["<|START_THINKING|>"],
        closed_by(&["<|END_THINKING|>"]),
    ),
    reasoning(
        "ByteDance Seed think",
        &["<seed:think>"],
        closed_by(&["</seed:think>"]),
    ),
    reasoning(
        "Gemma 4 thought channel",
        &["<|channel>thought"],
        closed_by(&["<channel|>"]),
    ),
    reasoning(
        "OpenThoughts / Bespoke thought",
        &["<|begin_of_thought|>"],
        closed_by(&["<|end_of_thought|>"]),
    ),
    reasoning(
        "gpt-oss analysis channel",
        &["<|channel|>analysis<|message|>"],
        End::Closers {
            closers: &["<|end|>"],
            stops: &["<|start|>", "<|channel|>"],
            lone_closers: true,
        },
    ),
    at(
        reasoning(
            "gpt-oss analysis, special tokens decoded away",
            &["analysis"],
            End::Closers {
                closers: &["assistantfinal"],
                stops: &["assistantcommentary to=functions."],
                lone_closers: false,
            },
        ),
        Position::MessageStart(char::is_uppercase),
    ),
    // Answer wrappers.
    answer(
        "Granite response",
        &["<response>"],
        closed_by(&["</response>"]),
    ),
    answer("answer tags", &["<answer>"], closed_by(&["</answer>"])),
    answer(
        "Cohere Command R7B response",
        &["<|START_RESPONSE|>"],
        closed_by(&["<|END_RESPONSE|>"]),
    ),
    answer(
        "Cohere Command A text",
        &["<|START_TEXT|>"],
        closed_by(&["<|END_TEXT|>"]),
    ),
    answer(
        "OpenThoughts / Bespoke solution",
        &["<|begin_of_solution|>"],
        closed_by(&["<|end_of_solution|>"]),
    ),
    answer(
        "gpt-oss final channel and preamble",
        &[
            "<|channel|>final<|message|>",
            "<|channel|>commentary<|message|>",
        ],
        closed_by(&["<|return|>", "<|end|>"]),
    ),
    // Tool-call markup, removed whatever name it carries.
    tool(
        "Hermes / Qwen / GLM tool call",
        &["<tool_call>"],
        closed_by(&["</tool_call>"]),
    ),
    tool(
        "tool_calls block",
        &["<tool_calls>"],
        closed_by(&["</tool_calls>"]),
    ),
    tool(
        "function_call block",
        &["<function_call>"],
        closed_by(&["</function_call>"]),
    ),
    tool(
        "OLMo 3 / legacy function_calls",
        &["<function_calls>"],
        closed_by(&["</function_calls>"]),
    ),
    tool(
        "Qwen3-Coder / Llama function",
        &["<function="],
        closed_by(&["</function>"]),
    ),
    tool(
        "hallucinated tool result",
        &["<tool_response>"],
        closed_by(&["</tool_response>"]),
    ),
    tool(
        "Llama 3.1 python_tag",
        &["<|python_tag|>"],
        End::EndOfMessage,
    ),
    tool(
        "Llama 4 python_start",
        &["<|python_start|>"],
        closed_by(&["<|python_end|>"]),
    ),
    tool("Mistral TOOL_CALLS", &["[TOOL_CALLS]"], End::EndOfMessage),
    tool(
        "Mistral TOOL_RESULTS",
        &["[TOOL_RESULTS]"],
        closed_by(&["[/TOOL_RESULTS]"]),
    ),
    tool(
        "Granite tool_call token",
        &["<|tool_call|>"],
        End::EndOfMessage,
    ),
    tool(
        "Gemma 4 tool call",
        &["<|tool_call>"],
        closed_by(&["<tool_call|>"]),
    ),
    tool(
        "Kimi K2 tool-call section",
        &["<|tool_calls_section_begin|>"],
        closed_by(&["<|tool_calls_section_end|>"]),
    ),
    tool(
        "Kimi K2 tool call",
        &["<|tool_call_begin|>"],
        closed_by(&["<|tool_call_end|>"]),
    ),
    tool(
        "DeepSeek V3 / R1 tool calls",
        &[
            "<｜tool▁calls▁begin｜>",
            "<｜tool_calls_begin｜>",
            "<｜tool calls begin｜>",
            "<｜tool\\_calls\\_begin｜>",
            "<｜tool▁calls｜>",
        ],
        closed_by(&[
            "<｜tool▁calls▁end｜>",
            "<｜tool_calls_end｜>",
            "<｜tool calls end｜>",
            "<｜tool\\_calls\\_end｜>",
        ]),
    ),
    tool(
        "DeepSeek tool call",
        &["<｜tool▁call▁begin｜>"],
        closed_by(&["<｜tool▁call▁end｜>"]),
    ),
    tool(
        "DeepSeek DSML",
        &["<｜DSML｜", "<｜｜DSML｜｜"],
        closed_by(&[
            "</｜DSML｜function_calls>",
            "</｜DSML｜tool_calls>",
            "</｜｜DSML｜｜function_calls>",
            "</｜｜DSML｜｜tool_calls>",
        ]),
    ),
    tool(
        "gpt-oss tool call",
        &[
            "<|channel|>commentary to=",
            "<|channel|>analysis to=",
            "<|start|>assistant to=",
        ],
        closed_by(&["<|call|>"]),
    ),
    tool(
        "gpt-oss tool call, special tokens decoded away",
        &["assistantcommentary to=functions."],
        End::EndOfMessage,
    ),
    tool(
        "MiniMax M2 tool call",
        &["<minimax:tool_call>"],
        closed_by(&["</minimax:tool_call>"]),
    ),
    tool(
        "ByteDance Seed tool call",
        &["<seed:tool_call>"],
        closed_by(&["</seed:tool_call>"]),
    ),
    tool(
        "InternLM action",
        &["<|action_start|>"],
        closed_by(&["<|action_end|>"]),
    ),
    tool(
        "Nemotron TOOLCALL",
        &["<TOOLCALL>"],
        closed_by(&["</TOOLCALL>"]),
    ),
    tool(
        "LFM2 tool call",
        &["<|tool_call_start|>"],
        closed_by(&["<|tool_call_end|>"]),
    ),
    tool(
        "Cohere Command A action",
        &["<|START_ACTION|>"],
        closed_by(&["<|END_ACTION|>"]),
    ),
    at(
        tool(
            "Cohere Command R action",
            &["Action: ```json"],
            End::Closers {
                closers: &["```"],
                stops: &[],
                lone_closers: false,
            },
        ),
        Position::LineStart,
    ),
    at(
        tool(
            "tool_code / tool_call fence",
            &["```tool_code", "```tool_call"],
            End::Closers {
                closers: &["```"],
                stops: &[],
                lone_closers: false,
            },
        ),
        Position::LineStart,
    ),
    at(
        tool(
            "Phi-4-mini / FireFunction functools",
            &["functools["],
            End::EndOfMessage,
        ),
        Position::WordStart,
    ),
    // Call syntax, markup only when it names one of bor's tools.
    tool("bare JSON call", &["{"], End::Call(CallShape::JsonObject)),
    tool(
        "pythonic or JSON call list",
        &["["],
        End::Call(CallShape::CallList),
    ),
    at(
        tool(
            "Gemma 4 call, delimiters decoded away",
            &["call:"],
            End::Call(CallShape::CallBraces),
        ),
        Position::WordStart,
    ),
    at(
        tool("JSON call fence", &["```"], End::Call(CallShape::JsonFence)),
        Position::LineStart,
    ),
    // Turn framing.
    framing(
        "end-of-turn tokens",
        &[
            "<|im_end|>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|end_of_text|>",
            "<|endoftext|>",
            "<|end|>",
            "<|return|>",
            "<|eos|>",
            "<end_of_turn>",
            "<|END_OF_TURN_TOKEN|>",
            "<｜end▁of▁sentence｜>",
        ],
    ),
    framing(
        "turn headers",
        &[
            "<|im_start|>assistant",
            "<|start|>assistant",
            "<|start_header_id|>assistant<|end_header_id|>",
            "<|start|>",
            "<|im_start|>",
        ],
    ),
    at(
        framing("end-of-sequence tags", &["</s>", "<eos>"]),
        Position::MessageEnd,
    ),
];

#[cfg(test)]
mod tests;
