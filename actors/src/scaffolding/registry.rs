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

/// The call-syntax formats that are only markup when they name one of bor's tools. Each
/// is read from right after its opener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// A JSON call object after its `{`: `{"name": N, "arguments"|"parameters": …}`, also
    /// with `"type": "function"` first, or wrapped as `{"tool_call": {…}}` or
    /// `{"tool_calls": [{…}, …]}`.
    JsonObject,
    /// `[N(a=1), …]` or `[{"name": N, …}, …]`, not followed by `(` (a markdown link).
    CallList,
    /// `call:N{…}` (after the `call:`).
    CallBraces,
    /// A code fence whose whole body is a JSON call or a list of them (after the
    /// backticks and the info string).
    JsonFence,
    /// `<t>{"name": N, …}</t>`: a JSON call object in the opener's tag pair.
    TaggedJson,
    /// `N<|message|>`, a role header addressed to one of bor's tools (after `to=`).
    Recipient,
    /// `N` on its own line, then the JSON arguments object (after `>>>`).
    RecipientLine,
    /// The same at the very start of a message, where nothing marks it: the arguments
    /// must look like JSON (`{}` or `{"…`).
    RecipientLineAtStart,
}

/// Where an opener may start.
#[derive(Debug, Clone, Copy)]
pub enum Position {
    Anywhere,
    /// Not right after an ASCII letter, digit or `_`.
    WordStart,
    /// Preceded on its line only by spaces or tabs.
    LineStart,
    /// Where a code fence may open: at the start of a line, or after text when nothing
    /// but blanks follows the opener on its line (a model that opens its fence right
    /// after its sentence). Text after the opener makes it inline code, not a fence.
    FenceOpen,
    /// At the first non-whitespace of the message, and followed by a character for which
    /// the function is true. Such an opener needs no anchor, and may be empty (a call
    /// shape that starts the message).
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

/// A code fence's closing backticks, which a lone run of backticks never stands for.
const FENCE_END: End = End::Closers {
    closers: &["```"],
    stops: &[],
    lone_closers: false,
};

/// Every family the filter removes, routes or unwraps.
pub static FAMILIES: &[Family] = &[
    // Reasoning. `<think>` stays first: see FORCED_OPEN_FAMILY. Besides `</think>`, the
    // closers of reasoning that other templates open in the prompt end it, so
    // `thinking_forced_open` serves those templates too; Kimi K2 opens its tool-call
    // section from inside unclosed reasoning, which ends the reasoning there.
    reasoning(
        "think tags (DeepSeek-R1, Qwen3, GLM, MiniMax, Kimi, Nemotron, …)",
        &["<think>"],
        End::Closers {
            closers: &[
                "</think>",
                "<|think:end|>",
                "[BEGIN FINAL RESPONSE]",
                "<|END_THINKING|>",
                "<|close|>think<|sep|>",
                "</mm:think>",
            ],
            stops: &["<|tool_calls_section_begin|>", "<|tool_call_begin|>"],
            lone_closers: true,
        },
    ),
    reasoning(
        "thinking tags (Apriel 1.5)",
        &["<thinking>"],
        closed_by(&["</thinking>"]),
    ),
    reasoning(
        "reasoning tags",
        &["<reasoning>"],
        closed_by(&["</reasoning>"]),
    ),
    reasoning(
        "Mistral Magistral / Ministral think",
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
        "Apertus inner monologue",
        &["<|inner_prefix|>"],
        closed_by(&["<|inner_suffix|>"]),
    ),
    reasoning(
        "MiniMax M3 think",
        &["<mm:think>"],
        closed_by(&["</mm:think>"]),
    ),
    reasoning(
        "K2 Horizon think",
        &["<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>"],
        closed_by(&["</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>"]),
    ),
    reasoning(
        "Kimi K3 think section",
        &["<|open|>think<|sep|>"],
        closed_by(&["<|close|>think<|sep|>"]),
    ),
    reasoning("Solar Open think", &["<|think|>"], closed_by(&["<|end|>"])),
    reasoning(
        "Hunyuan 3 think, labelled tokens",
        &["<think:opensource>"],
        closed_by(&["</think:opensource>"]),
    ),
    reasoning(
        "Solar Open 2 think",
        &["<|think:start|>"],
        closed_by(&["<|think:end|>"]),
    ),
    reasoning(
        "Inkling thinking block",
        &["<|content_thinking|>"],
        closed_by(&["<|end_message|>"]),
    ),
    reasoning(
        "openPangu think",
        &["[unused16]"],
        closed_by(&["[unused17]"]),
    ),
    at(
        reasoning(
            "Muse Glimmer self channel",
            &[
                "<|start|>assistant to=self<|message|>",
                "to=self<|message|>",
            ],
            closed_by(&["<|eom|>", "<|eot|>"]),
        ),
        Position::WordStart,
    ),
    reasoning(
        "gpt-oss analysis channel",
        &[
            "<|channel|>analysis<|message|>",
            "<|channel|> analysis<|message|>",
        ],
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
        "Granite / ERNIE response",
        &["<response>"],
        closed_by(&["</response>"]),
    ),
    answer(
        "answer tags (Hunyuan)",
        &["<answer>"],
        closed_by(&["</answer>"]),
    ),
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
        "Apriel 1.6 final response",
        &["[BEGIN FINAL RESPONSE]"],
        closed_by(&["[END FINAL RESPONSE]"]),
    ),
    answer(
        "Kimi K3 response section",
        &["<|open|>response<|sep|>"],
        closed_by(&["<|close|>response<|sep|>"]),
    ),
    answer(
        "Inkling text block",
        &["<|content_text|>"],
        closed_by(&["<|end_message|>"]),
    ),
    at(
        answer(
            "Muse Glimmer user channel",
            &[
                "<|start|>assistant to=user<|message|>",
                "to=user<|message|>",
            ],
            closed_by(&["<|eot|>", "<|eom|>"]),
        ),
        Position::WordStart,
    ),
    answer(
        "gpt-oss final channel and preamble",
        &[
            "<|channel|>final<|message|>",
            "<|channel|>commentary<|message|>",
            "<|channel|> final<|message|>",
            "<|channel|> commentary<|message|>",
            "<|channel|>final <|constrain|>json<|message|>",
        ],
        closed_by(&["<|return|>", "<|end|>"]),
    ),
    // Tool-call markup, removed whatever name it carries.
    tool(
        "Hermes / Qwen / GLM tool call",
        &["<tool_call>", "<tool_call:opensource>"],
        closed_by(&["</tool_call>", "</tool_call:opensource>"]),
    ),
    tool(
        "tool_calls block (Apriel, Jamba, Hunyuan, MiniMax M1)",
        &["<tool_calls>", "<tool_calls:opensource>"],
        closed_by(&["</tool_calls>", "</tool_calls:opensource>"]),
    ),
    tool(
        "function_call block (Hermes, Granite 20B FC)",
        &["<function_call>"],
        closed_by(&["</function_call>"]),
    ),
    tool(
        "OLMo 3 / legacy function_calls",
        &["<function_calls>"],
        closed_by(&["</function_calls>"]),
    ),
    tool(
        "function tag (Qwen3-Coder, Functionary, Hermes, MiniCPM 5)",
        &["<function=", "<function name="],
        closed_by(&["</function>"]),
    ),
    tool(
        "hallucinated tool result",
        &["<tool_response>"],
        closed_by(&["</tool_response>"]),
    ),
    tool(
        "Gemma 4 hallucinated tool response",
        &["<|tool_response>"],
        closed_by(&["<tool_response|>"]),
    ),
    tool(
        "FunctionGemma hallucinated function response",
        &["<start_function_response>"],
        closed_by(&["<end_function_response>"]),
    ),
    tool(
        "DeepSeek hallucinated tool outputs",
        &["<｜tool▁outputs▁begin｜>"],
        closed_by(&["<｜tool▁outputs▁end｜>"]),
    ),
    tool(
        "DeepSeek hallucinated tool output",
        &["<｜tool▁output▁begin｜>"],
        closed_by(&["<｜tool▁output▁end｜>"]),
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
        "DeepSeek V3 / R1 / Step 3 tool calls",
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
        "GigaChat 3.5 GCML tool calls",
        &["<｜GCML｜tool_calls>"],
        closed_by(&["</｜GCML｜tool_calls>"]),
    ),
    tool(
        "gpt-oss tool call",
        &[
            "<|channel|>commentary to=",
            "<|channel|>analysis to=",
            "<|start|>assistant to=",
            "<|channel|> commentary to=",
            "<|channel|> analysis to=",
            "<|start|> assistant to=",
        ],
        closed_by(&["<|call|>"]),
    ),
    at(
        tool(
            "gpt-oss tool call, recipient in the role header",
            &["to=functions."],
            closed_by(&["<|call|>"]),
        ),
        Position::WordStart,
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
        "MiniMax M3 tool call",
        &["]<]minimax[>[<tool_call>"],
        closed_by(&["]<]minimax[>[</tool_call>"]),
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
    tool(
        "Apertus tool calls",
        &["<|tools_prefix|>"],
        closed_by(&["<|tools_suffix|>"]),
    ),
    tool(
        "FunctionGemma function call",
        &["<start_function_call>"],
        closed_by(&["<end_function_call>"]),
    ),
    tool(
        "GigaChat 3 / 3.1 function call",
        &["function call<|role_sep|>", "<|function_call|>"],
        End::EndOfMessage,
    ),
    tool(
        "Kimi K3 tools section",
        &["<|open|>tools<|sep|>"],
        closed_by(&["<|close|>tools<|sep|>"]),
    ),
    tool(
        "K2 Horizon tool-call group",
        &["<ifm|tool_calls>"],
        closed_by(&["</ifm|tool_calls>"]),
    ),
    tool(
        "K2 Horizon tool call",
        &["<ifm|tool_call>"],
        closed_by(&["</ifm|tool_call>"]),
    ),
    tool(
        "Inkling tool invocation",
        &[
            "<|content_invoke_tool_json|>",
            "<|content_invoke_tool_text|>",
        ],
        closed_by(&["<|end_message|>"]),
    ),
    tool(
        "Solar Open tool-call section",
        &["<|tool_calls|>"],
        closed_by(&["<|calls|>"]),
    ),
    tool(
        "Solar Open tool call",
        &["<|tool_call:begin|>"],
        closed_by(&["<|tool_call:end|>"]),
    ),
    tool(
        "Solar Open 2 tool call",
        &["<|tool_call:start|>"],
        closed_by(&["<|tool_call:end|>"]),
    ),
    tool(
        "dots function call",
        &["<dots_function_call>"],
        closed_by(&["</dots_function_call>"]),
    ),
    tool(
        "LongCat tool call",
        &["<longcat_tool_call>"],
        closed_by(&["</longcat_tool_call>"]),
    ),
    tool(
        "Muse Glimmer function calls",
        &["<atem:function_calls>"],
        closed_by(&["</atem:function_calls>"]),
    ),
    tool(
        "openPangu tool call",
        &["[unused11]"],
        closed_by(&["[unused12]"]),
    ),
    at(
        tool(
            "Cohere Command R action",
            &["Action: ```json", "Action:\n```json"],
            FENCE_END,
        ),
        Position::LineStart,
    ),
    at(
        tool(
            "tool_code / tool_call fence",
            &["```tool_code", "```tool_call"],
            FENCE_END,
        ),
        Position::FenceOpen,
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
        tool(
            "JSON call fence",
            &["```json", "```"],
            End::Call(CallShape::JsonFence),
        ),
        Position::FenceOpen,
    ),
    tool(
        "Hermes tag around a JSON call",
        &["<tool>", "<tools>", "<json>", "<xml>", "<JSON>"],
        End::Call(CallShape::TaggedJson),
    ),
    at(
        tool(
            "GigaChat 3 function call, special tokens decoded away",
            &["function call{"],
            End::Call(CallShape::JsonObject),
        ),
        Position::WordStart,
    ),
    at(
        tool(
            "Muse Glimmer recipient header",
            &["to="],
            End::Call(CallShape::Recipient),
        ),
        Position::WordStart,
    ),
    // Functionary v3.2 writes the recipient of each part on its own line: `all` (the
    // user) first in the message and `>>>all` later, or a tool's name before its
    // arguments. `all` comes before the empty opener, which would claim the same text.
    at(
        framing("Functionary v3.2 answer recipient", &["all"]),
        Position::MessageStart(|c| c == '\n'),
    ),
    framing(
        "Functionary v3.2 answer recipient, later parts",
        &[">>>all\n"],
    ),
    tool(
        "Functionary v3.2 tool recipient",
        &[">>>"],
        End::Call(CallShape::RecipientLine),
    ),
    at(
        tool(
            "Functionary v3.2 tool recipient, first in the message",
            &[""],
            End::Call(CallShape::RecipientLineAtStart),
        ),
        Position::MessageStart(char::is_alphabetic),
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
            "<turn|>",
            "<|END_OF_TURN_TOKEN|>",
            "<｜end▁of▁sentence｜>",
            "<|eot|>",
            "<|eom|>",
            "<|role_end|>",
            "<|end_message|>",
            "<|content_model_end_sampling|>",
            "<|close|>message<|sep|>",
            "<|message_sep|>",
            "<seed:eos>",
        ],
    ),
    framing(
        "turn headers",
        &[
            "<|im_start|>assistant",
            "<|start|>assistant",
            "<|start|> assistant",
            "<|start_header_id|>assistant<|end_header_id|>",
            "<|im_assistant|>assistant<|im_middle|>",
            "<｜Assistant｜>",
            "<|turn>model",
            "<start_of_turn>model",
            "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
            "<|CHATBOT_TOKEN|>",
            "<|START_OF_TURN_TOKEN|>",
            "<|assistant|>",
            "<|message_model|>",
            "<|begin|>assistant",
            "<|content|>",
            "<|flush|>",
            "<|channel|>commentary to=assistant",
            "<|im_middle|>",
            "<|role_sep|>",
            "<|start|>",
            "<|im_start|>",
        ],
    ),
    at(
        framing("end-of-sequence tags", &["</s>", "<eos>", "[e~["]),
        Position::MessageEnd,
    ),
];

#[cfg(test)]
mod tests;
